"""The headers of an NServiceBus message on SQS, read and written in either wire form.

NServiceBus puts its headers in one of two places:

* the ``NServiceBus.AmazonSQS.Headers`` message attribute, a JSON object of text to text
  (the body is then the raw payload);
* the body itself, a JSON object ``{"Body": ..., "S3BodyKey": ..., "Headers": {...}}`` (the
  default, "wrapped" form).

Receivers look in that order, after the attribute and before the wrapper honouring a
``MessageTypeFullName`` attribute (a native message with a type name). Anything else is a
native message with no NServiceBus headers. This module follows the same order, and when it
writes headers back it replaces only the headers: in the wrapped form every other byte of the
body stays as it was, in the attribute form every other attribute and field.

A message is a mapping as boto3 returns it (``Body``, ``MessageAttributes`` with
``StringValue``/``DataType``), as Lambda passes it (``body``, ``messageAttributes`` with
``stringValue``/``dataType``), or as ``send_message`` takes it (``MessageBody``,
``MessageAttributes``).
"""

from __future__ import annotations

import json

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final, Literal

    WireForm = Literal["attribute", "wrapped", "native"]

HEADERS_ATTRIBUTE: Final = "NServiceBus.AmazonSQS.Headers"
MESSAGE_TYPE_ATTRIBUTE: Final = "MessageTypeFullName"
BODY_KEYS: Final = ("Body", "body", "MessageBody")
ATTRIBUTES_KEYS: Final = ("MessageAttributes", "messageAttributes")
STRING_VALUE_KEYS: Final = ("StringValue", "stringValue")
DATA_TYPE_KEYS: Final = ("DataType", "dataType")
WRAPPED_HEADERS_KEY: Final = "Headers"

# The headers NServiceBus looks for before it accepts a wrapped body as its own.
_MESSAGE_ID: Final = "NServiceBus.MessageId"
_ENCLOSED_MESSAGE_TYPES: Final = "NServiceBus.EnclosedMessageTypes"
_CONTROL_MESSAGE: Final = "NServiceBus.ControlMessage"

_JSON_WHITESPACE: Final = " \t\n\r"
_DECODER: Final = json.JSONDecoder()


class WireFormatError(ValueError):
    """A message whose NServiceBus headers cannot be read or written."""


def wire_form(message: Mapping[str, object]) -> WireForm:
    """Where ``message`` keeps its NServiceBus headers: ``attribute``, ``wrapped`` or ``native``."""
    return _locate(message)[0]


def read_headers(message: Mapping[str, object]) -> dict[str, str]:
    """The NServiceBus headers of ``message``; refuses a native message, saying why it is one."""
    form, headers, _, reason = _locate(message)
    if form == "native":
        raise WireFormatError(f"the message carries no NServiceBus headers: {reason}")
    return headers


def write_headers(message: Mapping[str, object], headers: Mapping[str, str]) -> dict[str, object]:
    """A copy of ``message`` carrying ``headers``, in the wire form it already has.

    Header values are written as JSON with non-ASCII characters escaped, so that any text is
    transportable within the characters SQS accepts in bodies and attributes.
    """
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise WireFormatError(
                f"header {name!r} = {value!r}: NServiceBus headers are text to text; convert "
                "the name and value to str"
            )
    form, current, span, reason = _locate(message)
    if form == "native":
        raise WireFormatError(
            f"the message carries no NServiceBus headers ({reason}); writing some would change "
            "how receivers read it, so it is refused"
        )
    result = dict(message)
    if current == dict(headers):
        return result
    encoded = json.dumps(dict(headers), separators=(",", ":"))
    if form == "wrapped":
        body_key, body = _body(message)
        start, end = span
        result[body_key] = body[:start] + encoded + body[end:]
        return result
    attributes_key, attributes = _attributes(message)
    attribute = dict(_as_mapping(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE))
    attribute[_present_key(attribute, STRING_VALUE_KEYS)] = encoded
    result[attributes_key] = {**attributes, HEADERS_ATTRIBUTE: attribute}
    return result


def _locate(
    message: Mapping[str, object],
) -> tuple[WireForm, dict[str, str], tuple[int, int], str]:
    """Find the headers: the form, the headers, their span in a wrapped body, and for a
    native message the reason it is one."""
    if not isinstance(message, dict):
        raise WireFormatError(
            f"a message must be a dict (as boto3 and Lambda give it), got {type(message).__name__}"
        )
    _, attributes = _attributes(message)
    if HEADERS_ATTRIBUTE in attributes:
        return "attribute", _attribute_headers(attributes[HEADERS_ATTRIBUTE]), (0, 0), ""
    if MESSAGE_TYPE_ATTRIBUTE in attributes:
        return "native", {}, (0, 0), f"it has a {MESSAGE_TYPE_ATTRIBUTE} attribute"
    _, body = _body(message)
    found = _wrapped_headers(body)
    if isinstance(found, str):
        return "native", {}, (0, 0), found
    headers, span = found
    return "wrapped", headers, span, ""


def _body(message: Mapping[str, object]) -> tuple[str, str]:
    """The body field's name and text; the name differs between boto3, Lambda and sends."""
    keys = [key for key in BODY_KEYS if key in message]
    if len(keys) != 1:
        raise WireFormatError(
            f"a message needs exactly one of the fields {', '.join(BODY_KEYS)}; it has "
            f"{', '.join(keys) or 'none'}"
        )
    body = message[keys[0]]
    if not isinstance(body, str):
        raise WireFormatError(
            f"field {keys[0]!r} must be text, got {type(body).__name__}; decode it first"
        )
    return keys[0], body


