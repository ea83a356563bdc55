"""TimeSpan text as .NET reads and writes it: ``TimeSpan.Parse`` (what a receiver reads the
time to be received with) and ``TimeSpan.ToString()`` (what the relay writes back)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.dotnet_time import (
    TICKS_PER_SECOND,
    TIMESPAN_MAX_TICKS,
    format_timespan,
    parse_timespan,
)
from local_aws.released_transport.dotnet import time_formats as model

SECOND = TICKS_PER_SECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR


@pytest.mark.parametrize(
    ("text", "ticks"),
    [
        # The table of TimeSpan.Parse(String)'s reference page (en-US), which agrees with the
        # source but for "24:0:0": the page says it fails, TimeSpanParse.cs (and .NET, as
        # users report) reads it as 24 days, through the culture's d:h:mm pattern.
        ("0", 0),
        ("14", 14 * DAY),
        ("1:2:3", HOUR + 2 * MINUTE + 3 * SECOND),
        ("0:0:0.250", 2_500_000),
        ("10.20:30:40.50", 10 * DAY + 20 * HOUR + 30 * MINUTE + 40 * SECOND + 5_000_000),
        ("99.23:59:59.9999999", 100 * DAY - 1),
        ("0023:0059:0059.0099", 24 * HOUR - SECOND + 99_000),
        ("23:0:0", 23 * HOUR),
        ("24:0:0", 24 * DAY),
        ("0:59:0", 59 * MINUTE),
        ("0:60:0", None),
        ("0:0:59", 59 * SECOND),
        ("0:0:60", None),
        ("10:", None),
        ("10:0", 10 * HOUR),
        (":10", None),
        ("0:10", 10 * MINUTE),
        ("10:20:", None),
        ("10:20:0", 10 * HOUR + 20 * MINUTE),
        (".123", None),
        ("0.12:00", 12 * HOUR),
        ("10.", None),
        ("10.12", None),
        ("10.12:00", 10 * DAY + 12 * HOUR),
        # The culture's pattern: d:h:mm:ss, and hours past 23 are days when the next pattern
        # takes them.
        ("6:12:14:45", 6 * DAY + 12 * HOUR + 14 * MINUTE + 45 * SECOND),
        ("6:12:14:45.3448", 6 * DAY + 12 * HOUR + 14 * MINUTE + 45 * SECOND + 3_448_000),
        ("6:34:14:45", None),
        ("6:12:14:45,3448", None),
        ("25:00:00", 25 * DAY),
        ("24:00", None),
        # "App compat": minutes followed by ":." and a fraction.
        ("1:2:.5", HOUR + 2 * MINUTE + 5_000_000),
        ("3.1:2:.5", 3 * DAY + HOUR + 2 * MINUTE + 5_000_000),
        # Signs, white space (char.IsWhiteSpace) and the limits.
        ("-1", -DAY),
        ("-00:00:01.5", -15_000_000),
        (" \t00:00:40\u3000", 40 * SECOND),
        ("- 1", None),
        ("+1", None),
        ("10675199.02:48:05.4775807", TIMESPAN_MAX_TICKS),
        ("-10675199.02:48:05.4775807", -TIMESPAN_MAX_TICKS),
        ("10675199.02:48:05.4775808", None),
        ("10675200", None),
        ("10675199.23:00", None),
        # Fractions: scaled to seven digits; beyond, only after leading zeros, rounded half
        # away from zero; seven significant digits at most.
        ("0:0:0.1", 1_000_000),
        ("0:0:0.0000001", 1),
        ("0:0:0.00000005", 1),
        ("0:0:0.00000004", 0),
        ("0:0:0.09999999", 1_000_000),
        ("0:0:0.12345678", None),
        ("0:0:0." + "0" * 40 + "9", 0),
        # Numbers: ASCII digits only, each below 2**28 whatever its role.
        ("\u0663", None),
        ("268435455", None),
        ("268435456", None),
        ("00000000000000000000000000001", DAY),
        ("1:2:3:4:5:6", None),
        ("", None),
        ("   ", None),
    ],
)
def test_parse_reads_what_timespan_parse_reads(text: str, ticks: int | None) -> None:
    assert parse_timespan(text) == ticks


@pytest.mark.parametrize(
    ("ticks", "text"),
    [
        (0, "00:00:00"),
        (40 * SECOND, "00:00:40"),
        (DAY, "1.00:00:00"),
        (15_000_000, "00:00:01.5000000"),
        (-15_000_000, "-00:00:01.5000000"),
        (1, "00:00:00.0000001"),
        (TIMESPAN_MAX_TICKS, "10675199.02:48:05.4775807"),
        (-(2**63), "-10675199.02:48:05.4775808"),
    ],
)
def test_format_writes_what_timespan_to_string_writes(ticks: int, text: str) -> None:
    assert format_timespan(ticks) == text


@given(st.integers(min_value=-TIMESPAN_MAX_TICKS, max_value=TIMESPAN_MAX_TICKS))
def test_every_timespan_reads_back_as_itself(ticks: int) -> None:
    assert parse_timespan(format_timespan(ticks)) == ticks


@given(st.integers(min_value=-TIMESPAN_MAX_TICKS, max_value=TIMESPAN_MAX_TICKS))
def test_the_text_is_the_models(ticks: int) -> None:
    assert format_timespan(ticks) == model.format_timespan(ticks)


def canonical_texts() -> st.SearchStrategy[str]:
    """Texts in the grammar the reference page states, each component in its range."""
    days = st.integers(min_value=0, max_value=10_675_198)
    hours = st.integers(min_value=0, max_value=23)
    sixty = st.integers(min_value=0, max_value=59)
    fraction = st.text(alphabet="0123456789", min_size=1, max_size=7)
    white = st.text(alphabet=" \t\r\n", max_size=2)

    def build(
        sign: bool, d: int | None, hm: tuple[int, int], sf: tuple[int | None, str | None], w: str
    ) -> str:
        s, f = sf
        text = f"{d}." if d is not None else ""
        text += f"{hm[0]:02}:{hm[1]:02}"
        if s is not None:
            text += f":{s:02}" + (f".{f}" if f is not None else "")
        return f"{w}{'-' if sign else ''}{text}{w}"

    return st.one_of(
        st.builds(lambda sign, d: f"{'-' if sign else ''}{d}", st.booleans(), days),
        st.builds(
            build,
            st.booleans(),
            st.none() | days,
            st.tuples(hours, sixty),
            st.tuples(st.none() | sixty, st.none() | fraction),
            white,
        ),
    )


@given(canonical_texts())
def test_on_the_documented_grammar_it_agrees_with_the_model(text: str) -> None:
    assert parse_timespan(text) == model.parse_timespan(text)
