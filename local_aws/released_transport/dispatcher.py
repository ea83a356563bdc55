"""What a send puts on SQS: ``MessageDispatcher`` for unicast operations.

Per operation:

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
  ``NServiceBus.AmazonSQS.Headers`` attribute and no time to be received.

Default-consistency operations are prepared together and sent with ``SendMessageBatch``
(entries the service reports as failed are re-sent one by one); isolated ones with
``SendMessage``. The released dispatcher prepares, and then sends, concurrently and rethrows the
first failure after all finished (a failed preparation sends none of its group's batches); the
model runs them in order and does the same. A message
over 1 MiB needs the S3 settings of section 10, which this model does not have: it is refused
with the transport's no-bucket error. Publishing and the hybrid pub/sub de-duplication are
section 9's and not modelled.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/MessageDispatcher.cs``
and the files of :mod:`local_aws.released_transport.prepared_message`; vectors in
``src/NServiceBus.Transport.SQS.Tests/Sending/MessageDispatcherTests.cs`` and its approval files.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Final

from local_aws.released_transport.dotnet_json import write_string_dictionary
from local_aws.released_transport.dotnet_text import is_valid_sqs_text
from local_aws.released_transport.dotnet_time import (
    Clock,
    TimeSpan,
    seconds_timespan,
    system_clock,
)
from local_aws.released_transport.envelope import from_outgoing, serialize
from local_aws.released_transport.headers import (
    AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
    DELAY_SECONDS,
    EMPTY_MESSAGE,
    HEADERS_ATTRIBUTE,
    SQS_MAXIMUM_MESSAGE_SIZE,
)
from local_aws.released_transport.naming import delay_queue_name
from local_aws.released_transport.outgoing import (
    DispatchConsistency,
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.prepared_message import SqsBatch, SqsPreparedMessage, batch
from local_aws.released_transport.queue_cache import QueueCache
from local_aws.released_transport.sqs_errors import (
    QueueDoesNotExistError,
    as_queue_does_not_exist,
    is_queue_does_not_exist,
)
from local_aws.released_transport.sqs_shapes import (
    MessageAttributeValue,
    message_attributes,
    string_attribute,
)

NO_S3_BUCKET: Final = (
    "Cannot send large message because no S3 bucket was configured. Add an S3 bucket name to"
    " your configuration."
)


class LargeMessageError(Exception):
    """A message over 1 MiB and no S3 bucket to put its body in."""


def delay_not_supported_message(original_destination: str, queue_delay_seconds: int) -> str:
    """The text a missing delay queue is reported with (after ``Unable to send batch …`` for a
    batch)."""
    return (
        f"Destination '{original_destination}' doesn't support delayed messages longer than"
        f" {seconds_timespan(queue_delay_seconds)}. To enable support for longer delays upgrade"
        f" '{original_destination}' endpoint to Version 6 of the transport or enable unrestricted"
        " delayed delivery."
    )


class MessageDispatcher:
    """The SQS dispatcher of one endpoint (its own client, queue cache and settings)."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        *,
        wrap_outgoing_messages: bool = True,
        queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
        reserve_bytes_in_message_size_calculation: int = 0,
        clock: Clock = system_clock,
    ) -> None:
        self._sqs = sqs
        self._queue_cache = queue_cache
        self._wrap = wrap_outgoing_messages
        self._queue_delay_seconds = queue_delay_seconds
        self._reserve_bytes = reserve_bytes_in_message_size_calculation
        self._clock = clock

    def dispatch(
        self,
        operations: Sequence[TransportOperation],
        transaction: TransportTransaction | None = None,
    ) -> None:
        """``Dispatch``: every group and batch is attempted; the first failure is re-raised."""
        failures: list[BaseException] = []
        groups: dict[DispatchConsistency, list[TransportOperation]] = {}
        for operation in operations:
            groups.setdefault(operation.consistency, []).append(operation)
        for consistency, group in groups.items():
            if consistency is DispatchConsistency.ISOLATED:
                for operation in group:
                    try:
                        self._send(self.prepare(operation, transaction))
                    except Exception as failure:
                        failures.append(failure)
            else:
                try:
                    self._dispatch_batched(group, transaction, failures)
                except Exception as failure:
                    failures.append(failure)
        if failures:
            raise failures[0]

    def _dispatch_batched(
        self,
        operations: Sequence[TransportOperation],
        transaction: TransportTransaction | None,
        failures: list[BaseException],
    ) -> None:
        prepared: list[SqsPreparedMessage] = []
        preparation_failures: list[BaseException] = []
        for operation in operations:
            try:
                prepared.append(self.prepare(operation, transaction))
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

    def prepare(
        self, operation: TransportOperation, transaction: TransportTransaction | None = None
    ) -> SqsPreparedMessage:
        """``PrepareMessage``: the request one operation becomes (no call but ``GetQueueUrl``)."""
        message = operation.message
        prepared = SqsPreparedMessage(reserve_bytes=self._reserve_bytes)
        prepared.set_message_id(message.message_id)
        prepared.copy_message_attributes(self._native_attributes(message, transaction))
        prepared.remove_native_headers()
        self._apply_destination(prepared, operation)
        if self._wrap:
            envelope = from_outgoing(message, operation.properties.discard_if_not_received_before)
            prepared.body = serialize(envelope)
        else:
            prepared.body = _unwrapped_body(message)
            prepared.message_attributes[HEADERS_ATTRIBUTE] = string_attribute(
                write_string_dictionary(message.headers)
            )
        prepared.calculate_size()
        if prepared.size > SQS_MAXIMUM_MESSAGE_SIZE:
            raise LargeMessageError(NO_S3_BUCKET)
        return prepared

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
        retry_failures: list[BaseException] = []
        for failed in result.get("Failed") or []:
            try:
                self._send(entry.messages_by_entry_id[failed["Id"]])
            except Exception as failure:
                retry_failures.append(failure)
        if retry_failures:
            raise retry_failures[0]


def _unwrapped_body(message: OutgoingMessage) -> str:
    """``GetMessageBodyAndHeaders`` (unwrapped): ``empty message``, the UTF-8 text, or base64
    when the text holds characters outside the (mis-parsed) SQS character class."""
    if not message.body:
        return EMPTY_MESSAGE
    text = message.body.decode("utf-8", errors="replace")
    if is_valid_sqs_text(text):
        return text
    return base64.b64encode(message.body).decode("ascii")
