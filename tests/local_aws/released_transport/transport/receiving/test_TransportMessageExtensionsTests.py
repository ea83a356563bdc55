# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Receiving/
TransportMessageExtensionsTests.cs`` (``RetrieveBody`` without S3 settings), and the .NET
base64 rule the body goes through."""

from __future__ import annotations

import pytest

from local_aws.released_transport.core.outgoing import OutgoingMessage
from local_aws.released_transport.transport.envelope import (
    NullReferenceError,
    TransportMessage,
    from_outgoing,
)
from local_aws.released_transport.transport.receiving.extraction import (
    ExtractedMessage,
    S3BodyNotConfiguredError,
    WireForm,
    retrieve_body,
)


def _extracted(envelope: TransportMessage, form: WireForm = WireForm.WRAPPED) -> ExtractedMessage:
    return ExtractedMessage(form, envelope)


def test_Empty_body_is_received_ok() -> None:
    envelope = from_outgoing(OutgoingMessage("id", {}, b""), None)

    assert retrieve_body(_extracted(envelope), "id") == b""


def test_Null_body_is_received_ok() -> None:
    """.NET's null body has length 0, so it becomes ``empty message`` too."""
    envelope = from_outgoing(OutgoingMessage("id", {}, b""), None)

    assert envelope.body == "empty message"
    assert retrieve_body(_extracted(envelope), "id") == b""


def test_Empty_message_string_body_is_received_as_empty() -> None:
    envelope = TransportMessage(headers={}, body="empty message")

    assert retrieve_body(_extracted(envelope), "id") == b""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("e30=", b"{}"),
        ("abcd", bytes([0x69, 0xB7, 0x1D])),
        ("Body Contents", b"\x06\x87r\n\x89\xedz{l"),
        ("e3\r\n0=", b"{}"),
        ("{}", b"{}"),
        ("my message body", b"my message body"),
        ("", b""),
    ],
)
def test_a_body_that_is_valid_base64_is_decoded(body: str, expected: bytes) -> None:
    assert retrieve_body(_extracted(TransportMessage({}, body)), "id") == expected


def test_headers_naming_the_headers_attribute_keep_the_body_as_text() -> None:
    envelope = TransportMessage({"NServiceBus.AmazonSQS.Headers": "{}"}, "abcd")

    assert retrieve_body(_extracted(envelope), "id") == b"abcd"


def test_a_body_in_S3_without_S3_settings_is_refused() -> None:
    with pytest.raises(S3BodyNotConfiguredError) as refused:
        retrieve_body(_extracted(TransportMessage({}, None, "key")), "the-id")

    assert str(refused.value) == (
        "The message the-id contains the ID of the body stored in S3 but this endpoint is not"
        " configured to use S3 for body storage."
    )


def test_a_null_body_is_a_null_reference() -> None:
    with pytest.raises(NullReferenceError):
        retrieve_body(_extracted(TransportMessage({}, None)), "id")
