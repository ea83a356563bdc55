"""The inbound relay delivers every NServiceBus message in its receiver's wire form, losslessly:
the receiver reads the same headers and body bytes from the converted message as from the
original (read here with the runtime's wire-format reader and with the model of the released
transport), and a wrapping receiver no longer copies an unwrapped message's headers attribute
onto its error copy."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.wire_format import (
    HEADERS_ATTRIBUTE,
    TIME_TO_BE_RECEIVED_HEADER,
)
from cross_account_runtime.nservicebus.wire_reading import read_message
from cross_account_runtime.relay.core import relay_message
from cross_account_runtime.relay.decision import DecisionKind
from cross_account_runtime.relay.forms import attribute_form_body
from local_aws.released_transport.core.outgoing import (
    DispatchConsistency,
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.receiving.extraction import (
    WireForm,
    extract_transport_message,
    retrieve_body,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher
from tests.local_aws.released_transport.fake_sqs import FakeSqs
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    as_boto3_message,
    inbound_config,
    lambda_attribute,
    record_as_received,
    sqs_record,
)

NOW = 1_767_225_600.0
RECEIVER_MESSAGE_ID = "6f1c2d3e-0000-4000-8000-00000000abcd"
"""The SQS id of the copy in the receiver's queue, from which it derives a missing message id."""

# Names as SQS allows them for attributes ([A-Za-z0-9_.-], no leading or doubled period).
attribute_names = st.from_regex(r"[A-Za-z0-9_-]{1,8}(\.[A-Za-z0-9_-]{1,8}){0,2}", fullmatch=True)
header_texts = st.text(max_size=30)
header_names = st.sampled_from(
    [
        "NServiceBus.ReplyToAddress",
        "NServiceBus.EnclosedMessageTypes",
        "NServiceBus.ContentType",
        "S3BodyKey",
        "NServiceBus.AmazonSQS.DelaySeconds",
        "NServiceBus.AmazonSQS.Headers",
        "NServiceBus.MessageId",
    ]
) | st.text(min_size=1, max_size=20)
# Body texts a receiver may find: JSON, text that is also base64, the empty-message marker,
# any characters SQS accepts.
sqs_texts = st.text(
    alphabet=st.characters(
        exclude_categories=["Cs"],
        exclude_characters="".join(map(chr, [*range(9), 11, 12, *range(14, 32), 0xFFFE, 0xFFFF])),
    ),
    min_size=1,
    max_size=60,
)
body_texts = sqs_texts | st.sampled_from(["empty message", "abcd", "Body Contents", "e30=", "{}"])


def received_by_receiver(request: dict[str, Any]) -> tuple[Any, bytes, Any, bytes]:
    """What the runtime's reader and the transport model make of a message sent with
    ``request``: headers and body bytes, each."""
    record = record_as_received(request, BILLING_INGRESS_ARN, message_id=RECEIVER_MESSAGE_ID)
    view = read_message(record)
    extracted = extract_transport_message(
        as_boto3_message(request, RECEIVER_MESSAGE_ID), RECEIVER_MESSAGE_ID
    )
    return (
        view.headers,
        view.body_bytes(),
        extracted.headers,
        retrieve_body(extracted, RECEIVER_MESSAGE_ID),
    )


def without_time_to_be_received(headers: dict[str, Any]) -> dict[str, Any]:
    """The headers the pipeline gets: the receiver removes the time to be received."""
    return {n: v for n, v in headers.items() if n != TIME_TO_BE_RECEIVED_HEADER}


def deliver(record: dict[str, Any], form: str) -> dict[str, Any]:
    decision = relay_message(record, inbound_config("arn", form=form), NOW)
    assert decision.kind is DecisionKind.FORWARDED, decision
    assert decision.request is not None
    assert not decision.warnings, decision.warnings
    return decision.request


