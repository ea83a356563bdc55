"""A day of delivery logs for the deployed topics, and the daily report on them, locally.

moto neither writes SNS delivery-status logs nor runs Firehose or EMR Serverless, so this
module plays the three parts the analytics stack plays in AWS, on the same bucket layout
(:mod:`cross_account_runtime.delivery_report.bucket_paths`):

1. SNS logging and Firehose: seeded sample logs for the topology's own topics and
   subscriptions (each protocol failing the way it tends to, HTTPS ones under their delivery
   policy), in Firehose's layout, under a local copy of the bucket;
2. Firehose's delivery: the same objects uploaded to the analytics bucket in the local AWS,
   when the analytics stack created it there;
3. the scheduled job: the Spark job in-process on the local copy (Hadoop's S3 connector is
   not installed locally), its summary and HTML report uploaded under the day's report prefix.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError
from pyspark import SparkContext
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report import bucket_paths as bucket_layout
from cross_account_runtime.delivery_report import job
from cross_account_runtime.delivery_report.sample import topology as sample
from cross_account_runtime.delivery_report.sample.generator import generate
from cross_account_runtime.delivery_report.sample.writers import write_firehose
from local_aws.accounts import AccountCredentials
from stacks.topology import Topology
from stacks.topology.topics import Topic, TopicSubscription

DEFAULT_RECORDS = 200_000
DEFAULT_SEED = 20_260_101
FIREHOSE_BUFFER_BYTES = 1024 * 1024
"""Firehose's smallest S3 buffer: more, smaller gzip objects let every core read (gzip does
not split)."""
PUBLISHING_HOURS = 23.0
"""Messages are published until 23:00 UTC, so that their retries (an HTTPS policy's can take
most of an hour) are logged, and land, on the same day."""
SPARK_APP_NAME = "delivery-report-local"
JVM_EXIT_SECONDS = 30.0


@dataclass(frozen=True)
class FailureProfile:
    """How often deliveries over one protocol fail, by cause, and how often they succeed only
    after retries (fractions of all deliveries)."""

    failures: Mapping[str, float]
    retried_success_rate: float
    http_4xx_success_rate: float = 0.0


FAILURE_PROFILES: Mapping[str, FailureProfile] = {
    # A partner's web server: timeouts and 5xx dominate, some answer 4xx (SNS logs success).
    "https": FailureProfile(
        {"timeout": 0.006, "tls_error": 0.002, "connection_error": 0.002, "http_5xx": 0.004},
        retried_success_rate=0.03,
        http_4xx_success_rate=0.01,
    ),
    # A queue of the topic's account: rare misconfiguration after a key or policy change.
    "sqs": FailureProfile(
        {"kms_access_denied": 0.001, "access_denied": 0.0005, "endpoint_missing": 0.0005},
        retried_success_rate=0.005,
    ),
    # Lambda throttling is retried for up to 23 days, so a day's logs show the retried
    # successes, not throttling failures.
    "lambda": FailureProfile(
        {"endpoint_missing": 0.001, "access_denied": 0.0005},
        retried_success_rate=0.01,
    ),
}
CROSS_ACCOUNT_SQS = FailureProfile(
    {"kms_access_denied": 0.004, "access_denied": 0.001, "endpoint_missing": 0.0005},
    retried_success_rate=0.005,
)
"""A queue of another account: its key policy must admit SNS for this topic, which is the
grant most often missing."""
SAMPLE_PROTOCOL = {"https": "http/s", "sqs": "sqs", "lambda": "lambda"}
"""Topology protocol -> the protocol name SNS logs it under."""


class DeliveryLogsError(ValueError):
    """The topology cannot yield delivery logs; the message names the field and the fix."""


@dataclass(frozen=True)
class ReportSummary:
    """The few figures the main job prints."""

    deliveries: int
    failed: int
    retried: int
    succeeded_after_retry: int
    lost: int
    records_read: int
    records_rejected: int

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any]) -> ReportSummary:
        """Pick the figures out of the job's ``summary.json``."""
        accounting = summary["accounting"]
        return cls(
            deliveries=int(summary["deliveries"]["total"]),
            failed=int(summary["failures"]["total"]),
            retried=int(summary["retries"]["retried"]),
            succeeded_after_retry=int(summary["retries"]["retried_succeeded"]),
            lost=int(summary["lost"]["total"]),
            records_read=int(accounting["records_read"]),
            records_rejected=int(accounting["records_rejected"]),
        )


