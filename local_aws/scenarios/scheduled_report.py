"""The scheduled delivery report on the day the conversations ran, and SNS's own count beside it.

The sample day (:mod:`local_aws.scenarios.delivery_logs`) shows the job at scale on generated
records; this module shows it on the truth: the delivery-status records the local SNS wrote
during the conversations, carried by the deployed export pipeline (subscription filters, the
analytics account's destination, Firehose) to the analytics bucket. The job runs as the
deployed schedule starts it on EMR Serverless: its own entry script (``spark_entry.py``) with
the ``EntryPointArguments`` read from the deployed template, the scheduled time the next
morning's run would get. Hadoop's S3 connector is not installed locally, so the one argument
changed is ``--bucket``: a local copy of the bucket holding exactly the day's log prefix,
downloaded from the local S3; the summary and HTML report are uploaded where the stacks put them
(:mod:`cross_account_runtime.delivery_report.bucket_paths`).

The report's counts are then set beside the local SNS's ledger of the deliveries it made
(:func:`local_aws.moto.delivery_status.sns_deliveries`): with a success sample rate of 100 the
two must be equal for every logged protocol, or the pipeline lost, duplicated or invented a
record on the way.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from cross_account_runtime.delivery_report import bucket_paths as bucket_layout
from cross_account_runtime.delivery_report import job
from local_aws.accounts import AccountCredentials
from local_aws.moto.delivery_status import logged_protocol, sns_deliveries
from local_aws.moto.firehose_s3 import age_firehose_buffers
from local_aws.moto.sns_http_deliveries import age_http_retries, http_attempts
from local_aws.scenarios.delivery_logs import analytics_bucket
from stacks.topology import Topology

SCHEDULED_TIME = "<aws.scheduler.scheduled-time>"
"""EventBridge Scheduler's context attribute the schedule passes as ``--scheduled-time``."""
SCHEDULE_TYPE = "AWS::Scheduler::Schedule"
START_JOB_RUN = ":scheduler:::aws-sdk:emrserverless:startJobRun"
FIREHOSE_AGE_SECONDS = 3600.0
"""More than Firehose's longest buffering interval (900 s): every buffer is written."""
ENTRY_SCRIPT = (
    Path(__file__).resolve().parents[2]
    / "runtime"
    / "cross_account_runtime"
    / "delivery_report"
    / "spark_entry.py"
)
"""The job's entry script, the file the deployed schedule's ``EntryPoint`` asset holds."""
COMPARED = ("deliveries", "successes", "failures", "retried", "retried_succeeded", "http_4xx")
"""The ledger's counts the report also counts (attempts it does not split by destination)."""
HTTP_RETRY_AGE_SECONDS = 3600.0
"""SNS's longest HTTP/S retry schedule: every delivery has its last attempt by then."""

Runner = Callable[[Sequence[str]], int]
"""Runs the entry script with arguments; its exit code."""


class ScheduledReportError(RuntimeError):
    """The scheduled run could not be played, or its report differs from SNS's ledger."""


@dataclass(frozen=True)
class DeployedSchedule:
    """The deployed schedule of the report job, as its template says it."""

    stack: str
    expression: str
    arguments: tuple[str, ...]
    """``EntryPointArguments``, the scheduled time still the scheduler's placeholder."""

    def argument(self, flag: str) -> str:
        """The value after ``flag``."""
        return self.arguments[self.arguments.index(flag) + 1]

    def scheduled_time(self, day: date) -> str:
        """The scheduled time of the run that analyses ``day``: the next day, at the cron
        expression's minute and hour (UTC, as the schedule says)."""
        found = re.fullmatch(r"cron\((\d+) (\d+) .*\)", self.expression)
        if found is None:
            raise ScheduledReportError(
                f"{self.stack}: schedule {self.expression!r} is not a daily cron(M H ...) one"
            )
        minute, hour = int(found.group(1)), int(found.group(2))
        moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
        return f"{moment + timedelta(days=1):%Y-%m-%dT%H:%M:%SZ}"


