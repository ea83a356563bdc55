"""Time to be received across hops: the deadline counts from the record the relay received, and
what is left of it goes on with the message, in the text the receiver's TimeSpan.Parse reads."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.nservicebus.dotnet_time import (
    TICKS_PER_SECOND,
    format_timespan,
    parse_timespan,
)
from cross_account_runtime.relay.expiry import time_left

SENT_MS = 1_767_225_600_000
SENT = SENT_MS / 1000


def test_a_message_with_time_left_carries_what_remains() -> None:
    left = time_left("00:00:40", SENT_MS, SENT + 15.25)
    assert left is not None
    assert (left.expired, left.remaining, left.problem) == (False, "00:00:24.7500000", "")


def test_the_remaining_time_keeps_the_deadline_to_the_tick() -> None:
    left = time_left("1.00:00:00.0000001", SENT_MS, SENT + 3600)
    assert left is not None
    assert left.remaining == "23:00:00.0000001"


@pytest.mark.parametrize("waited", [40.0, 40.001, 3600.0])
def test_a_message_whose_deadline_is_now_or_past_has_expired(waited: float) -> None:
    """The receiver keeps a message only while SentTimestamp + TTBR > now."""
    left = time_left("00:00:40", SENT_MS, SENT + waited)
    assert left is not None
    assert left.expired
    assert left.remaining is None
    assert left.overdue == pytest.approx(waited - 40)


def test_time_span_max_value_means_no_deadline() -> None:
    assert time_left("10675199.02:48:05.4775807", SENT_MS, SENT + 10**9) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("forty seconds", "'forty seconds' is not a TimeSpan"),
        ("00:00:60", "'00:00:60' is not a TimeSpan"),
        (None, "is null"),
        ("10675199.02:48:05.4775806", "outside the years 1-9999"),
        ("-800000", "outside the years 1-9999"),
    ],
)
def test_a_value_the_receiver_fails_on_goes_on_unchanged_with_the_reason(
    text: str | None, expected: str
) -> None:
    left = time_left(text, SENT_MS, SENT)
    assert left is not None
    assert (left.expired, left.remaining) == (False, None)
    assert expected in left.problem


def test_a_negative_time_to_be_received_has_expired() -> None:
    """TimeSpan.Parse reads "-00:00:01"; sent + (-1 s) <= now."""
    left = time_left("-00:00:01", SENT_MS, SENT)
    assert left is not None
    assert left.expired


@given(
    st.integers(min_value=1, max_value=10 * 86_400 * TICKS_PER_SECOND),
    st.integers(min_value=0, max_value=10 * 86_400 * 1000),
)
def test_the_text_written_reads_back_as_the_deadline_less_the_wait(
    ticks: int, waited_ms: int
) -> None:
    left = time_left(format_timespan(ticks), SENT_MS, (SENT_MS + waited_ms) / 1000)
    assert left is not None
    if waited_ms * 10_000 >= ticks:
        assert left.expired
    else:
        assert left.remaining is not None
        assert parse_timespan(left.remaining) == ticks - waited_ms * 10_000
