"""The relays' deployed alarms, read back from the local AWS, are held against the metrics the
relays wrote as CloudWatch would for one period; a relay whose metrics no alarm watches fails
the reading, naming it."""

from __future__ import annotations

from typing import Any

import pytest

from cross_account_runtime.common.emf import NAMESPACE
from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import MetricSource
from local_aws.scenarios.relay_alarms import UnwatchedRelayError, read_relay_alarms
from tests.local_aws.accounts import client, fresh_account

pytestmark = pytest.mark.moto

SERVICE = "messaging-relay-outbound-Sales"
DIMENSIONS = (("Service", SERVICE), ("Direction", "outbound"))


def put_alarm(account: AccountCredentials, endpoint: str, metric: str, **extra: Any) -> None:
    client(account, "cloudwatch", endpoint).put_metric_alarm(
        AlarmName=f"Sales-{metric}",
        Namespace=NAMESPACE,
        MetricName=metric,
        Dimensions=[{"Name": n, "Value": v} for n, v in DIMENSIONS],
        Statistic="Sum",
        Period=300,
        EvaluationPeriods=extra.pop("EvaluationPeriods", 1),
        Threshold=0,
        ComparisonOperator="GreaterThanThreshold",
        **extra,
    )


def watched_account(endpoint: str) -> AccountCredentials:
    account = fresh_account(endpoint)
    put_alarm(account, endpoint, "DeadLettered")
    put_alarm(account, endpoint, "Expired")
    put_alarm(account, endpoint, "Failed", EvaluationPeriods=3, DatapointsToAlarm=3)
    # Another namespace's alarm is not the relays'.
    client(account, "cloudwatch", endpoint).put_metric_alarm(
        AlarmName="Sales-queue-age",
        Namespace="AWS/SQS",
        MetricName="ApproximateAgeOfOldestMessage",
        Statistic="Maximum",
        Period=300,
        EvaluationPeriods=1,
        Threshold=900,
        ComparisonOperator="GreaterThanThreshold",
    )
    return account


def test_each_alarm_sums_its_metric_over_the_lines_of_its_dimensions(moto_endpoint: str) -> None:
    account = watched_account(moto_endpoint)
    metrics = {
        # Two functions' lines under one service add up, as CloudWatch adds them.
        MetricSource("fn-1", DIMENSIONS): {"Records": 3, "Expired": 1, "Failed": 2},
        MetricSource("fn-2", DIMENSIONS): {"Records": 1, "Expired": 0, "Failed": 1},
    }
    readings = read_relay_alarms({"Sales": account}, moto_endpoint, metrics)
    by_metric = {r.metric: r for r in readings}
    assert set(by_metric) == {"DeadLettered", "Expired", "Failed"}
    assert [(r.metric, r.value, r.sets_off) for r in readings] == [
        ("Expired", 1, True),
        ("Failed", 3, True),
        ("DeadLettered", 0, False),
    ]
    assert by_metric["Expired"].line() == (
        f"{SERVICE} Expired 1 > 0: ALARM (Sales-Expired, account {account.account_id})"
    )
    assert "ALARM after 3 such periods" in by_metric["Failed"].line()
    assert by_metric["DeadLettered"].line().startswith(f"{SERVICE} DeadLettered 0 > 0: quiet")


def test_a_relay_whose_lines_no_alarm_watches_is_refused_naming_it(moto_endpoint: str) -> None:
    account = watched_account(moto_endpoint)
    stray = (("Service", "sqs-relay"), ("Direction", "inbound"))
    metrics = {MetricSource("fn", stray): {"Records": 1, "Expired": 0}}
    with pytest.raises(
        UnwatchedRelayError, match=r"Direction=inbound Service=sqs-relay DeadLettered; "
    ):
        read_relay_alarms({"Sales": account}, moto_endpoint, metrics)
