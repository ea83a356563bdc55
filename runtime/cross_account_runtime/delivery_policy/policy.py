"""A typed, validated SNS HTTP(S) delivery policy, and the retry schedule it implies.

Only HTTP/S subscriptions can customise how SNS retries a failed delivery. A policy SNS refuses
fails the deployment late (at ``SetSubscriptionAttributes`` time) with a terse message, and a
policy SNS accepts can still give up far sooner or later than its author meant. This module
refuses a bad policy when it is built, naming the field in both spellings (``numRetries
(num_retries)``) and the fix, and lays out the attempts so the author can see the give-up time.

Retries run in four phases, in order: immediate (``numNoDelayRetries``, no delay), pre-backoff
(``numMinDelayRetries`` at ``minDelayTarget``), backoff (whatever ``numRetries`` leaves, rising
from ``minDelayTarget`` to ``maxDelayTarget`` along ``backoffFunction``), post-backoff
(``numMaxDelayRetries`` at ``maxDelayTarget``). The whole schedule must fit in 3,600 s.

The backoff curves are an assumption; see :data:`BACKOFF_CURVES`. Pure standard library, so the
CLI (:mod:`cross_account_runtime.delivery_policy.preview`) and other tools can use it without CDK.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

MAX_DELAY_TARGET_SECONDS: Final = 3600
MAX_RETRIES: Final = 100
MAX_SCHEDULE_SECONDS: Final = 3600
DELIVERY_TIMEOUT_SECONDS: Final = 15
"""SNS waits this long for an answer before counting the attempt as failed."""


class DeliveryPolicyError(ValueError):
    """A delivery policy SNS would refuse; the message names the field and the fix."""


class RetryPhase(enum.StrEnum):
    """Which part of the schedule an attempt belongs to, in the order SNS runs them. A
    ``StrEnum``, so the preview's table and JSON carry the plain text."""

    INITIAL = "initial"
    """The first delivery, at 0 s."""
    IMMEDIATE = "immediate"
    """``numNoDelayRetries``, without delay."""
    PRE_BACKOFF = "pre-backoff"
    """``numMinDelayRetries``, each after ``minDelayTarget``."""
    BACKOFF = "backoff"
    """What ``numRetries`` leaves, rising from ``minDelayTarget`` to ``maxDelayTarget``."""
    POST_BACKOFF = "post-backoff"
    """``numMaxDelayRetries``, each after ``maxDelayTarget``."""


class BackoffFunction(enum.StrEnum):
    """How delays rise through the backoff phase (``backoffFunction``). A ``StrEnum``: the
    value is what SNS reads and writes."""

    ARITHMETIC = "arithmetic"
    EXPONENTIAL = "exponential"
    GEOMETRIC = "geometric"
    LINEAR = "linear"


class HeaderContentType(enum.StrEnum):
    """``Content-Type`` SNS sends to the endpoint (``requestPolicy.headerContentType``).

    SNS documents the bare media types as the allowed values; ``text/plain; charset=UTF-8`` is
    what SNS itself reports as its default, so a policy read back from SNS round-trips exactly.
    """

    TEXT_PLAIN = "text/plain"
    TEXT_PLAIN_UTF8 = "text/plain; charset=UTF-8"
    APPLICATION_JSON = "application/json"
    APPLICATION_XML = "application/xml"


