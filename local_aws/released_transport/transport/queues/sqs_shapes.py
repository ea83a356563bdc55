"""The shapes of SQS messages as boto3 hands them over and takes them back.

A received message is the mapping ``receive_message`` returns (``MessageId``, ``ReceiptHandle``,
``Body``, ``Attributes`` for system attributes, ``MessageAttributes``). The upstream unit tests
build messages the service never sends — a ``null`` body, attributes without ``DataType`` — so
the model reads them defensively and keeps those oddities instead of failing on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from local_aws.released_transport.headers import STRING_DATA_TYPE

ReceivedMessage = Mapping[str, Any]
"""One element of ``receive_message(...)["Messages"]``."""


class MessageAttributeValue(TypedDict):
    """One message attribute, as sent and as received (the reserved list members are never
    populated by SQS and are left out)."""

    DataType: NotRequired[str]
    StringValue: NotRequired[str]
    BinaryValue: NotRequired[bytes]


def message_attributes(message: ReceivedMessage) -> dict[str, MessageAttributeValue]:
    """The message attributes (an empty mapping when the message has none)."""
    attributes = message.get("MessageAttributes") or {}
    return {
        name: _attribute(value)
        for name, value in attributes.items()
        if isinstance(name, str) and isinstance(value, Mapping)
    }


def _attribute(value: Mapping[str, Any]) -> MessageAttributeValue:
    attribute = MessageAttributeValue()
    if isinstance(value.get("DataType"), str):
        attribute["DataType"] = value["DataType"]
    if isinstance(value.get("StringValue"), str):
        attribute["StringValue"] = value["StringValue"]
    if isinstance(value.get("BinaryValue"), bytes | bytearray):
        attribute["BinaryValue"] = bytes(value["BinaryValue"])
    return attribute


def string_value(attribute: MessageAttributeValue) -> str | None:
    """``MessageAttributeValue.StringValue``: ``None`` for a Binary attribute."""
    return attribute.get("StringValue")


def string_attribute(value: str) -> MessageAttributeValue:
    """A ``String`` attribute, as every attribute the transport writes."""
    return MessageAttributeValue(DataType=STRING_DATA_TYPE, StringValue=value)


def body_of(message: ReceivedMessage) -> str | None:
    """The body text (``None`` only in hand-built messages)."""
    body = message.get("Body")
    return body if isinstance(body, str) else None


def system_attribute(message: ReceivedMessage, name: str) -> str:
    """A system attribute the receive call asked for; ``KeyError`` when absent, as the
    transport's ``Attributes[name]`` throws."""
    attributes: Mapping[str, Any] = message.get("Attributes") or {}
    return str(attributes[name])
