"""The fields of an SQS message, in whichever of its three spellings it comes.

A message is a mapping as boto3 returns it (``Body``, ``MessageId``, ``MessageAttributes`` with
``StringValue``/``DataType``), as Lambda passes it (``body``, ``messageId``,
``messageAttributes`` with ``stringValue``/``dataType``), or as ``send_message`` takes it
(``MessageBody``, ``MessageAttributes``). The wire format reads and writes all three, so that
the relay, the tests and the tools share one reading; a Lambda record, the relay's every
message, is recognised first, in one call.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.wire_format import WireFormatError

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

BODY_KEYS: Final = ("Body", "body", "MessageBody")
ATTRIBUTES_KEYS: Final = ("MessageAttributes", "messageAttributes")
MESSAGE_ID_KEYS: Final = ("MessageId", "messageId")
STRING_VALUE_KEYS: Final = ("StringValue", "stringValue")
BINARY_VALUE_KEYS: Final = ("BinaryValue", "binaryValue")
DATA_TYPE_KEYS: Final = ("DataType", "dataType")
# Lambda spells attribute fields in camel case, boto3 and send_message in Pascal case.
_LAMBDA_ATTRIBUTE_KEYS: Final = (DATA_TYPE_KEYS[1], STRING_VALUE_KEYS[1], BINARY_VALUE_KEYS[1])


def fields_of(message: Mapping[str, object]) -> tuple[Mapping[str, object], str | None, str | None]:
    """The attributes, body and SQS message id; one call, as Lambda spells them, for the relay."""
    if "body" in message and "Body" not in message and "MessageBody" not in message:
        body = message["body"]
        attributes = message.get("messageAttributes")
        native_id = message.get("messageId")
        if (
            (body is None or type(body) is str)
            and type(attributes) is dict
            and "MessageAttributes" not in message
            and (native_id is None or type(native_id) is str)
            and "MessageId" not in message
        ):
            return attributes, body, native_id
    return attributes_field(message)[1], body_field(message)[1], native_message_id(message)


def native_message_id(message: Mapping[str, object]) -> str | None:
    """The SQS message id of a received message (``None`` for a request to send one)."""
    for key in MESSAGE_ID_KEYS:
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def body_field(message: Mapping[str, object]) -> tuple[str, str | None]:
    """The body field's name and text; the name differs between boto3, Lambda and sends. A
    null body (the transport's tests use one) is ``None``."""
    if "body" in message and "Body" not in message and "MessageBody" not in message:
        keys = ["body"]  # a Lambda record: the relay's every message
    else:
        keys = [key for key in BODY_KEYS if key in message]
    if len(keys) != 1:
        raise WireFormatError(
            f"a message needs exactly one of the fields {', '.join(BODY_KEYS)}; it has "
            f"{', '.join(keys) or 'none'}"
        )
    body = message[keys[0]]
    if body is not None and not isinstance(body, str):
        raise WireFormatError(
            f"field {keys[0]!r} must be text, got {type(body).__name__}; decode it first"
        )
    return keys[0], body


def attributes_field(message: Mapping[str, object]) -> tuple[str, Mapping[str, object]]:
    """The attributes field's name and value; a message may have no attributes at all."""
    keys = [key for key in ATTRIBUTES_KEYS if key in message]
    if len(keys) > 1:
        raise WireFormatError(
            f"a message has at most one of the fields {', '.join(ATTRIBUTES_KEYS)}; it has both"
        )
    if not keys:
        return ATTRIBUTES_KEYS[0], {}
    return keys[0], as_mapping(message[keys[0]], keys[0])


def as_mapping(value: object, field: str) -> Mapping[str, object]:
    """``value`` if it is a dict, which is what boto3, Lambda and ``json`` produce."""
    if not isinstance(value, dict):
        raise WireFormatError(
            f"field {field!r} must be a dict (as boto3 and Lambda give it), got "
            f"{type(value).__name__}"
        )
    return value


def present_key(attribute: Mapping[str, object], keys: tuple[str, str]) -> str:
    """The spelling of ``keys`` the attribute uses (boto3 and Lambda differ in case)."""
    return keys[1] if keys[0] not in attribute and keys[1] in attribute else keys[0]


def string_value(attribute: object, name: str) -> str | None:
    """An attribute's ``StringValue``, whatever its data type (``String``, ``String.x``,
    ``Number``...): what the transport copies. ``None`` for a ``Binary`` attribute."""
    fields = as_mapping(attribute, name)
    value = fields.get("StringValue") if "StringValue" in fields else fields.get("stringValue")
    if value is not None and not isinstance(value, str):
        raise WireFormatError(
            f"attribute {name!r} has a {type(value).__name__} string value; SQS attribute "
            "values are text"
        )
    return value


def with_text(attribute: Mapping[str, object], text: str) -> dict[str, object]:
    """A copy of ``attribute`` holding ``text``, in the spelling it uses; a ``Binary`` or
    ``Number`` attribute becomes ``String`` (the transport reads the text whatever the type)."""
    result = dict(attribute)
    spelling = 1 if any(key in result for key in _LAMBDA_ATTRIBUTE_KEYS) else 0
    data_type = result.get(DATA_TYPE_KEYS[spelling])
    if not (isinstance(data_type, str) and data_type.startswith("String")):
        result.pop(BINARY_VALUE_KEYS[spelling], None)
        result[DATA_TYPE_KEYS[spelling]] = "String"
    result[STRING_VALUE_KEYS[spelling]] = text
    return result
