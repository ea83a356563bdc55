"""The batch processor: partial batch responses, sends, dead-lettering, FIFO groups, logs."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.relay import processor as processor_module
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.processor import Relay
from cross_account_runtime.relay.send_requests import REJECTION_ATTRIBUTE
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    FIFO_INGRESS_ARN,
    FIFO_SHADOW_ARN,
    SALES_ARN,
    LambdaContext,
    RecordingSend,
    ThrottlingError,
    body_headers,
    failed_ids,
    good_record,
    log_lines,
    message_lines,
    outbound_config,
    poison_record,
    request_headers,
    sqs_event,
    sqs_record,
    wrapped_body,
)

INGRESS_URL = parse_queue_arn(BILLING_INGRESS_ARN).url
DLQ_URL = parse_queue_arn(BILLING_SHADOW_DLQ_ARN).url
FIFO_INGRESS_URL = parse_queue_arn(FIFO_INGRESS_ARN).url


@pytest.fixture
def log() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def send() -> RecordingSend:
    return RecordingSend()


@pytest.fixture
def relay(send: RecordingSend, log: io.StringIO) -> Relay:
    return Relay(outbound_config(), send_batch=send, logger=JsonLogger("sqs-relay", stream=log))


def test_a_batch_is_stamped_and_forwarded_and_nothing_is_reported_failed(
    relay: Relay, send: RecordingSend
) -> None:
    records = [good_record() for _ in range(3)]

    response = relay(sqs_event(*records), LambdaContext())

    assert response == {"batchItemFailures": []}
    assert [sent.region for sent in send.sent] == ["us-east-1"] * 3
    for sent in send.to(BILLING_INGRESS_ARN):
        entries = decode(body_headers(sent["MessageBody"])[ARN_HEADER])
        assert entries["NServiceBus.ReplyToAddress"] == SALES_ARN


def test_a_poison_message_among_good_ones_is_dead_lettered_and_acknowledged(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    """Refusals are deterministic: retrying would only delay the verdict (and on FIFO queues
    hold back the messages behind it), so the relay dead-letters at once and acknowledges
    only after SQS accepted the dead-letter send."""
    first, poison, last = good_record(), poison_record(message_id="poison-1"), good_record()

    response = relay(sqs_event(first, poison, last), LambdaContext())

    assert response == {"batchItemFailures": []}
    assert len(send.to(BILLING_INGRESS_ARN)) == 2
    [dead] = send.to(BILLING_SHADOW_DLQ_ARN)
    assert dead["MessageBody"] == poison["body"]
    assert json.loads(dead["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"])["kind"] == (
        "malformed_arn_header"
    )
    [line] = message_lines(log.getvalue(), "poison-1")
    assert line["level"] == "ERROR"
    assert line["outcome"] == "dead_lettered"
    assert line["kind"] == "malformed_arn_header"
    assert "position" in line["reason"]
    assert line["destination_queue"] == BILLING_SHADOW_DLQ_ARN
    assert line["function_request_id"] == LambdaContext.aws_request_id


def test_a_call_that_stays_throttled_marks_exactly_the_messages_it_carried_failed(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    """Twelve messages take two calls (ten, then two); the first fails as a whole."""
    records = [good_record() for _ in range(12)]
    send.fail_next(INGRESS_URL, ThrottlingError("Rate exceeded"))

    response = relay(sqs_event(*records), None)

    assert send.calls == [(INGRESS_URL, 10), (INGRESS_URL, 2)]
    assert failed_ids(response) == [r["messageId"] for r in records[:10]]
    assert len(send.to(BILLING_INGRESS_ARN)) == 2
    lines = [line for line in message_lines(log.getvalue()) if line["outcome"] == "send_failed"]
    assert [line["message_id"] for line in lines] == [r["messageId"] for r in records[:10]]
    assert {line["error"] for line in lines} == {"ThrottlingError: Rate exceeded"}
    assert {line["level"] for line in lines} == {"WARNING"}


def test_an_entry_sqs_refuses_inside_a_batch_marks_only_that_message_failed(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    records = [good_record() for _ in range(3)]
    send.refuse_entry(body_headers(records[1]["body"])["NServiceBus.MessageId"])

    response = relay(sqs_event(*records), None)

    assert send.calls == [(INGRESS_URL, 3)]
    assert failed_ids(response) == [records[1]["messageId"]]
    [line] = [line for line in message_lines(log.getvalue()) if line["outcome"] == "send_failed"]
    assert (line["message_id"], line["error"]) == (
        records[1]["messageId"],
        "InternalError: refused",
    )


def test_a_poison_message_whose_dead_letter_send_fails_is_reported_failed(
    relay: Relay, send: RecordingSend
) -> None:
    """Then SQS retries it and, at worst, its redrive policy moves it: never dropped."""
    good, poison = good_record(), poison_record()
    send.fail_next(DLQ_URL, ThrottlingError("Rate exceeded"))

    response = relay(sqs_event(good, poison), None)

    assert failed_ids(response) == [poison["messageId"]]
    assert send.to(BILLING_SHADOW_DLQ_ARN) == []


def test_messages_from_a_queue_without_a_route_are_reported_failed_every_time(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    """No route means no known dead-letter queue: only the queue's redrive policy can move
    them, after maxReceiveCount failed receives."""
    unrouted = "arn:aws:sqs:us-east-1:111111111111:Unrouted"
    records = [good_record(source=unrouted, receive_count=count) for count in (1, 5)]

    response = relay(sqs_event(*records), None)

    assert failed_ids(response) == [record["messageId"] for record in records]
    assert send.sent == []
    lines = message_lines(log.getvalue())
    assert [line["outcome"] for line in lines] == ["refused", "refused"]
    # Decided with the most received first.
    assert [line["receive_count"] for line in lines] == ["5", "1"]
    assert all("Unrouted" in line["reason"] for line in lines)


def test_a_fifo_failure_stops_the_rest_of_its_group_but_not_other_groups(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    a1, a2, b1, a3, b2 = (
        good_record(source=FIFO_SHADOW_ARN, group_id=group, deduplication_id=name)
        for name, group in (("a1", "A"), ("a2", "A"), ("b1", "B"), ("a3", "A"), ("b2", "B"))
    )
    send.refuse_entry(body_headers(a1["body"])["NServiceBus.MessageId"])

    response = relay(sqs_event(a1, a2, b1, a3, b2), None)

    assert failed_ids(response) == [a1["messageId"], a2["messageId"], a3["messageId"]]
    assert [request["MessageGroupId"] for request in send.to(FIFO_INGRESS_ARN)] == ["B", "B"]
    # [a1, b1], then [a2, b2] with a2 held back; [a3] is not attempted at all.
    assert send.calls == [(FIFO_INGRESS_URL, 2), (FIFO_INGRESS_URL, 1)]
    skipped = [line for line in message_lines(log.getvalue()) if line["outcome"] == "not_attempted"]
    assert [line["message_id"] for line in skipped] == [a2["messageId"], a3["messageId"]]


def test_interleaved_fifo_groups_keep_their_order_at_one_call_per_two_messages(
    relay: Relay, send: RecordingSend
) -> None:
    """No call carries two messages of a group, so a refused entry can never be followed by a
    stored message of its group; two groups take half a call per message."""
    records = [
        good_record(source=FIFO_SHADOW_ARN, group_id="AB"[n % 2], deduplication_id=f"m{n}")
        for n in range(10)
    ]

    response = relay(sqs_event(*records), None)

    assert failed_ids(response) == []
    assert send.calls == [(FIFO_INGRESS_URL, 2)] * 5

    def message_id(body: str) -> str:
        return body_headers(body)["NServiceBus.MessageId"]

    for group in "AB":
        sent = [message_id(r["MessageBody"]) for r in send.requests if r["MessageGroupId"] == group]
        received = [
            message_id(r["body"]) for r in records if r["attributes"]["MessageGroupId"] == group
        ]
        assert sent == received


def test_standard_queue_failures_do_not_stop_messages_of_the_same_group(
    relay: Relay, send: RecordingSend
) -> None:
    records = [good_record(group_id="tenant-1") for _ in range(2)]
    send.refuse_entry(body_headers(records[0]["body"])["NServiceBus.MessageId"])
    response = relay(sqs_event(*records), None)
    assert failed_ids(response) == [records[0]["messageId"]]
    assert len(send.sent) == 1


def test_a_defect_costs_a_retry_never_the_message(
    relay: Relay, send: RecordingSend, log: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(record: Any, config: Any, now: float) -> Any:
        raise KeyError("unexpected")

    monkeypatch.setattr(processor_module, "relay_message", broken)
    record = good_record()
    response = relay(sqs_event(record), None)
    assert failed_ids(response) == [record["messageId"]]
    assert send.sent == []
    [line] = message_lines(log.getvalue())
    assert line["outcome"] == "error"
    assert line["exception_name"] == "KeyError"
    assert "Traceback" in line["exception"]


def test_each_batch_is_summarised_in_one_line_mapping_forwarded_ids_to_sent_ids(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    good, poison, throttled = good_record(), poison_record(), good_record()
    send.refuse_entry(body_headers(throttled["body"])["NServiceBus.MessageId"], "Throttled")
    relay(sqs_event(throttled, good, poison), LambdaContext())
    relay(sqs_event(good_record()), LambdaContext())

    summaries = [line for line in log_lines(log.getvalue()) if line["message"] == "batch relayed"]

    first, second = summaries
    assert first["level"] == "INFO"
    assert (first["records"], first["forwarded"], first["dead_lettered"], first["failed"]) == (
        3,
        1,
        1,
        1,
    )
    forward = send.sent[0]
    assert forward.request["QueueUrl"] == INGRESS_URL
    assert first["send_requests"] == 2, "one call to the ingress queue, one to the DLQ"
    assert first["forwarded_messages"] == {good["messageId"]: forward.message_id}
    assert first["service"] == "sqs-relay"
    assert first["function_request_id"] == LambdaContext.aws_request_id
    assert (first["cold_start"], second["cold_start"]) == (True, False)
    per_message = message_lines(log.getvalue())
    assert {line["message_id"] for line in per_message} == {
        poison["messageId"],
        throttled["messageId"],
    }, "forwards are logged only in the summary"


@pytest.mark.parametrize(
    "event",
    [{}, {"Records": "x"}, {"Records": [{"body": "no message id"}]}],
    ids=["no-records", "records-not-a-list", "record-without-id"],
)
def test_an_event_that_is_not_an_sqs_batch_fails_the_whole_invocation(
    relay: Relay, event: dict[str, Any]
) -> None:
    """Without message ids nothing can be reported failed one by one; failing the invocation
    makes Lambda retry the whole batch."""
    with pytest.raises(ValueError, match="not a Lambda SQS event"):
        relay(event, None)


class ShortOnTime(LambdaContext):
    """A context whose function has less time left than one SQS call's worst case."""

    def __init__(self, remaining_ms: int) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def test_no_call_starts_without_time_for_its_retries_and_its_messages_are_retried(
    relay: Relay, send: RecordingSend, log: io.StringIO
) -> None:
    """botocore may retry a throttled call for up to 35 s; a call started later could outlive
    the function, and Lambda would then retry the whole batch."""
    records = [good_record() for _ in range(3)]

    response = relay(sqs_event(*records), ShortOnTime(34_999))

    assert send.calls == []
    assert failed_ids(response) == [r["messageId"] for r in records]
    lines = [line for line in message_lines(log.getvalue()) if line["outcome"] == "not_attempted"]
    assert len(lines) == 3
    assert relay(sqs_event(good_record()), ShortOnTime(35_000)) == {"batchItemFailures": []}


