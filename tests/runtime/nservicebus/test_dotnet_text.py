"""``long.TryParse`` as .NET reads a number (what the delay attribute of a delay queue's message
is worth to the delayed messages pump; failure counts as no delay), and
``Convert.TryFromBase64String`` (whether a receiver decodes a body)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.dotnet_text import try_from_base64, try_parse_int64
from local_aws.released_transport.dotnet.text import try_parse_integer

INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1200", 1200),
        ("0", 0),
        ("-0", 0),
        ("+7", 7),
        ("-7", -7),
        ("007", 7),
        ("0" * 40 + "12", 12),
        # White space: U+0009-U+000D and U+0020 only, before the sign and after the digits.
        (" \t\n\v\f\r42\r\n ", 42),
        ("\x1c42", None),
        ("42\x85", None),
        ("\xa042", None),
        ("\u300042", None),
        ("- 42", None),
        ("+-42", None),
        ("--42", None),
        ("4 2", None),
        # Trailing NUL characters are ignored, after any white space, but not before it.
        ("42\0", 42),
        ("42\0\0\0", 42),
        ("42 \0", 42),
        ("42\0 ", None),
        ("\042", None),
        # ASCII digits only: no separators, other scripts or signs of other cultures.
        ("1_200", None),
        ("1,200", None),
        ("1200.0", None),
        ("\uff11\uff12", None),
        ("\u0661\u0662", None),
        ("\u221242", None),
        ("1e3", None),
        ("0x10", None),
        # Int64's range.
        (str(INT64_MAX), INT64_MAX),
        (str(-INT64_MAX - 1), -INT64_MAX - 1),
        (str(INT64_MAX + 1), None),
        (str(-INT64_MAX - 2), None),
        ("9" * 5000, None),
        ("", None),
        ("   ", None),
        ("-", None),
        ("+", None),
        (None, None),
    ],
)
def test_try_parse_reads_what_long_try_parse_reads(text: str | None, value: int | None) -> None:
    assert try_parse_int64(text) == value


@given(st.text(alphabet=" \t\n\v\f\r\x1c\xa0+-0123456789_\uff11.", max_size=24))
def test_it_agrees_with_the_models_int64_reading_where_no_nul_is_involved(text: str) -> None:
    """The model has no trailing-NUL rule; everything else must be the same."""
    assert try_parse_int64(text) == try_parse_integer(text, bits=64)


@given(st.integers(min_value=-INT64_MAX - 1, max_value=INT64_MAX))
def test_every_long_reads_back(value: int) -> None:
    assert try_parse_int64(str(value)) == value


def from_base64_as_stated(text: str) -> bytes | None:
    """Convert.TryFromBase64String's rule, stated plainly: tab, line feed, carriage return and
    space are skipped; the rest is the standard alphabet, a multiple of 4 long, with at most
    two "=" and only at the end."""
    compact = "".join(c for c in text if c not in "\t\n\r ")
    data = compact.rstrip("=")
    if len(compact) % 4 or len(compact) - len(data) > 2:
        return None
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    if any(c not in alphabet for c in data):
        return None
    return base64.b64decode(compact)


@given(st.text(alphabet="ABab09+/= \t\n\rx\u00e9-_", max_size=16))
def test_try_from_base64_follows_dotnets_rule(text: str) -> None:
    assert try_from_base64(text) == from_base64_as_stated(text)


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("abcd", b"i\xb7\x1d"),
        ("Body Contents", base64.b64decode("BodyContents")),
        ("ab cd", b"i\xb7\x1d"),
        ("AB==", b"\x00"),
        ("A===", None),
        ("=AAA", None),
        ("AB=C", None),
        ("", b""),
        ("{}", None),
        ("ab\u00e9d", None),
    ],
)
def test_try_from_base64_vectors(text: str, decoded: bytes | None) -> None:
    assert try_from_base64(text) == decoded
