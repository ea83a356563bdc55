"""The relay's pure core: what ``relay_message`` decides for one Lambda SQS record."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.core import relay_message
from cross_account_runtime.relay.decision import DecisionKind
from cross_account_runtime.relay.send_requests import MAX_MESSAGE_BYTES, REJECTION_ATTRIBUTE
from tests.runtime.relay.conftest import (
    BILLING_ARN,
    BILLING_INGRESS_ARN,
    BILLING_INGRESS_DLQ_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    FIFO_INGRESS_ARN,
    FIFO_SHADOW_ARN,
    FIFO_SHADOW_DLQ_ARN,
    SALES_ARN,
    attribute_headers,
    body_headers,
    headers_attribute,
    inbound_config,
    lambda_attribute,
    outbound_config,
    request_headers,
    sqs_record,
    wrapped_body,
)

BILLING_INGRESS_URL = parse_queue_arn(BILLING_INGRESS_ARN).url


def rejection(request: dict[str, Any]) -> dict[str, Any]:
    """The ``Relay.Rejection`` attribute of a dead-letter request, decoded."""
    value: dict[str, Any] = json.loads(
        request["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"]
    )
    return value


# Outbound ----------------------------------------------------------------------------------


def test_outbound_stamps_the_address_headers_carrying_the_local_address_in_a_wrapped_body() -> None:
    headers = request_headers(**{"NServiceBus.FailedQ": "Sales"})
    record = sqs_record(wrapped_body(headers))

    decision = relay_message(record, outbound_config())

    assert decision.kind == DecisionKind.FORWARDED
    assert str(decision.queue) == BILLING_INGRESS_ARN
    assert decision.request is not None
    assert decision.request["QueueUrl"] == BILLING_INGRESS_URL
    sent = body_headers(decision.request["MessageBody"])
    assert decode(sent[ARN_HEADER]) == {
        "NServiceBus.ReplyToAddress": SALES_ARN,
        "NServiceBus.FailedQ": SALES_ARN,
    }
    assert {name: value for name, value in sent.items() if name != ARN_HEADER} == headers
    assert decision.rewritten_headers == ("NServiceBus.ReplyToAddress", "NServiceBus.FailedQ")
    assert decision.wire_form == "wrapped"


def test_endpoint_name_headers_are_never_stamped_even_when_they_equal_the_address() -> None:
    headers = request_headers(
        **{"NServiceBus.SubscriberEndpoint": "Sales", "NServiceBus.ProcessingEndpoint": "Sales"}
    )
    assert headers["NServiceBus.OriginatingEndpoint"] == "Sales"
    decision = relay_message(sqs_record(wrapped_body(headers)), outbound_config())
    assert decision.request is not None
    assert decode(body_headers(decision.request["MessageBody"])[ARN_HEADER]) == {
        "NServiceBus.ReplyToAddress": SALES_ARN
    }


def test_outbound_changes_nothing_in_a_wrapped_body_but_the_headers() -> None:
    headers = request_headers()
    body = wrapped_body(headers, payload='{"OrderId": 42, "Note": "ünïcode"}')
    decision = relay_message(sqs_record(body), outbound_config())
    assert decision.request is not None
    sent = json.loads(decision.request["MessageBody"])
    original = json.loads(body)
    assert {k: v for k, v in sent.items() if k != "Headers"} == {
        k: v for k, v in original.items() if k != "Headers"
    }


def test_outbound_stamps_the_headers_attribute_and_keeps_the_other_attributes() -> None:
    headers = request_headers()
    record = sqs_record(
        '{"OrderId":42}',
        message_attributes={
            HEADERS_ATTRIBUTE: headers_attribute(headers),
            "Tenant": lambda_attribute("String", "acme"),
            "Priority": lambda_attribute("Number.int", "7"),
            "Signature": lambda_attribute("Binary", b"\x00\xffsig"),
        },
    )

    decision = relay_message(record, outbound_config())

    assert decision.request is not None
    assert decision.wire_form == "attribute"
    assert decision.request["MessageBody"] == '{"OrderId":42}'
    attributes = decision.request["MessageAttributes"]
    assert attributes["Tenant"] == {"DataType": "String", "StringValue": "acme"}
    assert attributes["Priority"] == {"DataType": "Number.int", "StringValue": "7"}
    assert attributes["Signature"] == {"DataType": "Binary", "BinaryValue": b"\x00\xffsig"}
    assert decode(attribute_headers(decision.request)[ARN_HEADER])[
        "NServiceBus.ReplyToAddress"
    ] == (SALES_ARN)


def test_a_message_not_carrying_the_local_address_is_forwarded_byte_for_byte() -> None:
    body = wrapped_body(
        request_headers(reply_to="Shipping", **{"NServiceBus.OriginatingEndpoint": "Shipping"})
    )
    decision = relay_message(sqs_record(body), outbound_config())
    assert decision.request is not None
    assert decision.request["MessageBody"] == body
    assert decision.rewritten_headers == ()


@pytest.mark.parametrize(
    ("body", "attributes"),
    [
        ('{"OrderId": 42}', {}),
        ("plain text, not JSON", {}),
        ('{"Headers": {"Custom": "Sales"}, "Body": "x"}', {}),
        (
            '{"Headers": {"NServiceBus.MessageId": "1"}}',
            {"MessageTypeFullName": lambda_attribute("String", "Billing.Native")},
        ),
    ],
    ids=["json", "text", "not-nservicebus-headers", "native-with-type-name"],
)
def test_a_message_without_nservicebus_headers_passes_through_unchanged(
    body: str, attributes: dict[str, Any]
) -> None:
    decision = relay_message(sqs_record(body, message_attributes=attributes), outbound_config())
    assert decision.kind == DecisionKind.FORWARDED
    assert decision.wire_form is None
    assert decision.request is not None
    assert decision.request["MessageBody"] == body
    assert decision.request.get("MessageAttributes", {}) == {
        name: {"DataType": "String", "StringValue": a["stringValue"]}
        for name, a in attributes.items()
    }


def test_outbound_keeps_entries_an_earlier_hop_stamped() -> None:
    failed_q = "arn:aws:sqs:us-east-1:333333333333:error"
    headers = request_headers(**{ARN_HEADER: f"NServiceBus.FailedQ={failed_q}"})
    decision = relay_message(sqs_record(wrapped_body(headers)), outbound_config())
    assert decision.request is not None
    entries = decode(body_headers(decision.request["MessageBody"])[ARN_HEADER])
    assert entries["NServiceBus.FailedQ"] == failed_q
    assert entries["NServiceBus.ReplyToAddress"] == SALES_ARN


def test_outbound_stamps_each_local_endpoint_with_its_own_arn() -> None:
    config = outbound_config()
    config.local_endpoints["Shipping"] = "arn:aws:sqs:us-east-1:111111111111:Shipping"
    headers = request_headers(**{"NServiceBus.FailedQ": "Shipping"})
    decision = relay_message(sqs_record(wrapped_body(headers)), config)
    assert decision.request is not None
    entries = decode(body_headers(decision.request["MessageBody"])[ARN_HEADER])
    assert entries["NServiceBus.FailedQ"] == "arn:aws:sqs:us-east-1:111111111111:Shipping"
    assert entries["NServiceBus.ReplyToAddress"] == SALES_ARN


# Inbound -----------------------------------------------------------------------------------


def test_inbound_delivers_to_an_arn_aware_endpoint_unchanged_for_it_to_substitute() -> None:
    headers = request_headers(**{ARN_HEADER: f"NServiceBus.ReplyToAddress={SALES_ARN}"})
    body = wrapped_body(headers)
    record = sqs_record(body, source=BILLING_INGRESS_ARN)

    decision = relay_message(record, inbound_config("arn"))

    assert str(decision.queue) == BILLING_ARN
    assert decision.request is not None
    assert decision.request["MessageBody"] == body
    assert decision.rewritten_headers == ()


def test_inbound_leaves_a_released_endpoint_the_names_that_lead_back_from_its_account() -> None:
    headers = request_headers(**{ARN_HEADER: f"NServiceBus.ReplyToAddress={SALES_ARN}"})
    body = wrapped_body(headers)
    record = sqs_record(body, source=BILLING_INGRESS_ARN)

    decision = relay_message(record, inbound_config("name"))

    assert decision.request is not None
    # "Sales" leads, in Billing's account, to the shadow queue named after Sales.
    assert decision.request["MessageBody"] == body
    assert decision.rewritten_headers == ()
    assert decision.unreachable_headers == ()


def test_inbound_gives_a_released_endpoint_the_name_for_an_arn_a_forwarding_endpoint_left() -> None:
    headers = request_headers(reply_to=SALES_ARN)
    record = sqs_record(wrapped_body(headers), source=BILLING_INGRESS_ARN)

    decision = relay_message(record, inbound_config("name"))

    assert decision.request is not None
    delivered = body_headers(decision.request["MessageBody"])
    assert delivered == {**headers, "NServiceBus.ReplyToAddress": "Sales"}
    assert decision.rewritten_headers == ("NServiceBus.ReplyToAddress",)


def test_inbound_gives_an_address_the_receiver_cannot_reach_by_name_as_the_arn() -> None:
    """A released Billing resolving "Sales" would find a queue of that name in its own account,
    which is not the sender's; the ARN resolves nowhere, so an answer fails and is kept."""
    headers = request_headers(**{ARN_HEADER: f"NServiceBus.ReplyToAddress={SALES_ARN}"})
    record = sqs_record(wrapped_body(headers), source=BILLING_INGRESS_ARN)

    decision = relay_message(record, inbound_config("name", reachable=(BILLING_ARN,)))

    assert decision.kind == DecisionKind.FORWARDED
    assert decision.unreachable_headers == ("NServiceBus.ReplyToAddress",)
    assert decision.request is not None
    delivered = body_headers(decision.request["MessageBody"])
    assert delivered["NServiceBus.ReplyToAddress"] == SALES_ARN
    assert decode(delivered[ARN_HEADER]) == {"NServiceBus.ReplyToAddress": SALES_ARN}


