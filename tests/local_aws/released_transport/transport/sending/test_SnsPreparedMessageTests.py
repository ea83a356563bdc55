# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Sending/
SnsPreparedMessageTests.cs``: the size the transport compares with 256 KiB."""

from __future__ import annotations

from local_aws.released_transport.transport.queues.sqs_shapes import MessageAttributeValue
from local_aws.released_transport.transport.sending.sns_prepared_message import SnsPreparedMessage


def test_CalculateSize_BodyTakenIntoAccount() -> None:
    message = SnsPreparedMessage(body="a" * 10)

    message.calculate_size()

    assert message.size == 10


def test_CalculateSize_BodyAndReservedBytesTakenIntoAccount() -> None:
    message = SnsPreparedMessage(body="a" * 10, reserve_bytes=5)

    message.calculate_size()

    assert message.size == 15


def test_CalculateSize_TakesAttributesIntoAccount() -> None:
    message = SnsPreparedMessage(
        message_attributes={
            "Key1": MessageAttributeValue(DataType="string", StringValue="SomeString"),
            "Key3": MessageAttributeValue(BinaryValue=b"\x00"),
        }
    )

    message.calculate_size()

    assert message.size == 25


def test_MessageId_SetAttribute() -> None:
    message = SnsPreparedMessage()

    message.set_message_id("some-id")

    assert message.message_id == "some-id"
    assert message.message_attributes["NServiceBus.MessageId"] == {
        "DataType": "String",
        "StringValue": "some-id",
    }
