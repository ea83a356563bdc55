"""Retry schedules SNS follows, so generated ``attempts`` and ``dwellTimeMs`` agree with them.

HTTP/S subscriptions follow their delivery policy: immediate retries, then retries at
``minDelayTarget``, then a backoff phase from ``minDelayTarget`` to ``maxDelayTarget``, then
retries at ``maxDelayTarget``. AWS publishes the shapes of the four backoff functions only as a
graph, so the curves here are assumptions, named in :func:`backoff_delays`. Managed protocols
(SQS, Lambda, Firehose) follow one fixed schedule; mobile push and SMS another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BACKOFF_FUNCTIONS = ("arithmetic", "exponential", "geometric", "linear")
MAX_SCHEDULE_SECONDS = 3600
MANAGED_MAX_ATTEMPTS = 100_015
PUSH_MAX_ATTEMPTS = 50
PUSH_WINDOW_SECONDS = 6 * 3600


@dataclass(frozen=True)
class DeliveryPolicy:
    """An HTTP/S ``healthyRetryPolicy``; defaults are SNS's (3 retries 20 s apart)."""

    min_delay_target: int = 20
    max_delay_target: int = 20
    num_retries: int = 3
    num_no_delay_retries: int = 0
    num_min_delay_retries: int = 0
    num_max_delay_retries: int = 0
    backoff_function: str = "linear"

    def __post_init__(self) -> None:
        problems = []
        if not 1 <= self.min_delay_target <= self.max_delay_target:
            problems.append("minDelayTarget must be between 1 and maxDelayTarget")
        if self.max_delay_target > MAX_SCHEDULE_SECONDS:
            problems.append("maxDelayTarget must be at most 3600")
        if not 0 <= self.num_retries <= 100:
            problems.append("numRetries must be between 0 and 100")
        if (
            min(self.num_no_delay_retries, self.num_min_delay_retries, self.num_max_delay_retries)
            < 0
        ):
            problems.append(
                "numNoDelayRetries, numMinDelayRetries, numMaxDelayRetries must be >= 0"
            )
        if self.backoff_retries < 0:
            problems.append("numRetries is smaller than the sum of the phase retry counts")
        if self.backoff_function not in BACKOFF_FUNCTIONS:
            problems.append(f"backoffFunction must be one of {', '.join(BACKOFF_FUNCTIONS)}")
        if not problems and sum(self.delays()) > MAX_SCHEDULE_SECONDS:
            problems.append("the whole retry schedule must fit in 3600 s")
        if problems:
            raise ValueError(f"invalid delivery policy {self}: {'; '.join(problems)}")

    @property
    def backoff_retries(self) -> int:
        """Retries in the backoff phase: what the other phases leave of ``numRetries``."""
        return (
            self.num_retries
            - self.num_no_delay_retries
            - self.num_min_delay_retries
            - self.num_max_delay_retries
        )

    def delays(self) -> list[float]:
        """Seconds before each retry, in order (``numRetries`` values)."""
        return (
            [0.0] * self.num_no_delay_retries
            + [float(self.min_delay_target)] * self.num_min_delay_retries
            + backoff_delays(
                self.backoff_function,
                self.min_delay_target,
                self.max_delay_target,
                self.backoff_retries,
            )
            + [float(self.max_delay_target)] * self.num_max_delay_retries
        )

    @classmethod
    def from_aws(cls, policy: dict[str, object]) -> DeliveryPolicy:
        """From the ``healthyRetryPolicy`` JSON object (AWS key names)."""
        keys = {
            "minDelayTarget": "min_delay_target",
            "maxDelayTarget": "max_delay_target",
            "numRetries": "num_retries",
            "numNoDelayRetries": "num_no_delay_retries",
            "numMinDelayRetries": "num_min_delay_retries",
            "numMaxDelayRetries": "num_max_delay_retries",
            "backoffFunction": "backoff_function",
        }
        unknown = sorted(set(policy) - set(keys))
        if unknown:
            raise ValueError(f"healthyRetryPolicy: unknown keys {unknown}; known: {sorted(keys)}")
        values: dict[str, object] = {keys[k]: v for k, v in policy.items()}
        return cls(**values)  # type: ignore[arg-type]


def backoff_delays(function: str, low: float, high: float, count: int) -> list[float]:
    """Delays of the backoff phase, rising from ``low`` to ``high`` over ``count`` retries.

    Assumed curves for step ``i`` of ``n`` (fraction of the way from low to high):
    linear ``i/n``; arithmetic ``i(i+1)/(n(n+1))``; geometric ``(2^i-1)/(2^n-1)``;
    exponential ``low * (high/low)^(i/n)`` (a constant ratio between retries).
    """
    if count <= 0:
        return []
    result = []
    for step in range(1, count + 1):
        if function == "exponential":
            result.append(low * math.pow(high / low, step / count))
            continue
        if function == "arithmetic":
            fraction = step * (step + 1) / (count * (count + 1))
        elif function == "geometric":
            fraction = (2**step - 1) / (2**count - 1)
        else:
            fraction = step / count
        result.append(low + (high - low) * fraction)
    return result


def managed_delay(retry: int) -> float:
    """Seconds before retry number ``retry`` (1-based) to SQS, Lambda or Firehose.

    3 immediate attempts (the first delivery among them), 2 at 1 s, 10 exponential from 1 s to
    20 s, then 20 s apart: 100,015 attempts over about 23 days.
    """
    if retry <= 2:
        return 0.0
    if retry <= 4:
        return 1.0
    if retry <= 14:
        return math.pow(20.0, (retry - 4) / 10)
    return 20.0


def managed_elapsed(retries: int) -> float:
    """Seconds spent waiting before the last of ``retries`` retries to a managed endpoint."""
    head = sum(managed_delay(r) for r in range(1, min(retries, 14) + 1))
    return head + 20.0 * max(0, retries - 14)


def push_delay(retry: int) -> float:
    """Seconds before retry ``retry`` to mobile push or SMS: 50 attempts over 6 hours.

    Assumed to grow linearly (``c * retry``) so that the 49 retries add up to 6 hours.
    """
    step = PUSH_WINDOW_SECONDS / (PUSH_MAX_ATTEMPTS - 1) / PUSH_MAX_ATTEMPTS * 2
    return step * retry