def test_inbound_leaves_an_endpoint_name_equal_to_a_queue_name_alone() -> None:
    headers = request_headers(reply_to=SALES_ARN, **{"NServiceBus.ProcessingEndpoint": SALES_ARN})
    record = sqs_record(wrapped_body(headers), source=BILLING_INGRESS_ARN)
    decision = relay_message(record, inbound_config("name"))
    assert decision.request is not None
    delivered = body_headers(decision.request["MessageBody"])
    assert delivered["NServiceBus.ProcessingEndpoint"] == SALES_ARN


def test_inbound_without_an_arn_header_delivers_the_message_unchanged() -> None:
    body = wrapped_body(request_headers())
    for receiver in ("arn", "name"):
        decision = relay_message(
            sqs_record(body, source=BILLING_INGRESS_ARN), inbound_config(receiver)
        )
        assert decision.request is not None
        assert decision.request["MessageBody"] == body
        assert decision.request["QueueUrl"] == parse_queue_arn(BILLING_ARN).url


def test_inbound_translates_in_the_headers_attribute_too() -> None:
    headers = request_headers(**{ARN_HEADER: f"NServiceBus.ReplyToAddress={SALES_ARN}"})
    record = sqs_record(
        '{"OrderId":42}',
        source=BILLING_INGRESS_ARN,
        message_attributes={HEADERS_ATTRIBUTE: headers_attribute(headers)},
    )
    decision = relay_message(
        record, inbound_config("name", reachable=(BILLING_ARN,), form="attribute")
    )
    assert decision.request is not None
    assert decision.request["MessageBody"] == '{"OrderId":42}'
    assert attribute_headers(decision.request)["NServiceBus.ReplyToAddress"] == SALES_ARN