def _resolve(value: Any, resources: Mapping[str, Any]) -> str:
    """A template string value: a ``Fn::Join`` of strings, a bucket's ``Ref`` as its name
    (the stacks name their buckets), any other ``Ref`` or ``Fn::GetAtt`` as a placeholder."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(_resolve(part, resources) for part in parts)
    if isinstance(value, dict) and "Ref" in value:
        properties = resources.get(value["Ref"], {}).get("Properties", {})
        name = properties.get("BucketName")
        return name if isinstance(name, str) else f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return f"<{'.'.join(str(part) for part in value['Fn::GetAtt'])}>"
    # Inside the JSON of a target's input: no quote or backslash may come out.
    return "<unresolved>"


def deployed_schedule(assembly: Path) -> DeployedSchedule:
    """The report job's schedule in the assembly's templates (the ones deployed): the
    schedule whose target is EMR Serverless's ``StartJobRun``."""
    for template_path in sorted(assembly.glob("*.template.json")):
        template = json.loads(template_path.read_text(encoding="utf-8"))
        resources: dict[str, Any] = template.get("Resources", {})
        for resource in resources.values():
            if resource.get("Type") != SCHEDULE_TYPE:
                continue
            properties = resource["Properties"]
            target = properties["Target"]
            if not _resolve(target["Arn"], resources).endswith(START_JOB_RUN):
                continue
            request = json.loads(_resolve(target["Input"], resources))
            arguments = request["JobDriver"]["SparkSubmit"]["EntryPointArguments"]
            return DeployedSchedule(
                stack=template_path.name.removesuffix(".template.json"),
                expression=str(properties["ScheduleExpression"]),
                arguments=tuple(str(a) for a in arguments),
            )
    raise ScheduledReportError(f"{assembly}: no template has the report job's schedule")


def run_entry_script(arguments: Sequence[str]) -> int:
    """The entry script in a process of its own, as ``spark-submit`` runs it (its Spark
    session, its JVM, gone when it exits)."""
    return subprocess.run([sys.executable, str(ENTRY_SCRIPT), *arguments], check=False).returncode


@dataclass(frozen=True)
class Comparison:
    """One subscription's deliveries: SNS's ledger beside the report's counts."""

    topic: str
    protocol: str
    destination: str
    subscription: str
    ledger: Mapping[str, int]
    report: Mapping[str, int]

    @property
    def differences(self) -> list[str]:
        """Each count that differs, named."""
        return [
            f"{name} {self.ledger.get(name, 0)} != {self.report.get(name, 0)}"
            for name in COMPARED
            if self.ledger.get(name, 0) != self.report.get(name, 0)
        ]

    def line(self) -> str:
        """The two columns side by side."""
        sns = ", ".join(f"{name} {self.ledger.get(name, 0)}" for name in (*COMPARED, "attempts"))
        report = ", ".join(f"{name} {self.report.get(name, 0)}" for name in COMPARED)
        verdict = "equal" if not self.differences else "DIFFERS: " + "; ".join(self.differences)
        name = self.topic.rsplit(":", 1)[-1]
        return (
            f"{name} -> {self.destination} ({self.protocol}): SNS ledger [{sns}] | "
            f"report [{report}] | {verdict}"
        )


