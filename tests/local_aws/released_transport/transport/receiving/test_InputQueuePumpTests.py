# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Receiving/
InputQueuePumpTests.cs`` (the visibility-renewal tests excepted: renewal is not modelled),
plus what the pump decides that no upstream unit test pins: the start-up messages, the delivery
attempt count and the time-to-be-received arithmetic."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local_aws.released_transport.core.incoming import (
    ErrorContext,
    ErrorHandleResult,
    MessageContext,
)
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.sqs_errors import QueueDoesNotExistError
from local_aws.released_transport.transport.receiving.input_pump import (
    InputQueuePump,
    MessageFate,
)
from tests.local_aws.released_transport.fake_sqs import FakeSqs, client_error

FAKE_INPUT_QUEUE_URL = "queueUrl"


def _pump(sqs: FakeSqs, *, clock: Any = None, setup_infrastructure: bool = False) -> InputQueuePump:
    cache = QueueCache(sqs, get_sqs_queue_name, "")
    cache.set_queue_url("queue", FAKE_INPUT_QUEUE_URL)
    pump = InputQueuePump(
        sqs,
        cache,
        "queue",
        "error",
        max_concurrency=1,
        visibility_timeout_seconds=30,
        setup_infrastructure=setup_infrastructure,
        clock=clock or (lambda: datetime.now(UTC)),
    )
    pump.initialize()
    return pump


class Recorder:
    """``on_message`` / ``on_error`` that remember what they saw."""

    def __init__(
        self, *, fail: bool = False, result: ErrorHandleResult = ErrorHandleResult.HANDLED
    ):
        self.messages: list[MessageContext] = []
        self.errors: list[ErrorContext] = []
        self._fail = fail
        self._result = result

    def on_message(self, context: MessageContext) -> None:
        self.messages.append(context)
        if self._fail:
            raise RuntimeError("handler failed")

    def on_error(self, context: ErrorContext) -> ErrorHandleResult:
        self.errors.append(context)
        return self._result


def _poison(receipt_handle: str = "receipt-handle") -> dict[str, Any]:
    return {
        "ReceiptHandle": receipt_handle,
        "MessageId": "native-poison",
        "MessageAttributes": {"NServiceBus.MessageId": {"StringValue": str(uuid.uuid4())}},
        "Body": None,
    }


def _wrapped(
    headers: str, *, attributes: dict[str, Any] | None = None, sent: str = "10"
) -> dict[str, Any]:
    return {
        "ReceiptHandle": "receipt-handle",
        "MessageId": str(uuid.uuid4()),
        "Attributes": {"SentTimestamp": sent, "ApproximateReceiveCount": "1"},
        "MessageAttributes": attributes or {},
        "Body": f'{{"Headers":{headers},"Body":"empty message","S3BodyKey":null}}',
    }


def test_Start_loops_until_canceled() -> None:
    sqs = FakeSqs()
    recorder = Recorder()

    _pump(sqs).poll(recorder.on_message, recorder.on_error)

    (request,) = sqs.calls("receive_message")
    assert request["MaxNumberOfMessages"] == 1
    assert request["QueueUrl"] == FAKE_INPUT_QUEUE_URL
    assert request["MessageAttributeNames"] == ["All"]
    assert request["MessageSystemAttributeNames"] == ["ApproximateReceiveCount", "SentTimestamp"]
    assert request["WaitTimeSeconds"] == 20
    assert request["VisibilityTimeout"] == 30


def test_Poison_messages_are_moved_to_error_queue_and_deleted_without_processing() -> None:
    sqs = FakeSqs()
    recorder = Recorder()
    message = _poison()

    result = _pump(sqs).process(message, recorder.on_message, recorder.on_error)

    assert result.fate is MessageFate.POISON
    assert recorder.messages == []
    assert sqs.calls("send_message") == [
        {
            "QueueUrl": "error",
            "MessageBody": None,
            "MessageAttributes": message["MessageAttributes"],
        }
    ]
    assert [call["ReceiptHandle"] for call in sqs.calls("delete_message")] == ["receipt-handle"]