# Time to be received, unreadable messages, caveats -----------------------------------------

SENT = 1_767_225_600.0
"""The conftest records' SentTimestamp, in seconds."""
TTBR = "NServiceBus.AmazonSQS.TimeToBeReceived"


def timed_relay(send: RecordingSend, log: io.StringIO, config: Any = None) -> Relay:
    """A relay whose clock reads a minute after the records were sent."""
    return Relay(
        config or outbound_config(),
        send_batch=send,
        logger=JsonLogger("sqs-relay", stream=log),
        clock=lambda: SENT + 60,
    )


def test_an_expired_message_is_acknowledged_logged_and_counted_not_lost(
    send: RecordingSend, log: io.StringIO
) -> None:
    expired = sqs_record(wrapped_body(request_headers(**{TTBR: "00:00:30"})))
    alive = sqs_record(wrapped_body(request_headers(**{TTBR: "00:05:00"})))

    response = timed_relay(send, log)(sqs_event(expired, alive), LambdaContext())

    assert response == {"batchItemFailures": []}
    [forward] = send.requests
    assert body_headers(forward["MessageBody"])[TTBR] == "00:04:00"
    [line] = message_lines(log.getvalue())
    assert (line["message_id"], line["outcome"], line["kind"]) == (
        expired["messageId"],
        "expired",
        "expired",
    )
    assert "ran out 30.000 s ago" in line["reason"]
    [summary] = [x for x in log_lines(log.getvalue()) if x["message"] == "batch relayed"]
    assert (summary["expired"], summary["forwarded"], summary["dead_lettered"]) == (1, 1, 0)


