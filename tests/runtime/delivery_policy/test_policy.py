"""HttpDeliveryPolicy: SNS's limits, the JSON forms, the retry schedule and its preview."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cross_account_runtime.delivery_policy.policy import (
    DEFAULT,
    BackoffFunction,
    DeliveryPolicyError,
    HeaderContentType,
    HttpDeliveryPolicy,
    RetryAttempt,
    RetryPhase,
)
from cross_account_runtime.delivery_policy.preview import main

ROOT = Path(__file__).resolve().parents[2]

# The 50-retry example from AWS's "Creating an HTTP/S delivery policy".
DOCUMENTED_EXAMPLE: dict[str, Any] = {
    "healthyRetryPolicy": {
        "minDelayTarget": 1,
        "maxDelayTarget": 60,
        "numRetries": 50,
        "numNoDelayRetries": 3,
        "numMinDelayRetries": 2,
        "numMaxDelayRetries": 35,
        "backoffFunction": "exponential",
    },
    "throttlePolicy": {"maxReceivesPerSecond": 10},
}


def is_non_decreasing(values: list[float]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(values))


# The default -----------------------------------------------------------------------------------


def test_the_default_policy_is_four_attempts_twenty_seconds_apart() -> None:
    assert HttpDeliveryPolicy() == DEFAULT
    assert DEFAULT.schedule() == [
        RetryAttempt(1, RetryPhase.INITIAL, 0.0, 0.0),
        RetryAttempt(2, RetryPhase.BACKOFF, 20.0, 20.0),
        RetryAttempt(3, RetryPhase.BACKOFF, 20.0, 40.0),
        RetryAttempt(4, RetryPhase.BACKOFF, 20.0, 60.0),
    ]
    assert DEFAULT.total_attempts == 4
    assert DEFAULT.give_up_after_seconds == 60.0


def test_the_default_policy_renders_as_sns_reports_it() -> None:
    assert DEFAULT.to_subscription_json() == {
        "healthyRetryPolicy": {
            "minDelayTarget": 20,
            "maxDelayTarget": 20,
            "numRetries": 3,
            "numNoDelayRetries": 0,
            "numMinDelayRetries": 0,
            "numMaxDelayRetries": 0,
            "backoffFunction": "linear",
        }
    }


# The documented 50-retry example ---------------------------------------------------------------


def test_the_documented_example_has_51_attempts_in_four_phases_in_order() -> None:
    policy = HttpDeliveryPolicy.from_json(DOCUMENTED_EXAMPLE)
    attempts = policy.schedule()

    assert policy.total_attempts == len(attempts) == 51
    assert [a.number for a in attempts] == list(range(1, 52))
    phases = [a.phase for a in attempts]
    assert (
        phases
        == (["initial"] + ["immediate"] * 3 + ["pre-backoff"] * 2 + ["backoff"] * 10)
        + ["post-backoff"] * 35
    )
    assert Counter(phases) == {
        "initial": 1,
        "immediate": 3,
        "pre-backoff": 2,
        "backoff": 10,
        "post-backoff": 35,
    }


def test_each_phase_is_a_retry_phase_written_as_its_plain_text() -> None:
    """The preview's table and JSON show the phase names themselves."""
    attempts = HttpDeliveryPolicy.from_json(DOCUMENTED_EXAMPLE).schedule()

    assert all(isinstance(a.phase, RetryPhase) for a in attempts)
    assert json.dumps(list(dict.fromkeys(a.phase for a in attempts))) == (
        '["initial", "immediate", "pre-backoff", "backoff", "post-backoff"]'
    )


@pytest.mark.parametrize("member", [*BackoffFunction, *HeaderContentType])
def test_backoff_functions_and_content_types_are_the_text_sns_reads(
    member: BackoffFunction | HeaderContentType,
) -> None:
    assert member == member.value
    assert json.dumps(member) == json.dumps(member.value)