@pytest.mark.parametrize(
    "exception",
    [
        Exception(),
        client_error("ReceiptHandleIsInvalid", "Ooops"),
        client_error("InvalidParameterValue", "Ooops"),
    ],
    ids=["Exception", "ReceiptHandleIsInvalidException", "AmazonSQSException-visibility-expired"],
)
def test_Poison_messages_failed_to_be_deleted_are_deleted_on_next_receive_without_processing(
    exception: Exception,
) -> None:
    sqs = FakeSqs()
    recorder = Recorder()
    pump = _pump(sqs)
    sqs.failures["delete_message"] = exception

    pump.process(_poison("receipt-handle-1"), recorder.on_message, recorder.on_error)
    del sqs.failures["delete_message"]
    second = pump.process(_poison("receipt-handle-2"), recorder.on_message, recorder.on_error)

    assert second.fate is MessageFate.DELETED_WITHOUT_PROCESSING
    assert recorder.messages == []
    assert len(sqs.calls("send_message")) == 1
    assert [call["ReceiptHandle"] for call in sqs.calls("delete_message")] == [
        "receipt-handle-1",
        "receipt-handle-2",
    ]


def test_Expired_messages_are_deleted_without_processing() -> None:
    sqs = FakeSqs()
    recorder = Recorder()
    message = _wrapped(
        '{"NServiceBus.MessageId":"id","NServiceBus.AmazonSQS.TimeToBeReceived":"01:00:00"}'
    )

    result = _pump(sqs).process(message, recorder.on_message, recorder.on_error)

    assert result.fate is MessageFate.EXPIRED
    assert recorder.messages == []
    assert [call["ReceiptHandle"] for call in sqs.calls("delete_message")] == ["receipt-handle"]


def test_Processed_messages_are_deleted() -> None:
    sqs = FakeSqs()
    recorder = Recorder()

    result = _pump(sqs).process(
        _wrapped('{"NServiceBus.MessageId":"id"}'), recorder.on_message, recorder.on_error
    )

    assert result.fate is MessageFate.PROCESSED
    assert len(recorder.messages) == 1
    assert [call["ReceiptHandle"] for call in sqs.calls("delete_message")] == ["receipt-handle"]


def _native(attributes: dict[str, str]) -> dict[str, Any]:
    return {
        "ReceiptHandle": "receipt-handle",
        "MessageId": "native-id",
        "Attributes": {"SentTimestamp": "10", "ApproximateReceiveCount": "1"},
        "MessageAttributes": {
            "NServiceBus.MessageId": {"StringValue": "id"},
            **{name: {"StringValue": value} for name, value in attributes.items()},
        },
        "Body": "empty message",
    }


def test_Custom_native_headers_are_propagated_to_transport_message_headers() -> None:
    sqs = FakeSqs()
    recorder = Recorder()

    _pump(sqs).process(
        _native({"custom-header-key": "custom header value"}),
        recorder.on_message,
        recorder.on_error,
    )

    assert recorder.messages[0].headers["custom-header-key"] == "custom header value"


def test_Message_type_fullname_header_is_propagated_to_transport_message_headers() -> None:
    sqs = FakeSqs()
    recorder = Recorder()

    _pump(sqs).process(
        _native({"MessageTypeFullName": "SomeMessageTypeName"}),
        recorder.on_message,
        recorder.on_error,
    )

    assert recorder.messages[0].headers["MessageTypeFullName"] == "SomeMessageTypeName"


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("NServiceBus.AmazonSQS.Headers", "{}"),
        ("NServiceBus.AmazonSQS.DelaySeconds", "custom-header-value"),
        ("NServiceBus.AmazonSQS.TimeToBeReceived", "custom-header-value"),
    ],
)
def test_Excluded_transport_headers_are_not_propagate_to_transport_message_headers(
    header: str, value: str
) -> None:
    sqs = FakeSqs()
    recorder = Recorder()

    _pump(sqs).process(_native({header: value}), recorder.on_message, recorder.on_error)

    assert header not in recorder.messages[0].headers


