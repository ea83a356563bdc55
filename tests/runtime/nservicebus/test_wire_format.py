"""Reading and writing NServiceBus headers in both SQS wire forms."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, substitute_incoming
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE, WireFormatError
from cross_account_runtime.nservicebus.wire_reading import (
    TransportView,
    read_headers,
    read_message,
    wire_form,
)
from cross_account_runtime.nservicebus.wire_writing import HeadersUpdate, write_headers

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
    # Every other attribute is a header too, as NServiceBus copies them over the JSON.
    assert read_headers(lambda_attribute()) == HEADERS | {"Other": "kept"}


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
        ({"BinaryValue": b"{}", "DataType": "Binary"}, "has no text value .data type 'Binary'"),
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
    written = write_headers(original, read_headers(original) | {"x": "y"})
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


# --- the transport's reading rules ----------------------------------------------------------


def wrapped_message(body: str, **attributes: dict[str, object]) -> dict[str, object]:
    return {"MessageId": "sqs-1", "Body": body, "MessageAttributes": attributes}


def string_attribute(value: str, data_type: str = "String") -> dict[str, object]:
    return {"StringValue": value, "DataType": data_type}


BINARY = {"BinaryValue": b"\x00\x01", "DataType": "Binary"}


def test_transport_6_members_set_their_headers_after_the_headers_member() -> None:
    body = (
        '{"Headers":{"NServiceBus.MessageId":"m","NServiceBus.ReplyToAddress":"Old"},'
        '"Body":"empty message","S3BodyKey":null,"TimeToBeReceived":"01:00:00",'
        '"ReplyToAddress":{"Queue":"Sales","Machine":"host"}}'
    )
    view = read_message(wrapped_message(body))
    assert view.form == "wrapped"
    assert view.headers == {
        "NServiceBus.MessageId": "m",
        "NServiceBus.ReplyToAddress": "Sales",
        "NServiceBus.AmazonSQS.TimeToBeReceived": "01:00:00",
    }
    assert view.time_to_be_received == "01:00:00"


@pytest.mark.parametrize(
    "reply_to", ["null", '{"Queue":null}', '{"Queue":"  "}', '{"Machine":"host"}']
)
def test_a_transport_6_reply_to_without_a_queue_sets_nothing(reply_to: str) -> None:
    body = f'{{"Headers":{{"NServiceBus.MessageId":"m"}},"ReplyToAddress":{reply_to}}}'
    assert read_message(wrapped_message(body)).headers == {"NServiceBus.MessageId": "m"}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        # .NET sets the property on headers it has not read yet: NullReferenceException.
        ('{"TimeToBeReceived":"01:00:00","Headers":{"NServiceBus.MessageId":"m"}}', "before any"),
        ('{"ReplyToAddress":{"Queue":"q"},"Headers":{"NServiceBus.MessageId":"m"}}', "before any"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},"TimeToBeReceived":5}', "not text"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},"ReplyToAddress":"q"}', "not an object"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},"ReplyToAddress":{"Machine":1}}', "not text"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},"Body":5}', "not text"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},"S3BodyKey":{}}', "not text"),
        # Property names are case-sensitive.
        ('{"headers":{"NServiceBus.MessageId":"m"}}', "no 'Headers' member"),
        # System.Text.Json refuses NaN and lone surrogates, which Python's json accepts.
        ('{"Headers":{"NServiceBus.MessageId":"m"},"X":NaN}', "not a JSON object"),
        ('{"Headers":{"NServiceBus.MessageId":"\\ud800"}}', "lone surrogate"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},"Body":"\\udc00"}', "not text"),
        ('{"Headers":{"NServiceBus.MessageId":"m"},', "not a JSON object"),
        ("null", "not a JSON object"),
    ],
)
def test_bodies_dotnet_fails_to_read_as_a_transport_message_are_native(
    body: str, reason: str
) -> None:
    message = wrapped_message(body)
    view = read_message(message)
    assert view.form == "native"
    assert view.headers == {"NServiceBus.MessageId": "sqs-1"}
    assert view.body == body
    with pytest.raises(WireFormatError, match=reason):
        read_headers(message)


def test_a_wrapped_body_is_read_whatever_its_unknown_members_hold() -> None:
    body = '{"Headers":{"NServiceBus.MessageId":"m"},"X":' + "9" * 5000 + ',"Y":[{"a":[]}]}'
    assert read_message(wrapped_message(body)).headers == {"NServiceBus.MessageId": "m"}


def test_the_last_headers_member_wins_but_read_headers_refuses_two() -> None:
    body = '{"Headers":{"NServiceBus.MessageId":"a"},"Headers":{"NServiceBus.MessageId":"b"}}'
    assert read_message(wrapped_message(body)).headers == {"NServiceBus.MessageId": "b"}
    with pytest.raises(WireFormatError, match="2 'Headers' members"):
        read_headers(wrapped_message(body))


def test_a_null_header_value_is_kept_as_none_and_left_out_of_read_headers() -> None:
    body = '{"Headers":{"NServiceBus.MessageId":"m","Null":null}}'
    assert read_message(wrapped_message(body)).headers == {
        "NServiceBus.MessageId": "m",
        "Null": None,
    }
    assert read_headers(wrapped_message(body)) == {"NServiceBus.MessageId": "m"}


def test_wrapped_messages_take_the_message_id_from_the_override_only_when_missing() -> None:
    body = '{"Headers":{"NServiceBus.EnclosedMessageTypes":"T"}}'
    assert read_message(wrapped_message(body)).headers["NServiceBus.MessageId"] == "sqs-1"
    assert read_message(wrapped_message(body), "x").headers["NServiceBus.MessageId"] == "x"
    # A request to send has no SQS id: no message id is derived.
    assert read_message({"MessageBody": body}).headers == {"NServiceBus.EnclosedMessageTypes": "T"}


def test_attributes_override_the_headers_json_in_any_string_or_number_type() -> None:
    message = {
        "MessageId": "sqs-1",
        "Body": "payload",
        "MessageAttributes": {
            HEADERS_ATTRIBUTE: string_attribute(
                '{"NServiceBus.ReplyToAddress":"Json","Kept":"k","S3BodyKey":"json-key"}',
                "String.json",
            ),
            "NServiceBus.ReplyToAddress": string_attribute("Attribute", "String.address"),
            "Count": string_attribute("3", "Number"),
            "Signature": BINARY,
            "NServiceBus.MessageId": string_attribute("attribute-id"),
            "NServiceBus.AmazonSQS.DelaySeconds": string_attribute("10", "Number"),
        },
    }
    view = read_message(message)
    assert view.form == "attribute"
    assert view.headers == {
        "NServiceBus.ReplyToAddress": "Attribute",
        "Kept": "k",
        "S3BodyKey": "json-key",
        "Count": "3",
        "Signature": None,
        "NServiceBus.MessageId": "sqs-1",
    }
    assert view.s3_body_key == "json-key"
    assert read_headers(message) == {
        name: value for name, value in view.headers.items() if value is not None
    }


def test_transport_headers_in_the_json_are_dropped_on_receive() -> None:
    json_headers = {
        "NServiceBus.MessageId": "m",
        "NServiceBus.AmazonSQS.TimeToBeReceived": "01:00:00",
        "NServiceBus.AmazonSQS.DelaySeconds": "5",
        HEADERS_ATTRIBUTE: "{}",
    }
    message = {
        "Body": "x",
        "MessageAttributes": {HEADERS_ATTRIBUTE: string_attribute(json.dumps(json_headers))},
    }
    assert read_message(message).headers == {"NServiceBus.MessageId": "m"}


def test_a_message_type_attribute_makes_a_typed_native_message_with_headers() -> None:
    message = {
        "MessageId": "sqs-1",
        "Body": "{}",
        "MessageAttributes": {
            "MessageTypeFullName": string_attribute("Billing.OrderBilled"),
            "NServiceBus.MessageId": string_attribute("attribute-id"),
            "NServiceBus.EnclosedMessageTypes": string_attribute("Overwritten"),
            "Custom": string_attribute("c"),
        },
    }
    view = read_message(message)
    assert (view.form, view.typed) == ("native", True)
    assert view.headers == {
        "MessageTypeFullName": "Billing.OrderBilled",
        "NServiceBus.EnclosedMessageTypes": "Billing.OrderBilled",
        "NServiceBus.MessageId": "sqs-1",
        "Custom": "c",
    }
    assert read_message(message, "override").headers["NServiceBus.MessageId"] == "override"


def test_a_plain_native_message_has_its_attributes_and_its_sqs_id_as_headers() -> None:
    message = {
        "MessageId": "sqs-1",
        "Body": "plain",
        "MessageAttributes": {"S3BodyKey": string_attribute("k"), "Sig": BINARY},
    }
    view = read_message(message, "ignored")
    assert (view.form, view.typed, view.s3_body_key) == ("native", False, None)
    assert view.headers == {"S3BodyKey": "k", "Sig": None, "NServiceBus.MessageId": "sqs-1"}


@pytest.mark.parametrize(
    ("body", "headers", "payload"),
    [
        ("empty message", {}, b""),
        ("e30=", {}, b"{}"),
        ("abcd", {}, bytes([0x69, 0xB7, 0x1D])),
        # .NET skips white space in base64, so this text decodes.
        ("Body Contents", {}, base64.b64decode("BodyContents")),
        ("{}", {}, b"{}"),
        ("abc", {}, b"abc"),
        ("ab=c", {}, b"ab=c"),
        ("a===", {}, b"a==="),
        ("", {}, b""),
        ("café", {}, "café".encode()),
        # Only a wrapped message's own JSON can hold this header: the body is then text.
        ("e30=", {HEADERS_ATTRIBUTE: "x"}, b"e30="),
    ],
)
def test_body_bytes_follow_retrieve_body(
    body: str, headers: dict[str, str | None], payload: bytes
) -> None:
    assert TransportView("wrapped", headers, body, None).body_bytes() == payload


def test_body_bytes_refuse_a_body_in_s3_and_a_null_body() -> None:
    with pytest.raises(WireFormatError, match="S3 under the key 'k'"):
        TransportView("wrapped", {}, "", "k").body_bytes()
    with pytest.raises(WireFormatError, match="null"):
        TransportView("native", {}, None, None).body_bytes()
    assert TransportView("wrapped", {}, "e30=", "").body_bytes() == b"{}"


# --- writing where the transport reads -------------------------------------------------------

ATTRIBUTE_MESSAGE: dict[str, object] = {
    "messageId": "sqs-3",
    "body": "payload",
    "messageAttributes": {
        HEADERS_ATTRIBUTE: {
            "stringValue": '{"NServiceBus.ReplyToAddress":"Json","Other":"o"}',
            "dataType": "String",
        },
        "NServiceBus.ReplyToAddress": {"stringValue": "Sales", "dataType": "String.address"},
        "NServiceBus.FailedQ": {"binaryValue": "AAE=", "dataType": "Binary"},
        "NServiceBus.MessageId": {"stringValue": "attribute-id", "dataType": "String"},
    },
}
V1_BODY = (
    '{"Headers":{"NServiceBus.EnclosedMessageTypes":"T","NServiceBus.ReplyToAddress":"Sales"},'
    ' "Body":"empty message","S3BodyKey":null,"TimeToBeReceived":"01:00:00",'
    '"ReplyToAddress":{"Machine":"m", "Queue" : "Sales"}}'
)
MESSAGES: dict[str, dict[str, object]] = {
    "wrapped": boto3_wrapped(),
    "attribute": ATTRIBUTE_MESSAGE,
    "transport-6": {"MessageId": "sqs-4", "Body": V1_BODY},
}


@pytest.mark.parametrize("form", MESSAGES)
def test_writing_the_headers_read_leaves_the_message_identical(form: str) -> None:
    message = MESSAGES[form]
    assert write_headers(message, read_headers(message)) == message


@pytest.mark.parametrize("form", MESSAGES)
@pytest.mark.parametrize("header", ["NServiceBus.ReplyToAddress", "NServiceBus.FailedQ", "New"])
def test_a_changed_header_is_exactly_the_change_the_transport_reads(form: str, header: str) -> None:
    message = MESSAGES[form]
    before = read_message(message)
    written = write_headers(message, read_headers(message) | {header: ARN})
    after = read_message(written)
    assert after.headers == before.headers | {header: ARN}
    assert (after.form, after.body, after.s3_body_key) == (
        before.form,
        before.body,
        before.s3_body_key,
    )


def test_a_header_an_attribute_supplies_is_written_to_that_attribute() -> None:
    written = write_headers(
        ATTRIBUTE_MESSAGE, read_headers(ATTRIBUTE_MESSAGE) | {"NServiceBus.ReplyToAddress": ARN}
    )
    attributes = written["messageAttributes"]
    original = ATTRIBUTE_MESSAGE["messageAttributes"]
    assert isinstance(attributes, dict)
    assert isinstance(original, dict)
    assert attributes["NServiceBus.ReplyToAddress"] == {
        "stringValue": ARN,
        "dataType": "String.address",
    }
    assert attributes[HEADERS_ATTRIBUTE] == original[HEADERS_ATTRIBUTE]


def test_a_null_header_given_text_turns_its_binary_attribute_into_a_string() -> None:
    written = write_headers(
        ATTRIBUTE_MESSAGE, read_headers(ATTRIBUTE_MESSAGE) | {"NServiceBus.FailedQ": "Sales"}
    )
    attributes = written["messageAttributes"]
    assert isinstance(attributes, dict)
    assert attributes["NServiceBus.FailedQ"] == {"stringValue": "Sales", "dataType": "String"}


def test_a_derived_message_id_is_not_written_unless_it_changes() -> None:
    added = write_headers(ATTRIBUTE_MESSAGE, read_headers(ATTRIBUTE_MESSAGE) | {"New": "n"})
    attributes = added["messageAttributes"]
    assert isinstance(attributes, dict)
    assert json.loads(attributes[HEADERS_ATTRIBUTE]["stringValue"]) == {
        "NServiceBus.ReplyToAddress": "Json",
        "Other": "o",
        "New": "n",
    }
    changed = write_headers(
        ATTRIBUTE_MESSAGE, read_headers(ATTRIBUTE_MESSAGE) | {"NServiceBus.MessageId": "new-id"}
    )
    attributes = changed["messageAttributes"]
    assert isinstance(attributes, dict)
    assert json.loads(attributes[HEADERS_ATTRIBUTE]["stringValue"])["NServiceBus.MessageId"] == (
        "new-id"
    )
    assert read_headers(changed)["NServiceBus.MessageId"] == "new-id"


def test_an_added_header_is_appended_keeping_the_headers_json_bytes() -> None:
    written = write_headers(boto3_wrapped(), HEADERS | {"New": "é+"})
    assert written["Body"] == WRAPPED_BODY.replace('"Sender"}', '"Sender","New":"\\u00e9+"}')


def test_a_transport_6_header_is_written_to_its_member() -> None:
    message = MESSAGES["transport-6"]
    headers = read_headers(message)
    written = write_headers(
        message,
        headers
        | {"NServiceBus.ReplyToAddress": ARN, "NServiceBus.AmazonSQS.TimeToBeReceived": "2"},
    )
    assert written["Body"] == V1_BODY.replace('"01:00:00"', '"2"').replace(
        '"Queue" : "Sales"', f'"Queue" : "{ARN}"'
    )


def test_a_blank_reply_to_is_written_where_the_transport_then_reads_it() -> None:
    message = MESSAGES["transport-6"]
    written = write_headers(message, read_headers(message) | {"NServiceBus.ReplyToAddress": " "})
    assert read_headers(written)["NServiceBus.ReplyToAddress"] == " "


@pytest.mark.parametrize("form", MESSAGES)
def test_a_removed_header_is_removed_from_every_place_it_was(form: str) -> None:
    message = MESSAGES[form]
    headers = read_headers(message)
    del headers["NServiceBus.ReplyToAddress"]
    assert read_headers(write_headers(message, headers)) == headers


@pytest.mark.parametrize(
    ("message", "change", "problem"),
    [
        (
            ATTRIBUTE_MESSAGE,
            lambda h: {k: v for k, v in h.items() if k != "NServiceBus.MessageId"},
            "derives it on receive",
        ),
        (
            ATTRIBUTE_MESSAGE,
            lambda h: h | {"NServiceBus.AmazonSQS.DelaySeconds": "1"},
            "removes it from the headers on receive",
        ),
        (
            {"Body": '{"Headers":{"NServiceBus.MessageId":"m"}}'},
            lambda h: {"Other": h["NServiceBus.MessageId"]},
            "read the message as native",
        ),
    ],
)
def test_a_change_the_transport_would_read_differently_is_refused(
    message: dict[str, object], change: Any, problem: str
) -> None:
    with pytest.raises(WireFormatError, match=problem):
        write_headers(message, change(read_headers(message)))


text_headers = st.dictionaries(
    st.text(max_size=8).filter(lambda name: not name.startswith("NServiceBus.AmazonSQS.")),
    st.text(max_size=8),
    max_size=5,
)


@given(text_headers)
def test_any_change_reads_back_exactly_in_every_form(extra: dict[str, str]) -> None:
    for message in MESSAGES.values():
        headers = read_headers(message) | extra
        written = write_headers(message, headers)
        assert read_headers(written) == headers
        assert write_headers(written, headers) == written


ESCAPED_NAME = '"\\u0048eaders"'


def test_a_headers_name_spelled_with_escapes_is_read_and_written() -> None:
    message = wrapped_message(f'{{"Body":"e30=",{ESCAPED_NAME}:{{"NServiceBus.MessageId":"m"}}}}')
    assert read_headers(message) == {"NServiceBus.MessageId": "m"}
    written = write_headers(message, {"NServiceBus.MessageId": "m", "New": "n"})
    assert written["Body"] == (
        f'{{"Body":"e30=",{ESCAPED_NAME}:{{"NServiceBus.MessageId":"m","New":"n"}}}}'
    )


@pytest.mark.parametrize("first", ['"Headers"', ESCAPED_NAME])
def test_two_headers_members_however_spelled_read_as_the_last_and_are_not_written(
    first: str,
) -> None:
    body = f'{{{first}:{{"NServiceBus.MessageId":"a"}},{ESCAPED_NAME}:{{"NServiceBus.MessageId":"b"}}}}'
    message = wrapped_message(body)
    assert read_message(message).headers == {"NServiceBus.MessageId": "b"}
    with pytest.raises(WireFormatError, match="2 'Headers' members"):
        write_headers(message, {"NServiceBus.MessageId": "c"})


def test_headers_read_are_the_callers_to_change() -> None:
    message = boto3_wrapped()
    read_headers(message)["NServiceBus.MessageId"] = "changed"
    read_message(message).headers["NServiceBus.ReplyToAddress"] = "changed"
    attribute = boto3_attribute()
    read_headers(attribute)["NServiceBus.MessageId"] = "changed"
    assert read_headers(message) == HEADERS
    assert read_headers(attribute) == HEADERS


@pytest.mark.parametrize("message", [boto3_wrapped, lambda_attribute], ids=["wrapped", "attribute"])
def test_an_update_reads_once_and_writes_only_the_changes_as_write_headers_would(
    message: Any,
) -> None:
    original = message()
    update = HeadersUpdate(original)
    assert update.headers == read_headers(original)
    assert update.form == wire_form(original)
    changes = {"NServiceBus.ReplyToAddress": ARN, ARN_HEADER: f"NServiceBus.ReplyToAddress={ARN}"}
    assert update.write(changes) == write_headers(original, {**read_headers(original), **changes})


def test_an_update_that_changes_nothing_gives_the_message_unchanged() -> None:
    original = boto3_wrapped()
    update = HeadersUpdate(original)
    assert update.write({"NServiceBus.ReplyToAddress": "Sender"}) == original


def test_an_update_of_a_native_message_is_refused_as_reading_it_is() -> None:
    native = {"MessageId": "sqs-3", "Body": "plain text"}
    with pytest.raises(WireFormatError, match="the message carries no NServiceBus headers: "):
        HeadersUpdate(native)


def test_a_changed_header_written_compactly_is_changed_in_place_keeping_every_other_byte() -> None:
    """What the dispatcher writes (compact JSON) is edited where it stands; other spellings
    (spaces, other escapes) are rewritten whole and still read back the same."""
    body = '{"Body":"e30=","S3BodyKey":null,"Headers":{"NServiceBus.MessageId":"m-1","A":"x+"}}'
    written = write_headers({"Body": body}, {"NServiceBus.MessageId": "m-1", "A": "y", "B": "b"})
    assert written["Body"] == body.replace('"A":"x+"}', '"A":"y","B":"b"}')
    spaced = '{"Body": "e30=", "Headers": {"NServiceBus.MessageId": "m-1", "A": "x"}}'
    rewritten = write_headers({"Body": spaced}, {"NServiceBus.MessageId": "m-1", "A": "y"})
    assert read_headers(rewritten) == {"NServiceBus.MessageId": "m-1", "A": "y"}


def test_a_value_that_only_looks_like_a_header_pair_is_not_edited() -> None:
    """The pair's quotes are escaped inside a string, so only the member itself matches."""
    inner = json.dumps('"A":"x"')
    body = f'{{"Body":"e30=","Headers":{{"NServiceBus.MessageId":"m-1","C":{inner},"A":"x"}}}}'
    written = write_headers(
        {"Body": body}, {"NServiceBus.MessageId": "m-1", "C": '"A":"x"', "A": "z"}
    )
    assert read_headers(written)["C"] == '"A":"x"'
    assert read_headers(written)["A"] == "z"