def test_fifo_forwards_keep_the_group_and_a_deduplication_id_stable_across_retries() -> None:
    record = sqs_record(
        wrapped_body(request_headers()),
        source=FIFO_SHADOW_ARN,
        group_id="order-42",
        deduplication_id="dedupe-1",
    )
    first = relay_message(record, outbound_config())
    retried = relay_message({**record, "receiptHandle": "another"}, outbound_config())

    assert first.request is not None
    assert retried.request is not None
    assert first.request["QueueUrl"] == parse_queue_arn(FIFO_INGRESS_ARN).url
    assert first.request["MessageGroupId"] == "order-42"
    assert first.request["MessageDeduplicationId"] == retried.request["MessageDeduplicationId"]
    assert (
        first.request["MessageDeduplicationId"]
        == hashlib.sha256(f"{FIFO_SHADOW_ARN}\ndedupe-1".encode()).hexdigest()
    )


def test_without_a_source_deduplication_id_the_message_id_is_used() -> None:
    record = sqs_record("x", source=FIFO_SHADOW_ARN, group_id="g", message_id="m-1")
    decision = relay_message(record, outbound_config())
    assert decision.request is not None
    assert (
        decision.request["MessageDeduplicationId"]
        == hashlib.sha256(f"{FIFO_SHADOW_ARN}\nm-1".encode()).hexdigest()
    )