# What no upstream unit test pins.


@pytest.mark.parametrize(
    ("setup_infrastructure", "advice"),
    [
        (True, "Ensure this process has the required permissions to create queues on Amazon SQS."),
        (
            False,
            "Call endpointConfiguration.EnableInstallers() to create the queues at startup, or"
            " create them manually.",
        ),
    ],
)
def test_a_missing_input_queue_stops_the_start(setup_infrastructure: bool, advice: str) -> None:
    sqs = FakeSqs()
    sqs.missing_queues.add("Sales")
    pump = InputQueuePump(
        sqs,
        QueueCache(sqs, get_sqs_queue_name, ""),
        "Sales",
        "error",
        setup_infrastructure=setup_infrastructure,
    )

    with pytest.raises(QueueDoesNotExistError) as refused:
        pump.initialize()

    assert str(refused.value) == f"Queue `Sales` doesn't exist. {advice}"


def test_a_failure_counts_attempts_and_returns_the_message_for_an_immediate_retry() -> None:
    sqs = FakeSqs()
    recorder = Recorder(fail=True, result=ErrorHandleResult.RETRY_REQUIRED)
    pump = _pump(sqs)
    message = _wrapped('{"NServiceBus.MessageId":"id","NServiceBus.Retries":"2"}')

    first = pump.process(message, recorder.on_message, recorder.on_error)
    pump.process(message, recorder.on_message, recorder.on_error)
    message["Attributes"]["ApproximateReceiveCount"] = "7"
    pump.process(message, recorder.on_message, recorder.on_error)

    assert first.fate is MessageFate.RETRY_REQUIRED
    assert [error.immediate_processing_failures for error in recorder.errors] == [1, 2, 7]
    assert recorder.errors[0].delayed_deliveries_performed == 2
    assert recorder.errors[0].message_id == "id"
    assert [call["VisibilityTimeout"] for call in sqs.calls("change_message_visibility")] == [0] * 3
    assert sqs.calls("delete_message") == []


def test_a_handled_failure_is_deleted() -> None:
    sqs = FakeSqs()
    recorder = Recorder(fail=True)

    result = _pump(sqs).process(
        _wrapped('{"NServiceBus.MessageId":"id"}'), recorder.on_message, recorder.on_error
    )

    assert result.fate is MessageFate.HANDLED_AFTER_FAILURE
    assert isinstance(result.error, RuntimeError)
    assert len(sqs.calls("delete_message")) == 1


def test_a_failing_recoverability_returns_the_message() -> None:
    sqs = FakeSqs()

    def broken(_context: ErrorContext) -> ErrorHandleResult:
        raise ValueError("policy broke")

    result = _pump(sqs).process(
        _wrapped('{"NServiceBus.MessageId":"id"}'), Recorder(fail=True).on_message, broken
    )

    assert result.fate is MessageFate.RETURNED_TO_QUEUE
    assert [call["VisibilityTimeout"] for call in sqs.calls("change_message_visibility")] == [0]


def test_an_empty_message_id_is_replaced_by_the_native_id_for_recoverability() -> None:
    sqs = FakeSqs()
    recorder = Recorder(fail=True)
    message = _wrapped('{"NServiceBus.MessageId":"","NServiceBus.EnclosedMessageTypes":"T"}')

    _pump(sqs).process(message, recorder.on_message, recorder.on_error)

    assert recorder.errors[0].message_id == message["MessageId"]
    assert recorder.errors[0].headers["NServiceBus.MessageId"] == message["MessageId"]