def test_an_unreadable_message_forwarded_to_an_error_queue_is_logged_as_such(
    send: RecordingSend, log: io.StringIO
) -> None:
    config = RelayConfig(
        "outbound",
        {
            BILLING_SHADOW_ARN: {
                "destination": BILLING_INGRESS_ARN,
                "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                "forwardUnreadable": True,
            }
        },
        ["Sales"],
    )
    poison = poison_record()

    response = timed_relay(send, log, config)(sqs_event(poison), LambdaContext())

    assert response == {"batchItemFailures": []}
    [forward] = send.requests
    assert (forward["QueueUrl"], forward["MessageBody"]) == (INGRESS_URL, poison["body"])
    [line] = message_lines(log.getvalue())
    assert (line["outcome"], line["level"]) == ("forwarded_unreadable", "WARNING")
    assert line["reason"].startswith("malformed_arn_header: ")
    [summary] = [x for x in log_lines(log.getvalue()) if x["message"] == "batch relayed"]
    assert summary["forwarded_messages"] == {poison["messageId"]: send.sent[0].message_id}


def test_a_time_to_be_received_the_receiver_will_fail_on_is_logged_once_forwarded(
    send: RecordingSend, log: io.StringIO
) -> None:
    record = sqs_record(wrapped_body(request_headers(**{TTBR: "soon"})))
    timed_relay(send, log)(sqs_event(record), LambdaContext())
    [line] = message_lines(log.getvalue())
    assert line["outcome"] == "time_to_be_received_unreadable"
    assert "'soon' is not a TimeSpan" in line["reason"]


