# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Receiving/
DelayedMessagesPumpTests.cs``: the start-up check's messages and the consume step's sends,
deletes and releases; then the due / not-due decision for given elapsed times, and a 20-minute
delayed send followed through the delay queue with a fake clock, decisions only."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import pytest

from local_aws.released_transport.core.outgoing import (
    DispatchConsistency,
    DispatchProperties,
    OutgoingMessage,
    TransportOperation,
)
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.receiving.delayed_pump import (
    DelayedMessagesPump,
    DelayQueueCheckError,
    prepare_delayed_message,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher
from tests.local_aws.released_transport.fake_sqs import FakeSqs, client_error

FAKE_INPUT_QUEUE_URL = "queueUrl"
DELAY_QUEUE_URL = "queueUrl-delay.fifo"
MAXIMUM_SIZE = 1024 * 1024
FOUR_DAYS = str(4 * 24 * 3600)


def _initialized(
    sqs: FakeSqs, receive_address: str = FAKE_INPUT_QUEUE_URL, prefix: str = ""
) -> DelayedMessagesPump:
    pump = DelayedMessagesPump(
        sqs, QueueCache(sqs, get_sqs_queue_name, prefix), receive_address, sleep=lambda _s: None
    )
    sqs.queue_attributes.setdefault(
        get_sqs_queue_name(f"{receive_address}-delay.fifo", prefix),
        {"DelaySeconds": "900", "MessageRetentionPeriod": FOUR_DAYS},
    )
    pump.initialize()
    return pump


def _check(attributes: dict[str, str]) -> str:
    sqs = FakeSqs()
    sqs.queue_attributes["Prefixqueue-delay.fifo"] = attributes
    with pytest.raises(DelayQueueCheckError) as refused:
        _initialized(sqs, "queue", "Prefix")
    return str(refused.value)


def test_Initialize_delay_seconds_smaller_than_required_throws() -> None:
    assert _check({"DelaySeconds": "1"}) == (
        "Delayed delivery queue 'queue-delay.fifo' has a Delivery Delay of '00:00:01'. It should"
        " be at least '00:15:00'."
    )


def test_Initialize_retention_period_smaller_than_required_throws() -> None:
    assert _check({"DelaySeconds": "900", "MessageRetentionPeriod": "10"}) == (
        "Delayed delivery queue 'queue-delay.fifo' has a Message Retention Period of '00:00:10'."
        " It should be at least '4.00:00:00'."
    )


def test_Initialize_redrive_policy_used_throws() -> None:
    attributes = {"DelaySeconds": "900", "MessageRetentionPeriod": FOUR_DAYS, "RedrivePolicy": "{}"}
    assert _check(attributes) == (
        "Delayed delivery queue 'queue-delay.fifo' should not have Redrive Policy enabled."
    )


def test_Initialize_reads_the_attributes_up_to_four_times_while_the_delay_reads_zero() -> None:
    sqs = FakeSqs()
    sqs.queue_attributes["queue-delay.fifo"] = {}
    slept: list[float] = []
    pump = DelayedMessagesPump(
        sqs, QueueCache(sqs, get_sqs_queue_name, ""), "queue", sleep=slept.append
    )

    with pytest.raises(DelayQueueCheckError, match="Delivery Delay of '00:00:00'"):
        pump.initialize()

    assert len(sqs.calls("get_queue_attributes")) == 4
    assert slept == [0, 1, 2, 3]


def test_Start_loops_until_canceled() -> None:
    sqs = FakeSqs()

    _initialized(sqs).poll()

    assert sqs.calls("receive_message") == [
        {
            "QueueUrl": DELAY_QUEUE_URL,
            "MaxNumberOfMessages": 10,
            "WaitTimeSeconds": 20,
            "MessageSystemAttributeNames": [
                "MessageDeduplicationId",
                "SentTimestamp",
                "ApproximateFirstReceiveTimestamp",
                "ApproximateReceiveCount",
            ],
            "MessageAttributeNames": ["All"],
        }
    ]


def test_Consume_no_messages_received_doesnt_throw() -> None:
    sqs = FakeSqs()

    assert _initialized(sqs).poll() == []


def _delayed(
    delay: str, *, body_size: int = 10, receipt: str = "", dedup: str | None = None
) -> dict[str, Any]:
    message_id = str(uuid.uuid4())
    return {
        "MessageId": str(uuid.uuid4()),
        "ReceiptHandle": receipt,
        "Attributes": {
            "SentTimestamp": "10",
            "ApproximateFirstReceiveTimestamp": "15",
            "ApproximateReceiveCount": "0",
            "MessageDeduplicationId": dedup or message_id,
        },
        "MessageAttributes": {
            "NServiceBus.AmazonSQS.DelaySeconds": {"StringValue": delay},
            "NServiceBus.MessageId": {"StringValue": message_id},
        },
        "Body": "a" * body_size,
    }


def _size_for_batches(batches: int) -> int:
    """``GetSqsMessageSizeToEnsureNumberOfBatches``."""
    return batches * MAXIMUM_SIZE // 10 - 500


@pytest.mark.parametrize(
    ("delay", "queue"), [("20", FAKE_INPUT_QUEUE_URL), ("1500", DELAY_QUEUE_URL)]
)
def test_Consume_sends_due_and_not_yet_due_messages_in_batches(delay: str, queue: str) -> None:
    """``Consume_sends_due_messages_in_batches_to_the_input_queue`` and
    ``Consume_sends_not_yet_due_messages_in_batches_back_to_delayed_queue``."""
    sqs = FakeSqs()
    sqs.received.append([_delayed(delay, body_size=_size_for_batches(2)) for _ in range(10)])

    _initialized(sqs).poll()

    assert sqs.calls("send_message") == []
    batches = sqs.calls("send_message_batch")
    assert [len(batch["Entries"]) for batch in batches] == [5, 5]
    assert {batch["QueueUrl"] for batch in batches} == {queue}


@pytest.mark.parametrize("delay", ["20", "1500"])
def test_Consume_deletes_due_and_not_yet_due_messages_in_batches(delay: str) -> None:
    """``Consume_deletes_due_messages_in_batches`` and
    ``Consume_deletes_not_yet_due_messages_in_batches``."""
    sqs = FakeSqs()
    sqs.received.append(
        [_delayed(delay, body_size=_size_for_batches(2), receipt=f"Message-{i}") for i in range(10)]
    )

    _initialized(sqs).poll()

    assert sqs.calls("delete_message") == []
    deletes = sqs.calls("delete_message_batch")
    assert [batch["QueueUrl"] for batch in deletes] == [DELAY_QUEUE_URL] * 2
    assert [[entry["ReceiptHandle"] for entry in batch["Entries"]] for batch in deletes] == [
        [f"Message-{i}" for i in range(5)],
        [f"Message-{i}" for i in range(5, 10)],
    ]


def test_Consume_with_messages_due_and_not_due_sends_in_batches_per_destination() -> None:
    sqs = FakeSqs()
    sqs.received.append(
        [_delayed("20", body_size=50 * 1024), _delayed("1500", body_size=50 * 1024)]
    )

    _initialized(sqs).poll()

    batches = sqs.calls("send_message_batch")
    assert [(batch["QueueUrl"], len(batch["Entries"])) for batch in batches] == [
        (FAKE_INPUT_QUEUE_URL, 1),
        (DELAY_QUEUE_URL, 1),
    ]


def test_Consume_if_batch_deletion_fails_rethrows() -> None:
    sqs = FakeSqs()
    problem = client_error("InternalError", "Problem", 500)
    sqs.failures["delete_message_batch"] = problem
    sqs.received.append([_delayed("20")])
    pump = _initialized(sqs)

    with pytest.raises(type(problem)) as raised:
        pump.poll()

    assert raised.value is problem


def test_Consume_if_batch_deletion_fails_tries_single_delete() -> None:
    """The single delete goes to the prepared message's queue URL: for a due message, the input
    queue, as the released code does."""
    sqs = FakeSqs()
    sqs.fail_delete_batch_entry = lambda _entry: True
    sqs.received.append([_delayed("20", receipt="FirstMessage")])

    _initialized(sqs).poll()

    assert sqs.calls("delete_message") == [
        {"QueueUrl": FAKE_INPUT_QUEUE_URL, "ReceiptHandle": "FirstMessage"}
    ]


def test_Consume_if_batch_deletion_and_single_delete_fails_throws() -> None:
    sqs = FakeSqs()
    sqs.fail_delete_batch_entry = lambda _entry: True
    problem = client_error("InternalError", "Problem", 500)
    sqs.failures["delete_message"] = problem
    sqs.received.append([_delayed("20", receipt="FirstMessage")])
    pump = _initialized(sqs)

    with pytest.raises(type(problem)) as raised:
        pump.poll()

    assert raised.value is problem


def test_Consume_if_batch_deletion_and_single_delete_fails_with_receipt_handle_invalid_ignores() -> (
    None
):
    sqs = FakeSqs()
    sqs.fail_delete_batch_entry = lambda _entry: True
    sqs.failures["delete_message"] = client_error("InvalidParameterValue", "Problem", 400)
    sqs.received.append([_delayed("20", receipt="FirstMessage")])

    _initialized(sqs).poll()


def test_Consume_if_batch_send_fails_makes_messages_appear_again() -> None:
    sqs = FakeSqs()
    sqs.fail_batch_entry = lambda _entry: True
    sqs.received.append(
        [_delayed("20", receipt="FirstMessage"), _delayed("20", receipt="SecondMessage")]
    )

    _initialized(sqs).poll()

    (release,) = sqs.calls("change_message_visibility_batch")
    assert release["QueueUrl"] == DELAY_QUEUE_URL
    assert [(e["ReceiptHandle"], e["VisibilityTimeout"]) for e in release["Entries"]] == [
        ("FirstMessage", 0),
        ("SecondMessage", 0),
    ]
    assert sqs.calls("delete_message_batch") == []


def test_Consume_if_change_visibility_fails_does_not_rethrow() -> None:
    sqs = FakeSqs()
    sqs.fail_batch_entry = lambda _entry: True
    sqs.failures["change_message_visibility_batch"] = client_error("InternalError", "Problem", 500)
    sqs.received.append([_delayed("20")])

    _initialized(sqs).poll()


# The decision, for given times.

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _received_at(
    delay: int,
    sent: int,
    first_receive: int,
    *,
    receive_count: int = 1,
    attributes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "MessageId": "native",
        "ReceiptHandle": "r",
        "Attributes": {
            "SentTimestamp": str(sent * 1000),
            "ApproximateFirstReceiveTimestamp": str(first_receive * 1000),
            "ApproximateReceiveCount": str(receive_count),
            "MessageDeduplicationId": "dedup",
        },
        "MessageAttributes": {
            "NServiceBus.AmazonSQS.DelaySeconds": {"DataType": "String", "StringValue": str(delay)},
            "NServiceBus.MessageId": {"DataType": "String", "StringValue": "original"},
            **(attributes or {}),
        },
        "Body": "body",
    }


def _decide(message: dict[str, Any], now_seconds: float = 0) -> Any:
    return prepare_delayed_message(
        message,
        input_queue_url="input",
        delay_queue_url="delay",
        now=EPOCH + timedelta(seconds=now_seconds),
    )


@pytest.mark.parametrize(
    ("delay", "elapsed", "queue", "delay_seconds", "remaining_attribute"),
    [
        (1200, 900, "input", 300, None),
        (1800, 900, "input", 900, None),
        (1801, 900, "delay", 0, "901"),
        (2400, 900, "delay", 0, "1500"),
        (900, 900, "input", 0, None),
        (600, 900, "input", 0, None),
        (1200, 899.999, "input", 301, None),
    ],
)
def test_due_or_not_yet_due(
    delay: int, elapsed: float, queue: str, delay_seconds: int, remaining_attribute: str | None
) -> None:
    message = _received_at(delay, 0, 0)
    message["Attributes"]["ApproximateFirstReceiveTimestamp"] = str(int(elapsed * 1000))

    prepared = _decide(message)

    assert (prepared.queue_url, prepared.delay_seconds) == (queue, delay_seconds)
    remaining = prepared.message_attributes.get("NServiceBus.AmazonSQS.DelaySeconds")
    assert (remaining or {}).get("StringValue") == remaining_attribute
    assert prepared.message_attributes["NServiceBus.MessageId"]["StringValue"] == "original"
    assert prepared.body == "body"
    if queue == "delay":
        assert prepared.message_group_id == prepared.message_deduplication_id == "dedup"
    else:
        assert prepared.message_group_id is None
        assert prepared.message_deduplication_id is None


def test_a_message_received_again_counts_from_now() -> None:
    message = _received_at(1200, 0, 100, receive_count=2)

    assert _decide(message, now_seconds=1000).delay_seconds == 200


def test_other_attributes_travel_with_the_message() -> None:
    extra = {"SomethingRandom": {"DataType": "String", "StringValue": "bla"}}

    due = _decide(_received_at(1000, 0, 900, attributes=extra))
    not_due = _decide(_received_at(2000, 0, 900, attributes=extra))

    assert list(due.message_attributes) == ["NServiceBus.MessageId", "SomethingRandom"]
    assert list(not_due.message_attributes) == [
        "NServiceBus.AmazonSQS.DelaySeconds",
        "NServiceBus.MessageId",
        "SomethingRandom",
    ]


def test_without_an_id_attribute_the_native_id_and_then_the_deduplication_id_are_used() -> None:
    message = _received_at(1000, 0, 900)
    del message["MessageAttributes"]["NServiceBus.MessageId"]
    assert _decide(message).message_id == "native"

    message["MessageId"] = ""
    assert _decide(message).message_id == "dedup"


START: Final = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("delay_seconds", "expected_hops"),
    [(1200, [("input", 300)]), (2400, [("delay", 0), ("input", 600)])],
    ids=["20 minutes", "40 minutes"],
)
def test_a_twenty_minute_delay_end_to_end_with_a_fake_clock(
    delay_seconds: int, expected_hops: list[tuple[str, int]]
) -> None:
    """The dispatcher sends a 1200 s delay to the delay queue; the delay queue (``DelaySeconds``
    900) hands it out at +900 s; the pump sends it to the input queue with the 300 s still owed;
    the input queue hands it out at +1200 s. A 40-minute delay goes round the delay queue twice.
    The clock is the seconds since the send; the queues' behaviour is played by the loop."""
    sqs = FakeSqs()
    dispatcher = MessageDispatcher(
        sqs, QueueCache(sqs, get_sqs_queue_name, ""), clock=lambda: START
    )
    dispatcher.dispatch(
        [
            TransportOperation(
                OutgoingMessage("the-id", {"NServiceBus.MessageId": "the-id"}, b"{}"),
                "Sales",
                DispatchProperties(delay_deliver_with=timedelta(seconds=delay_seconds)),
                DispatchConsistency.ISOLATED,
            )
        ]
    )
    (sent,) = sqs.calls("send_message")
    assert sent["QueueUrl"] == "Sales-delay.fifo"
    assert sent["MessageGroupId"] == sent["MessageDeduplicationId"] == "the-id"

    sent_at, hops, arrival = 0, [], None
    attributes: dict[str, Any] = sent["MessageAttributes"]
    while arrival is None:
        first_receive = sent_at + 900
        message = {
            "MessageId": "native",
            "ReceiptHandle": "r",
            "Attributes": {
                "SentTimestamp": str(sent_at * 1000),
                "ApproximateFirstReceiveTimestamp": str(first_receive * 1000),
                "ApproximateReceiveCount": "1",
                "MessageDeduplicationId": "the-id",
            },
            "MessageAttributes": attributes,
            "Body": sent["MessageBody"],
        }
        prepared = prepare_delayed_message(
            message,
            input_queue_url="input",
            delay_queue_url="delay",
            now=EPOCH + timedelta(seconds=first_receive),
        )
        hops.append((prepared.queue_url, prepared.delay_seconds))
        if prepared.queue_url == "input":
            arrival = first_receive + prepared.delay_seconds
            assert "NServiceBus.AmazonSQS.DelaySeconds" not in prepared.message_attributes
            assert prepared.message_id == "the-id"
        attributes, sent_at = prepared.message_attributes, first_receive

    assert hops == expected_hops
    assert arrival == delay_seconds