def test_the_documented_example_delays_follow_each_phase() -> None:
    attempts = HttpDeliveryPolicy.from_json(DOCUMENTED_EXAMPLE).schedule()
    delays = {
        phase: [a.delay_seconds for a in attempts if a.phase == phase]
        for phase in ("immediate", "pre-backoff", "backoff", "post-backoff")
    }

    assert delays["immediate"] == [0.0, 0.0, 0.0]
    assert delays["pre-backoff"] == [1.0, 1.0]
    assert delays["backoff"][0] == 1.0
    assert delays["backoff"][-1] == 60.0
    assert is_non_decreasing(delays["backoff"])
    assert delays["post-backoff"] == [60.0] * 35


def test_the_documented_example_round_trips_through_subscription_json() -> None:
    policy = HttpDeliveryPolicy.from_json(DOCUMENTED_EXAMPLE)

    assert policy.max_receives_per_second == 10
    assert policy.backoff_function is BackoffFunction.EXPONENTIAL
    assert policy.to_subscription_json() == DOCUMENTED_EXAMPLE
    assert HttpDeliveryPolicy.from_json(policy.to_subscription_json()) == policy


def test_a_policy_round_trips_through_topic_json() -> None:
    policy = HttpDeliveryPolicy(
        num_retries=5,
        backoff_function=BackoffFunction.GEOMETRIC,
        max_receives_per_second=3,
        header_content_type=HeaderContentType.APPLICATION_JSON,
    )
    topic = policy.to_topic_json(disable_subscription_overrides=True)

    assert topic == {
        "http": {
            "defaultHealthyRetryPolicy": policy.to_subscription_json()["healthyRetryPolicy"],
            "disableSubscriptionOverrides": True,
            "defaultThrottlePolicy": {"maxReceivesPerSecond": 3},
            "defaultRequestPolicy": {"headerContentType": "application/json"},
        }
    }
    assert HttpDeliveryPolicy.from_json(topic) == policy


def test_optional_sections_appear_only_when_set() -> None:
    assert set(DEFAULT.to_subscription_json()) == {"healthyRetryPolicy"}
    assert set(DEFAULT.to_topic_json()["http"]) == {
        "defaultHealthyRetryPolicy",
        "disableSubscriptionOverrides",
    }
    with_type = HttpDeliveryPolicy(header_content_type=HeaderContentType.TEXT_PLAIN_UTF8)
    assert with_type.to_subscription_json()["requestPolicy"] == {
        "headerContentType": "text/plain; charset=UTF-8"
    }


# Limits ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"min_delay_target": 0}, "minDelayTarget (min_delay_target)"),
        ({"min_delay_target": 3601, "max_delay_target": 3601}, "minDelayTarget"),
        ({"max_delay_target": 3601}, "maxDelayTarget (max_delay_target)"),
        ({"max_delay_target": 0}, "maxDelayTarget (max_delay_target)"),
        ({"min_delay_target": 30, "max_delay_target": 20}, "minDelayTarget (min_delay_target)"),
        ({"num_retries": 101}, "numRetries (num_retries)"),
        ({"num_retries": -1}, "numRetries (num_retries)"),
        ({"num_no_delay_retries": -1}, "numNoDelayRetries (num_no_delay_retries)"),
        ({"num_min_delay_retries": -1}, "numMinDelayRetries (num_min_delay_retries)"),
        ({"num_max_delay_retries": -1}, "numMaxDelayRetries (num_max_delay_retries)"),
        ({"num_retries": 3, "num_no_delay_retries": 2, "num_min_delay_retries": 2}, "numRetries"),
        ({"num_retries": True}, "numRetries (num_retries)"),
        ({"num_max_delay_retries": False}, "numMaxDelayRetries (num_max_delay_retries)"),
        ({"min_delay_target": 20.0}, "minDelayTarget (min_delay_target)"),
        ({"max_delay_target": "20"}, "maxDelayTarget (max_delay_target)"),
        ({"backoff_function": "linear"}, "backoffFunction (backoff_function)"),
        (
            {"max_receives_per_second": 0},
            "throttlePolicy.maxReceivesPerSecond (max_receives_per_second)",
        ),
        (
            {"max_receives_per_second": True},
            "throttlePolicy.maxReceivesPerSecond (max_receives_per_second)",
        ),
        (
            {"header_content_type": "application/json"},
            "requestPolicy.headerContentType (header_content_type)",
        ),
    ],
)
def test_every_limit_violated_is_refused_naming_the_field(
    arguments: dict[str, Any], named: str
) -> None:
    with pytest.raises(DeliveryPolicyError, match=rf"^{re.escape(named)}"):
        HttpDeliveryPolicy(**arguments)


