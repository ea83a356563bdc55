"""The scheduled report on the day's real delivery-status records, as the deployed schedule
runs it, and the local SNS's ledger beside its counts: deliveries published to the example's
topic reach the analytics bucket through the deployed export pipeline, the job reads that day's
prefix with the schedule's own arguments, and its counts equal what SNS says it delivered."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report import bucket_paths as bucket_layout
from cross_account_runtime.delivery_report import cli
from local_aws.accounts import AccountCredentials
from local_aws.scenarios.scheduled_report import (
    SCHEDULED_TIME,
    ScheduledReport,
    compare,
    deployed_schedule,
    run_scheduled_report,
)
from stacks.app_builder import topology_from_context

PUBLISHED = 3


def test_the_schedules_arguments_are_read_from_the_deployed_template(
    example_assembly: Path,
) -> None:
    schedule = deployed_schedule(example_assembly)
    topology = topology_from_context(None)
    assert topology.analytics is not None
    ops = topology.account(topology.analytics.account)
    bucket = bucket_layout.bucket_name(ops.id, ops.region)
    assert schedule.arguments == (
        "--bucket",
        f"s3://{bucket}",
        "--scheduled-time",
        SCHEDULED_TIME,
        "--s3-scheme",
        "s3",
    )
    # The morning after the day, at the cron's half past midnight: the job derives that day.
    scheduled = schedule.scheduled_time(date(2026, 12, 31))
    assert scheduled == "2027-01-01T00:30:00Z"
    assert bucket_layout.previous_day(scheduled) == date(2026, 12, 31)


def test_a_difference_between_ledger_and_report_is_named() -> None:
    topic = "arn:aws:sns:us-east-1:222222222222:T"
    ledger = [
        {
            "topic": topic,
            "subscription": f"{topic}:1",
            "protocol": "sqs",
            "destination": "arn:aws:sqs:us-east-1:111111111111:Q",
            "deliveries": 2,
            "attempts": 2,
            "successes": 2,
            "failures": 0,
            "retried": 0,
            "retried_succeeded": 0,
            "http_4xx": 0,
        },
        # Not a topic whose logs stream to the analytics account: not compared.
        {
            "topic": topic + "x",
            "subscription": f"{topic}x:1",
            "protocol": "sqs",
            "destination": "arn:aws:sqs:us-east-1:111111111111:Q",
            "deliveries": 1,
            "attempts": 1,
            "successes": 1,
            "failures": 0,
            "retried": 0,
            "retried_succeeded": 0,
            "http_4xx": 0,
        },
    ]
    summary = {
        "retries": {"by_destination": []},
        "http_4xx_success": {"by_destination": []},
        "deliveries": {
            "by_destination": [
                {
                    "topic": topic,
                    "protocol": "sqs",
                    "destination": "arn:aws:sqs:us-east-1:111111111111:Q",
                    "SUCCESS": 1,
                    "FAILURE": 0,
                    "total": 1,
                }
            ]
        },
    }
    (only,) = compare(ledger, summary, frozenset({topic}))
    assert only.differences == ["deliveries 2 != 1", "successes 2 != 1"]
    assert "DIFFERS: deliveries 2 != 1; successes 2 != 1" in only.line()


@pytest.fixture(scope="module")
def scheduled(
    example_deployment: dict[str, AccountCredentials],
    example_assembly: Path,
    moto_endpoint: str,
    spark: SparkSession,
    tmp_path_factory: pytest.TempPathFactory,
) -> ScheduledReport:
    """Messages published to the example's topic, then the scheduled run on today, its entry
    point's own code on the test run's Spark session."""
    topology = topology_from_context(None)
    assert topology.analytics is not None
    topic = next(t for t in topology.log_streaming_topics if t.subscriptions)
    sns = example_deployment[topic.account].session().client("sns", endpoint_url=moto_endpoint)
    for number in range(PUBLISHED):
        sns.publish(TopicArn=topology.topic_arn(topic), Message=f"scheduled-{number}")

    def entry_point(arguments: Sequence[str]) -> int:
        # spark_entry's main without starting (and stopping) a session of its own.
        return cli.execute(spark, cli.parse_args(list(arguments)))

    return run_scheduled_report(
        example_assembly,
        example_deployment[topology.analytics.account],
        moto_endpoint,
        tmp_path_factory.mktemp("scheduled") / "bucket",
        frozenset(topology.topic_arn(t) for t in topology.log_streaming_topics),
        runner=entry_point,
    )


@pytest.mark.spark
@pytest.mark.moto
def test_the_job_reads_todays_prefix_with_the_schedules_arguments(
    scheduled: ScheduledReport,
) -> None:
    today = datetime.now(UTC).date()
    assert scheduled.day == today
    next_morning = f"{today + timedelta(days=1):%Y-%m-%d}T00:30:00Z"
    assert scheduled.arguments == (
        "--bucket",
        str(scheduled.local_copy),
        "--scheduled-time",
        next_morning,
        "--s3-scheme",
        "s3",
    )
    assert scheduled.objects >= 1
    copied = {
        p.relative_to(scheduled.local_copy).parts[:4] for p in scheduled.local_copy.rglob("*.gz")
    }
    assert copied == {tuple(bucket_layout.day_prefix(today).rstrip("/").split("/"))}
    assert scheduled.report_uri.endswith(f"/{bucket_layout.report_prefix(today)}report.html")


@pytest.mark.spark
@pytest.mark.moto
def test_the_reports_counts_equal_the_ledger_of_what_sns_delivered(
    scheduled: ScheduledReport,
) -> None:
    assert scheduled.comparisons
    assert [c.differences for c in scheduled.comparisons] == [[] for _ in scheduled.comparisons]
    sqs = [c for c in scheduled.comparisons if c.protocol == "sqs"]
    assert sum(c.ledger["deliveries"] for c in sqs) >= PUBLISHED
    assert all(c.ledger["attempts"] == c.ledger["deliveries"] for c in sqs)