def test_equal_deduplication_ids_from_two_shadow_queues_stay_distinct() -> None:
    """Content-based deduplication gives equal bodies equal ids; two senders' messages must
    not be merged into one at the shared destination."""
    config = outbound_config()
    other = "arn:aws:sqs:us-east-1:111111111111:Billing-other.fifo"
    config.routes[other] = type(config.routes[FIFO_SHADOW_ARN])(
        parse_queue_arn(other),
        parse_queue_arn(FIFO_INGRESS_ARN),
        parse_queue_arn(FIFO_SHADOW_DLQ_ARN),
    )
    one = relay_message(
        sqs_record("x", source=FIFO_SHADOW_ARN, group_id="g", deduplication_id="d"), config
    )
    two = relay_message(sqs_record("x", source=other, group_id="g", deduplication_id="d"), config)
    assert one.request is not None
    assert two.request is not None
    assert one.request["MessageDeduplicationId"] != two.request["MessageDeduplicationId"]


def test_standard_queues_get_no_deduplication_id_but_keep_a_fair_queue_group() -> None:
    decision = relay_message(sqs_record("x", group_id="tenant-7"), outbound_config())
    assert decision.request is not None
    assert decision.request["MessageGroupId"] == "tenant-7"
    assert "MessageDeduplicationId" not in decision.request


def test_the_xray_trace_header_travels_with_the_message() -> None:
    trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
    decision = relay_message(sqs_record("x", trace_header=trace), outbound_config())
    assert decision.request is not None
    assert decision.request["MessageSystemAttributes"] == {
        "AWSTraceHeader": {"DataType": "String", "StringValue": trace}
    }


def test_a_rejection_attribute_from_an_earlier_refusal_is_not_forwarded() -> None:
    record = sqs_record(
        "x",
        message_attributes={
            REJECTION_ATTRIBUTE: lambda_attribute("String", '{"kind":"unknown_route"}'),
            "Tenant": lambda_attribute("String", "acme"),
        },
    )
    decision = relay_message(record, outbound_config())
    assert decision.request is not None
    assert set(decision.request["MessageAttributes"]) == {"Tenant"}


# Refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arn_header",
    [
        "NServiceBus.ReplyToAddress",
        "a===b",
        "NServiceBus.ReplyToAddress=not-an-arn",
        f"{ARN_HEADER}={SALES_ARN}",
        "NServiceBus.ReplyToAddress=arn:aws:sns:us-east-1:111111111111:Topic",
    ],
    ids=["no-equals", "ambiguous", "not-an-arn", "names-itself", "sns-arn"],
)
@pytest.mark.parametrize("direction", ["outbound", "inbound"])
def test_a_malformed_arn_header_is_never_forwarded_but_dead_lettered_with_the_reason(
    arn_header: str, direction: str
) -> None:
    config, source, dead_letter = (
        (outbound_config(), BILLING_SHADOW_ARN, BILLING_SHADOW_DLQ_ARN)
        if direction == "outbound"
        else (inbound_config(), BILLING_INGRESS_ARN, BILLING_INGRESS_DLQ_ARN)
    )
    body = wrapped_body(request_headers(**{ARN_HEADER: arn_header}))
    record = sqs_record(body, source=source, message_id="poison-1")

    decision = relay_message(record, config)

    assert decision.kind == DecisionKind.MALFORMED_ARN_HEADER
    assert ARN_HEADER in decision.reason
    assert str(decision.queue) == dead_letter
    assert decision.request is not None
    assert decision.request["QueueUrl"] == parse_queue_arn(dead_letter).url
    assert decision.request["MessageBody"] == body
    assert rejection(decision.request) == {
        "kind": DecisionKind.MALFORMED_ARN_HEADER,
        "reason": decision.reason,
        "sourceMessageId": "poison-1",
        "sourceQueue": source,
        "direction": direction,
    }


def test_an_unknown_source_queue_has_no_destination_and_no_dead_letter_send() -> None:
    record = sqs_record("x", source="arn:aws:sqs:us-east-1:111111111111:Unrouted")
    decision = relay_message(record, outbound_config())
    assert decision.kind == DecisionKind.UNKNOWN_ROUTE
    assert decision.request is None
    assert "in the configuration's routes" in decision.reason
    assert "Unrouted" in decision.reason


