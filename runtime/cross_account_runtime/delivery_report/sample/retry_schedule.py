"""Retry schedules SNS follows, so generated ``attempts`` and ``dwellTimeMs`` agree with them.

HTTP/S subscriptions follow their delivery policy, scheduled by :mod:`cross_account_runtime.delivery_policy.policy`
(the same code that validates the policies the stacks deploy). Managed protocols (SQS, Lambda,
Firehose) follow one fixed schedule; mobile push and SMS another.
"""

from __future__ import annotations

import math

from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy

MANAGED_MAX_ATTEMPTS = 100_015
PUSH_MAX_ATTEMPTS = 50
PUSH_WINDOW_SECONDS = 6 * 3600


def http_delays(policy: HttpDeliveryPolicy) -> list[float]:
    """Seconds before each retry of an HTTP/S delivery, in order (``numRetries`` values), as
    :mod:`cross_account_runtime.delivery_policy.policy` schedules them (its backoff curves are the assumed ones)."""
    return [attempt.delay_seconds for attempt in policy.schedule()[1:]]


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
