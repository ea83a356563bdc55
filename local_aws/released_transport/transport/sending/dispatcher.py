"""What a send or a publish puts on SQS and SNS: ``MessageDispatcher``.

Per unicast operation (a send to a queue):

* the ``NServiceBus.MessageId`` attribute is the outgoing message id (even when the header says
  otherwise);
* when the operation carries the message being processed (same message id as the incoming one:
  move to error, delayed retry, audit, forward) every native attribute of the received message
  not already present is copied, then ``MessageTypeFullName`` and ``S3BodyKey`` are dropped;
* a delay of at most 900 s is SQS's own ``DelaySeconds`` on the destination queue; a longer one
  goes to ``{destination}-delay.fifo`` with group id = deduplication id = message id and the
  ``NServiceBus.AmazonSQS.DelaySeconds`` attribute, for the receiver's delayed messages pump;
* the queue URL comes from the queue cache: the destination *name* through the generator and
  ``GetQueueUrl`` in the endpoint's own account (never another account);
* the body is the wrapped envelope, or — with ``DoNotWrapOutgoingMessages`` — the payload as
  text (base64 when it holds characters SQS refuses) with the headers JSON in the
  ``NServiceBus.AmazonSQS.Headers`` attribute and no time to be received;
* a unicast copy of a publish is dropped when the subscriber also gets the event from the topic
  (:mod:`~local_aws.released_transport.transport.sending.hybrid_pubsub`).

Per multicast operation (a publish): the topic of the event type is looked up by name in the
endpoint's own account (:mod:`~local_aws.released_transport.transport.pubsub.topic_cache`); the
attributes are ``NServiceBus.MessageId`` (and, unwrapped, the headers JSON) — received native
attributes are never copied and there is no delay; the body is built as for a send. An event type
without a topic is silently not published (nobody subscribed natively).

Large bodies: when the prepared message (body, attributes, ``ReserveBytesInMessageSizeCalculation``)
is over 1 MiB (SQS) or 256 KiB (SNS), the raw payload is uploaded to the endpoint's bucket under
``{KeyPrefix}/{MessageId}``, the wrapped body becomes ``{"Body":"","S3BodyKey":key,…}`` (the
unwrapped one ``empty message``), the ``S3BodyKey`` attribute is added and the size computed
again (a message still too large is sent anyway). Without S3 settings it is refused with the
transport's no-bucket error.

Default-consistency operations are prepared together and sent with ``SendMessageBatch`` /
``PublishBatch`` (entries the service reports as failed are re-sent one by one); isolated ones
with ``SendMessage`` / ``Publish``. The released dispatcher runs the multicast and unicast groups
concurrently and rethrows the first failure after all finished (a failed preparation sends none
of its group's batches); the model runs the multicast groups, then the unicast ones, and does
the same. The message ids of every multicast operation are known before any unicast operation is
prepared, as they are upstream (registered on the synchronous path).

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/MessageDispatcher.cs``
and the files of :mod:`local_aws.released_transport.transport.sending.prepared_message` and
:mod:`local_aws.released_transport.transport.sending.sns_prepared_message`; vectors in
``src/NServiceBus.Transport.SQS.Tests/Sending/MessageDispatcherTests.cs`` and its approval files.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, Final

from local_aws.released_transport.core.outgoing import (
    DispatchConsistency,
    DispatchProperties,
    MulticastTransportOperation,
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.dotnet.system_text_json import write_string_dictionary
from local_aws.released_transport.dotnet.text import is_valid_sqs_text
from local_aws.released_transport.dotnet.time_formats import (
    Clock,
    TimeSpan,
    seconds_timespan,
    system_clock,
)
from local_aws.released_transport.headers import (
    AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
    DELAY_SECONDS,
    EMPTY_MESSAGE,
    HEADERS_ATTRIBUTE,
    S3_BODY_KEY,
    SNS_MAXIMUM_MESSAGE_SIZE,
    SQS_MAXIMUM_MESSAGE_SIZE,
)
from local_aws.released_transport.transport.envelope import from_outgoing, serialize
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.queues.naming import delay_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_errors import (
    QueueDoesNotExistError,
    as_queue_does_not_exist,
    is_queue_does_not_exist,
)
from local_aws.released_transport.transport.queues.sqs_shapes import (
    MessageAttributeValue,
    message_attributes,
    string_attribute,
)
from local_aws.released_transport.transport.s3_settings import S3Settings
from local_aws.released_transport.transport.sending.hybrid_pubsub import (
    DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
    HybridPubSubChecker,
)
from local_aws.released_transport.transport.sending.prepared_message import (
    SqsBatch,
    SqsPreparedMessage,
    batch,
    message_size,
)
from local_aws.released_transport.transport.sending.sns_prepared_message import (
    SnsBatch,
    SnsPreparedMessage,
)
from local_aws.released_transport.transport.sending.sns_prepared_message import (
    batch as batch_publishes,
)

NO_S3_BUCKET: Final = (
    "Cannot send large message because no S3 bucket was configured. Add an S3 bucket name to"
    " your configuration."
)


class LargeMessageError(Exception):
    """A message too large for SQS or SNS and no S3 bucket to put its body in."""


class PublishNotConfiguredError(RuntimeError):
    """A multicast operation reached a dispatcher built without a topic cache (an SNS client):
    the model's guard; the released transport always has one."""


