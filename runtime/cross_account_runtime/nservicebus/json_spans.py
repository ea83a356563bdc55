"""JSON as System.Text.Json reads it, scanned by json's C code with the span of each member;
and compact JSON, as a write puts a value back into a span.

The transport reads a wrapped body with System.Text.Json: an object's members in document
order (a repeated name overrides an earlier one), NaN and Infinity refused, an integer never
read. A write changes a header where it is and keeps every other byte of the body, so the
wire format needs where each member's value lies, which :mod:`json` does not say:
:func:`members_with_spans` walks an object member by member with json's own C scanners and
gives each value's span. What a write puts into a span is :func:`compact_json`: compact, with
non-ASCII characters escaped, read alike by System.Text.Json.

The relay imports this module at cold start: it imports nothing but :mod:`json` and compiles
nothing.
"""

from __future__ import annotations

import json

# The pattern json itself skips whitespace with: compiled when json is imported, not here.
from json.decoder import WHITESPACE as JSON_WHITESPACE_RUN  # type: ignore[attr-defined]
from json.decoder import scanstring as json_scan_string  # type: ignore[attr-defined]
from json.encoder import c_make_encoder as json_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring_ascii as json_encode_ascii

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final

    Span = tuple[int, int]
    """Where a value's text starts and ends in the JSON text."""

WHITESPACE_CHARACTERS: Final = (" ", "\t", "\n", "\r")


class Members(list[tuple[str, object]]):
    """A JSON object as its members in document order, repeated names included: what
    System.Text.Json's reader sees (a later member overrides an earlier one, after the earlier
    one's setter has run). A subclass, so that an array is not mistaken for an object."""

    __slots__ = ()


class _Integer:
    """Stands for a JSON integer: the transport never reads one, and ``int()`` of a long digit
    run raises where System.Text.Json would skip it."""

    __slots__ = ()


INTEGER: Final = _Integer()


def _integer(_text: str) -> _Integer:
    """``parse_int`` for json: any integer, however long, is :data:`INTEGER`."""
    return INTEGER


def _refuse_constant(name: str) -> object:
    """``parse_constant`` for json: NaN and Infinity are not JSON to .NET."""
    raise ValueError(f"{name} is not JSON")


# Both parse in C and refuse NaN and Infinity, as System.Text.Json does. The first gives
# objects as dicts (the last of a repeated name wins, as in .NET); the second as Members, for
# bodies where the order of members matters.
PLAIN_DECODER: Final = json.JSONDecoder(parse_int=_integer, parse_constant=_refuse_constant)
MEMBERS_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=Members, parse_int=_integer, parse_constant=_refuse_constant
)
# json's C scanners, called directly where positions are needed (typeshed does not list them).
_SCAN_VALUE: Final[Callable[[str, int], tuple[object, int]]] = PLAIN_DECODER.scan_once  # type: ignore[attr-defined]
_SCAN_STRING: Final[Callable[[str, int], tuple[str, int]]] = json_scan_string
# json's C encoder made once (JSONEncoder.encode makes one per call): compact, ASCII only.
_ENCODE: Final[Callable[[object, int], tuple[str, ...]]] = json_make_encoder(
    None, None, json_encode_ascii, None, ":", ",", False, False, True
)


def json_type_name(value: object) -> str:
    """The Python type name of a parsed JSON value, for messages."""
    if value is INTEGER:
        return "int"
    return "dict" if isinstance(value, Members) else type(value).__name__


def members_with_spans(
    body: str, position: int, stop: int
) -> list[tuple[str, object, int, int]] | None:
    """The members of the JSON object in ``body[position:stop]`` as (name, value, start, end of
    the value's text), None if the text is JSON but not an object; raises ``ValueError`` for
    text that is not JSON. Calls the C scanners directly and skips whitespace only where there
    is some: this runs for every rewritten message."""
    scan = _SCAN_VALUE
    blank = WHITESPACE_CHARACTERS
    try:
        position = skip_whitespace(body, position)
        if body[position : position + 1] != "{":
            _at_end(body, scan(body, position)[1], stop)
            return None
        members: list[tuple[str, object, int, int]] = []
        position = skip_whitespace(body, position + 1)
        if body[position : position + 1] == "}":
            _at_end(body, position + 1, stop)
            return members
        while True:
            if body[position : position + 1] != '"':
                raise ValueError(f"expected a member name at position {position}")
            name, position = _SCAN_STRING(body, position + 1)
            if body[position : position + 1] in blank:
                position = skip_whitespace(body, position)
            if body[position : position + 1] != ":":
                raise ValueError(f"expected ':' at position {position}")
            start = position + 1
            if body[start : start + 1] in blank:
                start = skip_whitespace(body, start)
            value, position = scan(body, start)
            members.append((name, value, start, position))
            if body[position : position + 1] in blank:
                position = skip_whitespace(body, position)
            following = body[position : position + 1]
            if following == ",":
                position += 1
                if body[position : position + 1] in blank:
                    position = skip_whitespace(body, position)
            elif following == "}":
                _at_end(body, position + 1, stop)
                return members
            else:
                raise ValueError(f"expected ',' or '}}' at position {position}")
    except StopIteration as error:
        raise ValueError(f"expected a value at position {error.value}") from None


def _at_end(body: str, position: int, stop: int) -> None:
    """Raise unless only whitespace follows up to ``stop``; JSON allows nothing else."""
    if skip_whitespace(body, position) < stop:
        raise ValueError(f"extra text after the value at position {position}")


def skip_whitespace(text: str, position: int) -> int:
    """The position after the JSON whitespace at ``position`` (compact JSON has none)."""
    if text[position : position + 1] not in WHITESPACE_CHARACTERS:
        return position
    match = JSON_WHITESPACE_RUN.match(text, position)
    return match.end() if match else position


def compact_json(value: object) -> str:
    """``value`` as compact JSON with non-ASCII characters escaped, so that any text fits the
    characters SQS accepts; what the wire format writes, read alike by System.Text.Json."""
    return "".join(_ENCODE(value, 0))