def as_sent(record: dict[str, Any]) -> dict[str, Any]:
    """The ``SendMessage`` request that put ``record`` in its queue."""
    attributes = {}
    for name, attribute in record["messageAttributes"].items():
        if "binaryValue" in attribute:
            value = {"BinaryValue": base64.b64decode(attribute["binaryValue"])}
        else:
            value = {"StringValue": attribute["stringValue"]}
        attributes[name] = {"DataType": attribute["dataType"], **value}
    return {"MessageBody": record["body"], "MessageAttributes": attributes}


@st.composite
def attribute_form_records(draw: st.DrawFn) -> dict[str, Any]:
    """A message in the attribute form with any headers JSON, other attributes (String and
    Binary) and body text."""
    headers = draw(st.dictionaries(header_names, st.none() | header_texts, max_size=6))
    headers["NServiceBus.MessageId"] = draw(st.uuids()).hex
    if draw(st.booleans()):
        del headers["NServiceBus.MessageId"]
        headers["NServiceBus.EnclosedMessageTypes"] = "Billing.Messages.BillOrder"
    headers.pop(HEADERS_ATTRIBUTE, None)
    headers.pop("S3BodyKey", None)
    attributes = {HEADERS_ATTRIBUTE: lambda_attribute("String", json.dumps(headers))}
    for name, value in draw(
        st.dictionaries(
            attribute_names, header_texts.filter(bool) | st.binary(min_size=1), max_size=3
        )
    ).items():
        if name not in (HEADERS_ATTRIBUTE, "S3BodyKey"):
            attributes[name] = lambda_attribute(
                "Binary" if isinstance(value, bytes) else "String", value
            )
    return sqs_record(draw(body_texts), source=BILLING_INGRESS_ARN, message_attributes=attributes)


@st.composite
def wrapped_records(draw: st.DrawFn) -> dict[str, Any]:
    """A message in the wrapped form with any headers and ``Body`` member, and the message id
    attribute the dispatcher gives every message."""
    headers = draw(st.dictionaries(header_names, st.none() | header_texts, max_size=6))
    for name in (HEADERS_ATTRIBUTE, "NServiceBus.AmazonSQS.DelaySeconds", "S3BodyKey"):
        headers.pop(name, None)
    headers["NServiceBus.EnclosedMessageTypes"] = "Billing.Messages.BillOrder"
    if draw(st.booleans()):
        headers[TIME_TO_BE_RECEIVED_HEADER] = "1.00:00:00"
    body = json.dumps({"Body": draw(body_texts), "S3BodyKey": None, "Headers": headers})
    attributes = {"NServiceBus.MessageId": lambda_attribute("String", str(uuid.uuid4()))}
    return sqs_record(body, source=BILLING_INGRESS_ARN, message_attributes=attributes)


@settings(max_examples=300, deadline=None)
@given(attribute_form_records())
def test_an_unwrapped_message_reads_the_same_once_wrapped(record: dict[str, Any]) -> None:
    request = deliver(record, "wrapped")

    assert HEADERS_ATTRIBUTE not in request.get("MessageAttributes", {})
    assert read_message(record_as_received(request, BILLING_INGRESS_ARN)).form == "wrapped"
    before = received_by_receiver(as_sent(record))
    after = received_by_receiver(request)
    assert after == before
    assert (
        extract_transport_message(
            as_boto3_message(request, RECEIVER_MESSAGE_ID), RECEIVER_MESSAGE_ID
        ).form
        is WireForm.WRAPPED
    )


@settings(max_examples=300, deadline=None)
@given(wrapped_records())
def test_a_wrapped_message_reads_the_same_once_unwrapped(record: dict[str, Any]) -> None:
    request = deliver(record, "attribute")

    assert read_message(record_as_received(request, BILLING_INGRESS_ARN)).form == "attribute"
    headers, body, model_headers, model_body = received_by_receiver(request)
    original = received_by_receiver(as_sent(record))
    # The wrapping receiver keeps the time to be received in the headers until it checks it
    # (and removes it); the attribute form's receiver drops it at once.
    assert headers == without_time_to_be_received(original[0])
    assert model_headers == without_time_to_be_received(original[2])
    assert (body, model_body) == (original[1], original[3])