@pytest.mark.parametrize(
    ("attribute", "queue", "remaining_attribute"),
    [
        ("1200", "delay", "1200"),
        (" \t1200\r\n", "delay", "1200"),
        ("+1200", "delay", "1200"),
        ("1200\x00\x00", "delay", "1200"),
        ("3000000000", "delay", "3000000000"),
        ("9223372036854775807", "delay", "9223372036854775807"),
        ("9223372036854775808", "input", None),
        ("1_200", "input", None),
        ("\uff11\uff12\uff10\uff10", "input", None),
        ("\u00a01200", "input", None),
        ("1200.0", "input", None),
        ("", "input", None),
    ],
)
def test_the_delay_attribute_is_read_as_long_TryParse_reads_it(
    attribute: str, queue: str, remaining_attribute: str | None
) -> None:
    """``long.TryParse(delayAttribute.StringValue, out delaySeconds)``: white space 0x09-0x0D and
    space around, a sign, ASCII digits, trailing U+0000, the ``long`` range; anything else is
    a delay of 0 (due now). Python's ``int()`` would take ``1_200``, full-width digits and a
    no-break space, and has no range."""
    message = _received_at(0, 0, 0)
    message["MessageAttributes"]["NServiceBus.AmazonSQS.DelaySeconds"]["StringValue"] = attribute

    prepared = _decide(message)

    assert prepared.queue_url == queue
    remaining = prepared.message_attributes.get("NServiceBus.AmazonSQS.DelaySeconds")
    assert (remaining or {}).get("StringValue") == remaining_attribute
