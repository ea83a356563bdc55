"""The vectors of NServiceBus.AmazonSQS 9.1.1's ``TransportMessageTests`` (the wrapped
envelope and its transport 6 properties), against the reader and the dispatcher's writer.

Where upstream sets a ``TransportMessage`` property in memory, the equivalent here is the
serialized envelope with that property, read back; such an envelope needs a message id header
to count as NServiceBus's (the constructor would have added one).
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.dispatch import wrapped_message
from cross_account_runtime.nservicebus.wire_format import MAX_TIME_TO_BE_RECEIVED
from cross_account_runtime.nservicebus.wire_reading import TransportView, read_message

TTBR = "NServiceBus.AmazonSQS.TimeToBeReceived"
REPLY_TO = "NServiceBus.ReplyToAddress"
EXPECTED_REPLY_TO = "TestReplyToAddress"
EXPECTED_TTBR = "10675199.01:48:05.4775807"
ID = '"NServiceBus.MessageId":"00000000-0000-0000-0000-000000000000"'


def received(body: str) -> TransportView:
    return read_message({"MessageId": "sqs", "Body": body})


def dispatched(
    headers: dict[str, str | None], time_to_be_received: str | None = None
) -> TransportView:
    message = wrapped_message("", headers, b"", time_to_be_received=time_to_be_received)
    body = message["MessageBody"]
    assert isinstance(body, str)
    return received(body)


def test_Defaults_TimeToBeReceived_to_TimeSpan_MaxTime_when_DiscardIfNotReceivedBefore_is_not_provided() -> (
    None
):
    view = dispatched({})
    assert view.time_to_be_received == MAX_TIME_TO_BE_RECEIVED == "10675199.02:48:05.4775807"
    assert TTBR not in view.headers


def test_Populates_TimeToBeReceived_when_DiscardIfNotReceivedBefore_is_provided() -> None:
    assert dispatched({}, EXPECTED_TTBR).time_to_be_received == EXPECTED_TTBR


def test_Populates_TimeToBeReceived_when_TimeToBeReceived_Header_is_present() -> None:
    assert TransportView("wrapped", {TTBR: EXPECTED_TTBR}, None, None).time_to_be_received == (
        EXPECTED_TTBR
    )


def test_Adds_TimeToBeReceived_Header_when_property_value_is_provided() -> None:
    view = received(f'{{"Headers":{{{ID}}},"TimeToBeReceived":"{EXPECTED_TTBR}"}}')
    assert view.headers[TTBR] == EXPECTED_TTBR


def test_Does_not_add_TimeToBeReceived_Header_when_property_is_set_to_null() -> None:
    assert TTBR not in received(f'{{"Headers":{{{ID}}},"TimeToBeReceived":null}}').headers


def test_Populates_ReplyToAddress_when_header_is_present() -> None:
    assert dispatched({REPLY_TO: EXPECTED_REPLY_TO}).headers[REPLY_TO] == EXPECTED_REPLY_TO


def test_ReplyToAddress_is_null_when_no_ReplyToAddress_header_is_present() -> None:
    assert REPLY_TO not in dispatched({}).headers


def test_Adds_ReplyToAddress_Header_when_property_value_is_provided() -> None:
    view = received(f'{{"Headers":{{{ID}}},"ReplyToAddress":{{"Queue":"{EXPECTED_REPLY_TO}"}}}}')
    assert view.headers[REPLY_TO] == EXPECTED_REPLY_TO


def test_Does_not_add_ReplyToAddress_Header_when_property_value_is_set_to_null() -> None:
    assert REPLY_TO not in received(f'{{"Headers":{{{ID}}},"ReplyToAddress":null}}').headers


def test_Can_be_built_from_serialized_v1_message() -> None:
    view = received(
        f'{{"Headers":{{{ID}}},"Body":"empty message","S3BodyKey":null,'
        f'"TimeToBeReceived":"{EXPECTED_TTBR}",'
        f'"ReplyToAddress":{{"Queue":"{EXPECTED_REPLY_TO}","Machine":"MACHINE"}}}}'
    )
    assert view.form == "wrapped"
    assert view.headers[TTBR] == EXPECTED_TTBR
    assert view.headers[REPLY_TO] == EXPECTED_REPLY_TO


def test_Can_be_built_from_serialized_message() -> None:
    view = received(f'{{"Headers":{{{ID}}},"Body":"empty message","S3BodyKey":null}}')
    assert view.form == "wrapped"
    assert TTBR not in view.headers
    assert view.time_to_be_received == MAX_TIME_TO_BE_RECEIVED
    assert REPLY_TO not in view.headers
