"""Reading and writing NServiceBus headers in both SQS wire forms."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, substitute_incoming
from cross_account_runtime.nservicebus.wire_format import (
    HEADERS_ATTRIBUTE,
    WireFormatError,
    read_headers,
    wire_form,
    write_headers,
)

HEADERS = {"NServiceBus.MessageId": "m-1", "NServiceBus.ReplyToAddress": "Sender"}
ARN = "arn:aws:sqs:us-east-2:111111111111:Sender"

# A wrapped body as a sender might lay it out, spacing and key order included.
WRAPPED_BODY = (
    '{ "Headers" : {"NServiceBus.MessageId":"m-1","NServiceBus.ReplyToAddress":"Sender"},\n'
    '  "Body": "eyJPcmRlcklkIjoxfQ==", "S3BodyKey": null, "Extra": [1, 2.50, {"é": true}] }'
)


def boto3_wrapped() -> dict[str, object]:
    return {"MessageId": "sqs-1", "ReceiptHandle": "r", "Body": WRAPPED_BODY}


def lambda_attribute() -> dict[str, object]:
    return {
        "messageId": "sqs-2",
        "body": "raw payload, not JSON",
        "messageAttributes": {
            HEADERS_ATTRIBUTE: {
                "stringValue": json.dumps(HEADERS),
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": "String",
            },
            "Other": {"stringValue": "kept", "dataType": "String"},
        },
    }


def boto3_attribute() -> dict[str, object]:
    return {
        "Body": "payload",
        "MessageAttributes": {
            HEADERS_ATTRIBUTE: {"StringValue": json.dumps(HEADERS), "DataType": "String"}
        },
    }


def test_headers_in_the_attribute_are_read_from_a_lambda_record() -> None:
    assert wire_form(lambda_attribute()) == "attribute"
    assert read_headers(lambda_attribute()) == HEADERS


def test_headers_in_the_attribute_are_read_from_a_boto3_message() -> None:
    assert read_headers(boto3_attribute()) == HEADERS


def test_headers_in_a_wrapped_body_are_read() -> None:
    assert wire_form(boto3_wrapped()) == "wrapped"
    assert read_headers(boto3_wrapped()) == HEADERS


def test_headers_of_a_send_message_request_are_read() -> None:
    request = {"QueueUrl": "q", "MessageBody": WRAPPED_BODY}
    assert read_headers(request) == HEADERS


def test_the_attribute_wins_over_a_wrapped_body_as_receivers_do() -> None:
    message = boto3_attribute() | {"Body": WRAPPED_BODY.replace("m-1", "other")}
    assert read_headers(message) == HEADERS


def test_a_message_type_attribute_makes_the_message_native_even_with_a_wrapper() -> None:
    message = boto3_wrapped() | {
        "MessageAttributes": {"MessageTypeFullName": {"StringValue": "T", "DataType": "String"}}
    }
    assert wire_form(message) == "native"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("plain text", "not a JSON object"),
        ("[1, 2]", "not a JSON object"),
        ('{"Body": "x"}', "no 'Headers' member"),
        ('{"Headers": null}', "is null"),
        ('{"Headers": {"NServiceBus.MessageId": 1}}', "holds int"),
        ('{"Headers": {"Custom": "x"}}', "neither NServiceBus.MessageId"),
        ('{"Headers": {"NServiceBus.MessageId": "m"}} trailing', "extra text"),
    ],
)
def test_bodies_nservicebus_would_not_read_as_wrapped_are_native(body: str, reason: str) -> None:
    message = {"Body": body}
    assert wire_form(message) == "native"
    with pytest.raises(WireFormatError, match=reason):
        read_headers(message)


def test_a_control_message_without_message_id_is_wrapped() -> None:
    message = {"Body": '{"Headers": {"NServiceBus.ControlMessage": "True"}}'}
    assert wire_form(message) == "wrapped"


def test_a_wrapped_body_with_two_headers_members_is_refused() -> None:
    body = '{"Headers": {"NServiceBus.MessageId": "a"}, "Headers": {"NServiceBus.MessageId": "b"}}'
    with pytest.raises(WireFormatError, match="2 'Headers' members"):
        read_headers({"Body": body})


def test_a_json_null_attribute_reads_as_no_headers() -> None:
    message = {
        "Body": "x",
        "MessageAttributes": {HEADERS_ATTRIBUTE: {"StringValue": "null", "DataType": "String"}},
    }
    assert read_headers(message) == {}


@pytest.mark.parametrize(
    ("attribute", "problem"),
    [
        ({"StringValue": "{not json", "DataType": "String"}, "is not JSON"),
        ({"StringValue": "[1]", "DataType": "String"}, "expected a JSON object"),
        ({"StringValue": '{"a": 1}', "DataType": "String"}, "'a' holds int"),
        ({"BinaryValue": b"{}", "DataType": "Binary"}, "must be a String attribute"),
    ],
)
def test_a_broken_headers_attribute_is_an_error(attribute: dict[str, object], problem: str) -> None:
    message = {"Body": "x", "MessageAttributes": {HEADERS_ATTRIBUTE: attribute}}
    with pytest.raises(WireFormatError, match=problem):
        read_headers(message)


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"MessageId": "1"}, "exactly one of the fields Body, body, MessageBody; it has none"),
        ({"Body": "a", "body": "b"}, "it has Body, body"),
        ({"Body": b"bytes"}, "must be text, got bytes"),
        ({"Body": "x", "MessageAttributes": []}, "must be a dict"),
        ({"Body": "x", "MessageAttributes": {}, "messageAttributes": {}}, "it has both"),
    ],
)
def test_messages_of_the_wrong_shape_are_refused_naming_the_field(
    message: dict[str, object], problem: str
) -> None:
    with pytest.raises(WireFormatError, match=problem):
        read_headers(message)


def test_writing_to_a_wrapped_body_changes_only_the_headers_text() -> None:
    new_headers = HEADERS | {ARN_HEADER: f"NServiceBus.ReplyToAddress={ARN}"}
    written = write_headers(boto3_wrapped(), new_headers)
    body = written["Body"]
    assert isinstance(body, str)
    old_start = WRAPPED_BODY.index("{", 1)
    old_end = WRAPPED_BODY.index("}", old_start) + 1
    new_end = len(body) - (len(WRAPPED_BODY) - old_end)
    assert body[:old_start] == WRAPPED_BODY[:old_start]
    assert body[new_end:] == WRAPPED_BODY[old_end:]
    assert json.loads(body[old_start:new_end]) == new_headers
    assert read_headers(written) == new_headers


def test_writing_keeps_every_other_field_of_the_message() -> None:
    written = write_headers(boto3_wrapped(), HEADERS | {"x": "y"})
    assert {key: written[key] for key in ("MessageId", "ReceiptHandle")} == {
        "MessageId": "sqs-1",
        "ReceiptHandle": "r",
    }


def test_writing_to_the_attribute_changes_only_its_string_value() -> None:
    original = lambda_attribute()
    written = write_headers(original, HEADERS | {"x": "y"})
    assert written["body"] == original["body"]
    attributes = written["messageAttributes"]
    assert isinstance(attributes, dict)
    assert attributes["Other"] == {"stringValue": "kept", "dataType": "String"}
    attribute = attributes[HEADERS_ATTRIBUTE]
    assert set(attribute) == {"stringValue", "stringListValues", "binaryListValues", "dataType"}
    assert json.loads(attribute["stringValue"]) == HEADERS | {"x": "y"}


def test_writing_does_not_modify_the_input_message() -> None:
    original = lambda_attribute()
    snapshot = json.dumps(original)
    write_headers(original, {"x": "y"})
    assert json.dumps(original) == snapshot


def test_writing_the_same_headers_leaves_the_message_text_identical() -> None:
    assert write_headers(boto3_wrapped(), dict(HEADERS)) == boto3_wrapped()


def test_writing_headers_to_a_native_message_is_refused() -> None:
    with pytest.raises(WireFormatError, match="no NServiceBus headers"):
        write_headers({"Body": "plain"}, HEADERS)


def test_writing_headers_that_are_not_text_is_refused_naming_the_header() -> None:
    with pytest.raises(WireFormatError, match="'n' = 1"):
        write_headers(boto3_wrapped(), {"n": 1})  # type: ignore[dict-item]


def test_the_receive_step_composes_with_reading_and_writing() -> None:
    message = write_headers(
        boto3_wrapped(), HEADERS | {ARN_HEADER: f"NServiceBus.ReplyToAddress={ARN}"}
    )
    received = write_headers(message, substitute_incoming(read_headers(message)))
    assert read_headers(received)["NServiceBus.ReplyToAddress"] == ARN


header_maps = st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=5).map(
    lambda headers: headers | {"NServiceBus.MessageId": "m"}
)


@given(header_maps)
def test_any_headers_written_to_a_wrapped_body_read_back(headers: dict[str, str]) -> None:
    assert read_headers(write_headers(boto3_wrapped(), headers)) == headers


@given(header_maps)
def test_any_headers_written_to_the_attribute_read_back(headers: dict[str, str]) -> None:
    assert read_headers(write_headers(lambda_attribute(), headers)) == headers
