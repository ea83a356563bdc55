"""The wire-format vectors of NServiceBus.AmazonSQS 9.1.1's ``MessageDispatcherTests``: the two
approval files and the body and attribute assertions, against
:mod:`cross_account_runtime.nservicebus.dispatch`; and System.Text.Json's default escaping,
which the approved bodies depend on."""

from __future__ import annotations

import json
import uuid

import pytest

from cross_account_runtime.nservicebus.dispatch import unwrapped_message, wrapped_message
from cross_account_runtime.nservicebus.dotnet_text import json_string
from cross_account_runtime.nservicebus.wire_reading import read_message

TTBR = "NServiceBus.AmazonSQS.TimeToBeReceived"
REPLY_TO = "NServiceBus.ReplyToAddress"
MESSAGE_ID = "NServiceBus.MessageId"
EXPECTED_TTBR = "10675199.01:48:05.4775807"

# ApprovalFiles/MessageDispatcherTests.Does_not_send_extra_properties_in_payload_by_default
# .approved.txt (no trailing newline).
DOES_NOT_SEND_EXTRA_PROPERTIES_APPROVED = (
    '{"Body":"e30=","S3BodyKey":null,"Headers":{"NServiceBus.AmazonSQS.TimeToBeReceived":'
    '"10675199.01:48:05.4775807","NServiceBus.ReplyToAddress":"TestReplyToAddress",'
    '"NServiceBus.MessageId":"093C17C6-D32E-44FE-9134-65C10C1287EB"}}'
)

# ApprovalFiles/MessageDispatcherTests.Should_not_wrap_if_configured_not_to.approved.txt
SHOULD_NOT_WRAP_APPROVED = r"""{
  "DelaySeconds": 0,
  "MessageAttributes": {
    "NServiceBus.MessageId": {
      "BinaryListValues": null,
      "BinaryValue": null,
      "DataType": "String",
      "StringListValues": null,
      "StringValue": "1234"
    },
    "NServiceBus.AmazonSQS.Headers": {
      "BinaryListValues": null,
      "BinaryValue": null,
      "DataType": "String",
      "StringListValues": null,
      "StringValue": "{\"NServiceBus.AmazonSQS.TimeToBeReceived\":\"10675199.01:48:05.4775807\",\"NServiceBus.ReplyToAddress\":\"TestReplyToAddress\",\"NServiceBus.MessageId\":\"74d4f8e4-0fc7-4f09-8d46-0b76994e76d6\"}"
    }
  },
  "MessageBody": "my message body",
  "MessageDeduplicationId": null,
  "MessageGroupId": null,
  "MessageSystemAttributes": null,
  "QueueUrl": "address"
}"""


