"""The .NET behaviours the model reproduces (Microsoft's documentation of ``TimeSpan``,
``System.Text.Json``'s default encoder, ``Convert.TryFromBase64String``, ``int.TryParse``,
``char.IsWhiteSpace``) and NServiceBus core's wire timestamp
(``src/NServiceBus.Core/DateTimeOffsetHelper.cs``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from local_aws.released_transport.dotnet_json import write_string, write_string_dictionary
from local_aws.released_transport.dotnet_text import (
    is_null_or_whitespace,
    try_from_base64,
    try_parse_integer,
    utf16_length,
    utf16_truncate,
)
from local_aws.released_transport.dotnet_time import (
    TIMESPAN_MAX,
    TimeSpan,
    TimeSpanFormatError,
    format_timespan,
    from_wire_format,
    parse_timespan,
    seconds_timespan,
    to_wire_format,
)

SECOND = 10_000_000


@pytest.mark.parametrize(
    ("ticks", "text"),
    [
        (1 * SECOND, "00:00:01"),
        (900 * SECOND, "00:15:00"),
        (10 * SECOND, "00:00:10"),
        (4 * 86_400 * SECOND, "4.00:00:00"),
        (TIMESPAN_MAX.ticks, "10675199.02:48:05.4775807"),
        (TIMESPAN_MAX.ticks - 3600 * SECOND, "10675199.01:48:05.4775807"),
        (-SECOND // 2, "-00:00:00.5000000"),
        (0, "00:00:00"),
    ],
)
def test_timespan_to_string_and_back(ticks: int, text: str) -> None:
    assert format_timespan(ticks) == text
    assert str(TimeSpan(ticks)) == text
    assert parse_timespan(text) == ticks


@pytest.mark.parametrize(
    ("text", "ticks"),
    [
        ("12:30", 45_000 * SECOND),
        ("3", 3 * 86_400 * SECOND),
        ("1:02:03:04", 93_784 * SECOND),
        (" 00:01:00 ", 60 * SECOND),
    ],
)
def test_timespan_parse_accepts_the_other_invariant_forms(text: str, ticks: int) -> None:
    assert parse_timespan(text) == ticks


@pytest.mark.parametrize(
    "text", ["", "abc", "24:00:00", "00:60:00", "00:00:00.12345678", "10675199.02:48:05.4775808"]
)
def test_timespan_parse_refuses(text: str) -> None:
    with pytest.raises(TimeSpanFormatError):
        parse_timespan(text)


def test_seconds_timespan_and_ceiling() -> None:
    assert seconds_timespan(345_600) == "4.00:00:00"
    assert TimeSpan(SECOND + 1).ceiling_seconds() == 2
    assert TimeSpan(-SECOND - 1).ceiling_seconds() == -1


def test_wire_timestamps() -> None:
    moment = datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)

    assert to_wire_format(moment) == "2024-01-02 03:04:05:123456 Z"
    assert from_wire_format("2024-01-02 03:04:05:123456 Z") == moment
    assert from_wire_format("2024x01x02x03x04x05x123456xZ") == moment


@pytest.mark.parametrize(
    "text",
    ["2024-01-02 03:04:05:12345 Z", "2024-01-02 03:04:05:12345a Z"],
)
def test_wire_timestamp_parser_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=r"String was not recognized as a valid DateTime\."):
        from_wire_format(text)


def test_wire_timestamp_parser_refuses_an_impossible_date() -> None:
    """.NET's ``DateTimeOffset`` constructor refuses it (``ArgumentOutOfRangeException``)."""
    with pytest.raises(ValueError, match="month"):
        from_wire_format("2024-13-02 03:04:05:123456 Z")


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain", '"plain"'),
        ("a+b/c=", '"a\\u002Bb/c="'),
        ("<>&'`\"", '"\\u003C\\u003E\\u0026\\u0027\\u0060\\u0022"'),
        ("\\", '"\\\\"'),
        ("\b\t\n\f\r\x01\x7f", '"\\b\\t\\n\\f\\r\\u0001\\u007F"'),
        ("é€", '"\\u00E9\\u20AC"'),
        ("😀", '"\\uD83D\\uDE00"'),
        ("\ud800", '"\\uFFFD"'),
        (None, "null"),
    ],
)
def test_system_text_json_default_escaping(value: str | None, written: str) -> None:
    assert write_string(value) == written


def test_a_dictionary_is_compact_and_in_order() -> None:
    assert write_string_dictionary({"b": "1", "a": None}) == '{"b":"1","a":null}'


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("e30=", b"{}"),
        ("e 3\t0\r\n=", b"{}"),
        ("", b""),
        ("abc", None),
        ("e30", None),
        ("e3==", b"{"),
        ("e===", None),
        ("ab-_", None),
        ("e30=e30=", None),
    ],
)
def test_try_from_base64(text: str, decoded: bytes | None) -> None:
    assert try_from_base64(text) == decoded


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        (" -7 ", -7),
        ("+2", 2),
        ("1_000", None),
        ("٣", None),
        ("", None),
        (None, None),
        ("2147483648", None),
        ("2147483647", 2147483647),
    ],
)
def test_int_try_parse(text: str | None, value: int | None) -> None:
    assert try_parse_integer(text) == value


def test_long_try_parse_has_the_wider_range() -> None:
    assert try_parse_integer("2147483648", bits=64) == 2147483648


@pytest.mark.parametrize(
    ("text", "blank"),
    [(None, True), ("", True), (" \t\u00a0\u2028", True), ("\x1c", False), ("a", False)],
)
def test_is_null_or_whitespace(text: str | None, blank: bool) -> None:
    assert is_null_or_whitespace(text) is blank


def test_utf16_lengths_and_truncation() -> None:
    assert utf16_length("a😀") == 3
    assert utf16_truncate("a😀b", 2) == "a\ud83d"
    assert utf16_truncate("abc", 5) == "abc"