def test_phases_that_outnumber_num_retries_say_how_many_retries_are_needed() -> None:
    with pytest.raises(DeliveryPolicyError, match="raise numRetries to at least 4"):
        HttpDeliveryPolicy(num_retries=3, num_no_delay_retries=2, num_min_delay_retries=2)


def test_the_limits_themselves_are_allowed() -> None:
    HttpDeliveryPolicy(min_delay_target=1, max_delay_target=1, num_retries=100)
    HttpDeliveryPolicy(min_delay_target=3600, max_delay_target=3600, num_retries=1)
    HttpDeliveryPolicy(min_delay_target=36, max_delay_target=36, num_retries=100)
    HttpDeliveryPolicy(num_retries=0)
    HttpDeliveryPolicy(
        num_retries=3, num_no_delay_retries=1, num_min_delay_retries=1, num_max_delay_retries=1
    )


def test_a_schedule_over_3600_seconds_is_refused() -> None:
    with pytest.raises(DeliveryPolicyError, match=r"^numRetries \(num_retries\).*3700\.0 s"):
        HttpDeliveryPolicy(min_delay_target=37, max_delay_target=37, num_retries=100)
    with pytest.raises(DeliveryPolicyError, match="over SNS's limit of 3600 s"):
        HttpDeliveryPolicy(min_delay_target=3600, max_delay_target=3600, num_retries=2)


def test_the_3600_second_check_uses_the_assumed_curve() -> None:
    def policy(function: BackoffFunction) -> HttpDeliveryPolicy:
        return HttpDeliveryPolicy(
            min_delay_target=1, max_delay_target=100, num_retries=72, backoff_function=function
        )

    with pytest.raises(DeliveryPolicyError, match=r"3636\.0 s with the assumed linear curve"):
        policy(BackoffFunction.LINEAR)
    geometric = policy(BackoffFunction.GEOMETRIC)
    assert geometric.give_up_after_seconds == pytest.approx(270.0)


# Backoff curves --------------------------------------------------------------------------------


@pytest.mark.parametrize("function", list(BackoffFunction))
def test_each_backoff_curve_rises_from_min_to_max_and_never_falls(
    function: BackoffFunction,
) -> None:
    policy = HttpDeliveryPolicy(
        min_delay_target=5, max_delay_target=260, num_retries=10, backoff_function=function
    )
    delays = [a.delay_seconds for a in policy.schedule()[1:]]

    assert len(delays) == 10
    assert delays[0] == 5.0
    assert delays[-1] == 260.0
    assert is_non_decreasing(delays)
    assert all(5.0 <= d <= 260.0 for d in delays)


def test_the_assumed_curves_rank_linear_arithmetic_exponential_geometric_early_on() -> None:
    def second_backoff_delay(function: BackoffFunction) -> float:
        policy = HttpDeliveryPolicy(
            min_delay_target=5, max_delay_target=260, num_retries=10, backoff_function=function
        )
        return policy.schedule()[2].delay_seconds

    linear, arithmetic, exponential, geometric = (
        second_backoff_delay(f)
        for f in (
            BackoffFunction.LINEAR,
            BackoffFunction.ARITHMETIC,
            BackoffFunction.EXPONENTIAL,
            BackoffFunction.GEOMETRIC,
        )
    )
    assert linear == pytest.approx(5 + 255 / 9)
    assert arithmetic == pytest.approx(5 + 255 * 2 / 90)
    assert exponential == pytest.approx(5 * 52 ** (1 / 9))
    assert geometric == pytest.approx(5 + 255 / 511)
    assert linear > arithmetic > exponential > geometric


def test_a_lone_backoff_retry_waits_the_maximum_delay() -> None:
    policy = HttpDeliveryPolicy(
        min_delay_target=5, max_delay_target=50, num_retries=2, num_min_delay_retries=1
    )
    assert [(a.phase, a.delay_seconds) for a in policy.schedule()[1:]] == [
        ("pre-backoff", 5.0),
        ("backoff", 50.0),
    ]