# Nothing reaches a dead-letter queue untried -------------------------------------------------


def limited_config(max_receive_count: int = 3) -> RelayConfig:
    return RelayConfig(
        "outbound",
        {
            BILLING_SHADOW_ARN: {
                "destination": BILLING_INGRESS_ARN,
                "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                "maxReceiveCount": max_receive_count,
            }
        },
        ["Sales"],
    )


def test_on_a_standard_queue_the_most_received_messages_are_sent_first(
    send: RecordingSend, log: io.StringIO
) -> None:
    records = [good_record(receive_count=count) for count in (1, 4, 2, 9, 4)]
    for _ in range(5):
        records += [good_record(receive_count=1) for _ in range(3)]

    timed_relay(send, log)(sqs_event(*records), LambdaContext())

    sent_ids = [body_headers(r["MessageBody"])["NServiceBus.MessageId"] for r in send.requests]
    by_id = {body_headers(r["body"])["NServiceBus.MessageId"]: r for r in records}
    counts = [int(by_id[i]["attributes"]["ApproximateReceiveCount"]) for i in sent_ids]
    assert counts[:5] == [9, 4, 4, 2, 1]
    assert counts == sorted(counts, reverse=True)
    assert send.calls[0] == (INGRESS_URL, 10)


def test_a_fifo_queue_keeps_its_order_whatever_the_receive_counts(
    send: RecordingSend, log: io.StringIO
) -> None:
    records = [
        good_record(
            source=FIFO_SHADOW_ARN, group_id="g", receive_count=count, deduplication_id=str(n)
        )
        for n, count in enumerate((1, 5, 3))
    ]
    timed_relay(send, log)(sqs_event(*records), LambdaContext())
    sent_ids = [body_headers(r["MessageBody"])["NServiceBus.MessageId"] for r in send.requests]
    assert sent_ids == [body_headers(r["body"])["NServiceBus.MessageId"] for r in records]


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("AWS.SimpleQueueService.NonExistentQueue", "destination_missing"),
        ("QueueDoesNotExist", "destination_missing"),
        ("KMS.DisabledException", "key_refused"),
        ("KmsAccessDenied", "key_refused"),
        ("RequestThrottled", "send_failed"),
    ],
)
def test_a_send_that_fails_on_the_last_receive_dead_letters_the_message_with_the_failure(
    send: RecordingSend, log: io.StringIO, code: str, kind: str
) -> None:
    last, earlier = good_record(receive_count=3), good_record(receive_count=2)
    send.fail_next(INGRESS_URL, ClientError({"Error": {"Code": code, "Message": "no"}}, "Send"))

    response = timed_relay(send, log, limited_config(3))(sqs_event(earlier, last), LambdaContext())

    assert failed_ids(response) == [earlier["messageId"]]
    [dead] = send.to(BILLING_SHADOW_DLQ_ARN)
    assert dead["MessageBody"] == last["body"]
    reason = json.loads(dead["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"])
    assert reason["kind"] == kind
    assert "failed on the message's last receive (ApproximateReceiveCount 3" in reason["reason"]
    assert code in reason["reason"]
    lines = message_lines(log.getvalue(), last["messageId"])
    assert [(line["outcome"], line.get("error_code")) for line in lines] == [
        (kind, code),
        ("dead_lettered", None),
    ]
    assert lines[1]["kind"] == kind
    [other] = message_lines(log.getvalue(), earlier["messageId"])
    assert other["outcome"] == kind