def test_a_broken_headers_attribute_is_dead_lettered_not_forwarded_as_native() -> None:
    record = sqs_record(
        "x", message_attributes={HEADERS_ATTRIBUTE: lambda_attribute("String", "{broken")}
    )
    decision = relay_message(record, outbound_config())
    assert decision.kind == DecisionKind.UNREADABLE_HEADERS
    assert decision.request is not None
    assert decision.request["QueueUrl"] == parse_queue_arn(BILLING_SHADOW_DLQ_ARN).url
    assert decision.request["MessageAttributes"][HEADERS_ATTRIBUTE]["StringValue"] == "{broken"


def record_stamped_to(size: int) -> dict[str, Any]:
    """A wrapped-body record with one attribute ("T", "String", "x": 8 bytes) whose message,
    once stamped, is exactly ``size`` bytes as SQS counts them."""
    headers = request_headers()
    attributes = {"T": lambda_attribute("String", "x")}

    def padded(length: int) -> dict[str, Any]:
        body = json.dumps({"Headers": headers, "Body": "A" * length, "S3BodyKey": None})
        return sqs_record(body, message_attributes=attributes)

    probe = relay_message(padded(0), outbound_config())
    assert probe.request is not None
    return padded(size - len(probe.request["MessageBody"]) - 8)


def test_a_message_exactly_at_the_limit_once_stamped_is_forwarded() -> None:
    decision = relay_message(record_stamped_to(MAX_MESSAGE_BYTES), outbound_config())
    assert decision.kind == DecisionKind.FORWARDED
    assert decision.request is not None
    assert len(decision.request["MessageBody"]) + 8 == MAX_MESSAGE_BYTES


def test_a_message_one_byte_over_the_limit_once_stamped_is_dead_lettered_unchanged() -> None:
    record = record_stamped_to(MAX_MESSAGE_BYTES + 1)
    assert len(record["body"]) + 8 < MAX_MESSAGE_BYTES

    decision = relay_message(record, outbound_config())

    assert decision.kind == DecisionKind.OVERSIZE
    assert f"{MAX_MESSAGE_BYTES + 1} bytes" in decision.reason
    assert decision.request is not None
    assert decision.request["MessageBody"] == record["body"]
    assert decision.request["QueueUrl"] == parse_queue_arn(BILLING_SHADOW_DLQ_ARN).url


def test_the_size_limit_counts_attribute_names_types_and_multibyte_values() -> None:
    record = record_stamped_to(MAX_MESSAGE_BYTES - 3)
    record["messageAttributes"]["T"] = lambda_attribute("String", "€")  # 3 bytes, not 1
    assert relay_message(record, outbound_config()).kind == DecisionKind.FORWARDED
    record["messageAttributes"]["T"] = lambda_attribute("String", "€€")
    assert relay_message(record, outbound_config()).kind == DecisionKind.OVERSIZE


def test_a_dead_lettered_message_without_room_for_the_reason_goes_unchanged() -> None:
    """SQS allows ten message attributes; the reason is then only in the log line."""
    attributes = {f"A{index}": lambda_attribute("String", "v") for index in range(10)}
    headers = request_headers(**{ARN_HEADER: "broken"})
    record = sqs_record(wrapped_body(headers), message_attributes=attributes)
    decision = relay_message(record, outbound_config())
    assert decision.kind == DecisionKind.MALFORMED_ARN_HEADER
    assert decision.request is not None
    assert set(decision.request["MessageAttributes"]) == set(attributes)


def test_a_record_that_is_not_from_sqs_is_refused() -> None:
    record = {**sqs_record("x"), "eventSource": "aws:kinesis"}
    decision = relay_message(record, outbound_config())
    assert decision.kind == DecisionKind.MALFORMED_RECORD
    assert "aws:kinesis" in decision.reason


def test_a_fifo_record_without_a_group_cannot_be_sent_anywhere() -> None:
    decision = relay_message(sqs_record("x", source=FIFO_SHADOW_ARN), outbound_config())
    assert decision.kind == DecisionKind.MALFORMED_RECORD
    assert "MessageGroupId" in decision.reason
    assert decision.request is None