@pytest.mark.parametrize(
    ("elapsed", "fate"),
    [(timedelta(seconds=59), MessageFate.PROCESSED), (timedelta(seconds=60), MessageFate.EXPIRED)],
)
def test_time_to_be_received_counts_from_sent_timestamp(
    elapsed: timedelta, fate: MessageFate
) -> None:
    sent = datetime(2024, 5, 1, tzinfo=UTC)
    sqs = FakeSqs()
    recorder = Recorder()
    message = _wrapped(
        '{"NServiceBus.MessageId":"id","NServiceBus.AmazonSQS.TimeToBeReceived":"00:01:00"}',
        sent=str(int(sent.timestamp() * 1000)),
    )

    result = _pump(sqs, clock=lambda: sent + elapsed).process(
        message, recorder.on_message, recorder.on_error
    )

    assert result.fate is fate
    if recorder.messages:
        assert "NServiceBus.AmazonSQS.TimeToBeReceived" not in recorder.messages[0].headers


@pytest.mark.parametrize(
    ("ttbr", "elapsed", "fate"),
    [
        ("10675199.02:48:05.4775807", timedelta(days=36_500), MessageFate.PROCESSED),
        ("1", timedelta(hours=23), MessageFate.PROCESSED),
        ("1", timedelta(days=1), MessageFate.EXPIRED),
        (" 00:00:30 ", timedelta(seconds=30), MessageFate.EXPIRED),
        ("0:0:0:30.5", timedelta(seconds=30), MessageFate.PROCESSED),
        ("-00:00:01", timedelta(0), MessageFate.EXPIRED),
    ],
)
def test_the_time_to_be_received_is_read_with_TimeSpan_Parse_and_MaxValue_never_expires(
    ttbr: str, elapsed: timedelta, fate: MessageFate
) -> None:
    """``IsMessageExpired``: ``TimeSpan.Parse`` of the header (a day alone, white space, the
    ``d:hh:mm:ss`` form, a sign), ``TimeSpan.MaxValue`` exactly is never expired (what a
    one-time custom check and saga audit send), else ``SentTimestamp + TTBR <= now``."""
    sent = datetime(2024, 5, 1, tzinfo=UTC)
    message = _wrapped(
        f'{{"NServiceBus.MessageId":"id","NServiceBus.AmazonSQS.TimeToBeReceived":"{ttbr}"}}',
        sent=str(int(sent.timestamp() * 1000)),
    )

    result = _pump(FakeSqs(), clock=lambda: sent + elapsed).process(
        message, Recorder().on_message, Recorder().on_error
    )

    assert result.fate is fate


@pytest.mark.parametrize("ttbr", ["not a timespan", "10675199.01:48:05.4775807"])
def test_a_ttbr_that_cannot_be_evaluated_returns_the_message_every_time(ttbr: str) -> None:
    """A malformed value fails ``TimeSpan.Parse``; ``MaxValue - 1 h`` overflows ``SentTimestamp +
    TTBR``. Both throw outside the poison guard, so the message goes back to the queue."""
    sqs = FakeSqs()
    recorder = Recorder()
    message = _wrapped(
        f'{{"NServiceBus.MessageId":"id","NServiceBus.AmazonSQS.TimeToBeReceived":"{ttbr}"}}',
        sent="1700000000000",
    )

    result = _pump(sqs).process(message, recorder.on_message, recorder.on_error)

    assert result.fate is MessageFate.RETURNED_TO_QUEUE
    assert recorder.messages == []


def test_the_error_queue_is_resolved_by_name_when_poison_arrives() -> None:
    sqs = FakeSqs()
    sqs.missing_queues.add("error")

    result = _pump(sqs).process(_poison(), Recorder().on_message, Recorder().on_error)

    assert result.fate is MessageFate.POISON
    assert sqs.calls("send_message") == []
    assert [call["VisibilityTimeout"] for call in sqs.calls("change_message_visibility")] == [0]
