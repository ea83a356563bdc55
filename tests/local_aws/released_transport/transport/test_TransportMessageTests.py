# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/TransportMessageTests.cs``:
the envelope's computed ``TimeToBeReceived`` and ``ReplyToAddress`` and reading v1 envelopes,
plus the reader's document-order semantics those setters imply."""

from __future__ import annotations

import re
import uuid

import pytest

from local_aws.released_transport.core.outgoing import OutgoingMessage
from local_aws.released_transport.dotnet.system_text_json import DotnetJsonError
from local_aws.released_transport.dotnet.time_formats import TIMESPAN_MAX, TimeSpan
from local_aws.released_transport.transport.envelope import (
    NullReferenceError,
    TransportMessage,
    deserialize,
    from_outgoing,
)

EXPECTED_REPLY_TO_ADDRESS = "TestReplyToAddress"
EXPECTED_TTBR = TimeSpan(TIMESPAN_MAX.ticks - 3600 * 10_000_000)
TTBR_HEADER = "NServiceBus.AmazonSQS.TimeToBeReceived"
REPLY_TO_HEADER = "NServiceBus.ReplyToAddress"


def test_the_expected_ttbr_is_written_as_dotnet_writes_it() -> None:
    assert str(EXPECTED_TTBR) == "10675199.01:48:05.4775807"
    assert str(TIMESPAN_MAX) == "10675199.02:48:05.4775807"


def test_Defaults_TimeToBeReceived_to_TimeSpan_MaxTime_when_DiscardIfNotReceivedBefore_is_not_provided() -> (
    None
):
    envelope = from_outgoing(OutgoingMessage("", {}, b""), None)

    assert envelope.time_to_be_received == "10675199.02:48:05.4775807"
    assert envelope.headers is not None
    assert TTBR_HEADER not in envelope.headers


def test_Populates_TimeToBeReceived_when_DiscardIfNotReceivedBefore_is_provided() -> None:
    envelope = from_outgoing(OutgoingMessage("", {}, b""), EXPECTED_TTBR)

    assert envelope.time_to_be_received == "10675199.01:48:05.4775807"


def test_Populates_TimeToBeReceived_when_TimeToBeReceived_Header_is_present() -> None:
    envelope = TransportMessage(headers={TTBR_HEADER: str(EXPECTED_TTBR)})

    assert envelope.time_to_be_received == str(EXPECTED_TTBR)


def test_Adds_TimeToBeReceived_Header_when_property_value_is_provided() -> None:
    envelope = TransportMessage(headers={})

    envelope.set_time_to_be_received(str(EXPECTED_TTBR))

    assert envelope.headers == {TTBR_HEADER: str(EXPECTED_TTBR)}


def test_Does_not_add_TimeToBeReceived_Header_when_property_is_set_to_null() -> None:
    envelope = TransportMessage(headers={})

    envelope.set_time_to_be_received(None)

    assert envelope.headers == {}


def test_Populates_ReplyToAddress_when_header_is_present() -> None:
    envelope = from_outgoing(
        OutgoingMessage("", {REPLY_TO_HEADER: EXPECTED_REPLY_TO_ADDRESS}, b""), None
    )

    assert envelope.reply_to_address == EXPECTED_REPLY_TO_ADDRESS


def test_ReplyToAddress_is_null_when_no_ReplyToAddress_header_is_present() -> None:
    envelope = from_outgoing(OutgoingMessage("", {}, b""), None)

    assert envelope.reply_to_address is None


def test_Adds_ReplyToAddress_Header_when_property_value_is_provided() -> None:
    envelope = TransportMessage(headers={})

    envelope.set_reply_to_address(EXPECTED_REPLY_TO_ADDRESS)

    assert envelope.headers == {REPLY_TO_HEADER: EXPECTED_REPLY_TO_ADDRESS}


def test_Does_not_add_ReplyToAddress_Header_when_property_value_is_set_to_null() -> None:
    envelope = TransportMessage(headers={})

    envelope.set_reply_to_address(None)

    assert envelope.headers == {}


def test_Can_be_built_from_serialized_v1_message() -> None:
    json = (
        '{"Headers":{"NServiceBus.MessageId":"00000000-0000-0000-0000-000000000000"},'
        '"Body":"empty message","S3BodyKey":null,"TimeToBeReceived":"10675199.01:48:05.4775807",'
        '"ReplyToAddress":{"Queue":"TestReplyToAddress","Machine":"MACHINE"}}'
    )

    envelope = deserialize(json)

    assert envelope is not None
    assert envelope.headers is not None
    assert envelope.headers[TTBR_HEADER] == str(EXPECTED_TTBR)
    assert envelope.headers[REPLY_TO_HEADER] == EXPECTED_REPLY_TO_ADDRESS


def test_Can_be_built_from_serialized_message() -> None:
    json = (
        '{"Headers":{"NServiceBus.MessageId":"00000000-0000-0000-0000-000000000000"},'
        '"Body":"empty message","S3BodyKey":null}'
    )

    envelope = deserialize(json)

    assert envelope is not None
    assert envelope.headers is not None
    assert TTBR_HEADER not in envelope.headers
    assert envelope.time_to_be_received == str(TIMESPAN_MAX)
    assert REPLY_TO_HEADER not in envelope.headers
    assert envelope.reply_to_address is None


def test_the_constructor_adds_a_random_message_id_header_to_the_callers_dictionary() -> None:
    headers: dict[str, str | None] = {"NServiceBus.MessageId": ""}

    from_outgoing(OutgoingMessage("1234", headers, b""), None)

    assert headers["NServiceBus.MessageId"] != "1234"
    assert uuid.UUID(str(headers["NServiceBus.MessageId"])).version == 4
    assert re.fullmatch(r"[0-9a-f-]{36}", str(headers["NServiceBus.MessageId"]))


def test_a_v1_property_before_Headers_is_a_null_reference() -> None:
    with pytest.raises(NullReferenceError):
        deserialize('{"TimeToBeReceived":"00:00:01","Headers":{}}')


def test_property_names_are_case_sensitive_and_unknown_ones_skipped() -> None:
    envelope = deserialize('{"headers":{"a":"b"},"Body":"x","Other":[1,{"y":null}]}')

    assert envelope == TransportMessage(headers=None, body="x")


@pytest.mark.parametrize(
    "json",
    ['{"Headers":{"a":1}}', '{"Headers":[]}', '{"Body":5}', "[]", '"text"', "NaN", "{", ""],
)
def test_what_the_deserializer_refuses(json: str) -> None:
    with pytest.raises(DotnetJsonError):
        deserialize(json)


def test_the_document_null_reads_as_no_message() -> None:
    assert deserialize("null") is None


def test_a_later_duplicate_wins() -> None:
    envelope = deserialize('{"Headers":{"a":"1","a":"2"},"Body":"x","Body":"y"}')

    assert envelope == TransportMessage(headers={"a": "2"}, body="y")


def test_a_whitespace_reply_to_queue_is_ignored() -> None:
    envelope = deserialize('{"Headers":{},"ReplyToAddress":{"Queue":" \\u00A0","Machine":null}}')

    assert envelope == TransportMessage(headers={})