def test_an_entry_refused_on_its_last_receive_is_dead_lettered_too(
    send: RecordingSend, log: io.StringIO
) -> None:
    record = good_record(receive_count=5)
    send.refuse_entry(
        body_headers(record["body"])["NServiceBus.MessageId"], "KMS.NotFoundException", INGRESS_URL
    )

    response = timed_relay(send, log, limited_config(5))(sqs_event(record), LambdaContext())

    assert response == {"batchItemFailures": []}
    [dead] = send.to(BILLING_SHADOW_DLQ_ARN)
    assert json.loads(dead["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"])["kind"] == (
        "key_refused"
    )


def test_without_a_receive_count_on_the_route_a_failed_send_is_left_to_redrive(
    send: RecordingSend, log: io.StringIO
) -> None:
    record = good_record(receive_count=50)
    send.fail_next(INGRESS_URL, ThrottlingError("Rate exceeded"))
    response = timed_relay(send, log)(sqs_event(record), LambdaContext())
    assert failed_ids(response) == [record["messageId"]]
    assert send.to(BILLING_SHADOW_DLQ_ARN) == []


def test_a_failed_last_receive_dead_letter_send_is_reported_failed(
    send: RecordingSend, log: io.StringIO
) -> None:
    record = good_record(receive_count=3)
    send.fail_next(INGRESS_URL, ThrottlingError("Rate exceeded"))
    send.fail_next(DLQ_URL, ThrottlingError("Rate exceeded"))
    response = timed_relay(send, log, limited_config(3))(sqs_event(record), LambdaContext())
    assert failed_ids(response) == [record["messageId"]]
    assert [line["outcome"] for line in message_lines(log.getvalue())] == [
        "send_failed",
        "send_failed",
    ]


class WaitingClock:
    """A clock that reads a minute after the records were sent for the first ``decisions``
    readings (one per record decided), and ``wait`` seconds later from then on: the records
    waited that long for their call."""

    def __init__(self, decisions: int, wait: float) -> None:
        self.readings = 0
        self.decisions = decisions
        self.wait = wait

    def __call__(self) -> float:
        self.readings += 1
        return SENT + 60 + (self.wait if self.readings > self.decisions else 0)


def test_a_message_that_waited_for_its_call_carries_the_time_left_when_it_is_sent(
    send: RecordingSend, log: io.StringIO
) -> None:
    waited, expired = (
        sqs_record(wrapped_body(request_headers(**{TTBR: ttbr})))
        for ttbr in ("00:05:00", "00:01:10")
    )
    relay = Relay(
        outbound_config(),
        send_batch=send,
        logger=JsonLogger("sqs-relay", stream=log),
        clock=WaitingClock(decisions=2, wait=30),
    )

    response = relay(sqs_event(waited, expired), LambdaContext())

    assert response == {"batchItemFailures": []}
    [forward] = send.requests
    assert body_headers(forward["MessageBody"])[TTBR] == "00:03:30"
    [line] = message_lines(log.getvalue())
    assert (line["message_id"], line["outcome"]) == (expired["messageId"], "expired")
    assert line["message"] == "expired while waiting for its call; not delivered"
    [summary] = [x for x in log_lines(log.getvalue()) if x["message"] == "batch relayed"]
    assert (summary["expired"], summary["forwarded"]) == (1, 1)