BACKOFF_CURVES: Final[Mapping[BackoffFunction, str]] = {
    BackoffFunction.LINEAR: "equal steps, delay_k = min + (max - min) * k / (n - 1)",
    BackoffFunction.ARITHMETIC: "steps growing by a constant amount (1, 2, 3, ...), "
    "delay_k = min + (max - min) * k(k + 1) / ((n - 1) n)",
    BackoffFunction.GEOMETRIC: "steps doubling (1, 2, 4, ...), "
    "delay_k = min + (max - min) * (2^k - 1) / (2^(n - 1) - 1)",
    BackoffFunction.EXPONENTIAL: "a constant ratio between delays, "
    "delay_k = min * (max / min)^(k / (n - 1))",
}
"""The assumed backoff curves, for the n retries of the backoff phase, k = 0 .. n - 1.

What AWS documents: the minimum delay is the delay of the first backoff retry and the maximum
delay that of the last ("Message delivery retries", SNS developer guide); the four functions are
shown only as a graph (``backoff-graph.png``: 10 retries, minimum 5 s, maximum 260 s) with no
formula, and that image could not be read as text. So the shapes here are *assumed*, each named
after the progression its name suggests: linear steps are equal, arithmetic steps grow
arithmetically, geometric steps grow geometrically, and exponential delays grow by a constant
ratio, the reading that fits AWS's own "10 times, with exponential backoff, from 1 second to 20
seconds" for managed endpoints. All four start at min, end at max and never fall. Early in the
phase linear is highest, then arithmetic, then exponential, then geometric (for 10 retries from
5 s to 260 s the second backoff retry waits 33.3, 10.7, 7.8 and 5.5 s). A lone backoff retry
waits max (the phase ends at max), which keeps the 3,600 s check on the cautious side. SNS adds
jitter, so real retries scatter around these times.
"""

BACKOFF_ASSUMPTION: Final = (
    "AWS publishes the backoff functions only as a graph, so this shape is assumed; "
    "k = 0 .. n - 1 over the n backoff retries, the first waiting minDelayTarget and the last "
    "maxDelayTarget"
)

_RETRY_FIELDS: Final[Mapping[str, str]] = {
    "minDelayTarget": "min_delay_target",
    "maxDelayTarget": "max_delay_target",
    "numRetries": "num_retries",
    "numNoDelayRetries": "num_no_delay_retries",
    "numMinDelayRetries": "num_min_delay_retries",
    "numMaxDelayRetries": "num_max_delay_retries",
    "backoffFunction": "backoff_function",
}
_SUBSCRIPTION_SECTIONS: Final = ("healthyRetryPolicy", "throttlePolicy", "requestPolicy")
_TOPIC_SECTIONS: Final[Mapping[str, str]] = {
    "defaultHealthyRetryPolicy": "healthyRetryPolicy",
    "defaultThrottlePolicy": "throttlePolicy",
    "defaultRequestPolicy": "requestPolicy",
}
_TOPIC_OVERRIDES_KEY: Final = "disableSubscriptionOverrides"


@dataclass(frozen=True)
class RetryAttempt:
    """One delivery attempt: attempt 1 is the first delivery, at 0 s.

    ``delay_seconds`` is the wait before this attempt; ``at_seconds`` is when it starts,
    counted from the start of the first attempt, nominally (without jitter or the time spent
    waiting for the endpoint's answer).
    """

    number: int
    phase: RetryPhase
    delay_seconds: float
    at_seconds: float


def backoff_delays(function: BackoffFunction, low: int, high: int, count: int) -> list[float]:
    """Delays of the ``count`` backoff-phase retries from ``low`` to ``high`` seconds.

    Follows the assumed curves in :data:`BACKOFF_CURVES`; results are clamped to
    ``[low, high]`` so floating-point rounding cannot push a delay past either target.
    """
    if count <= 0:
        return []
    if count == 1:
        return [float(high)]
    last = count - 1
    delays = []
    for k in range(count):
        if function is BackoffFunction.EXPONENTIAL:
            delay = low * math.pow(high / low, k / last)
        else:
            if function is BackoffFunction.ARITHMETIC:
                fraction = k * (k + 1) / (last * count)
            elif function is BackoffFunction.GEOMETRIC:
                fraction = (2**k - 1) / (2**last - 1)
            else:
                fraction = k / last
            delay = low + (high - low) * fraction
        delays.append(min(float(high), max(float(low), delay)))
    return delays


def _field(python_name: str) -> str:
    """``numRetries (num_retries)``: the JSON name users see in SNS, then the Python one."""
    json_name = next(j for j, p in _RETRY_FIELDS.items() if p == python_name)
    return f"{json_name} ({python_name})"