def compare(
    ledger: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], topics: frozenset[str]
) -> list[Comparison]:
    """Every subscription of the ledger over a logged protocol of one of ``topics`` (those
    whose logs stream to the analytics bucket; the local AWS may hold others, whose records
    the report cannot see), and every one of the report, matched on topic, protocol and
    destination."""
    retried = {
        (str(row["topic"]), str(row["destination"])): row
        for row in summary["retries"]["by_destination"]
    }
    answered_4xx = {
        (str(row["topic"]), str(row["destination"])): int(row["count"])
        for row in summary["http_4xx_success"]["by_destination"]
    }
    reported: dict[tuple[str, str, str], dict[str, int]] = {}
    for row in summary["deliveries"]["by_destination"]:
        key = (str(row["topic"]), str(row["protocol"]), str(row["destination"]))
        retries = retried.get((key[0], key[2]), {})
        reported[key] = {
            "deliveries": int(row.get("total", 0)),
            "successes": int(row.get("SUCCESS", 0)),
            "failures": int(row.get("FAILURE", 0)),
            "retried": int(retries.get("total", 0)),
            "retried_succeeded": int(retries.get("SUCCESS", 0)),
            "http_4xx": answered_4xx.get((key[0], key[2]), 0),
        }
    counted: dict[tuple[str, str, str], tuple[str, dict[str, int]]] = {}
    for row in ledger:
        if row["topic"] not in topics:
            continue
        key = (str(row["topic"]), logged_protocol(str(row["protocol"])), str(row["destination"]))
        counts = {name: int(row[name]) for name in (*COMPARED, "attempts")}
        counted[key] = (str(row["subscription"]), counts)
    return [
        Comparison(
            topic=key[0],
            protocol=key[1],
            destination=key[2],
            subscription=counted.get(key, ("(not in SNS's ledger)", {}))[0],
            ledger=counted.get(key, ("", {}))[1],
            report=reported.get(key, {}),
        )
        for key in sorted(set(counted) | set(reported))
    ]


@dataclass(frozen=True)
class ScheduledReport:
    """What the scheduled run read and wrote, and the ledger beside its counts."""

    day: date
    schedule: DeployedSchedule
    arguments: tuple[str, ...]
    local_copy: Path
    objects: int
    written_by_firehose: int
    report_uri: str
    comparisons: tuple[Comparison, ...]
    http_attempts: tuple[Mapping[str, Any], ...]
    """Every HTTP/S attempt the local SNS made for the compared topics, in order."""

    def _attempt_lines(self) -> list[str]:
        """The HTTP/S attempts, per endpoint and message, as the local SNS made them."""
        if not self.http_attempts:
            return []
        numbers: dict[str, int] = {}
        lines = [f"HTTP/S attempts by the local SNS ({len(self.http_attempts)}, local seconds):"]
        endpoint = None
        for attempt in self.http_attempts:
            if attempt["endpoint"] != endpoint:
                endpoint = attempt["endpoint"]
                lines.append(f" {endpoint}:")
            number = numbers.setdefault(attempt["message_id"], len(numbers) + 1)
            lines.append(_attempt_line(attempt, number))
        return lines

    def lines(self) -> list[str]:
        """One line per fact, for the main job's progress output."""
        return [
            f"Firehose buffers aged: {self.written_by_firehose} object(s) written",
            f"deployed schedule ({self.schedule.stack}, {self.schedule.expression}): "
            f"spark_entry.py {' '.join(self.schedule.arguments)}",
            f"run for {self.day:%Y-%m-%d} as spark_entry.py {' '.join(self.arguments)}",
            f"(Hadoop's S3 connector is not installed locally: --bucket is a local copy of "
            f"{self.schedule.argument('--bucket')}/{bucket_layout.day_prefix(self.day)}, "
            f"{self.objects} object(s) downloaded from the local S3)",
            f"report uploaded to {self.report_uri}",
            *self._attempt_lines(),
            "ground truth (the local SNS's ledger) beside the report, per subscription:",
            *(f"  {c.line()}" for c in self.comparisons),
        ]


def _attempt_line(attempt: Mapping[str, Any], message_number: int) -> str:
    code = attempt["status_code"] if attempt["status_code"] is not None else "no answer"
    return (
        f"  message {message_number} attempt {attempt['attempt']} at "
        f"+{attempt['at_seconds']:g} s: {code} ({attempt['provider_response']}) -> "
        f"{attempt['result']}"
    )


