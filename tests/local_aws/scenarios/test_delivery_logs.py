"""A day of delivery logs for the example's topics, in the analytics bucket's layout, and the
daily report on them: uploaded to the bucket in moto, figures equal to what was generated."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report import bucket_paths as bucket_layout
from cross_account_runtime.delivery_report import job
from cross_account_runtime.delivery_report.sample.events import Truth, TruthCounter
from cross_account_runtime.delivery_report.sample.generator import generate
from local_aws.accounts import AccountCredentials
from local_aws.scenarios.delivery_logs import (
    CROSS_ACCOUNT_SQS,
    FAILURE_PROFILES,
    PUBLISHING_HOURS,
    BucketMissingError,
    DeliveryLogsError,
    DeliveryReport,
    ReportSummary,
    analytics_bucket,
    run_delivery_logs,
    run_job,
    sample_topology,
    write_day,
)
from stacks.app_builder import topology_from_context
from stacks.topology import parse_topology
from tests.local_aws.accounts import fresh_account

DAY = date(2026, 3, 14)
RECORDS = 3000
SEED = 5


def test_each_subscription_is_logged_under_the_protocol_sns_logs_it_under() -> None:
    topology = topology_from_context(None)
    order_billed = topology.topics[0]

    logged = sample_topology(topology)

    (topic,) = logged.topics
    assert topic.arn == "arn:aws:sns:us-east-1:222222222222:MyCompany-Messages-OrderBilled"
    sqs, https = topic.subscriptions
    assert (sqs.protocol, sqs.endpoint) == ("sqs", "arn:aws:sqs:us-east-1:111111111111:Sales")
    assert (https.protocol, https.endpoint) == (
        "http/s",
        "https://partner.example.com/sns/order-billed",
    )
    assert https.delivery_policy == order_billed.subscriptions[1].delivery_policy


def test_a_queue_of_another_account_fails_like_one_whose_key_policy_may_lack_the_grant() -> None:
    sqs, https = sample_topology(topology_from_context(None)).topics[0].subscriptions
    assert sqs.failures == CROSS_ACCOUNT_SQS.failures
    assert https.failures == FAILURE_PROFILES["https"].failures


def test_a_topology_whose_topics_have_no_subscriptions_is_refused_naming_the_field(
    document: dict[str, Any],
) -> None:
    for topic in document["topics"]:
        topic["subscriptions"] = []

    with pytest.raises(DeliveryLogsError) as refused:
        sample_topology(parse_topology(document, "cdk.json"))

    assert str(refused.value).startswith("cdk.json: topology.topics: no topic has subscriptions")


def test_the_days_logs_are_firehose_objects_under_the_days_prefix(tmp_path: Path) -> None:
    written, objects = write_day(topology_from_context(None), tmp_path, DAY, 500, SEED)

    assert written == 500
    assert {o.parent for o in objects} == {tmp_path / bucket_layout.day_prefix(DAY)}
    assert all(o.name.startswith("sns-delivery-logs-1-2026-03-14-") for o in objects)
    assert all(o.suffix == ".gz" for o in objects)
    envelope, _ = json.JSONDecoder().raw_decode(gzip.decompress(objects[0].read_bytes()).decode())
    assert envelope["messageType"] == "CONTROL_MESSAGE"


@dataclass(frozen=True)
class Run:
    report: DeliveryReport
    analytics: AccountCredentials


@pytest.fixture(scope="module")
def run(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> Run:
    """The whole step once, with the analytics bucket created as the analytics stack would."""
    analytics = fresh_account(moto_endpoint)
    analytics.session().client("s3", endpoint_url=moto_endpoint).create_bucket(
        Bucket=bucket_layout.bucket_name(analytics.account_id, analytics.region)
    )
    report = run_delivery_logs(
        topology_from_context(None),
        tmp_path_factory.mktemp("bucket"),
        analytics=analytics,
        endpoint_url=moto_endpoint,
        day=DAY,
        records=RECORDS,
        seed=SEED,
        spark=spark,
    )
    return Run(report, analytics)


def expected_truth() -> Truth:
    """What the generator made for the run: the report must find exactly this."""
    counter = TruthCounter()
    for event in generate(
        RECORDS,
        SEED,
        topology=sample_topology(topology_from_context(None)),
        start=datetime(2026, 3, 14, tzinfo=UTC),
        hours=PUBLISHING_HOURS,
    ):
        counter.add(event)
    return counter.truth


@pytest.mark.spark
@pytest.mark.moto
def test_the_reports_figures_are_the_generated_ones(run: Run) -> None:
    truth = expected_truth()
    assert run.report.summary == ReportSummary(
        deliveries=truth.records,
        failed=truth.by_status["FAILURE"],
        retried=truth.retried,
        succeeded_after_retry=truth.retried_succeeded,
        lost=truth.lost,
        records_read=truth.records + run.report.summary.records_rejected,
        records_rejected=run.report.summary.records_rejected,
    )
    assert truth.by_status["FAILURE"] > 0
    assert truth.lost > 0


@pytest.mark.spark
@pytest.mark.moto
def test_logs_and_report_are_in_the_analytics_bucket_under_their_prefixes(
    run: Run, moto_endpoint: str
) -> None:
    bucket = bucket_layout.bucket_name(run.analytics.account_id, run.analytics.region)
    s3 = run.analytics.session().client("s3", endpoint_url=moto_endpoint)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    logs = [k for k in keys if k.startswith(bucket_layout.day_prefix(DAY))]
    assert len(logs) == run.report.objects
    assert sorted(set(keys) - set(logs)) == [
        "reports/2026-03-14/report.html",
        "reports/2026-03-14/summary.json",
    ]
    assert run.report.report_uri == f"s3://{bucket}/reports/2026-03-14/report.html"
    summary = json.loads(
        s3.get_object(Bucket=bucket, Key="reports/2026-03-14/summary.json")["Body"].read()
    )
    assert ReportSummary.from_summary(summary) == run.report.summary


@pytest.mark.moto
def test_a_missing_analytics_bucket_is_named_with_its_account(
    new_account: AccountCredentials, moto_endpoint: str
) -> None:
    with pytest.raises(BucketMissingError) as missing:
        analytics_bucket(new_account, moto_endpoint)

    assert str(missing.value) == (
        f"bucket messaging-delivery-logs-{new_account.account_id}-us-east-1 is not in account "
        f"{new_account.account_id} of the local AWS (is the analytics stack deployed?)"
    )


class LaunchedJvm:
    """A JVM process that ignores its standard input closing until it is killed."""

    def __init__(self) -> None:
        self.stdin = io.StringIO()
        self.killed = False

    def wait(self, timeout: float | None = None) -> int:
        if not self.killed:
            raise subprocess.TimeoutExpired("java", timeout or 0)
        return -9

    def kill(self) -> None:
        self.killed = True


@dataclass
class SimpleGateway:
    proc: LaunchedJvm

    def shutdown(self) -> None:
        """Nothing to close: the process stands for the JVM."""


class LaunchedSession:
    """What ``job.build_session`` returns when it had to launch the JVM."""

    def __init__(self, jvm: LaunchedJvm, stop_error: Exception | None = None) -> None:
        self.sparkContext = self
        self._stop_error = stop_error
        SparkContext._gateway = SimpleGateway(jvm)

    def setLogLevel(self, level: str) -> None:  # noqa: N802 - PySpark's name
        del level

    def stop(self) -> None:
        if self._stop_error is not None:
            raise self._stop_error


@pytest.fixture
def no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    """No session and no JVM yet, as in a fresh process; the run's own are put back after."""
    monkeypatch.setattr(SparkSession, "getActiveSession", lambda: None)
    monkeypatch.setattr(SparkContext, "_gateway", None)
    monkeypatch.setattr(SparkContext, "_jvm", None)


@pytest.mark.usefixtures("no_jvm")
def test_a_jvm_the_job_launched_is_killed_when_it_does_not_exit_in_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    jvm = LaunchedJvm()
    finished: Any = object()
    monkeypatch.setattr(job, "build_session", lambda *_: LaunchedSession(jvm))
    monkeypatch.setattr(job, "run", lambda *_: finished)

    assert run_job(tmp_path, tmp_path / "report") is finished
    assert jvm.killed
    assert SparkContext._gateway is None


@pytest.mark.usefixtures("no_jvm")
def test_the_jobs_own_error_is_raised_and_the_jvm_shut_down_when_stopping_spark_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    jvm = LaunchedJvm()
    monkeypatch.setattr(
        job, "build_session", lambda *_: LaunchedSession(jvm, RuntimeError("stop failed"))
    )

    def fail(*_: Any) -> None:
        raise ValueError("no logs")

    monkeypatch.setattr(job, "run", fail)

    with pytest.raises(ValueError, match="no logs") as failed:
        run_job(tmp_path, tmp_path / "report")

    assert failed.value.__notes__ == [
        "stopping Spark afterwards failed too: RuntimeError('stop failed')"
    ]
    assert jvm.killed