def _is_whole(value: object) -> bool:
    """True for ints; ``True``/``False`` are ints to Python but never a count to SNS."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class HttpDeliveryPolicy:
    """An HTTP/S delivery policy, checked against every SNS limit when it is built.

    Defaults are SNS's own for HTTP/S: 3 retries 20 s apart, linear, no throttling, and no
    ``requestPolicy`` (SNS then sends ``text/plain; charset=UTF-8``).
    """

    min_delay_target: int = 20
    max_delay_target: int = 20
    num_retries: int = 3
    num_no_delay_retries: int = 0
    num_min_delay_retries: int = 0
    num_max_delay_retries: int = 0
    backoff_function: BackoffFunction = BackoffFunction.LINEAR
    max_receives_per_second: int | None = None
    header_content_type: HeaderContentType | None = None

    def __post_init__(self) -> None:
        self._check_types()
        self._check_ranges()
        total = math.fsum(attempt.delay_seconds for attempt in self.schedule())
        if total > MAX_SCHEDULE_SECONDS + 1e-9:
            raise DeliveryPolicyError(
                f"{_field('num_retries')}: the retry schedule takes {total:.1f} s with the "
                f"assumed {self.backoff_function.value} curve, over SNS's limit of "
                f"{MAX_SCHEDULE_SECONDS} s; lower numRetries, numMaxDelayRetries or "
                "maxDelayTarget (preview with python -m cross_account_runtime.delivery_policy.preview)"
            )

    def _check_types(self) -> None:
        for name in _RETRY_FIELDS.values():
            value = getattr(self, name)
            if name != "backoff_function" and not _is_whole(value):
                raise DeliveryPolicyError(
                    f"{_field(name)}: must be a whole number of "
                    f"{'seconds' if name.endswith('target') else 'retries'}, got {value!r}"
                )
        if not isinstance(self.backoff_function, BackoffFunction):
            raise DeliveryPolicyError(
                f"{_field('backoff_function')}: use a BackoffFunction member "
                f"({', '.join(f.name for f in BackoffFunction)}), got {self.backoff_function!r}"
            )
        rate = self.max_receives_per_second
        if rate is not None and not _is_whole(rate):
            raise DeliveryPolicyError(
                "throttlePolicy.maxReceivesPerSecond (max_receives_per_second): must be a whole "
                f"number of deliveries per second, or None for no throttling, got {rate!r}"
            )
        content_type = self.header_content_type
        if content_type is not None and not isinstance(content_type, HeaderContentType):
            raise DeliveryPolicyError(
                "requestPolicy.headerContentType (header_content_type): use a HeaderContentType "
                f"member ({', '.join(t.name for t in HeaderContentType)}) or None, "
                f"got {content_type!r}"
            )

    def _check_ranges(self) -> None:
        if not 1 <= self.min_delay_target <= MAX_DELAY_TARGET_SECONDS:
            raise DeliveryPolicyError(
                f"{_field('min_delay_target')}: must be from 1 to {MAX_DELAY_TARGET_SECONDS} s, "
                f"got {self.min_delay_target}"
            )
        if not 1 <= self.max_delay_target <= MAX_DELAY_TARGET_SECONDS:
            raise DeliveryPolicyError(
                f"{_field('max_delay_target')}: must be from minDelayTarget to "
                f"{MAX_DELAY_TARGET_SECONDS} s, got {self.max_delay_target}"
            )
        if self.min_delay_target > self.max_delay_target:
            raise DeliveryPolicyError(
                f"{_field('min_delay_target')}: {self.min_delay_target} s is more than "
                f"maxDelayTarget ({self.max_delay_target} s); lower minDelayTarget or raise "
                "maxDelayTarget"
            )
        if not 0 <= self.num_retries <= MAX_RETRIES:
            raise DeliveryPolicyError(
                f"{_field('num_retries')}: must be from 0 to {MAX_RETRIES}, got {self.num_retries}"
            )
        for name in ("num_no_delay_retries", "num_min_delay_retries", "num_max_delay_retries"):
            if getattr(self, name) < 0:
                raise DeliveryPolicyError(
                    f"{_field(name)}: must be 0 or more, got {getattr(self, name)}"
                )
        if self.backoff_retries < 0:
            raise DeliveryPolicyError(
                f"{_field('num_retries')}: {self.num_retries} is fewer than the phases ask for "
                f"(numNoDelayRetries {self.num_no_delay_retries} + numMinDelayRetries "
                f"{self.num_min_delay_retries} + numMaxDelayRetries "
                f"{self.num_max_delay_retries}); raise numRetries to at least "
                f"{self.num_retries - self.backoff_retries} or lower the phase counts"
            )
        rate = self.max_receives_per_second
        if rate is not None and rate < 1:
            raise DeliveryPolicyError(
                "throttlePolicy.maxReceivesPerSecond (max_receives_per_second): must be 1 or "
                f"more, or None for no throttling, got {rate}"
            )

    @property
    def backoff_retries(self) -> int:
        """Retries in the backoff phase: what ``numRetries`` leaves after the other phases."""
        return (
            self.num_retries
            - self.num_no_delay_retries
            - self.num_min_delay_retries
            - self.num_max_delay_retries
        )

    @property
    def total_attempts(self) -> int:
        """The first delivery plus every retry."""
        return self.num_retries + 1

    @property
    def give_up_after_seconds(self) -> float:
        """Seconds from the start of the first attempt to the start of the last one.

        This is the sum of the delays, the figure SNS's 3,600 s limit bounds. It does *not*
        include the up to 15 s SNS waits for each answer (see
        :attr:`give_up_after_seconds_if_every_attempt_times_out`), nor jitter.
        """
        return self.schedule()[-1].at_seconds

    @property
    def give_up_after_seconds_if_every_attempt_times_out(self) -> float:
        """Upper bound when every attempt waits the full 15 s timeout before failing."""
        return self.give_up_after_seconds + DELIVERY_TIMEOUT_SECONDS * self.total_attempts

    def schedule(self) -> list[RetryAttempt]:
        """Every attempt in order: the first delivery, then each retry with its phase."""
        phases = (
            [(RetryPhase.IMMEDIATE, 0.0)] * self.num_no_delay_retries
            + [(RetryPhase.PRE_BACKOFF, float(self.min_delay_target))] * self.num_min_delay_retries
            + [
                (RetryPhase.BACKOFF, delay)
                for delay in backoff_delays(
                    self.backoff_function,
                    self.min_delay_target,
                    self.max_delay_target,
                    self.backoff_retries,
                )
            ]
            + [(RetryPhase.POST_BACKOFF, float(self.max_delay_target))] * self.num_max_delay_retries
        )
        attempts = [RetryAttempt(1, RetryPhase.INITIAL, 0.0, 0.0)]
        elapsed = 0.0
        for number, (phase, delay) in enumerate(phases, start=2):
            elapsed += delay
            attempts.append(RetryAttempt(number, phase, delay, elapsed))
        return attempts

    def _healthy_retry_json(self) -> dict[str, Any]:
        return {
            json_name: getattr(self, python_name)
            if python_name != "backoff_function"
            else self.backoff_function.value
            for json_name, python_name in _RETRY_FIELDS.items()
        }

    def to_subscription_json(self) -> dict[str, Any]:
        """The subscription attribute ``DeliveryPolicy``; optional sections only when set."""
        document: dict[str, Any] = {"healthyRetryPolicy": self._healthy_retry_json()}
        if self.max_receives_per_second is not None:
            document["throttlePolicy"] = {"maxReceivesPerSecond": self.max_receives_per_second}
        if self.header_content_type is not None:
            document["requestPolicy"] = {"headerContentType": self.header_content_type.value}
        return document

    def to_topic_json(self, *, disable_subscription_overrides: bool = False) -> dict[str, Any]:
        """The topic attribute ``DeliveryPolicy``: defaults for the topic's HTTP/S subscriptions.

        ``disable_subscription_overrides`` makes SNS ignore the subscriptions' own policies.
        """
        http: dict[str, Any] = {
            "defaultHealthyRetryPolicy": self._healthy_retry_json(),
            _TOPIC_OVERRIDES_KEY: disable_subscription_overrides,
        }
        if self.max_receives_per_second is not None:
            http["defaultThrottlePolicy"] = {"maxReceivesPerSecond": self.max_receives_per_second}
        if self.header_content_type is not None:
            http["defaultRequestPolicy"] = {"headerContentType": self.header_content_type.value}
        return {"http": http}

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> HttpDeliveryPolicy:
        """Read a subscription ``DeliveryPolicy``, or a topic one (``{"http": {...}}``).

        Missing keys take SNS's defaults, as SNS does. Unknown keys are refused with their path:
        a typo (``numRetry``) would otherwise fall back to a default without a word.
        A topic's ``disableSubscriptionOverrides`` is checked but not kept: it belongs to the
        topic, not the policy (pass it to :meth:`to_topic_json`).
        """
        document = _mapping("DeliveryPolicy", document)
        if "http" in document:
            _refuse_unknown("", document, ("http",))
            http = _mapping("http", document["http"])
            _refuse_unknown("http.", http, (*_TOPIC_SECTIONS, _TOPIC_OVERRIDES_KEY))
            overrides = http.get(_TOPIC_OVERRIDES_KEY, False)
            if not isinstance(overrides, bool):
                raise DeliveryPolicyError(
                    f"http.{_TOPIC_OVERRIDES_KEY}: must be true or false, got {overrides!r}"
                )
            sections = {
                plain: (f"http.{key}", http[key])
                for key, plain in _TOPIC_SECTIONS.items()
                if key in http
            }
        else:
            _refuse_unknown("", document, _SUBSCRIPTION_SECTIONS)
            sections = {
                key: (key, document[key]) for key in _SUBSCRIPTION_SECTIONS if key in document
            }
        return cls(**_read_sections(sections))


def _mapping(path: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DeliveryPolicyError(f"{path}: must be a JSON object, got {value!r}")
    return value


def _refuse_unknown(prefix: str, section: Mapping[str, Any], known: tuple[str, ...]) -> None:
    unknown = sorted(str(key) for key in section if key not in known)
    if unknown:
        raise DeliveryPolicyError(
            f"{prefix}{unknown[0]}: unknown key; remove it or use one of {', '.join(known)}"
        )


def _read_sections(sections: Mapping[str, tuple[str, object]]) -> dict[str, Any]:
    """Constructor arguments from the subscription-shaped sections, each with its JSON path."""
    values: dict[str, Any] = {}
    if "healthyRetryPolicy" in sections:
        path, raw = sections["healthyRetryPolicy"]
        retry = _mapping(path, raw)
        _refuse_unknown(f"{path}.", retry, tuple(_RETRY_FIELDS))
        for json_name, python_name in _RETRY_FIELDS.items():
            if json_name in retry:
                values[python_name] = retry[json_name]
        if "backoff_function" in values:
            values["backoff_function"] = _backoff_function(
                f"{path}.backoffFunction", values["backoff_function"]
            )
    if "throttlePolicy" in sections:
        path, raw = sections["throttlePolicy"]
        throttle = _mapping(path, raw)
        _refuse_unknown(f"{path}.", throttle, ("maxReceivesPerSecond",))
        values["max_receives_per_second"] = throttle.get("maxReceivesPerSecond")
    if "requestPolicy" in sections:
        path, raw = sections["requestPolicy"]
        request = _mapping(path, raw)
        _refuse_unknown(f"{path}.", request, ("headerContentType",))
        if "headerContentType" in request:
            values["header_content_type"] = _content_type(
                f"{path}.headerContentType", request["headerContentType"]
            )
    return values


def _backoff_function(path: str, value: object) -> BackoffFunction:
    """SNS documents lowercase names; CDK writes uppercase ones, so either case is read."""
    if isinstance(value, str):
        for function in BackoffFunction:
            if function.value == value.lower():
                return function
    raise DeliveryPolicyError(
        f"{path}: must be one of {', '.join(f.value for f in BackoffFunction)}, got {value!r}"
    )


def _content_type(path: str, value: object) -> HeaderContentType:
    for content_type in HeaderContentType:
        if content_type.value == value:
            return content_type
    raise DeliveryPolicyError(
        f"{path}: must be one of {', '.join(repr(t.value) for t in HeaderContentType)}, "
        f"got {value!r}"
    )


DEFAULT: Final = HttpDeliveryPolicy()
"""SNS's default for HTTP/S: 3 retries 20 s apart, 4 attempts over 60 s."""
