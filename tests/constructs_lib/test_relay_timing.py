"""The relay's timing follows its batch size: the function runs long enough for every
``SendMessageBatch`` call of a batch at its worst case (where Lambda allows), the source queues
hide a message six times that long, and allow each message the receives a batch needs for
all of it to be tried, on top of the receives for failures."""

from __future__ import annotations

import pytest

from constructs_lib.relay_timing import RelayTiming
from cross_account_runtime.common.aws_clients import WORST_CASE_CALL_SECONDS

SQS_LONGEST_VISIBILITY_SECONDS = 12 * 60 * 60


@pytest.mark.parametrize(
    ("batch_size", "expected"),
    [
        # (calls, timeout, calls per invocation, invocations, visibility, maxReceiveCount),
        # at the runtime's worst case of 35 s per call.
        # One call; the minute a batch of ten always had.
        (10, (1, 60, 1, 1, 360, 10)),
        # Ten calls of 35 s fit one invocation.
        (100, (10, 350, 10, 1, 2_100, 10)),
        # Lambda's 15 minutes hold 25 worst-case calls: four invocations for 100 calls.
        (1_000, (100, 900, 25, 4, 5_400, 13)),
        (10_000, (1_000, 900, 25, 40, 5_400, 49)),
    ],
)
def test_the_timing_of_a_batch(batch_size: int, expected: tuple[int, ...]) -> None:
    assert WORST_CASE_CALL_SECONDS == 35
    timing = RelayTiming.for_batch(batch_size)
    assert (
        timing.calls,
        timing.function_timeout.to_seconds(),
        timing.calls_per_invocation,
        timing.invocations,
        timing.visibility_timeout.to_seconds(),
        timing.max_receive_count,
    ) == expected


def test_the_longest_visibility_is_within_what_sqs_accepts() -> None:
    longest = RelayTiming.for_batch(10_000).visibility_timeout.to_seconds()
    assert longest <= SQS_LONGEST_VISIBILITY_SECONDS


def test_a_batch_size_lambda_would_refuse_is_refused() -> None:
    with pytest.raises(ValueError, match="batch_size: must be a whole number from 1 to 10000"):
        RelayTiming.for_batch(10_001)