def test_give_up_time_excludes_the_answer_timeout_but_its_bound_includes_it() -> None:
    assert DEFAULT.give_up_after_seconds == 60.0
    assert DEFAULT.give_up_after_seconds_if_every_attempt_times_out == 60.0 + 4 * 15


@st.composite
def valid_policies(draw: st.DrawFn) -> HttpDeliveryPolicy:
    """Policies within every limit: no retry waits more than max, so max * retries <= 3600."""
    max_delay = draw(st.integers(1, 3600))
    min_delay = draw(st.integers(1, max_delay))
    retries = draw(st.integers(0, min(100, 3600 // max_delay)))
    no_delay = draw(st.integers(0, retries))
    min_delay_retries = draw(st.integers(0, retries - no_delay))
    max_delay_retries = draw(st.integers(0, retries - no_delay - min_delay_retries))
    return HttpDeliveryPolicy(
        min_delay_target=min_delay,
        max_delay_target=max_delay,
        num_retries=retries,
        num_no_delay_retries=no_delay,
        num_min_delay_retries=min_delay_retries,
        num_max_delay_retries=max_delay_retries,
        backoff_function=draw(st.sampled_from(BackoffFunction)),
        max_receives_per_second=draw(st.none() | st.integers(1, 1000)),
        header_content_type=draw(st.none() | st.sampled_from(HeaderContentType)),
    )


@given(valid_policies())
def test_any_valid_policy_has_a_coherent_schedule_and_round_trips(
    policy: HttpDeliveryPolicy,
) -> None:
    attempts = policy.schedule()
    times = [a.at_seconds for a in attempts]

    assert len(attempts) == policy.total_attempts == policy.num_retries + 1
    assert all(a.delay_seconds >= 0 for a in attempts)
    assert all(
        policy.min_delay_target <= a.delay_seconds <= policy.max_delay_target
        for a in attempts
        if a.phase == "backoff"
    )
    assert is_non_decreasing(times)
    assert policy.give_up_after_seconds == times[-1] <= 3600
    assert HttpDeliveryPolicy.from_json(policy.to_subscription_json()) == policy
    assert HttpDeliveryPolicy.from_json(policy.to_topic_json()) == policy


# Reading JSON ----------------------------------------------------------------------------------


def test_missing_keys_take_sns_defaults() -> None:
    assert HttpDeliveryPolicy.from_json({}) == DEFAULT
    assert HttpDeliveryPolicy.from_json({"healthyRetryPolicy": {"numRetries": 5}}) == (
        HttpDeliveryPolicy(num_retries=5)
    )
    assert HttpDeliveryPolicy.from_json({"http": {}}) == DEFAULT


def test_backoff_function_is_read_in_either_case() -> None:
    document = {"healthyRetryPolicy": {"backoffFunction": "EXPONENTIAL"}}
    assert HttpDeliveryPolicy.from_json(document).backoff_function is BackoffFunction.EXPONENTIAL


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ({"healthyRetryPolicy": {}, "sicklyRetryPolicy": {}}, "sicklyRetryPolicy: unknown key"),
        ({"healthyRetryPolicy": {"numRetry": 3}}, "healthyRetryPolicy.numRetry: unknown key"),
        ({"throttlePolicy": {"maxReceives": 3}}, "throttlePolicy.maxReceives: unknown key"),
        ({"requestPolicy": {"contentType": "x"}}, "requestPolicy.contentType: unknown key"),
        ({"http": {"healthyRetryPolicy": {}}}, "http.healthyRetryPolicy: unknown key"),
        (
            {"http": {"defaultHealthyRetryPolicy": {"delay": 1}}},
            "http.defaultHealthyRetryPolicy.delay: unknown key",
        ),
        ({"http": {}, "healthyRetryPolicy": {}}, "healthyRetryPolicy: unknown key"),
    ],
)
def test_unknown_keys_are_refused_with_their_path(document: dict[str, Any], path: str) -> None:
    with pytest.raises(DeliveryPolicyError, match=rf"^{re.escape(path)}"):
        HttpDeliveryPolicy.from_json(document)


@pytest.mark.parametrize(
    ("document", "named"),
    [
        (
            {"healthyRetryPolicy": {"backoffFunction": "cubic"}},
            "healthyRetryPolicy.backoffFunction",
        ),
        ({"requestPolicy": {"headerContentType": "text/html"}}, "requestPolicy.headerContentType"),
        ({"healthyRetryPolicy": {"numRetries": "3"}}, "numRetries (num_retries)"),
        ({"healthyRetryPolicy": [1]}, "healthyRetryPolicy: must be a JSON object"),
        ({"http": {"disableSubscriptionOverrides": "yes"}}, "http.disableSubscriptionOverrides"),
        (
            {"http": {"defaultThrottlePolicy": {"maxReceivesPerSecond": 0}}},
            "throttlePolicy.maxReceivesPerSecond",
        ),
    ],
)
def test_bad_values_in_json_are_refused_naming_the_field(
    document: dict[str, Any], named: str
) -> None:
    with pytest.raises(DeliveryPolicyError, match=rf"^{re.escape(named)}"):
        HttpDeliveryPolicy.from_json(document)


def test_every_documented_content_type_is_read() -> None:
    for value in ("text/plain", "text/plain; charset=UTF-8", "application/json", "application/xml"):
        document = {"requestPolicy": {"headerContentType": value}}
        assert HttpDeliveryPolicy.from_json(document).to_subscription_json() == {
            **DEFAULT.to_subscription_json(),
            **document,
        }


# The preview command ---------------------------------------------------------------------------


def test_the_preview_of_the_default_lists_attempts_then_give_up_then_curve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()

    assert lines[1].split() == ["1", "initial", "0.0", "0.0"]
    assert lines[4].split() == ["4", "backoff", "20.0", "60.0"]
    assert lines[5].startswith("SNS gives up after 4 attempts, 60.0 s after the first one")
    assert lines[6].startswith("backoff curve: linear, equal steps")
    assert "assumed" in lines[6]
    assert len(lines) == 7


def test_the_json_preview_of_a_policy_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(DOCUMENTED_EXAMPLE))

    assert main(["--file", str(policy_file), "--json"]) == 0
    preview = json.loads(capsys.readouterr().out)

    assert preview["policy"] == DOCUMENTED_EXAMPLE
    assert preview["total_attempts"] == len(preview["attempts"]) == 51
    assert preview["attempts"][0] == {
        "number": 1,
        "phase": "initial",
        "delay_seconds": 0.0,
        "at_seconds": 0.0,
    }
    assert preview["give_up_after_seconds"] == preview["attempts"][-1]["at_seconds"]
    assert preview["backoff_function"] == "exponential"
    assert "assumed" in preview["backoff_curve_assumed"]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--policy", '{"healthyRetryPolicy": {"numRetries": 101}}'], "numRetries (num_retries)"),
        (["--policy", "{not json"], "--policy: not valid JSON"),
        (["--file", "/nonexistent/policy.json"], "/nonexistent/policy.json: cannot read"),
    ],
)
def test_the_preview_exits_2_on_bad_input_naming_the_field(
    arguments: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(arguments) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert named in captured.err


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ('{"healthyRetryPolicy": {"numRetries": 3}}'.encode("latin-1") + b"\xe9", "is not UTF-8"),
        (b"  \n", "is empty"),
        (b'{"healthyRetryPolicy": {}, "healthyRetryPolicy": {}}', "appears twice"),
    ],
)
def test_a_policy_file_that_is_not_one_json_document_exits_2_naming_it(
    content: bytes, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "policy.json"
    path.write_bytes(content)
    assert main(["--file", str(path)]) == 2
    assert named in capsys.readouterr().err


def test_the_preview_runs_as_a_module() -> None:
    command = [sys.executable, "-m", "cross_account_runtime.delivery_policy.preview"]
    good = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    bad = subprocess.run(
        [*command, "--policy", '{"healthyRetryPolicy": {"minDelayTarget": 0}}'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )

    assert good.returncode == 0
    assert "SNS gives up after 4 attempts" in good.stdout
    assert bad.returncode == 2
    assert "minDelayTarget (min_delay_target)" in bad.stderr