def publish_events(
    topology: Topology,
    deployed: Mapping[str, AccountCredentials],
    endpoint_url: str,
    count: int,
) -> dict[str, int]:
    """``count`` more events published to each topic whose logs stream to the analytics
    account and that has subscriptions, by its own account: the rest of the day's traffic."""
    published: dict[str, int] = {}
    for topic in topology.log_streaming_topics:
        if not topic.subscriptions:
            continue
        arn = topology.topic_arn(topic)
        sns = deployed[topic.account].session().client("sns", endpoint_url=endpoint_url)
        for number in range(count):
            sns.publish(TopicArn=arn, Message=json.dumps({"event": number + 1}))
        published[arn] = count
    return published


def download_day(s3: Any, bucket: str, day: date, local_copy: Path) -> int:
    """Exactly the day's log prefix of the bucket, under the same keys in ``local_copy``."""
    prefix = bucket_layout.day_prefix(day)
    shutil.rmtree(local_copy, ignore_errors=True)
    count = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for entry in page.get("Contents", []):
            target = local_copy / entry["Key"]
            target.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(bucket, entry["Key"], str(target))
            count += 1
    return count


def run_scheduled_report(
    assembly: Path,
    analytics: AccountCredentials,
    endpoint_url: str,
    local_copy: Path,
    topics: frozenset[str],
    *,
    day: date | None = None,
    runner: Runner = run_entry_script,
) -> ScheduledReport:
    """Age Firehose's buffers, run the job as the deployed schedule would the morning after
    ``day`` (default: today, UTC: the conversations' day) on a local copy of the day's prefix,
    upload its report, and compare its counts with SNS's ledger of ``topics`` (the ARNs of
    the topics whose logs stream to the analytics account); raises
    :class:`ScheduledReportError` when the job fails or a count differs."""
    day = day or datetime.now(UTC).date()
    # Every HTTP/S delivery to its last attempt, so that its record is written, then every
    # Firehose buffer to S3.
    age_http_retries(endpoint_url, 0)
    age_http_retries(endpoint_url, HTTP_RETRY_AGE_SECONDS)
    written = age_firehose_buffers(endpoint_url, FIREHOSE_AGE_SECONDS)
    schedule = deployed_schedule(assembly)
    s3, bucket = analytics_bucket(analytics, endpoint_url)
    if schedule.argument("--bucket") != f"s3://{bucket}":
        raise ScheduledReportError(
            f"the schedule reads {schedule.argument('--bucket')}, the analytics bucket is "
            f"s3://{bucket}"
        )
    objects = download_day(s3, bucket, day, local_copy)
    arguments = tuple(
        str(local_copy)
        if argument == schedule.argument("--bucket")
        else schedule.scheduled_time(day)
        if argument == SCHEDULED_TIME
        else argument
        for argument in schedule.arguments
    )
    code = runner(arguments)
    if code != 0:
        raise ScheduledReportError(f"spark_entry.py {' '.join(arguments)} exited with {code}")
    reports = local_copy / bucket_layout.report_prefix(day)
    for name in (job.SUMMARY_FILE, job.REPORT_FILE):
        s3.upload_file(str(reports / name), bucket, bucket_layout.report_prefix(day) + name)
    summary = json.loads((reports / job.SUMMARY_FILE).read_text(encoding="utf-8"))
    comparisons = tuple(compare(sns_deliveries(endpoint_url), summary, topics))
    result = ScheduledReport(
        day=day,
        schedule=schedule,
        arguments=arguments,
        local_copy=local_copy,
        objects=objects,
        written_by_firehose=written,
        report_uri=f"s3://{bucket}/{bucket_layout.report_prefix(day)}{job.REPORT_FILE}",
        comparisons=comparisons,
        http_attempts=tuple(a for a in http_attempts(endpoint_url) if a["topic"] in topics),
    )
    differing = [c for c in comparisons if c.differences]
    if differing or not comparisons:
        raise ScheduledReportError(
            "\n".join(
                [*result.lines(), "the report differs from SNS's ledger:"]
                + [f"  {c.line()}" for c in differing]
                + ([] if comparisons else ["  no SNS delivery of a logged protocol"])
            )
        )
    return result