def delay_not_supported_message(original_destination: str, queue_delay_seconds: int) -> str:
    """The text a missing delay queue is reported with (after ``Unable to send batch …`` for a
    batch)."""
    return (
        f"Destination '{original_destination}' doesn't support delayed messages longer than"
        f" {seconds_timespan(queue_delay_seconds)}. To enable support for longer delays upgrade"
        f" '{original_destination}' endpoint to Version 6 of the transport or enable unrestricted"
        " delayed delivery."
    )


Operation = TransportOperation | MulticastTransportOperation
"""What ``Dispatch`` takes: unicast and multicast operations, in any mix."""


class MessageDispatcher:
    """The dispatcher of one endpoint (its own clients, caches and settings)."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        *,
        topic_cache: TopicCache | None = None,
        s3: S3Settings | None = None,
        wrap_outgoing_messages: bool = True,
        queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
        reserve_bytes_in_message_size_calculation: int = 0,
        subscriptions_cache_ttl: timedelta = DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
        clock: Clock = system_clock,
    ) -> None:
        self._sqs = sqs
        self._queue_cache = queue_cache
        self._topic_cache = topic_cache
        self._s3 = s3
        self._wrap = wrap_outgoing_messages
        self._queue_delay_seconds = queue_delay_seconds
        self._reserve_bytes = reserve_bytes_in_message_size_calculation
        self._clock = clock
        self._hybrid_checker = (
            None
            if topic_cache is None
            else HybridPubSubChecker(
                topic_cache,
                queue_cache,
                subscriptions_cache_ttl=subscriptions_cache_ttl,
                clock=clock,
            )
        )

    def dispatch(
        self,
        operations: Sequence[Operation],
        transaction: TransportTransaction | None = None,
    ) -> None:
        """``Dispatch``: every group and batch is attempted; the first failure is re-raised."""
        failures: list[BaseException] = []
        multicast_groups: dict[DispatchConsistency, list[MulticastTransportOperation]] = {}
        unicast_groups: dict[DispatchConsistency, list[TransportOperation]] = {}
        for operation in operations:
            if isinstance(operation, MulticastTransportOperation):
                multicast_groups.setdefault(operation.consistency, []).append(operation)
            else:
                unicast_groups.setdefault(operation.consistency, []).append(operation)
        multicast_message_types = {
            operation.message.message_id: operation.message_type
            for group in multicast_groups.values()
            for operation in group
        }
        for consistency, multicast_group in multicast_groups.items():
            if consistency is DispatchConsistency.ISOLATED:
                for multicast in multicast_group:
                    try:
                        self._publish(self.prepare_multicast(multicast))
                    except Exception as failure:
                        failures.append(failure)
            else:
                try:
                    self._publish_batched(multicast_group, failures)
                except Exception as failure:
                    failures.append(failure)
        for consistency, group in unicast_groups.items():
            if consistency is DispatchConsistency.ISOLATED:
                for operation in group:
                    try:
                        prepared = self.prepare(operation, transaction, multicast_message_types)
                        if prepared is not None:
                            self._send(prepared)
                    except Exception as failure:
                        failures.append(failure)
            else:
                try:
                    self._dispatch_batched(group, transaction, multicast_message_types, failures)
                except Exception as failure:
                    failures.append(failure)
        if failures:
            raise failures[0]

    def _dispatch_batched(
        self,
        operations: Sequence[TransportOperation],
        transaction: TransportTransaction | None,
        multicast_message_types: Mapping[str, str],
        failures: list[BaseException],
    ) -> None:
        prepared: list[SqsPreparedMessage] = []
        preparation_failures: list[BaseException] = []
        for operation in operations:
            try:
                message = self.prepare(operation, transaction, multicast_message_types)
                if message is not None:
                    prepared.append(message)
            except Exception as failure:
                preparation_failures.append(failure)
        if preparation_failures:
            raise preparation_failures[0]
        batches = batch(prepared)
        for number, entry in enumerate(batches, start=1):
            try:
                self._send_batch(entry, number, len(batches))
            except Exception as failure:
                failures.append(failure)

    def _publish_batched(
        self, operations: Sequence[MulticastTransportOperation], failures: list[BaseException]
    ) -> None:
        prepared: list[SnsPreparedMessage] = []
        preparation_failures: list[BaseException] = []
        for operation in operations:
            try:
                prepared.append(self.prepare_multicast(operation))
            except Exception as failure:
                preparation_failures.append(failure)
        if preparation_failures:
            raise preparation_failures[0]
        for entry in batch_publishes(prepared):
            try:
                self._publish_batch(entry)
            except Exception as failure:
                failures.append(failure)

    def prepare(
        self,
        operation: TransportOperation,
        transaction: TransportTransaction | None = None,
        multicast_message_types: Mapping[str, str] | None = None,
    ) -> SqsPreparedMessage | None:
        """``PrepareMessage`` (unicast): the request one operation becomes, or ``None`` for a
        publish's unicast copy the subscriber gets from the topic. No call but ``GetQueueUrl``,
        the de-duplication's SNS look-ups and the S3 upload."""
        if (
            multicast_message_types
            and self._hybrid_checker is not None
            and self._hybrid_checker.is_published_natively_to(operation, multicast_message_types)
        ):
            return None
        message = operation.message
        prepared = SqsPreparedMessage(reserve_bytes=self._reserve_bytes)
        prepared.set_message_id(message.message_id)
        prepared.copy_message_attributes(self._native_attributes(message, transaction))
        prepared.remove_native_headers()
        self._apply_destination(prepared, operation)
        prepared.body = self._body(
            message,
            operation.properties,
            prepared.message_attributes,
            SQS_MAXIMUM_MESSAGE_SIZE,
        )
        prepared.calculate_size()
        return prepared

    def prepare_multicast(self, operation: MulticastTransportOperation) -> SnsPreparedMessage:
        """``PrepareMessage`` (multicast): the topic by name in the endpoint's own account (none
        when there is no topic), then the body as for a send."""
        message = operation.message
        prepared = SnsPreparedMessage(reserve_bytes=self._reserve_bytes)
        prepared.set_message_id(message.message_id)
        prepared.destination = self._publishing().topic_arn(operation.message_type)
        prepared.body = self._body(
            message,
            operation.properties,
            prepared.message_attributes,
            SNS_MAXIMUM_MESSAGE_SIZE,
        )
        prepared.calculate_size()
        return prepared

    def _body(
        self,
        message: OutgoingMessage,
        properties: DispatchProperties,
        attributes: dict[str, MessageAttributeValue],
        maximum_size: int,
    ) -> str:
        """The body (and, unwrapped, the headers attribute); over ``maximum_size`` the payload
        goes to S3 (``PrepareSqsMessageBasedOnBodySize`` / ``PrepareSnsMessageBasedOnBodySize``)."""
        envelope = None
        if self._wrap:
            envelope = from_outgoing(message, properties.discard_if_not_received_before)
            body = serialize(envelope)
        else:
            body = _unwrapped_body(message)
            attributes[HEADERS_ATTRIBUTE] = string_attribute(
                write_string_dictionary(message.headers)
            )
        if message_size(body, attributes, self._reserve_bytes) <= maximum_size:
            return body
        key = self._upload(message)
        attributes[S3_BODY_KEY] = string_attribute(key)
        if envelope is None:
            return EMPTY_MESSAGE
        envelope.s3_body_key = key
        envelope.body = ""
        return serialize(envelope)

    def _upload(self, message: OutgoingMessage) -> str:
        """``UploadToS3``: the raw payload to ``{KeyPrefix}/{MessageId}`` of the endpoint's
        bucket; without S3 settings the transport's no-bucket error."""
        if self._s3 is None:
            raise LargeMessageError(NO_S3_BUCKET)
        key = self._s3.body_key(message.message_id)
        self._s3.upload(key, message.body)
        return key

    @staticmethod
    def _native_attributes(
        message: OutgoingMessage, transaction: TransportTransaction | None
    ) -> dict[str, MessageAttributeValue]:
        """``GetNativeMessageAttributes``: the received attributes when the ids match."""
        if transaction is None or transaction.incoming_message_id != message.message_id:
            return {}
        return message_attributes(transaction.native_message)

    def _delay_seconds(self, operation: TransportOperation) -> int:
        """``CalculateDelayedDeliverySeconds``."""
        properties = operation.properties
        if properties.delay_deliver_with is not None:
            return TimeSpan.of(properties.delay_deliver_with).ceiling_seconds()
        if properties.do_not_deliver_before is not None:
            remaining = properties.do_not_deliver_before - self._clock()
            return TimeSpan.of(remaining).ceiling_seconds()
        return 0

    def _apply_destination(
        self, prepared: SqsPreparedMessage, operation: TransportOperation
    ) -> None:
        """``ApplyUnicastOperationMapping``: the queue, and how the delay is expressed."""
        delay = self._delay_seconds(operation)
        if delay > self._queue_delay_seconds:
            prepared.original_destination = operation.destination
            prepared.destination = delay_queue_name(operation.destination)
            prepared.queue_url = self.resolve(prepared.destination)
            prepared.message_deduplication_id = prepared.message_group_id = prepared.message_id
            prepared.message_attributes[DELAY_SECONDS] = string_attribute(str(delay))
            return
        prepared.destination = operation.destination
        try:
            prepared.queue_url = self.resolve(operation.destination)
        except QueueDoesNotExistError as missing:
            raise QueueDoesNotExistError(
                f"Queue `{operation.destination}` doesn't exist"
            ) from missing
        if delay > 0:
            prepared.delay_seconds = delay

    def resolve(self, destination: str) -> str:
        """The queue URL of a destination: by name, in the endpoint's own account. A subclass
        that understands other address forms overrides this."""
        return self._queue_cache.queue_url(destination)

    def _send(self, prepared: SqsPreparedMessage) -> None:
        """``SendMessage``; a missing delay queue is reported as unsupported long delays."""
        try:
            self._sqs.send_message(**prepared.send_message_request())
        except Exception as failure:
            if prepared.original_destination is not None and is_queue_does_not_exist(failure):
                raise QueueDoesNotExistError(
                    delay_not_supported_message(
                        prepared.original_destination, self._queue_delay_seconds
                    )
                ) from failure
            if is_queue_does_not_exist(failure):
                raise as_queue_does_not_exist(failure) from failure
            raise

    def _send_batch(self, entry: SqsBatch, number: int, total: int) -> None:
        """``SendBatch``: the batch, then each entry the service reports as failed, alone."""
        try:
            result = self._sqs.send_message_batch(**entry.request())
        except Exception as failure:
            first = next(iter(entry.messages_by_entry_id.values()))
            if is_queue_does_not_exist(failure) and first.original_destination is not None:
                raise QueueDoesNotExistError(
                    f"Unable to send batch '{number}/{total}'. "
                    + delay_not_supported_message(
                        first.original_destination, self._queue_delay_seconds
                    )
                ) from failure
            if is_queue_does_not_exist(failure):
                raise as_queue_does_not_exist(failure) from failure
            raise
        entry.resend_failed(result, self._send)

    def _publish(self, prepared: SnsPreparedMessage) -> None:
        """``PublishMessage``: nothing without a topic."""
        if prepared.destination:
            self._publishing().sns.publish(**prepared.publish_request())

    def _publish_batch(self, entry: SnsBatch) -> None:
        """``SendBatch`` (SNS): the batch, then each entry reported as failed, alone."""
        result = self._publishing().sns.publish_batch(**entry.request())
        entry.resend_failed(result, self._publish)

    def _publishing(self) -> TopicCache:
        """The topic cache (and through it the SNS client) a multicast operation needs."""
        if self._topic_cache is None:
            raise PublishNotConfiguredError("the dispatcher has no SNS client to publish with")
        return self._topic_cache


def _unwrapped_body(message: OutgoingMessage) -> str:
    """``GetMessageBodyAndHeaders`` (unwrapped): ``empty message``, the UTF-8 text, or base64
    when the text holds characters outside the (mis-parsed) SQS character class."""
    if not message.body:
        return EMPTY_MESSAGE
    text = message.body.decode("utf-8", errors="replace")
    if is_valid_sqs_text(text):
        return text
    return base64.b64encode(message.body).decode("ascii")