def without_nulls(value: object) -> object:
    """The approved request without the fields the SDK leaves null (boto3 omits them)."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    return value


def test_Does_not_send_extra_properties_in_payload_by_default() -> None:
    message = wrapped_message(
        "1234",
        {
            TTBR: EXPECTED_TTBR,
            REPLY_TO: "TestReplyToAddress",
            MESSAGE_ID: "093C17C6-D32E-44FE-9134-65C10C1287EB",
        },
        b"{}",
    )
    assert message["MessageBody"] == DOES_NOT_SEND_EXTRA_PROPERTIES_APPROVED


def test_Should_not_wrap_if_configured_not_to() -> None:
    message = unwrapped_message(
        "1234",
        {
            TTBR: EXPECTED_TTBR,
            REPLY_TO: "TestReplyToAddress",
            MESSAGE_ID: "74d4f8e4-0fc7-4f09-8d46-0b76994e76d6",
        },
        b"my message body",
    )
    request = {"DelaySeconds": 0, **message, "QueueUrl": "address"}
    approved = without_nulls(json.loads(SHOULD_NOT_WRAP_APPROVED))
    assert request == approved
    assert isinstance(approved, dict)
    assert list(message["MessageAttributes"]) == list(approved["MessageAttributes"])  # type: ignore[call-overload]


def test_Should_base64_encode_by_default() -> None:
    message = wrapped_message(
        "1234", {TTBR: EXPECTED_TTBR, REPLY_TO: "TestReplyToAddress"}, b"my message body"
    )
    body = message["MessageBody"]
    assert isinstance(body, str)
    assert json.loads(body)["Body"] == "bXkgbWVzc2FnZSBib2R5"


def test_Should_handle_empty_body_gracefully_wrapped() -> None:
    message = wrapped_message("id", {MESSAGE_ID: "id"}, b"")
    assert message["MessageBody"] == (
        '{"Body":"empty message","S3BodyKey":null,"Headers":{"NServiceBus.MessageId":"id"}}'
    )


def test_Should_handle_empty_body_gracefully_unwrapped() -> None:
    assert unwrapped_message("id", {MESSAGE_ID: "id"}, b"")["MessageBody"] == "empty message"


@pytest.mark.parametrize("build", [wrapped_message, unwrapped_message])
def test_Includes_message_id_in_message_attributes(build: object) -> None:
    assert callable(build)
    message = build("1234", {}, b"{}")
    assert message["MessageAttributes"][MESSAGE_ID] == {"DataType": "String", "StringValue": "1234"}


def test_a_wrapped_message_without_a_message_id_header_gets_a_random_guid() -> None:
    headers: dict[str, str | None] = {}
    body = wrapped_message("1234", headers, b"{}")["MessageBody"]
    assert isinstance(body, str)
    header = json.loads(body)["Headers"][MESSAGE_ID]
    assert str(uuid.UUID(header)) == header
    assert header != "1234"
    assert headers == {}


@pytest.mark.parametrize(
    ("body", "sent"),
    [
        (b"my message body", "my message body"),
        ("tab\t, line\n, café, \u20ac".encode(), "tab\t, line\n, café, \u20ac"),
        # A control character, a character beyond U+FFFF and U+FFFE are outside XML's text.
        (b"bell\x07", "YmVsbAc="),
        ("emoji 😀".encode(), "ZW1vamkg8J+YgA=="),
        ("\ufffe".encode(), "77++"),
        # Invalid UTF-8 is decoded to U+FFFD, which is text: the payload is sent lossily.
        (b"\xff", "\ufffd"),
    ],
)
def test_an_unwrapped_body_is_text_or_base64_as_the_dispatcher_decides(
    body: bytes, sent: str
) -> None:
    assert unwrapped_message("1", {}, body)["MessageBody"] == sent


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("plain", '"plain"'),
        ("+/=", '"\\u002B/="'),
        (
            "<a href='x'>&`</a>",
            '"\\u003Ca href=\\u0027x\\u0027\\u003E\\u0026\\u0060\\u003C/a\\u003E"',
        ),
        ('say "hi"\\', '"say \\u0022hi\\u0022\\\\"'),
        ("\b\t\n\f\r\x01\x7f", '"\\b\\t\\n\\f\\r\\u0001\\u007F"'),
        ("é€", '"\\u00E9\\u20AC"'),
        ("😀", '"\\uD83D\\uDE00"'),
    ],
)
def test_json_strings_are_escaped_as_system_text_json_does_by_default(
    text: str, written: str
) -> None:
    assert json_string(text) == written
    assert json.loads(written) == text


def test_a_lone_surrogate_cannot_be_written_as_json() -> None:
    with pytest.raises(ValueError, match="lone surrogate U\\+D800 at position 1"):
        json_string("a\ud800")


def test_the_transport_reads_back_what_the_dispatcher_writes() -> None:
    headers: dict[str, str | None] = {MESSAGE_ID: "m", REPLY_TO: "Sales+1", "Null": None}
    wrapped = read_message(wrapped_message("1", headers, b"\x00\xffpayload"))
    assert (wrapped.form, wrapped.headers, wrapped.body_bytes()) == (
        "wrapped",
        headers,
        b"\x00\xffpayload",
    )
    unwrapped = read_message(unwrapped_message("1", headers, "text é".encode()))
    assert (unwrapped.form, unwrapped.headers, unwrapped.body_bytes()) == (
        "attribute",
        headers,
        "text é".encode(),
    )