@given(st.binary(min_size=1, max_size=40) | st.sampled_from([b"abcd", b"empty message", b"{}"]))
def test_an_attribute_form_body_decodes_to_exactly_its_payload(payload: bytes) -> None:
    text = attribute_form_body(payload)
    headers = {"NServiceBus.MessageId": "1"}
    request = {
        "MessageBody": text,
        "MessageAttributes": {
            HEADERS_ATTRIBUTE: {"DataType": "String", "StringValue": json.dumps(headers)}
        },
    }
    _, body, _, model_body = received_by_receiver(request)
    assert body == model_body == payload


@pytest.mark.parametrize(
    ("payload", "body"),
    [
        (b'{"OrderId":42}', '{"OrderId":42}'),
        ("Zürich \u2603".encode(), "Zürich \u2603"),
        # Text RetrieveBody would decode as base64, the marker of an empty body, invalid UTF-8,
        # a character the dispatcher sends as base64 (beyond U+FFFF), a control character.
        (b"abcd", "YWJjZA=="),
        (b"empty message", "ZW1wdHkgbWVzc2FnZQ=="),
        (b"\xff\xfe", "//4="),
        ("\U0001f600".encode(), "8J+YgA=="),
        (b"a\x01", "YQE="),
        (b"", "empty message"),
    ],
)
def test_the_attribute_form_body_is_text_where_the_dispatcher_would_send_text(
    payload: bytes, body: str
) -> None:
    assert attribute_form_body(payload) == body


def test_a_body_in_s3_keeps_its_key_in_either_form() -> None:
    headers = {"NServiceBus.MessageId": "m-1", "NServiceBus.EnclosedMessageTypes": "T"}
    wrapped = sqs_record(
        json.dumps({"Body": "", "S3BodyKey": "bodies/m-1", "Headers": headers}),
        source=BILLING_INGRESS_ARN,
    )
    request = deliver(wrapped, "attribute")
    assert request["MessageBody"] == "empty message"
    assert request["MessageAttributes"]["S3BodyKey"]["StringValue"] == "bodies/m-1"
    again = deliver(record_as_received(request, BILLING_INGRESS_ARN), "wrapped")
    envelope = json.loads(again["MessageBody"])
    assert (envelope["Body"], envelope["S3BodyKey"]) == ("", "bodies/m-1")
    # Read back through the attribute form, the key became a header, as the transport's own
    # unwrapped large messages show it.
    assert envelope["Headers"] == {**headers, "S3BodyKey": "bodies/m-1"}


def test_native_messages_pass_unchanged() -> None:
    record = sqs_record(
        '{"OrderId":42}',
        source=BILLING_INGRESS_ARN,
        message_attributes={"Tenant": lambda_attribute("String", "acme")},
    )
    request = deliver(record, "wrapped")
    assert request["MessageBody"] == record["body"]
    assert set(request["MessageAttributes"]) == {"Tenant"}


@pytest.mark.parametrize(
    ("record", "form", "expected"),
    [
        (
            sqs_record(
                "payload",
                source=BILLING_INGRESS_ARN,
                message_attributes={HEADERS_ATTRIBUTE: lambda_attribute("String", '{"A":"b"}')},
            ),
            "wrapped",
            "neither NServiceBus.MessageId nor NServiceBus.EnclosedMessageTypes",
        ),
        (
            sqs_record(
                json.dumps(
                    {
                        "Body": "e30=",
                        "Headers": {"NServiceBus.MessageId": "1", HEADERS_ATTRIBUTE: "{}"},
                    }
                ),
                source=BILLING_INGRESS_ARN,
            ),
            "attribute",
            "which the attribute form's receiver drops",
        ),
        (
            sqs_record(
                json.dumps(
                    {"Body": "e30=", "Headers": {"NServiceBus.MessageId": "1", "S3BodyKey": "k"}}
                ),
                source=BILLING_INGRESS_ARN,
            ),
            "attribute",
            "would read its body from S3 under that key",
        ),
    ],
)
def test_a_message_the_other_form_would_read_differently_keeps_its_form(
    record: dict[str, Any], form: str, expected: str
) -> None:
    decision = relay_message(record, inbound_config("arn", form=form), NOW)
    assert decision.kind is DecisionKind.FORWARDED
    assert decision.request is not None
    assert decision.request["MessageBody"] == record["body"]
    [(outcome, reason)] = decision.warnings
    assert outcome == "form_kept"
    assert expected in reason


