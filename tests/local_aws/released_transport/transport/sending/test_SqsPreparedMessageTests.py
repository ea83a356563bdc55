# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Sending/
SqsPreparedMessageTests.cs``: the size the transport compares with 1 MiB."""

from __future__ import annotations

from local_aws.released_transport.transport.queues.sqs_shapes import MessageAttributeValue
from local_aws.released_transport.transport.sending.prepared_message import SqsPreparedMessage


def test_CalculateSize_BodyTakenIntoAccount() -> None:
    message = SqsPreparedMessage(body="a" * 10)

    message.calculate_size()

    assert message.size == 10


def test_CalculateSize_BodyAndReservedBytesTakenIntoAccount() -> None:
    message = SqsPreparedMessage(body="a" * 10, reserve_bytes=5)

    message.calculate_size()

    assert message.size == 15


def test_CalculateSize_TakesAttributesIntoAccount() -> None:
    """Upstream's list-valued attributes (``Key2``, ``Key4``) have no counterpart in what SQS
    sends or receives; their contribution (4 + 10, 4 + 2) is replaced by text and binary
    attributes of the same lengths."""
    message = SqsPreparedMessage(
        message_attributes={
            "Key1": MessageAttributeValue(DataType="string", StringValue="SomeString"),
            "Key2": MessageAttributeValue(StringValue="SomeString"),
            "Key3": MessageAttributeValue(BinaryValue=b"\x01"),
            "Key4": MessageAttributeValue(BinaryValue=b"\x01\x02"),
        }
    )

    message.calculate_size()

    assert message.size == 45


def test_MessageId_SetAttribute() -> None:
    message = SqsPreparedMessage()

    message.set_message_id("some-id")

    assert message.message_id == "some-id"
    assert message.message_attributes["NServiceBus.MessageId"] == {
        "DataType": "String",
        "StringValue": "some-id",
    }


def test_the_size_counts_utf16_code_units() -> None:
    message = SqsPreparedMessage(body="😀é")

    message.calculate_size()

    assert message.size == 3
