"""JSON as System.Text.Json writes and reads it for the transport.

Writing: every JSON text the transport produces (the wrapped body, the
``NServiceBus.AmazonSQS.Headers`` attribute) comes from ``Utf8JsonWriter`` with default options
(``src/NServiceBus.Transport.SQS/Sending/ReducedPayloadSerializerConverter.cs``,
``Sending/MessageDispatcher.cs``): compact, and ``JavaScriptEncoder.Default`` escaping — every
character outside printable ASCII as ``\\uXXXX`` (uppercase hex, a supplementary character as its
two surrogates), the HTML-sensitive ``"``, ``&``, ``'``, ``+``, ``<``, ``>`` and backquote as
``\\uXXXX`` too, ``\\`` as ``\\\\``, and ``\\b \\t \\n \\f \\r`` by name. So a base64 body with ``+``
is written with ``\\u002B``. Byte-exact comparisons depend on this; readers accept any escape.

The platform's plugins serialize their messages with ``JsonSerializer`` and default options too
(NServiceBus.Heartbeat 6.0.1 ``src/NServiceBus.Heartbeat/ServiceControlBackend.cs``,
NServiceBus.CustomChecks 6.0.1 ``src/NServiceBus.CustomChecks/ServiceControlBackend.cs``,
NServiceBus.SagaAudit 6.0.1 ``src/NServiceBus.SagaAudit/ServiceControlBackend.cs``,
NServiceBus.Metrics.ServiceControl 6.0.1 ``src/NServiceBus.Metrics.ServiceControl/
ServiceControlReporting/EndpointMetadata.cs``): properties in declaration order, ``null`` written,
``true``/``false``, numbers as they are; :func:`write_json` writes such a tree.

Reading: System.Text.Json rejects what JSON rejects; Python's ``json`` also accepts ``NaN``,
``Infinity`` and ``-Infinity``, which are refused here. Objects arrive as ordered pairs so that a
caller can apply properties in document order, duplicates included, as the deserializer does.
Binding to a class (:func:`read_properties`) is case-sensitive, ignores unknown properties and
lets the last of duplicate names win; a property's value must have the JSON kind its .NET type
reads (:func:`read_boolean`, :func:`read_int32`, :func:`read_guid` — a ``Guid`` is read in the
``D`` form only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

_NAMED_ESCAPES: Final = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
_NEEDS_ESCAPE: Final = re.compile("[^ !#-%(-*,-;=?-\\[\\]-_a-~]")
"""Everything but printable ASCII without ``"``, ``&``, ``'``, ``+``, ``<``, ``>``, backquote and
backslash."""
_REPLACEMENT_CHARACTER: Final = 0xFFFD
_SURROGATES: Final = range(0xD800, 0xE000)
_BMP_LIMIT: Final = 0xFFFF


class DotnetJsonError(ValueError):
    """Text System.Text.Json would refuse (``JsonException``)."""


class JsonObject(list[tuple[str, Any]]):
    """A parsed JSON object: its members in document order, duplicates kept (a plain list
    would not tell ``{}`` from ``[]``)."""


def _escape_unit(unit: int) -> str:
    return f"\\u{unit:04X}"


def _escaped(match: re.Match[str]) -> str:
    """The escape of one character that cannot be written as it is."""
    code_point = ord(match.group())
    if code_point in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[code_point]
    if code_point == ord("\\"):
        return "\\\\"
    if code_point > _BMP_LIMIT:
        offset = code_point - 0x10000
        return _escape_unit(0xD800 + (offset >> 10)) + _escape_unit(0xDC00 + (offset & 0x3FF))
    if code_point in _SURROGATES:
        # A lone surrogate is invalid UTF-16: the encoder writes the replacement character.
        return _escape_unit(_REPLACEMENT_CHARACTER)
    return _escape_unit(code_point)


def write_string(text: str | None) -> str:
    """One JSON string (or ``null``) as ``Utf8JsonWriter.WriteStringValue`` writes it."""
    if text is None:
        return "null"
    return '"' + _NEEDS_ESCAPE.sub(_escaped, text) + '"'


def write_string_dictionary(values: Mapping[str, str | None]) -> str:
    """``JsonSerializer.Serialize(Dictionary<string, string>)``: compact, in the mapping's
    order, values ``null`` where the dictionary holds null."""
    members = ",".join(
        f"{write_string(key)}:{write_string(value)}" for key, value in values.items()
    )
    return "{" + members + "}"


def write_json(value: Any) -> str:
    """``JsonSerializer.Serialize`` of a tree of ``None``, ``bool``, ``int``, ``str``, lists and
    mappings (members in the mapping's order), compact, strings escaped as :func:`write_string`
    does. Dates, GUIDs and TimeSpans are given as the text their converters write."""
    if value is None or isinstance(value, str):
        return write_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        members = ",".join(f"{write_string(key)}:{write_json(item)}" for key, item in value.items())
        return "{" + members + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(write_json(item) for item in value) + "]"
    raise TypeError(f"no JSON form for {type(value).__name__}")


def _refuse_constant(name: str) -> Any:
    raise DotnetJsonError(f"'{name}' is an invalid JSON literal.")


def parse_ordered(text: str) -> Any:
    """Parse ``text`` with objects as :class:`JsonObject` (members in document order).

    Raises :class:`DotnetJsonError` for anything System.Text.Json would refuse.
    """
    try:
        return json.loads(text, object_pairs_hook=JsonObject, parse_constant=_refuse_constant)
    except json.JSONDecodeError as invalid:
        raise DotnetJsonError(str(invalid)) from invalid


def read_string_dictionary(value: Any) -> dict[str, str | None] | None:
    """A parsed value bound to ``Dictionary<string, string>``: ``None`` for JSON ``null``, the
    members with the last of duplicate names winning; anything else, or a member that is not a
    string or ``null``, is a :class:`DotnetJsonError`."""
    if value is None:
        return None
    if not isinstance(value, JsonObject):
        raise DotnetJsonError(
            "The JSON value could not be converted to System.Collections.Generic.Dictionary`2"
            "[System.String,System.String]."
        )
    result: dict[str, str | None] = {}
    for name, member in value:
        result[name] = read_string(member)
    return result


def read_string(value: Any) -> str | None:
    """A parsed value bound to ``string``: text or ``null``, nothing else."""
    if value is None or isinstance(value, str):
        return value
    raise DotnetJsonError("The JSON value could not be converted to System.String.")


def read_properties(value: Any, type_name: str) -> dict[str, Any] | None:
    """A parsed value bound to the class ``type_name``: ``None`` for JSON ``null``, else its
    members by name (the last of duplicates wins); anything but an object is refused."""
    if value is None:
        return None
    if not isinstance(value, JsonObject):
        raise DotnetJsonError(f"The JSON value could not be converted to {type_name}.")
    return dict(value)


def read_boolean(value: Any) -> bool:
    """A parsed value bound to ``bool``: ``true`` or ``false`` only."""
    if isinstance(value, bool):
        return value
    raise DotnetJsonError("The JSON value could not be converted to System.Boolean.")


def read_int32(value: Any) -> int:
    """A parsed value bound to ``int``: an integral number in range."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
        return value
    raise DotnetJsonError("The JSON value could not be converted to System.Int32.")


_GUID_D: Final = re.compile(
    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def read_guid(value: Any) -> str:
    """A parsed value bound to ``Guid``: a string in the ``D`` form, returned lower-case."""
    if isinstance(value, str) and _GUID_D.fullmatch(value):
        return value.lower()
    raise DotnetJsonError("The JSON value could not be converted to System.Guid.")