def _attributes(message: Mapping[str, object]) -> tuple[str, Mapping[str, object]]:
    """The attributes field's name and value; a message may have no attributes at all."""
    keys = [key for key in ATTRIBUTES_KEYS if key in message]
    if len(keys) > 1:
        raise WireFormatError(
            f"a message has at most one of the fields {', '.join(ATTRIBUTES_KEYS)}; it has both"
        )
    if not keys:
        return ATTRIBUTES_KEYS[0], {}
    return keys[0], _as_mapping(message[keys[0]], keys[0])


def _as_mapping(value: object, field: str) -> Mapping[str, object]:
    """``value`` if it is a dict, which is what boto3, Lambda and ``json`` produce."""
    if not isinstance(value, dict):
        raise WireFormatError(
            f"field {field!r} must be a dict (as boto3 and Lambda give it), got "
            f"{type(value).__name__}"
        )
    return value


def _present_key(attribute: Mapping[str, object], keys: tuple[str, ...]) -> str:
    """The spelling of ``keys`` the attribute uses (boto3 and Lambda differ in case)."""
    return next((key for key in keys if key in attribute), keys[0])


def _attribute_headers(value: object) -> dict[str, str]:
    """The headers in the attribute; unlike a wrapper, a broken attribute is an error, as it is
    for NServiceBus."""
    attribute = _as_mapping(value, HEADERS_ATTRIBUTE)
    data_type = attribute.get(_present_key(attribute, DATA_TYPE_KEYS), "String")
    text = attribute.get(_present_key(attribute, STRING_VALUE_KEYS))
    if data_type != "String" or not isinstance(text, str):
        raise WireFormatError(
            f"attribute {HEADERS_ATTRIBUTE} must be a String attribute with a JSON text "
            f"value, got data type {data_type!r} and a {type(text).__name__} value"
        )
    try:
        headers = json.loads(text)
    except ValueError as error:
        raise WireFormatError(f"attribute {HEADERS_ATTRIBUTE} is not JSON: {error}") from None
    if headers is None:
        # NServiceBus reads a JSON null here as no headers.
        return {}
    result, problem = _text_to_text(headers)
    if problem:
        raise WireFormatError(f"attribute {HEADERS_ATTRIBUTE}: {problem}")
    return result


def _wrapped_headers(body: str) -> tuple[dict[str, str], tuple[int, int]] | str:
    """The headers of a wrapped body and the span of their JSON, or why it is not wrapped.

    Walks the top-level object member by member so the span of ``Headers`` is exact; the
    values themselves are parsed by :mod:`json`.
    """
    try:
        members = _top_level_members(body)
    except ValueError as error:
        return f"the body is not a JSON object ({error})"
    if members is None:
        return "the body is not a JSON object"
    found = [member[1:] for member in members if member[0] == WRAPPED_HEADERS_KEY]
    if not found:
        return f"the body has no {WRAPPED_HEADERS_KEY!r} member"
    if len(found) > 1:
        raise WireFormatError(
            f"the body has {len(found)} {WRAPPED_HEADERS_KEY!r} members; a reader could take "
            "either, so the message is refused"
        )
    value, start, end = found[0]
    if value is None:
        return f"its {WRAPPED_HEADERS_KEY!r} member is null"
    headers, problem = _text_to_text(value)
    if problem:
        return f"its {WRAPPED_HEADERS_KEY!r} member is not an NServiceBus header set: {problem}"
    if (
        headers.get(_CONTROL_MESSAGE) != "True"
        and _MESSAGE_ID not in headers
        and _ENCLOSED_MESSAGE_TYPES not in headers
    ):
        return (
            f"its headers have neither {_MESSAGE_ID} nor {_ENCLOSED_MESSAGE_TYPES} and it is "
            "not a control message"
        )
    return headers, (start, end)


def _top_level_members(body: str) -> list[tuple[str, object, int, int]] | None:
    """The members of a JSON object as (key, value, start, end of the value's text), or None
    if ``body`` is JSON but not an object. Raises ``ValueError`` for text that is not JSON."""
    position = _skip_whitespace(body, 0)
    if not body.startswith("{", position):
        _DECODER.raw_decode(body, position)
        return None
    members: list[tuple[str, object, int, int]] = []
    position = _skip_whitespace(body, position + 1)
    if body.startswith("}", position):
        return _at_end(body, position + 1, members)
    while True:
        if not body.startswith('"', position):
            raise ValueError(f"expected a member name at position {position}")
        key, position = _DECODER.raw_decode(body, position)
        position = _skip_whitespace(body, position)
        if not body.startswith(":", position):
            raise ValueError(f"expected ':' at position {position}")
        start = _skip_whitespace(body, position + 1)
        value, end = _DECODER.raw_decode(body, start)
        members.append((key, value, start, end))
        position = _skip_whitespace(body, end)
        if body.startswith(",", position):
            position = _skip_whitespace(body, position + 1)
        elif body.startswith("}", position):
            return _at_end(body, position + 1, members)
        else:
            raise ValueError(f"expected ',' or '}}' at position {position}")


def _at_end(
    body: str, position: int, members: list[tuple[str, object, int, int]]
) -> list[tuple[str, object, int, int]]:
    """``members`` if only whitespace follows the object; JSON allows nothing else there."""
    if _skip_whitespace(body, position) != len(body):
        raise ValueError(f"extra text after the object at position {position}")
    return members


def _skip_whitespace(text: str, position: int) -> int:
    while position < len(text) and text[position] in _JSON_WHITESPACE:
        position += 1
    return position


def _text_to_text(value: object) -> tuple[dict[str, str], str]:
    """``value`` as headers and '', or empty headers and why it is not a JSON object of text
    to text."""
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    headers: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(item, str):
            return {}, f"header {name!r} holds {type(item).__name__}, not text"
        headers[name] = item
    return headers, ""
