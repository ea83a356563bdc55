"""Delays over 15 minutes: the delay queue ``{address}-delay.fifo`` and ``DelayedMessagesPump``.

At start the pump reads the delay queue's ``DelaySeconds``, ``MessageRetentionPeriod`` and
``RedrivePolicy`` (up to four times while ``DelaySeconds`` reads 0, sleeping 0, 1, 2, 3 s — an
SDK workaround) and refuses to start, with the transport's exact messages, when the delivery
delay is under 900 s, the retention under 4 days, or *any* redrive policy is set. FIFO-ness and
visibility are not checked.

Each received delayed message (attribute ``NServiceBus.AmazonSQS.DelaySeconds`` = the delay still
owed when it was sent) is due in ``remaining = DelaySeconds - whole seconds(first receive - SentTimestamp)``
seconds (the *current* time instead of the first receive once ``ApproximateReceiveCount`` > 1):

* ``remaining`` > 900: back to the delay queue with ``DelaySeconds = remaining`` and the received
  ``MessageDeduplicationId`` as group and deduplication id (the queue's own 900 s delay runs
  again);
* else: to the input queue, ``DelaySeconds = remaining`` when positive, the delay attribute
  removed.

Either way every received attribute is kept, ``NServiceBus.MessageId`` is set to the original id
(the attribute, else the native id, else the deduplication id) and the body is copied verbatim.
Sends are batched as the dispatcher batches; each successfully sent entry is deleted from the
delay queue with ``DeleteMessageBatch``, an entry that fails to delete is deleted alone — using
the *destination's* queue URL, as the released code does, so for a due message that single
delete targets the input queue and fails (ignored when the service calls the receipt handle
invalid) — and entries that failed to send are made visible again.

The released pump loops in the background; the model consumes one batch per
:meth:`DelayedMessagesPump.poll`. Its clock is a parameter, so the decision for any elapsed time
can be computed without waiting (:func:`prepare_delayed_message`); against the local AWS,
``local_aws.moto.time_travel.age_sqs_messages`` makes 15 minutes pass in a call.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Receiving/DelayedMessagesPump.cs``,
``Receiving/SqsReceivedDelayedMessage.cs``, ``Extensions/MessageExtensions.cs``,
``TransportConstraints.cs``; vectors in ``src/NServiceBus.Transport.SQS.Tests/Receiving/
DelayedMessagesPumpTests.cs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from local_aws.released_transport.dotnet.text import try_parse_integer
from local_aws.released_transport.dotnet.time_formats import (
    Clock,
    TimeSpan,
    from_epoch_milliseconds,
    seconds_timespan,
    system_clock,
)
from local_aws.released_transport.headers import (
    APPROXIMATE_FIRST_RECEIVE_TIMESTAMP,
    APPROXIMATE_RECEIVE_COUNT,
    AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
    DELAY_SECONDS,
    DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS,
    MAXIMUM_ITEMS_IN_BATCH,
    MESSAGE_DEDUPLICATION_ID,
    MESSAGE_ID,
    SENT_TIMESTAMP,
)
from local_aws.released_transport.transport.queues.naming import delay_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_errors import (
    is_receipt_handle_invalid_or_visibility_expired,
)
from local_aws.released_transport.transport.queues.sqs_shapes import (
    ReceivedMessage,
    body_of,
    message_attributes,
    string_attribute,
    string_value,
    system_attribute,
)
from local_aws.released_transport.transport.receiving.input_pump import (
    ALL_MESSAGE_ATTRIBUTES,
    DEFAULT_WAIT_TIME_SECONDS,
)
from local_aws.released_transport.transport.sending.prepared_message import (
    SqsBatch,
    SqsPreparedMessage,
    batch,
)

DELAY_QUEUE_ATTRIBUTES: Final = ("DelaySeconds", "MessageRetentionPeriod", "RedrivePolicy")
DELAY_QUEUE_SYSTEM_ATTRIBUTES: Final = (
    MESSAGE_DEDUPLICATION_ID,
    SENT_TIMESTAMP,
    APPROXIMATE_FIRST_RECEIVE_TIMESTAMP,
    APPROXIMATE_RECEIVE_COUNT,
)
ATTRIBUTE_READ_ATTEMPTS: Final = 4


class DelayQueueCheckError(Exception):
    """The delay queue is not fit for the pump; the endpoint does not start."""


def check_delay_queue_attributes(
    delay_queue: str,
    attributes: Mapping[str, str],
    queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
) -> None:
    """The three start-up checks, in order; ``delay_queue`` is the logical name
    (``{address}-delay.fifo``, not re-sanitized) and a missing attribute reads as 0."""
    delay = try_parse_integer(attributes.get("DelaySeconds")) or 0
    if delay < queue_delay_seconds:
        raise DelayQueueCheckError(
            f"Delayed delivery queue '{delay_queue}' has a Delivery Delay of"
            f" '{seconds_timespan(delay)}'. It should be at least"
            f" '{seconds_timespan(queue_delay_seconds)}'."
        )
    retention = try_parse_integer(attributes.get("MessageRetentionPeriod")) or 0
    if retention < DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS:
        raise DelayQueueCheckError(
            f"Delayed delivery queue '{delay_queue}' has a Message Retention Period of"
            f" '{seconds_timespan(retention)}'. It should be at least"
            f" '{seconds_timespan(DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS)}'."
        )
    if "RedrivePolicy" in attributes:
        raise DelayQueueCheckError(
            f"Delayed delivery queue '{delay_queue}' should not have Redrive Policy enabled."
        )


def prepare_delayed_message(
    received: ReceivedMessage,
    *,
    input_queue_url: str,
    delay_queue_url: str,
    now: datetime,
    queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
) -> SqsPreparedMessage:
    """``PrepareMessages`` for one message: where it goes next, with what delay."""
    attributes = message_attributes(received)
    delay_attribute = attributes.get(DELAY_SECONDS)
    delay_seconds = (
        try_parse_integer(string_value(delay_attribute), bits=64) or 0
        if delay_attribute is not None
        else 0
    )
    original_message_id: str | None = str(received.get("MessageId"))
    if MESSAGE_ID in attributes:
        original_message_id = string_value(attributes[MESSAGE_ID])
    sent = from_epoch_milliseconds(system_attribute(received, SENT_TIMESTAMP))
    first_received = from_epoch_milliseconds(
        system_attribute(received, APPROXIMATE_FIRST_RECEIVE_TIMESTAMP)
    )
    receive_count = int(system_attribute(received, APPROXIMATE_RECEIVE_COUNT))
    received_at = now if receive_count > 1 else first_received
    elapsed_seconds = _truncated_seconds(TimeSpan.of(received_at - sent))
    remaining = delay_seconds - elapsed_seconds
    prepared = SqsPreparedMessage(receipt_handle=str(received.get("ReceiptHandle")))
    if remaining > queue_delay_seconds:
        prepared.queue_url = delay_queue_url
        prepared.message_attributes[DELAY_SECONDS] = string_attribute(str(remaining))
        prepared.copy_message_attributes(attributes)
        deduplication_id = system_attribute(received, MESSAGE_DEDUPLICATION_ID)
        prepared.message_deduplication_id = prepared.message_group_id = deduplication_id
    else:
        prepared.queue_url = input_queue_url
        prepared.copy_message_attributes(attributes)
        prepared.message_attributes.pop(DELAY_SECONDS, None)
        if remaining > 0:
            prepared.delay_seconds = remaining
    if not original_message_id:
        original_message_id = system_attribute(received, MESSAGE_DEDUPLICATION_ID)
    prepared.set_message_id(original_message_id)
    prepared.body = body_of(received)
    prepared.calculate_size()
    return prepared


def _truncated_seconds(span: TimeSpan) -> int:
    """``(long)span.TotalSeconds``: whole seconds, truncated toward zero."""
    whole = abs(span.ticks) // 10_000_000
    return -whole if span.ticks < 0 else whole


class DelayedMessagesPump:
    """The delayed messages pump of one receive address, one batch per :meth:`poll`."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        receive_address: str,
        *,
        queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
        wait_time_seconds: int = DEFAULT_WAIT_TIME_SECONDS,
        clock: Clock = system_clock,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._sqs = sqs
        self._queue_cache = queue_cache
        self._receive_address = receive_address
        self._delay_queue = delay_queue_name(receive_address)
        self._queue_delay_seconds = queue_delay_seconds
        self._wait_time_seconds = wait_time_seconds
        self._clock = clock
        self._sleep = sleep
        self._urls: tuple[str, str] | None = None

    @property
    def queue_urls(self) -> tuple[str, str]:
        """The input and delay queue URLs (after :meth:`initialize`)."""
        if self._urls is None:
            raise RuntimeError("the delayed messages pump has not been initialized")
        return self._urls

    def initialize(self) -> None:
        """``Initialize``: both URLs by name, then the start-up check."""
        input_url = self._queue_cache.queue_url(self._receive_address)
        delay_url = self._queue_cache.queue_url(self._delay_queue)
        self._urls = (input_url, delay_url)
        attributes: Mapping[str, str] = {}
        for attempt in range(ATTRIBUTE_READ_ATTEMPTS):
            response = self._sqs.get_queue_attributes(
                QueueUrl=delay_url, AttributeNames=list(DELAY_QUEUE_ATTRIBUTES)
            )
            attributes = response.get("Attributes") or {}
            if try_parse_integer(attributes.get("DelaySeconds")):
                break
            self._sleep(attempt)
        check_delay_queue_attributes(self._delay_queue, attributes, self._queue_delay_seconds)

    def receive_request(self) -> dict[str, Any]:
        """The ``ReceiveMessage`` request of every receive from the delay queue."""
        return {
            "QueueUrl": self.queue_urls[1],
            "MaxNumberOfMessages": MAXIMUM_ITEMS_IN_BATCH,
            "WaitTimeSeconds": self._wait_time_seconds,
            "MessageSystemAttributeNames": list(DELAY_QUEUE_SYSTEM_ATTRIBUTES),
            "MessageAttributeNames": list(ALL_MESSAGE_ATTRIBUTES),
        }

    def poll(self) -> list[SqsPreparedMessage]:
        """``ConsumeDelayedMessages``: receive one batch, move each message on; returns what was
        sent where."""
        messages = self._sqs.receive_message(**self.receive_request()).get("Messages") or []
        input_url, delay_url = self.queue_urls
        now = self._clock()
        prepared = [
            prepare_delayed_message(
                message,
                input_queue_url=input_url,
                delay_queue_url=delay_url,
                now=now,
                queue_delay_seconds=self._queue_delay_seconds,
            )
            for message in messages
        ]
        for entry in batch(prepared):
            self._send_batch(entry)
        return prepared

    def _send_batch(self, entry: SqsBatch) -> None:
        """``SendDelayedMessagesInBatches``: send, delete what was sent, release what was not."""
        result = self._sqs.send_message_batch(**entry.request())
        successful = [item["Id"] for item in result.get("Successful") or []]
        failed = [item["Id"] for item in result.get("Failed") or []]
        if successful:
            self._delete(entry, successful)
        if failed:
            self._release(entry, failed)

    def _delete(self, entry: SqsBatch, entry_ids: list[str]) -> None:
        """``DeleteDelayedMessagesThatWereDeliveredSuccessfullyAsBatchesInBatches``."""
        messages = entry.messages_by_entry_id
        response = self._sqs.delete_message_batch(
            QueueUrl=self.queue_urls[1],
            Entries=[
                {"Id": entry_id, "ReceiptHandle": messages[entry_id].receipt_handle}
                for entry_id in entry_ids
            ],
        )
        for failed in response.get("Failed") or []:
            message = messages[failed["Id"]]
            try:
                self._sqs.delete_message(
                    QueueUrl=message.queue_url, ReceiptHandle=message.receipt_handle
                )
            except Exception as failure:
                if not is_receipt_handle_invalid_or_visibility_expired(failure):
                    raise

    def _release(self, entry: SqsBatch, entry_ids: list[str]) -> None:
        """``ChangeVisibilityOfDelayedMessagesThatFailedBatchDeliveryInBatches``: best effort."""
        messages = entry.messages_by_entry_id
        try:
            self._sqs.change_message_visibility_batch(
                QueueUrl=self.queue_urls[1],
                Entries=[
                    {
                        "Id": entry_id,
                        "ReceiptHandle": messages[entry_id].receipt_handle,
                        "VisibilityTimeout": 0,
                    }
                    for entry_id in entry_ids
                ],
            )
        except Exception:
            return