def test_a_binary_attribute_that_is_not_base64_makes_the_record_unsendable() -> None:
    record = sqs_record(
        "x",
        message_attributes={
            "Blob": {
                "dataType": "Binary",
                "binaryValue": "***",
                "stringListValues": [],
                "binaryListValues": [],
            }
        },
    )
    decision = relay_message(record, outbound_config())
    assert decision.kind == DecisionKind.MALFORMED_RECORD
    assert "Blob" in decision.reason
    assert decision.request is None


def test_a_fifo_refusal_goes_to_the_fifo_dead_letter_queue_in_its_group() -> None:
    body = wrapped_body(request_headers(**{ARN_HEADER: "broken"}))
    record = sqs_record(body, source=FIFO_SHADOW_ARN, group_id="order-9", deduplication_id="d9")
    decision = relay_message(record, outbound_config())
    assert decision.request is not None
    assert decision.request["QueueUrl"] == parse_queue_arn(FIFO_SHADOW_DLQ_ARN).url
    assert decision.request["MessageGroupId"] == "order-9"
    assert (
        decision.request["MessageDeduplicationId"]
        == hashlib.sha256(f"{FIFO_SHADOW_ARN}\nd9".encode()).hexdigest()
    )


# Time to be received ------------------------------------------------------------------------

TTBR = "NServiceBus.AmazonSQS.TimeToBeReceived"
SENT = 1_767_225_600.0
"""The conftest records' SentTimestamp, in seconds."""


def ttbr_record(form: str, ttbr: str, **options: Any) -> dict[str, Any]:
    headers = request_headers(**{TTBR: ttbr})
    if form == "wrapped":
        return sqs_record(wrapped_body(headers), **options)
    return sqs_record(
        '{"OrderId":42}',
        message_attributes={HEADERS_ATTRIBUTE: headers_attribute(headers)},
        **options,
    )


def carried_ttbr(request: dict[str, Any], form: str) -> str:
    if form == "wrapped":
        return body_headers(request["MessageBody"])[TTBR]
    return attribute_headers(request)[TTBR]


@pytest.mark.parametrize("form", ["wrapped", "attribute"])
def test_a_forward_carries_the_time_to_be_received_that_remains(form: str) -> None:
    decision = relay_message(ttbr_record(form, "00:01:00"), outbound_config(), SENT + 12.5)
    assert decision.kind == DecisionKind.FORWARDED
    assert decision.request is not None
    assert carried_ttbr(decision.request, form) == "00:00:47.5000000"


@pytest.mark.parametrize("form", ["wrapped", "attribute"])
def test_an_expired_message_is_not_delivered_nor_dead_lettered(form: str) -> None:
    decision = relay_message(ttbr_record(form, "00:01:00"), outbound_config(), SENT + 60)
    assert decision.kind == DecisionKind.EXPIRED
    assert (decision.request, decision.queue) == (None, None)
    assert "ran out 0.000 s ago" in decision.reason
    assert not decision.forwarded


def test_an_expired_message_is_not_delivered_inbound_either() -> None:
    record = ttbr_record("wrapped", "00:00:10", source=BILLING_INGRESS_ARN)
    assert relay_message(record, inbound_config(), SENT + 30).kind == DecisionKind.EXPIRED


def test_a_message_without_a_deadline_is_forwarded_as_it_came() -> None:
    record = ttbr_record("wrapped", "10675199.02:48:05.4775807")
    decision = relay_message(record, outbound_config(), SENT + 10**6)
    assert decision.request is not None
    assert carried_ttbr(decision.request, "wrapped") == "10675199.02:48:05.4775807"


@pytest.mark.parametrize("ttbr", ["forty seconds", "00:00:60"])
def test_a_time_to_be_received_the_receiver_cannot_parse_goes_on_unchanged_and_is_noted(
    ttbr: str,
) -> None:
    decision = relay_message(ttbr_record("wrapped", ttbr), outbound_config(), SENT + 10**6)
    assert decision.kind == DecisionKind.FORWARDED
    assert decision.request is not None
    assert carried_ttbr(decision.request, "wrapped") == ttbr
    [(outcome, reason)] = decision.warnings
    assert outcome == "time_to_be_received_unreadable"
    assert "not a TimeSpan" in reason


