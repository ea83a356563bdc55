# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus 10.2.5 ``src/NServiceBus.Core.Tests/Recoverability/
DefaultRecoverabilityPolicyTests.cs``, then the defaults an SQS endpoint runs with: 5 immediate
retries (6 processing attempts, the SQS attempt count starting at 1), 3 delayed retries of 10,
20 and 30 s, then the error queue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from local_aws.released_transport.core.incoming import ErrorContext
from local_aws.released_transport.core.outgoing import TransportTransaction
from local_aws.released_transport.core.recoverability import (
    DelayedRetry,
    ImmediateRetry,
    MessageDeserializationError,
    MoveToError,
    RecoverabilityAction,
    RecoverabilitySettings,
    default_recoverability_policy,
)
from local_aws.released_transport.dotnet.time_formats import to_wire_format

NOW = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


class MyBaseCustomError(Exception):
    pass


class MyCustomError(MyBaseCustomError):
    pass


def _error_context(
    attempts: int = 1,
    retry_number: int | None = None,
    headers: dict[str, str | None] | None = None,
    exception: BaseException | None = None,
) -> ErrorContext:
    return ErrorContext(
        exception or Exception(),
        {"NServiceBus.Retries": str(retry_number)} if retry_number is not None else headers or {},
        "message-id",
        b"",
        TransportTransaction({}, None),
        attempts,
        "my-queue",
    )


def _policy(
    immediate: int = 2,
    delayed: int = 2,
    delay: timedelta = timedelta(seconds=2),
    unrecoverable: tuple[type[BaseException], ...] = (),
) -> RecoverabilitySettings:
    return RecoverabilitySettings(immediate, delayed, delay, unrecoverable)


def _decide(settings: RecoverabilitySettings, context: ErrorContext) -> RecoverabilityAction:
    return default_recoverability_policy(settings, "errorQueue", context, NOW)


def test_When_failure_is_assignable_to_custom_exception_should_move_to_error() -> None:
    settings = _policy(3, 3, unrecoverable=(MyBaseCustomError,))

    assert _decide(settings, _error_context(exception=MyCustomError())) == MoveToError("errorQueue")


def test_When_max_immediate_retries_have_not_been_reached_should_return_immediate_retry() -> None:
    assert _decide(_policy(3), _error_context(2)) == ImmediateRetry()


def test_When_max_immediate_retries_exceeded_should_return_delayed_retry() -> None:
    assert isinstance(_decide(_policy(2), _error_context(3)), DelayedRetry)


def test_When_max_immediate_retries_exceeded_but_delayed_retry_disabled_return_move_to_error() -> (
    None
):
    assert isinstance(_decide(_policy(1, 0), _error_context(3)), MoveToError)


def test_When_immediate_retries_turned_off_and_delayed_retry_policy_returns_delay_should_return_delayed_retry() -> (
    None
):
    action = _decide(_policy(0, delay=timedelta(seconds=10)), _error_context(1))

    assert action == DelayedRetry(timedelta(seconds=10))


@pytest.mark.parametrize("delay", [timedelta(seconds=2), timedelta(0)])
def test_When_immediate_retries_turned_off_and_delayed_retries_turned_off_should_return_move_to_errors(
    delay: timedelta,
) -> None:
    """Also ``..._delayed_retry_policy_returns_no_delay_...`` and ``..._not_available_...``."""
    assert isinstance(_decide(_policy(0, 0, delay), _error_context()), MoveToError)


def test_When_delayed_retry_counter_header_exists_recoverability_policy_should_use_it() -> None:
    action = _decide(_policy(0, 1, timedelta(0)), _error_context(retry_number=1))

    assert isinstance(action, MoveToError)


def test_ShouldRetryTheSpecifiedTimesWithIncreasedDelay() -> None:
    settings = _policy(0, 2, timedelta(seconds=10))

    assert [_decide(settings, _error_context(retry_number=n)) for n in (0, 1, 2)] == [
        DelayedRetry(timedelta(seconds=10)),
        DelayedRetry(timedelta(seconds=20)),
        MoveToError("errorQueue"),
    ]


def test_ShouldCapTheRetryMaxTimeTo24Hours() -> None:
    more_than_a_day_ago = NOW - timedelta(hours=24, microseconds=1)
    headers: dict[str, str | None] = {
        "NServiceBus.Retries.Timestamp": to_wire_format(more_than_a_day_ago)
    }

    assert isinstance(
        _decide(_policy(0, 2, timedelta(seconds=10)), _error_context(headers=headers)), MoveToError
    )


def test_a_timestamp_exactly_a_day_old_or_unreadable_does_not_cap() -> None:
    settings = _policy(0, 2, timedelta(seconds=10))
    for timestamp in (to_wire_format(NOW - timedelta(hours=24)), "yesterday", ""):
        context = _error_context(headers={"NServiceBus.Retries.Timestamp": timestamp})
        assert isinstance(_decide(settings, context), DelayedRetry)


# NServiceBus's defaults.


def test_the_defaults_are_5_immediate_and_3_delayed_retries_of_10_s_more_each() -> None:
    settings = RecoverabilitySettings()
    decisions = [
        _decide(settings, _error_context(attempts, retry_number=round_))
        for round_ in range(4)
        for attempts in range(1, 7)
    ]

    immediate = [d for d in decisions if isinstance(d, ImmediateRetry)]
    delayed = [d.delay.total_seconds() for d in decisions if isinstance(d, DelayedRetry)]
    assert len(immediate) == 20
    assert delayed == [10, 20, 30]
    assert decisions[-1] == MoveToError("errorQueue")
    assert [isinstance(d, ImmediateRetry) for d in decisions[:6]] == [True] * 5 + [False]


def test_a_deserialization_failure_goes_to_the_error_queue_at_once() -> None:
    context = _error_context(1, exception=MessageDeserializationError("bad body"))

    assert _decide(RecoverabilitySettings(), context) == MoveToError("errorQueue")


def test_an_unreadable_retries_header_counts_as_none_performed() -> None:
    context = _error_context(6, headers={"NServiceBus.Retries": "two"})

    assert _decide(RecoverabilitySettings(), context) == DelayedRetry(timedelta(seconds=10))
