"""Receiving from an endpoint's input queue: ``InputQueuePump``, one batch at a time.

For each received message, in order:

1. a message whose earlier delete failed is deleted without processing;
2. extraction (:mod:`~local_aws.released_transport.transport.receiving.extraction`) with the native
   SQS message id as the override, then the body (from the endpoint's own bucket when the message
   names an S3 key); any failure — a body in S3 without S3 settings, an object that is not there —
   makes it **poison**: sent to the error queue *unchanged* (same body, same attributes, no fault
   headers — so no ``NServiceBus.FailedQ``) and deleted, without any retry;
3. the ``NServiceBus.AmazonSQS.TimeToBeReceived`` header is removed and, unless it is
   ``TimeSpan.MaxValue``, compared with ``SentTimestamp``: an expired message is deleted unseen;
4. the message goes to ``on_message``; success deletes it. A failure goes to ``on_error`` with
   the delivery attempts (a per-message counter, at least ``ApproximateReceiveCount``):
   ``RETRY_REQUIRED`` makes it visible again at once (``ChangeMessageVisibility(0)``, so the
   receive count grows), ``HANDLED`` deletes it;
5. an exception outside those guards (a malformed time to be received, ``on_error`` itself
   failing) returns the message to the queue the same way.

The released pump runs receive loops and a semaphore in the background and renews visibility
while a handler runs. The model receives one batch per :meth:`InputQueuePump.poll` and processes
its messages one after the other, so tests step deterministically; visibility renewal is not
modelled (a handler that outlives the visibility timeout is not something a step can show).
Clock skew correction is taken as zero.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Receiving/InputQueuePump.cs``;
vectors in ``src/NServiceBus.Transport.SQS.Tests/Receiving/InputQueuePumpTests.cs``. The contexts
it passes on are core's (:mod:`~local_aws.released_transport.core.incoming`).
"""

from __future__ import annotations

import enum
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from local_aws.released_transport.core.incoming import (
    ErrorContext,
    ErrorHandleResult,
    MessageContext,
)
from local_aws.released_transport.core.outgoing import TransportTransaction
from local_aws.released_transport.dotnet.text import try_parse_integer
from local_aws.released_transport.dotnet.time_formats import (
    TICKS_PER_MICROSECOND,
    TIMESPAN_MAX_TICKS,
    Clock,
    from_epoch_milliseconds,
    parse_timespan,
    system_clock,
)
from local_aws.released_transport.headers import (
    APPROXIMATE_RECEIVE_COUNT,
    MAXIMUM_ITEMS_IN_BATCH,
    MESSAGE_ID,
    SENT_TIMESTAMP,
    TIME_TO_BE_RECEIVED,
    HeaderDict,
)
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_errors import QueueDoesNotExistError
from local_aws.released_transport.transport.queues.sqs_shapes import (
    ReceivedMessage,
    body_of,
    message_attributes,
    system_attribute,
)
from local_aws.released_transport.transport.receiving.extraction import (
    ExtractedMessage,
    WireForm,
    extract_transport_message,
    retrieve_body,
)
from local_aws.released_transport.transport.s3_settings import S3Settings

DEFAULT_WAIT_TIME_SECONDS: Final = 20
LRU_CAPACITY: Final = 1_000
"""The capacity of both of the pump's caches (``FastConcurrentLru(1_000)``)."""
RECEIVE_SYSTEM_ATTRIBUTES: Final = (APPROXIMATE_RECEIVE_COUNT, SENT_TIMESTAMP)
ALL_MESSAGE_ATTRIBUTES: Final = ("All",)


def default_max_concurrency() -> int:
    """NServiceBus's default concurrency: ``Math.Max(2, Environment.ProcessorCount)``."""
    return max(2, os.cpu_count() or 1)


OnMessage = Callable[[MessageContext], None]
OnError = Callable[[ErrorContext], ErrorHandleResult]


class MessageFate(enum.Enum):
    """What became of one received message."""

    PROCESSED = "processed and deleted"
    RETRY_REQUIRED = "failed; made visible again for an immediate retry"
    HANDLED_AFTER_FAILURE = "failed; handled by recoverability and deleted"
    POISON = "unreadable; sent unchanged to the error queue and deleted"
    EXPIRED = "time to be received passed; deleted unprocessed"
    DELETED_WITHOUT_PROCESSING = "an earlier delete had failed; deleted unprocessed"
    RETURNED_TO_QUEUE = "processing threw; made visible again"


@dataclass(frozen=True)
class PumpResult:
    """One message's fate; ``error`` is the exception that decided it, if any."""

    fate: MessageFate
    native_message_id: str
    form: WireForm | None = None
    headers: HeaderDict | None = None
    error: BaseException | None = None