@dataclass(frozen=True)
class DeliveryReport:
    """Where the day's logs and report are, what the report says, and how long each part took."""

    day: date
    local_bucket: Path
    """The local copy of the bucket: logs under the day's prefix, the report under its own."""
    report_path: Path
    report_uri: str | None
    """``s3://`` URI of the uploaded report, or ``None`` when the bucket was not there."""
    records_generated: int
    objects: int
    summary: ReportSummary
    timings_s: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """One line per fact, for the main job's progress output."""
        figures = self.summary
        timings = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.timings_s.items())
        return [
            f"{self.records_generated} log records for {self.day:%Y-%m-%d} in {self.objects} "
            f"Firehose objects under {self.local_bucket / bucket_layout.day_prefix(self.day)}",
            f"report: {self.report_path}"
            + (f" (uploaded to {self.report_uri})" if self.report_uri else ""),
            f"deliveries {figures.deliveries}: failed {figures.failed}, retried "
            f"{figures.retried} (succeeded after retry {figures.succeeded_after_retry}), lost "
            f"{figures.lost}; records read {figures.records_read}, rejected "
            f"{figures.records_rejected}",
            f"timings: {timings}",
            *self.notes,
        ]


def sample_topology(topology: Topology) -> sample.SampleTopology:
    """The generator's topology for the topology's topics that have subscriptions."""
    topics = tuple(
        sample.SampleTopic(
            arn=topology.topic_arn(topic),
            subscriptions=tuple(
                _sample_subscription(topology, topic, subscription)
                for subscription in topic.subscriptions
            ),
            success_sample_rate=topic.success_sample_rate,
        )
        for topic in topology.log_streaming_topics
        if topic.subscriptions
    )
    if not topics:
        raise DeliveryLogsError(
            f"{topology.source}: topology.topics: no topic has subscriptions, so SNS would log "
            "no deliveries; add a topic with at least one entry in its subscriptions[]"
        )
    return sample.SampleTopology(topics=topics)


def _sample_subscription(
    topology: Topology, topic: Topic, subscription: TopicSubscription
) -> sample.SampleSubscription:
    """The subscription as the generator logs it; the topology's parser admits only the
    protocols :data:`SAMPLE_PROTOCOL` names."""
    profile = FAILURE_PROFILES[subscription.protocol]
    if subscription.endpoint is not None:
        cross_account = topology.endpoint(subscription.endpoint).account != topic.account
        profile = CROSS_ACCOUNT_SQS if cross_account else FAILURE_PROFILES["sqs"]
    return sample.SampleSubscription(
        SAMPLE_PROTOCOL[subscription.protocol],
        topology.subscription_target(subscription),
        failures=dict(profile.failures),
        retried_success_rate=profile.retried_success_rate,
        http_4xx_success_rate=profile.http_4xx_success_rate,
        delivery_policy=subscription.delivery_policy,
    )


def yesterday() -> date:
    """The previous UTC day: the one a daily run just after midnight analyses."""
    return bucket_layout.previous_day(datetime.now(UTC).isoformat())


def write_day(
    topology: Topology, local_bucket: Path, day: date, records: int, seed: int
) -> tuple[int, list[Path]]:
    """Generate ``records`` log records published on ``day`` and write them as Firehose
    objects under the local bucket, each under the day prefix of its arrival, as they are
    made (memory does not grow with ``records``); returns the number written and the
    objects."""
    if records < 1:
        raise DeliveryLogsError(f"records is {records}; generate at least 1 log record")
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    events = generate(
        records, seed, topology=sample_topology(topology), start=start, hours=PUBLISHING_HOURS
    )
    objects = write_firehose(
        events,
        local_bucket,
        random.Random(seed),
        FIREHOSE_BUFFER_BYTES,
        folder=lambda arrival: bucket_layout.day_prefix(arrival.date()),
    )
    return records, objects


class BucketMissingError(LookupError):
    """The analytics bucket is not in the local AWS; the message names it and its account."""


def analytics_bucket(analytics: AccountCredentials, endpoint_url: str) -> tuple[Any, str]:
    """An S3 client of the analytics account and its bucket's name; raises
    :class:`BucketMissingError` when the bucket is not in the local AWS."""
    s3 = analytics.session().client("s3", endpoint_url=endpoint_url)
    name = bucket_layout.bucket_name(analytics.account_id, analytics.region)
    try:
        s3.head_bucket(Bucket=name)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") not in {"404", "NoSuchBucket", "NotFound"}:
            raise
        raise BucketMissingError(
            f"bucket {name} is not in account {analytics.account_id} of the local AWS (is the "
            "analytics stack deployed?)"
        ) from error
    return s3, name


