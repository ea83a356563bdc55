"""A delay over 15 minutes to another account: the outbound relay reads the shadow of the
receiver's delay queue as NServiceBus's delayed messages pump reads its own, keeping the
message in the delay queue until less than 900 s remain, then forwarding it to the ingress
queue with the rest of the delay as SQS's own."""

from __future__ import annotations

from typing import Any

import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.core import relay_message
from cross_account_runtime.relay.decision import DecisionKind
from cross_account_runtime.relay.delays import DELAY_SECONDS_ATTRIBUTE, remaining_delay
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    SALES_ARN,
    body_headers,
    lambda_attribute,
    request_headers,
    sqs_record,
    wrapped_body,
)

DELAY_SHADOW_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing-delay.fifo"
DELAY_SHADOW_DLQ_ARN = "arn:aws:sqs:us-east-1:111111111111:Billing-delay-dlq.fifo"
SENT_MS = 1_767_225_600_000


def delayed_config() -> RelayConfig:
    return RelayConfig(
        "outbound",
        {
            BILLING_SHADOW_ARN: {
                "destination": BILLING_INGRESS_ARN,
                "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
            },
            DELAY_SHADOW_ARN: {
                "destination": BILLING_INGRESS_ARN,
                "deadLetterQueue": DELAY_SHADOW_DLQ_ARN,
                "delayed": True,
            },
        },
        ["Sales"],
    )


def delayed_record(
    delay: str | None,
    *,
    sent_ms: int = SENT_MS,
    first_received_ms: int = SENT_MS + 900_000,
    receive_count: int = 1,
) -> dict[str, Any]:
    """A record of the delay queue's shadow as the released transport sends it: grouped and
    deduplicated by the message id, the whole delay in the attribute."""
    attributes = {"Tenant": lambda_attribute("String", "acme")}
    if delay is not None:
        attributes[DELAY_SECONDS_ATTRIBUTE] = lambda_attribute("String", delay)
    record = sqs_record(
        wrapped_body(request_headers()),
        source=DELAY_SHADOW_ARN,
        message_attributes=attributes,
        group_id="msg-1",
        deduplication_id="msg-1",
        receive_count=receive_count,
    )
    record["attributes"]["SentTimestamp"] = str(sent_ms)
    record["attributes"]["ApproximateFirstReceiveTimestamp"] = str(first_received_ms)
    return record


def test_the_remaining_delay_counts_from_sending_to_the_first_receive() -> None:
    assert remaining_delay(delayed_record("1200"), now=0) == 300
    assert remaining_delay(delayed_record("1200", first_received_ms=SENT_MS + 900_999), 0) == 300


def test_a_record_received_before_is_timed_against_now() -> None:
    record = delayed_record("1200", receive_count=2)
    assert remaining_delay(record, now=SENT_MS / 1000 + 1000) == 200


@pytest.mark.parametrize(
    "delay",
    # long.TryParse refuses each of these (Python's int() takes the last four).
    [None, "soon", "", "1.5", "1_200", "\uff11\uff12\uff10\uff10", "\x1c1200", "9" * 20],
)
def test_a_missing_or_unreadable_delay_counts_as_none(delay: str | None) -> None:
    assert remaining_delay(delayed_record(delay), now=0) == -900


@pytest.mark.parametrize("delay", [" 1200 ", "+1200", "01200", "1200\0", "\t1200\r\n"])
def test_a_delay_is_read_as_long_try_parse_reads_it(delay: str) -> None:
    assert remaining_delay(delayed_record(delay), now=0) == 300


def test_a_binary_delay_attribute_counts_as_none() -> None:
    """The pump reads its StringValue, which a Binary attribute does not have."""
    record = delayed_record(None)
    record["messageAttributes"][DELAY_SECONDS_ATTRIBUTE] = lambda_attribute("Binary", b"1200")
    assert remaining_delay(record, now=0) == -900


def test_a_message_not_due_goes_back_to_the_delay_queue_with_the_rest_of_its_delay() -> None:
    record = delayed_record("2400")

    decision = relay_message(record, delayed_config(), now=0)

    assert decision.kind == DecisionKind.REDELAYED
    assert str(decision.queue) == DELAY_SHADOW_ARN
    assert decision.forwarded
    request = decision.request
    assert request is not None
    assert request["QueueUrl"] == parse_queue_arn(DELAY_SHADOW_ARN).url
    assert request["MessageBody"] == record["body"]
    assert request["MessageAttributes"][DELAY_SECONDS_ATTRIBUTE] == {
        "DataType": "String",
        "StringValue": "1500",
    }
    assert request["MessageAttributes"]["Tenant"] == {"DataType": "String", "StringValue": "acme"}
    assert request["MessageGroupId"] == request["MessageDeduplicationId"] == "msg-1"
    assert "DelaySeconds" not in request


def test_a_due_message_is_forwarded_with_the_rest_of_its_delay_as_sqs_delay() -> None:
    decision = relay_message(delayed_record("1200"), delayed_config(), now=0)

    assert decision.kind == DecisionKind.FORWARDED
    assert str(decision.queue) == BILLING_INGRESS_ARN
    request = decision.request
    assert request is not None
    assert request["DelaySeconds"] == 300
    assert DELAY_SECONDS_ATTRIBUTE not in request["MessageAttributes"]
    assert "MessageGroupId" not in request
    assert "MessageDeduplicationId" not in request
    sent = body_headers(request["MessageBody"])
    assert decode(sent[ARN_HEADER]) == {"NServiceBus.ReplyToAddress": SALES_ARN}


def test_an_overdue_message_is_forwarded_at_once() -> None:
    decision = relay_message(delayed_record("600"), delayed_config(), now=0)
    assert decision.request is not None
    assert "DelaySeconds" not in decision.request


def test_a_twenty_minute_delay_takes_one_pass_and_forty_minutes_two() -> None:
    """The whole path, as the queue's 900 s delay and the relay alternate: each pass's
    re-sent message is received 900 s after it was sent."""
    for delay, passes, last_delay in ((1200, 1, 300), (2400, 2, 600)):
        sent_ms, attribute, seen = SENT_MS, str(delay), 0
        while True:
            seen += 1
            record = delayed_record(attribute, sent_ms=sent_ms, first_received_ms=sent_ms + 900_000)
            decision = relay_message(record, delayed_config(), now=0)
            assert decision.request is not None
            if decision.kind == DecisionKind.FORWARDED:
                break
            attribute = decision.request["MessageAttributes"][DELAY_SECONDS_ATTRIBUTE][
                "StringValue"
            ]
            sent_ms += 900_000
        assert seen == passes
        assert decision.request["DelaySeconds"] == last_delay


def test_a_delay_queue_record_needs_the_time() -> None:
    with pytest.raises(ValueError, match="now"):
        relay_message(delayed_record("1200", receive_count=2), delayed_config())