class _Lru:
    """A bounded map that forgets the least recently used key."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._values: OrderedDict[str, int] = OrderedDict()

    def get(self, key: str) -> int | None:
        if key not in self._values:
            return None
        self._values.move_to_end(key)
        return self._values[key]

    def put(self, key: str, value: int) -> None:
        self._values[key] = value
        self._values.move_to_end(key)
        while len(self._values) > self._capacity:
            self._values.popitem(last=False)


class InputQueuePump:
    """The input pump of one receive address, driven one batch at a time."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        receive_address: str,
        error_queue_address: str,
        *,
        max_concurrency: int | None = None,
        wait_time_seconds: int = DEFAULT_WAIT_TIME_SECONDS,
        visibility_timeout_seconds: int | None = None,
        setup_infrastructure: bool = False,
        s3: S3Settings | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self._sqs = sqs
        self._s3 = s3
        self._queue_cache = queue_cache
        self.receive_address = receive_address
        self._error_queue_address = error_queue_address
        concurrency = max_concurrency or default_max_concurrency()
        self._max_number_of_messages = min(concurrency, MAXIMUM_ITEMS_IN_BATCH)
        self._wait_time_seconds = wait_time_seconds
        self._visibility_timeout_seconds = visibility_timeout_seconds
        self._setup_infrastructure = setup_infrastructure
        self._clock = clock
        self._input_queue_url: str | None = None
        self._delivery_attempts = _Lru(LRU_CAPACITY)
        self._to_be_deleted = _Lru(LRU_CAPACITY)

    @property
    def input_queue_url(self) -> str:
        """The input queue's URL (after :meth:`initialize`)."""
        if self._input_queue_url is None:
            raise RuntimeError("the input pump has not been initialized; call initialize()")
        return self._input_queue_url

    def initialize(self) -> None:
        """``Initialize``: the input queue must exist (the transport's two messages)."""
        try:
            self._input_queue_url = self._queue_cache.queue_url(self.receive_address)
        except QueueDoesNotExistError as missing:
            advice = (
                "Ensure this process has the required permissions to create queues on Amazon SQS."
                if self._setup_infrastructure
                else "Call endpointConfiguration.EnableInstallers() to create the queues at"
                " startup, or create them manually."
            )
            raise QueueDoesNotExistError(
                f"Queue `{self.receive_address}` doesn't exist. {advice}"
            ) from missing

    def receive_request(self) -> dict[str, Any]:
        """The ``ReceiveMessage`` request of every receive."""
        request: dict[str, Any] = {
            "QueueUrl": self.input_queue_url,
            "MaxNumberOfMessages": self._max_number_of_messages,
            "WaitTimeSeconds": self._wait_time_seconds,
            "MessageSystemAttributeNames": list(RECEIVE_SYSTEM_ATTRIBUTES),
            "MessageAttributeNames": list(ALL_MESSAGE_ATTRIBUTES),
        }
        if self._visibility_timeout_seconds is not None:
            request["VisibilityTimeout"] = self._visibility_timeout_seconds
        return request

    def poll(self, on_message: OnMessage, on_error: OnError) -> list[PumpResult]:
        """Receive one batch and process each of its messages."""
        messages = self._sqs.receive_message(**self.receive_request()).get("Messages") or []
        return [self.process(message, on_message, on_error) for message in messages]

    def process(
        self, message: ReceivedMessage, on_message: OnMessage, on_error: OnError
    ) -> PumpResult:
        """``ProcessMessageWithVisibilityRenewal`` for one received message."""
        native_id = str(message.get("MessageId"))
        if self._to_be_deleted.get(native_id) is not None:
            self._delete(message)
            return PumpResult(MessageFate.DELETED_WITHOUT_PROCESSING, native_id)
        try:
            return self._process(message, native_id, on_message, on_error)
        except Exception as failure:
            self._return_to_queue(message)
            return PumpResult(MessageFate.RETURNED_TO_QUEUE, native_id, error=failure)

    def extract(self, message: ReceivedMessage, native_id: str) -> ExtractedMessage:
        """The extraction, with the native message id as the override (production's choice);
        a failure here makes the message poison."""
        return extract_transport_message(message, native_id)

    def _process(
        self, message: ReceivedMessage, native_id: str, on_message: OnMessage, on_error: OnError
    ) -> PumpResult:
        """``ProcessMessage``."""
        try:
            extracted = self.extract(message, native_id)
            body = retrieve_body(extracted, extracted.headers[MESSAGE_ID], self._s3)
        except Exception as failure:
            self._move_poison_message_to_error_queue(message)
            return PumpResult(MessageFate.POISON, native_id, error=failure)
        headers = extracted.headers
        if self._is_expired(message, headers):
            self._delete(message)
            return PumpResult(MessageFate.EXPIRED, native_id, extracted.form, headers)
        return self._inner_process(
            message, extracted, body, on_message=on_message, on_error=on_error
        )

    def _inner_process(
        self,
        message: ReceivedMessage,
        extracted: ExtractedMessage,
        body: bytes,
        *,
        on_message: OnMessage,
        on_error: OnError,
    ) -> PumpResult:
        """``InnerProcessMessage`` and the delete that follows success or ``HANDLED``."""
        native_id = str(message.get("MessageId"))
        headers = extracted.headers
        transaction = TransportTransaction(message, headers.get(MESSAGE_ID))
        try:
            on_message(
                MessageContext(native_id, dict(headers), body, transaction, self.receive_address)
            )
        except Exception as failure:
            error_context = ErrorContext(
                failure,
                dict(headers),
                native_id,
                body,
                transaction,
                self._count_delivery_attempt(native_id, message),
                self.receive_address,
            )
            try:
                result = on_error(error_context)
            except Exception as recoverability_failure:
                self._return_to_queue(message)
                return PumpResult(
                    MessageFate.RETURNED_TO_QUEUE,
                    native_id,
                    extracted.form,
                    headers,
                    recoverability_failure,
                )
            if result is ErrorHandleResult.RETRY_REQUIRED:
                self._return_to_queue(message)
                return PumpResult(
                    MessageFate.RETRY_REQUIRED, native_id, extracted.form, headers, failure
                )
            self._delete(message)
            return PumpResult(
                MessageFate.HANDLED_AFTER_FAILURE, native_id, extracted.form, headers, failure
            )
        self._delete(message)
        return PumpResult(MessageFate.PROCESSED, native_id, extracted.form, headers)

    def _count_delivery_attempt(self, native_id: str, message: ReceivedMessage) -> int:
        """``GetDeliveryAttempts``: the counter plus one, at least ``ApproximateReceiveCount``."""
        attempts = (self._delivery_attempts.get(native_id) or 0) + 1
        system_attributes = message.get("Attributes") or {}
        receive_count = try_parse_integer(system_attributes.get(APPROXIMATE_RECEIVE_COUNT))
        if receive_count is not None:
            attempts = max(attempts, receive_count)
        self._delivery_attempts.put(native_id, attempts)
        return attempts

    def _is_expired(self, message: ReceivedMessage, headers: HeaderDict) -> bool:
        """``IsMessageExpired``: removes the TTBR header, then compares."""
        if TIME_TO_BE_RECEIVED not in headers:
            return False
        raw = headers.pop(TIME_TO_BE_RECEIVED)
        if raw is None:
            raise TypeError("Value cannot be null. (Parameter 'input')")
        ticks = parse_timespan(raw)
        if ticks == TIMESPAN_MAX_TICKS:
            return False
        sent_at = from_epoch_milliseconds(system_attribute(message, SENT_TIMESTAMP))
        expires_at = sent_at + timedelta(microseconds=ticks // TICKS_PER_MICROSECOND)
        return expires_at <= self._clock()

    def _delete(self, message: ReceivedMessage) -> None:
        """``DeleteMessage``: any failure remembers the message for deletion next time."""
        try:
            self._sqs.delete_message(
                QueueUrl=self.input_queue_url, ReceiptHandle=message.get("ReceiptHandle")
            )
        except Exception:
            self._to_be_deleted.put(str(message.get("MessageId")), 1)

    def _return_to_queue(self, message: ReceivedMessage) -> None:
        """``ReturnMessageToQueue``: visible again now; failures are only logged."""
        try:
            self._sqs.change_message_visibility(
                QueueUrl=self.input_queue_url,
                ReceiptHandle=message.get("ReceiptHandle"),
                VisibilityTimeout=0,
            )
        except Exception:
            return

    def _move_poison_message_to_error_queue(self, message: ReceivedMessage) -> None:
        """``MovePoisonMessageToErrorQueue``: the received body and attributes, as they are."""
        try:
            error_queue_url = self._queue_cache.queue_url(self._error_queue_address)
            self._sqs.send_message(
                QueueUrl=error_queue_url,
                MessageBody=body_of(message),
                MessageAttributes=dict(message_attributes(message)),
            )
        except Exception:
            self._return_to_queue(message)
            return
        self._delete(message)
