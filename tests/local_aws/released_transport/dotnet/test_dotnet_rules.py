"""The .NET behaviours the model reproduces (Microsoft's documentation of ``TimeSpan``,
``System.Text.Json``'s default encoder and ``DateTime`` form, ``Convert.TryFromBase64String``,
``int.TryParse``, ``char.IsWhiteSpace``, ``Guid.Parse``) and NServiceBus core's wire timestamp
(``src/NServiceBus.Core/DateTimeOffsetHelper.cs``)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from local_aws.released_transport.dotnet.guid import GuidFormatError, parse_guid
from local_aws.released_transport.dotnet.system_text_json import (
    DotnetJsonError,
    parse_ordered,
    read_guid,
    read_int32,
    read_properties,
    write_json,
    write_string,
    write_string_dictionary,
)
from local_aws.released_transport.dotnet.text import (
    is_null_or_whitespace,
    try_from_base64,
    try_parse_integer,
    utf16_length,
    utf16_truncate,
)
from local_aws.released_transport.dotnet.time_formats import (
    DOTNET_EPOCH,
    TIMESPAN_MAX,
    TimeSpan,
    TimeSpanFormatError,
    format_timespan,
    from_json_datetime,
    from_wire_format,
    parse_timespan,
    seconds_timespan,
    to_json_datetime,
    to_ticks,
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
        # Outside the alphabet, as .NET sees it, not a failure of the check itself.
        ("e30\u00e9", None),
        ("e30=\uff10", None),
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
    assert try_parse_integer("-9223372036854775808", bits=64) == -(2**63)
    assert try_parse_integer("9223372036854775808", bits=64) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [("12\x00", 12), (" 12 \x00\x00", 12), ("12\x00 ", None), ("\x0b12\x0c", 12), ("\x1c12", None)],
)
def test_integer_parsing_takes_trailing_nuls_and_only_dotnet_white_space(
    text: str, value: int | None
) -> None:
    """.NET's number parser allows U+0000 after the number ("for compatibility") and only
    U+0009-U+000D and space around it."""
    assert try_parse_integer(text) == value


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


@pytest.mark.parametrize(
    ("moment", "written"),
    [
        (datetime(2016, 2, 1, 13, 59, tzinfo=UTC), "2016-02-01T13:59:00Z"),
        (datetime(2024, 6, 2, 12, 3, 41, 780000, tzinfo=UTC), "2024-06-02T12:03:41.78Z"),
        (datetime(2024, 6, 2, 12, 3, 41, 1, tzinfo=UTC), "2024-06-02T12:03:41.000001Z"),
        (DOTNET_EPOCH, "0001-01-01T00:00:00Z"),
    ],
)
def test_system_text_json_writes_a_utc_datetime(moment: datetime, written: str) -> None:
    """The plugins' approval files write ``2016-02-01T13:59:00Z``; a fraction loses its
    trailing zeros."""
    assert to_json_datetime(moment) == written


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2024-06-02T12:03:41.780", datetime(2024, 6, 2, 12, 3, 41, 780000, tzinfo=UTC)),
        ("2022-12-01T12:00:00Z", datetime(2022, 12, 1, 12, tzinfo=UTC)),
        ("2022-12-01T12:00:00+01:00", datetime(2022, 12, 1, 11, tzinfo=UTC)),
        ("2022-12-01", datetime(2022, 12, 1, tzinfo=UTC)),
        ("2022-12-01T12:00:00.12345678Z", datetime(2022, 12, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_system_text_json_reads_a_datetime(text: str, moment: datetime) -> None:
    """ServiceControl's ``HeartbeatTypesArrayToInstanceConverterTests`` vectors among them."""
    assert from_json_datetime(text) == moment


@pytest.mark.parametrize("text", ["2022-12-01 12:00:00", "12/01/2022", "2022-13-01", ""])
def test_system_text_json_refuses_other_dates(text: str) -> None:
    with pytest.raises(ValueError, match="not in a supported DateTime format"):
        from_json_datetime(text)


def test_datetime_ticks_count_from_year_one() -> None:
    assert to_ticks(DOTNET_EPOCH) == 0
    assert to_ticks(datetime(2016, 2, 1, tzinfo=UTC)) == 635_898_816_000_000_000
    assert to_ticks(DOTNET_EPOCH + timedelta(microseconds=1)) == 10


def test_write_json_writes_a_tree_compactly_in_order() -> None:
    assert (
        write_json({"b": [1, True, None, "x+y"], "a": {}, "c": False})
        == '{"b":[1,true,null,"x\\u002By"],"a":{},"c":false}'
    )


def test_binding_to_a_class_reads_members_and_refuses_the_wrong_kinds() -> None:
    members = read_properties(parse_ordered('{"A":1,"B":"x","A":2}'), "T")

    assert members == {"A": 2, "B": "x"}
    assert read_properties(None, "T") is None
    with pytest.raises(DotnetJsonError, match="could not be converted to T"):
        read_properties(parse_ordered("[]"), "T")
    with pytest.raises(DotnetJsonError):
        read_int32(True)
    with pytest.raises(DotnetJsonError):
        read_int32(2**31)
    assert read_guid("1865830E-71B0-DC6C-E146-62CDD0034E6E") == (
        "1865830e-71b0-dc6c-e146-62cdd0034e6e"
    )
    with pytest.raises(DotnetJsonError):
        read_guid("1865830e71b0dc6ce14662cdd0034e6e")


@pytest.mark.parametrize(
    "text",
    [
        "1865830e71b0dc6ce14662cdd0034e6e",
        "1865830e-71b0-dc6c-e146-62cdd0034e6e",
        "{1865830e-71b0-dc6c-e146-62cdd0034e6e}",
        "(1865830E-71B0-DC6C-E146-62CDD0034E6E)",
        " 1865830e71b0dc6ce14662cdd0034e6e ",
    ],
)
def test_guid_parse_takes_the_n_d_b_and_p_forms(text: str) -> None:
    assert parse_guid(text) == uuid.UUID("1865830e-71b0-dc6c-e146-62cdd0034e6e")


@pytest.mark.parametrize("text", ["", "MACHINE", "1865830e71b0dc6ce14662cdd0034e6", "{1865830e}"])
def test_guid_parse_refuses_anything_else(text: str) -> None:
    with pytest.raises(GuidFormatError, match="Unrecognized Guid format"):
        parse_guid(text)