def run_job(logs: Path, output: Path, spark: SparkSession | None = None) -> job.JobResult:
    """The Spark job on the local logs.

    Without ``spark`` it runs on a ``local[*]`` session of its own, stopped afterwards, and
    when this call started the JVM the JVM is shut down too, so the main job's next steps do
    not share the machine with an idle JVM. A session already running (a caller's) is used and
    left running.
    """
    config = job.JobConfig(inputs=(str(logs),), output=str(output))
    if spark is not None:
        return job.run(spark, config)
    active = SparkSession.getActiveSession()
    if active is not None:
        return job.run(active, config)
    started_jvm = SparkContext._gateway is None
    session = job.build_session("local[*]", None, SPARK_APP_NAME)
    try:
        session.sparkContext.setLogLevel("ERROR")
        result = job.run(session, config)
    except BaseException as failure:
        # The job's own error is the one to report; a failing clean-up only adds to it.
        try:
            _stop(session, started_jvm)
        except Exception as cleanup:
            failure.add_note(f"stopping Spark afterwards failed too: {cleanup!r}")
        raise
    _stop(session, started_jvm)
    return result


def _stop(session: SparkSession, shut_down_jvm: bool) -> None:
    """Stop the session, and the JVM even when stopping the session failed."""
    try:
        session.stop()
    finally:
        if shut_down_jvm:
            _shut_down_jvm()


def _shut_down_jvm() -> None:
    """Close the gateway PySpark launched; the JVM exits when its standard input closes, and
    is killed when it does not within :data:`JVM_EXIT_SECONDS`."""
    gateway = SparkContext._gateway
    if gateway is None:
        return
    try:
        gateway.shutdown()
    finally:
        process = getattr(gateway, "proc", None)
        SparkContext._gateway = None
        SparkContext._jvm = None
        if process is not None:
            process.stdin.close()
            try:
                process.wait(timeout=JVM_EXIT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_delivery_logs(
    topology: Topology,
    local_bucket: Path,
    *,
    analytics: AccountCredentials | None = None,
    endpoint_url: str | None = None,
    day: date | None = None,
    records: int = DEFAULT_RECORDS,
    seed: int = DEFAULT_SEED,
    spark: SparkSession | None = None,
) -> DeliveryReport:
    """Logs for ``day`` (default: yesterday, UTC), uploaded to the analytics bucket of the
    ``analytics`` account when it is there, analysed by the Spark job, report uploaded.

    ``local_bucket`` becomes the local copy of the bucket (its day's logs and report are
    replaced). ``spark``: see :func:`run_job`.
    """
    if (analytics is None) != (endpoint_url is None):
        raise DeliveryLogsError(
            "analytics and endpoint_url go together: pass both to upload to the local AWS, or "
            "neither to keep everything local"
        )
    day = day or yesterday()
    timings: dict[str, float] = {}
    notes: list[str] = []
    logs = local_bucket / bucket_layout.day_prefix(day)
    reports = local_bucket / bucket_layout.report_prefix(day)
    shutil.rmtree(logs, ignore_errors=True)
    shutil.rmtree(reports, ignore_errors=True)

    started = time.perf_counter()
    generated, objects = write_day(topology, local_bucket, day, records, seed)
    timings["generate and write"] = time.perf_counter() - started
    late = [o for o in objects if not o.is_relative_to(logs)]
    if late:
        notes.append(
            f"{len(late)} object(s) arrived after {day:%Y-%m-%d}; the day's job skips them"
        )

    # The analytics bucket's S3 client and name, when the bucket is in the local AWS.
    uploads: tuple[Any, str] | None = None
    if analytics is not None and endpoint_url is not None:
        try:
            uploads = analytics_bucket(analytics, endpoint_url)
        except BucketMissingError as missing:
            notes.append(f"{missing}; logs and report stay under {local_bucket}")
    if uploads is not None:
        s3, bucket = uploads
        started = time.perf_counter()
        for path in objects:
            s3.upload_file(str(path), bucket, path.relative_to(local_bucket).as_posix())
        timings["upload logs"] = time.perf_counter() - started

    started = time.perf_counter()
    result = run_job(logs, reports, spark)
    timings["spark job"] = time.perf_counter() - started

    report_uri = None
    if uploads is not None:
        s3, bucket = uploads
        for name in (job.SUMMARY_FILE, job.REPORT_FILE):
            key = bucket_layout.report_prefix(day) + name
            s3.upload_file(str(reports / name), bucket, key)
        report_uri = f"s3://{bucket}/{bucket_layout.report_prefix(day)}{job.REPORT_FILE}"
    return DeliveryReport(
        day=day,
        local_bucket=local_bucket,
        report_path=reports / job.REPORT_FILE,
        report_uri=report_uri,
        records_generated=generated,
        objects=len(objects),
        summary=ReportSummary.from_summary(result.summary),
        timings_s=timings,
        notes=tuple(notes),
    )
