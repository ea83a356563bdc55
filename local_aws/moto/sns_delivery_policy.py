"""An HTTP/S subscription's effective delivery policy as SNS applies it, and its retry schedule.

The subscription's ``DeliveryPolicy`` overrides the topic's ``http`` defaults
(``defaultHealthyRetryPolicy``, ``defaultThrottlePolicy``, ``defaultRequestPolicy``) unless the
topic sets ``disableSubscriptionOverrides``; what neither sets is SNS's default. The retries
run in four phases: ``numNoDelayRetries`` at once, ``numMinDelayRetries`` after
``minDelayTarget``, the backoff phase (what ``numRetries`` leaves) rising from
``minDelayTarget`` to ``maxDelayTarget`` along ``backoffFunction``, ``numMaxDelayRetries``
after ``maxDelayTarget`` (``../shared/reference/delivery-policy.md``; "Amazon SNS message
delivery retries" in the SNS developer guide).

This is the local AWS's own reading of SNS's documentation, kept apart from the product's
(``cross_account_runtime.delivery_policy``) on purpose, so that each checks the other.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from moto.sns.models import Subscription

DEFAULT_HEALTHY_RETRY_POLICY: dict[str, Any] = {
    "minDelayTarget": 20,
    "maxDelayTarget": 20,
    "numRetries": 3,
    "numNoDelayRetries": 0,
    "numMinDelayRetries": 0,
    "numMaxDelayRetries": 0,
    "backoffFunction": "linear",
}
"""SNS's HTTP/S retry policy where neither topic nor subscription sets one."""
DEFAULT_CONTENT_TYPE = "text/plain; charset=UTF-8"


@dataclass(frozen=True)
class EffectivePolicy:
    """What SNS applies to one subscription's deliveries."""

    delays: tuple[float, ...]
    """The wait before each retry, in order: ``numRetries`` of them."""
    max_receives_per_second: float | None
    content_type: str


def backoff_delays(function: str, low: float, high: float, count: int) -> list[float]:
    """The ``count`` backoff-phase delays from ``low`` to ``high`` seconds.

    Assumed curves, k = 0 .. n - 1: linear, equal steps; arithmetic, steps growing 1, 2, 3...;
    geometric, steps doubling; exponential, a constant ratio between delays. Each starts at
    ``low`` and ends at ``high``; a lone backoff retry waits ``high``.
    """
    if count <= 0:
        return []
    if count == 1:
        return [float(high)]
    last = count - 1
    fractions = {
        "linear": lambda k: k / last,
        "arithmetic": lambda k: k * (k + 1) / (last * count),
        "geometric": lambda k: (2**k - 1) / (2**last - 1),
    }
    delays = []
    for k in range(count):
        if function == "exponential":
            delay = low * math.pow(high / low, k / last)
        else:
            delay = low + (high - low) * fractions.get(function, fractions["linear"])(k)
        delays.append(min(float(high), max(float(low), delay)))
    return delays


def schedule_delays(healthy: dict[str, Any]) -> tuple[float, ...]:
    """The wait before each retry of a ``healthyRetryPolicy``, phase after phase."""
    low, high = float(healthy["minDelayTarget"]), float(healthy["maxDelayTarget"])
    immediate = int(healthy["numNoDelayRetries"])
    pre = int(healthy["numMinDelayRetries"])
    post = int(healthy["numMaxDelayRetries"])
    backoff = max(0, int(healthy["numRetries"]) - immediate - pre - post)
    function = str(healthy["backoffFunction"]).lower()
    return (
        (0.0,) * immediate
        + (low,) * pre
        + tuple(backoff_delays(function, low, high, backoff))
        + (high,) * post
    )


def policy_json(value: Any) -> dict[str, Any]:
    """A policy attribute as moto stores it: JSON text, a dict from a template, or empty."""
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value) if value else {}
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def effective_policy(subscription: Subscription) -> EffectivePolicy:
    """The subscription's policy over the topic's ``http`` defaults over SNS's."""
    topic = policy_json(getattr(subscription.topic, "delivery_policy", "")).get("http", {})
    own = policy_json(subscription.attributes.get("DeliveryPolicy"))
    if topic.get("disableSubscriptionOverrides"):
        own = {}
    healthy = (
        DEFAULT_HEALTHY_RETRY_POLICY
        | topic.get("defaultHealthyRetryPolicy", {})
        | own.get("healthyRetryPolicy", {})
    )
    throttle = topic.get("defaultThrottlePolicy", {}) | own.get("throttlePolicy", {})
    request = topic.get("defaultRequestPolicy", {}) | own.get("requestPolicy", {})
    rate = throttle.get("maxReceivesPerSecond")
    return EffectivePolicy(
        delays=schedule_delays(healthy),
        max_receives_per_second=float(rate) if rate else None,
        content_type=str(request.get("headerContentType", DEFAULT_CONTENT_TYPE)),
    )