@pytest.mark.parametrize("text", ["null", " null ", "{}", ' {"NServiceBus.MessageId":"1"} '])
def test_headers_are_added_to_a_headers_attribute_however_empty(text: str) -> None:
    message = {
        "body": "x",
        "messageId": "sqs-1",
        "messageAttributes": {HEADERS_ATTRIBUTE: {"stringValue": text, "dataType": "String"}},
    }
    written = HeadersUpdate(message).write({"A": "b"})
    assert read_headers(written)["A"] == "b"


@pytest.mark.parametrize("form", ["wrapped", "attribute"])
def test_the_time_to_be_received_is_read_and_written_where_the_form_carries_it(form: str) -> None:
    headers = {"NServiceBus.MessageId": "m-1", "NServiceBus.AmazonSQS.TimeToBeReceived": "00:01:00"}
    if form == "wrapped":
        message: dict[str, object] = {"Body": json.dumps({"Body": "e30=", "Headers": headers})}
    else:
        message = {
            "Body": "{}",
            "MessageAttributes": {
                HEADERS_ATTRIBUTE: {"StringValue": json.dumps(headers), "DataType": "String"}
            },
        }
    update = HeadersUpdate(message)
    assert (update.carries_time_to_be_received, update.time_to_be_received) == (True, "00:01:00")
    written = HeadersUpdate(update.write({}, "00:00:30"))
    assert written.time_to_be_received == "00:00:30"
    assert written.carried_headers()["NServiceBus.AmazonSQS.TimeToBeReceived"] == "00:00:30"
    # The attribute form's receiver drops it from the headers; the wrapped one checks it first.
    assert ("NServiceBus.AmazonSQS.TimeToBeReceived" in written.headers) is (form == "wrapped")