def test_a_redriven_messages_rejection_is_not_a_header_once_converted() -> None:
    headers = {"NServiceBus.MessageId": "m-1"}
    record = sqs_record(
        "payload",
        source=BILLING_INGRESS_ARN,
        message_attributes={
            HEADERS_ATTRIBUTE: lambda_attribute("String", json.dumps(headers)),
            "Relay.Rejection": lambda_attribute("String", '{"kind":"oversize"}'),
        },
    )
    envelope = json.loads(deliver(record, "wrapped")["MessageBody"])
    assert envelope["Headers"] == headers


# The hazard the conversion removes, shown with the model of the released transport ----------


def error_copy_at_the_error_queue(delivered: dict[str, Any]) -> dict[str, Any]:
    """A wrapping receiver reads ``delivered`` (a ``SendMessage`` request), fails it, and sends
    the error copy as its dispatcher does (the received native attributes copied over, since
    the copy keeps the incoming message id); returns the headers the error queue reads."""
    received = as_boto3_message(delivered, RECEIVER_MESSAGE_ID)
    incoming = extract_transport_message(received, RECEIVER_MESSAGE_ID)
    incoming_id = incoming.headers["NServiceBus.MessageId"]
    assert incoming_id is not None
    headers = {**incoming.headers, "NServiceBus.FailedQ": "Billing"}
    sqs = FakeSqs()
    dispatcher = MessageDispatcher(sqs, QueueCache(sqs, get_sqs_queue_name, ""))
    prepared = dispatcher.prepare(
        TransportOperation(
            OutgoingMessage(incoming_id, headers, retrieve_body(incoming, incoming_id)),
            "error",
            consistency=DispatchConsistency.ISOLATED,
        ),
        TransportTransaction(received, incoming_id),
    )
    assert prepared is not None
    copy = prepared.send_message_request()
    error = extract_transport_message(as_boto3_message(copy, str(uuid.uuid4())), None)
    return dict(error.headers)


def unwrapped_from_sales() -> dict[str, Any]:
    """What a Sales endpoint with DoNotWrapOutgoingMessages sends to Billing, as the model's
    dispatcher writes it, received from Billing's ingress queue."""
    sqs = FakeSqs()
    dispatcher = MessageDispatcher(
        sqs, QueueCache(sqs, get_sqs_queue_name, ""), wrap_outgoing_messages=False
    )
    headers: dict[str, str | None] = {
        "NServiceBus.MessageId": str(uuid.uuid4()),
        "NServiceBus.EnclosedMessageTypes": "Billing.Messages.BillOrder",
        "NServiceBus.ReplyToAddress": "Sales",
    }
    message_id = headers["NServiceBus.MessageId"]
    assert message_id is not None
    prepared = dispatcher.prepare(
        TransportOperation(OutgoingMessage(message_id, headers, b'{"OrderId":42}'), "Billing")
    )
    assert prepared is not None
    return record_as_received(prepared.send_message_request(), BILLING_INGRESS_ARN)


def test_without_conversion_a_wrapping_receivers_error_copy_loses_its_failed_queue() -> None:
    """The hazard: delivered as the sender wrote it, the error copy carries the original
    headers attribute and is read from it, without NServiceBus.FailedQ."""
    record = unwrapped_from_sales()
    delivered = relay_message(record, inbound_config("arn", form="attribute"), NOW).request
    assert delivered is not None
    assert "NServiceBus.FailedQ" not in error_copy_at_the_error_queue(delivered)


def test_converted_for_a_wrapping_receiver_its_error_copy_names_the_failed_queue() -> None:
    record = unwrapped_from_sales()
    delivered = relay_message(record, inbound_config("arn", form="wrapped"), NOW).request
    assert delivered is not None
    assert error_copy_at_the_error_queue(delivered)["NServiceBus.FailedQ"] == "Billing"