def test_a_transport_6_top_level_time_to_be_received_is_counted_where_it_is() -> None:
    body = json.dumps(
        {"Headers": request_headers(), "Body": "e30=", "TimeToBeReceived": "00:10:00"}
    )
    decision = relay_message(sqs_record(body), outbound_config(), SENT + 60)
    assert decision.request is not None
    assert json.loads(decision.request["MessageBody"])["TimeToBeReceived"] == "00:09:00"


def test_the_dead_letter_copy_of_a_refused_message_carries_the_remaining_time() -> None:
    headers = request_headers(**{TTBR: "00:01:00", ARN_HEADER: "a===b"})
    decision = relay_message(sqs_record(wrapped_body(headers)), outbound_config(), SENT + 20)
    assert decision.kind == DecisionKind.MALFORMED_ARN_HEADER
    assert decision.request is not None
    assert body_headers(decision.request["MessageBody"])[TTBR] == "00:00:40"


def test_a_message_with_a_time_to_be_received_needs_the_time() -> None:
    with pytest.raises(ValueError, match="decided against the current time"):
        relay_message(ttbr_record("wrapped", "00:01:00"), outbound_config())


# Unreadable messages on a route to an error queue --------------------------------------------


def error_route_config(direction: str) -> RelayConfig:
    if direction == "outbound":
        return RelayConfig(
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
    return RelayConfig(
        "inbound",
        {
            BILLING_INGRESS_ARN: {
                "destination": BILLING_ARN,
                "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
                "receiver": "name",
                "form": "wrapped",
                "addressBook": "1",
                "forwardUnreadable": True,
            }
        },
        address_books={"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales"]}},
    )


def unreadable_records(source: str) -> list[dict[str, Any]]:
    """A broken headers attribute, and a malformed ARN header, each with another attribute."""
    tenant = {"Tenant": lambda_attribute("String", "acme")}
    return [
        sqs_record(
            "payload",
            source=source,
            message_attributes={HEADERS_ATTRIBUTE: lambda_attribute("String", "{broken"), **tenant},
        ),
        sqs_record(
            wrapped_body(request_headers(**{ARN_HEADER: "a===b"})),
            source=source,
            message_attributes=tenant,
        ),
    ]


@pytest.mark.parametrize(
    ("direction", "source", "destination"),
    [
        ("outbound", BILLING_SHADOW_ARN, BILLING_INGRESS_ARN),
        ("inbound", BILLING_INGRESS_ARN, BILLING_ARN),
    ],
)
def test_on_a_route_to_an_error_queue_an_unreadable_message_goes_on_unchanged(
    direction: str, source: str, destination: str
) -> None:
    for record in unreadable_records(source):
        decision = relay_message(record, error_route_config(direction), SENT)
        assert decision.kind == DecisionKind.FORWARDED_UNREADABLE
        assert decision.forwarded
        assert decision.request is not None
        assert decision.request["QueueUrl"] == parse_queue_arn(destination).url
        assert decision.request["MessageBody"] == record["body"]
        assert {
            name: attribute.get("StringValue")
            for name, attribute in decision.request["MessageAttributes"].items()
        } == {name: a["stringValue"] for name, a in record["messageAttributes"].items()}
        assert decision.reason.startswith(("unreadable_headers: ", "malformed_arn_header: "))


def test_elsewhere_an_unreadable_message_is_still_dead_lettered() -> None:
    for record in unreadable_records(BILLING_SHADOW_ARN):
        decision = relay_message(record, outbound_config(), SENT)
        assert decision.kind in (DecisionKind.UNREADABLE_HEADERS, DecisionKind.MALFORMED_ARN_HEADER)
        assert decision.queue is not None
        assert str(decision.queue) == BILLING_SHADOW_DLQ_ARN


# Bodies that no longer fit inline -----------------------------------------------------------


def test_an_oversize_refusal_names_the_bytes_the_relay_added_and_both_fixes() -> None:
    record = record_stamped_to(MAX_MESSAGE_BYTES + 1)
    original = len(record["body"]) + 8
    decision = relay_message(record, outbound_config())
    assert decision.kind == DecisionKind.OVERSIZE
    added = MAX_MESSAGE_BYTES + 1 - original
    assert f"the relay added {added} bytes (the ARN header)" in decision.reason
    assert "Give the route a bodyBucket (largeMessages in the topology)" in decision.reason
    assert f"ReserveBytesInMessageSizeCalculation of at least {added}" in decision.reason
