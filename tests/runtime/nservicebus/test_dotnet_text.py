"""``long.TryParse`` as .NET reads a number: what the delay attribute of a delay queue's message
is worth to the delayed messages pump (failure counts as no delay)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.dotnet_text import try_parse_int64
from local_aws.released_transport.dotnet_text import try_parse_integer

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
