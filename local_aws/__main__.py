"""The main job: synth, gates, deploy every account to the local AWS, traffic, the scheduled
delivery report on the traffic's day beside SNS's own count, the report at scale on a sample
day, the access report.

``python -m local_aws [--topology FILE] [--out DIR] [--log-records N]`` (the README's first
command runs it through ``scripts/run.sh``). Each step prints its progress; a failure names the
step and why, and the local AWS (and the Spark JVM) are stopped on every path.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from local_aws.accounts import AccountCredentials
from local_aws.deployment import deploy_all, pre_deploy_check
from local_aws.inventory import read_inventory
from local_aws.moto.server import MotoServer
from local_aws.moto.sns_http_deliveries import map_http_host
from local_aws.scenarios.delivery_logs import DEFAULT_RECORDS, run_delivery_logs
from local_aws.scenarios.partner import PartnerScript, StandInPartner, http_hosts
from local_aws.scenarios.scheduled_report import publish_events, run_scheduled_report
from local_aws.scenarios.traffic import run_traffic
from stacks.checks import access_report, gates
from stacks.placement.deployed import deployed_units
from stacks.placement.placing import recover
from stacks.placement.plan import StackPlan, committed_plan
from stacks.placement.plan_file import PlanFile
from stacks.topology import Topology, TopologyError, load_topology
from stacks.topology.parsing import CDK_JSON

T = TypeVar("T")

PARTNER_SEED = 7
"""Seeds the stand-in partner's answers: the same 5xx and 4xx in every run."""
DAY_EVENTS = 6
"""Events published to each logged topic after the conversations: the rest of the day."""


class StepFailedError(RuntimeError):
    """A step of the job failed; the message names the step."""


def step(number: int, total: int, title: str, action: Callable[[], T]) -> T:
    """Run one step with visible progress and a failure that names it."""
    print(f"[{number}/{total}] {title} ...", flush=True)
    started = time.monotonic()
    try:
        result = action()
    except Exception as error:
        raise StepFailedError(f"step {number}/{total} '{title}' failed: {error}") from error
    print(f"[{number}/{total}] {title}: done in {time.monotonic() - started:.1f} s", flush=True)
    return result


def _indent(line: str) -> None:
    print(f"      {line}", flush=True)


def run(topology_file: Path, out: Path, log_records: int = DEFAULT_RECORDS) -> int:
    """Run every step; return the process exit code."""
    total = 9
    plan_file = PlanFile(topology_file)

    def validate() -> tuple[Topology, StackPlan]:
        topology = load_topology(topology_file)
        plan = committed_plan(topology, plan_file)
        _indent(f"{len(plan.stacks)} messaging stacks as {plan.source} records them")
        return topology, plan

    topology, plan = step(
        1, total, f"validate topology {topology_file} and its committed stack plan", validate
    )
    assembly = out / "cdk.out"
    shutil.rmtree(assembly, ignore_errors=True)
    step(
        2,
        total,
        "synth with cdk-nag (AwsSolutions, MessagingChecks), through the committed plan",
        lambda: gates.synth(topology, plan, assembly),
    )
    step(3, total, "cfn-lint every template", lambda: gates.require_clean_cfn_lint(assembly))
    with (
        MotoServer(out / "moto.log") as moto,
        StandInPartner(PartnerScript(PARTNER_SEED)) as partner,
    ):
        print(f"      local AWS (moto) at {moto.endpoint_url}", flush=True)
        for host in http_hosts(topology):
            map_http_host(moto.endpoint_url, host, partner.url)
            print(
                f"      {host}: a stand-in partner at {partner.url}, for the local SNS only",
                flush=True,
            )
        deployed = step(
            4,
            total,
            "cdk bootstrap, the pre-deploy check, cdk deploy per account",
            lambda: deploy_all(topology, assembly, moto.endpoint_url, echo=_indent),
        )

        def inventory() -> None:
            for name, credentials in deployed.items():
                found = read_inventory(credentials, moto.endpoint_url)
                print(f"      account {name} ({found.account_id}): stacks {found.stacks}")
                for queue in found.queues:
                    redrive = (
                        f" -> DLQ {queue.dead_letter_target} after {queue.max_receive_count} receives"
                        if queue.dead_letter_target
                        else ""
                    )
                    print(f"        queue {queue.arn} (KMS {queue.kms_key}){redrive}")
                print(f"        KMS keys: {len(found.key_ids)}")
                for topic in found.topic_arns:
                    print(f"        topic {topic}")
                for group in found.log_groups:
                    print(f"        log group {group}")
                for bucket in found.buckets:
                    print(f"        bucket {bucket}")
                for stream in found.delivery_streams:
                    print(f"        Firehose stream {stream}")
                for application in found.spark_applications:
                    print(f"        EMR Serverless application {application}")
                for function in found.functions:
                    print(
                        f"        function {function.name} ({function.handler}, "
                        f"{function.event_sources} event source(s))"
                    )
                rebuilt = _rebuilt_plan(
                    topology,
                    plan,
                    plan_file,
                    name,
                    credentials=credentials,
                    endpoint_url=moto.endpoint_url,
                )
                print(f"        {rebuilt}")
            # The same assembly again, as a second deploy would meet it: everything stays.
            for result in pre_deploy_check(assembly, deployed.values(), moto.endpoint_url):
                _indent(f"pre-deploy check of a second deploy: {result.lines()[0]}")
                if not result.passed:
                    raise RuntimeError("\n".join(result.problems))

        step(5, total, "read back what was deployed, and the plan it rebuilds", inventory)

        def traffic() -> None:
            for line in run_traffic(topology, deployed, moto.endpoint_url).lines():
                _indent(line)

        step(
            6,
            total,
            "NServiceBus peers (released transport model) talk through the account bridge: "
            "subscribe messages, requests and replies, a failure retried from ServiceControl, "
            "a 20-minute delay, a 1.5 MiB body through S3; the publisher publishes the event; "
            "audit, heartbeats, custom checks and metrics reach ServiceControl, an expired "
            "heartbeat is not delivered, an inline megabyte and a poison message cross",
            traffic,
        )

        def scheduled_report() -> None:
            analytics = topology.analytics
            if analytics is None:
                _indent("no analytics account in the topology: no scheduled report")
                return
            for arn, count in publish_events(
                topology, deployed, moto.endpoint_url, DAY_EVENTS
            ).items():
                _indent(f"the rest of the day: {count} more event(s) published to {arn}")
            confirmed = len(partner.confirmations())
            _indent(f"the stand-in partner confirmed {confirmed} subscription(s) via SubscribeURL")
            result = run_scheduled_report(
                assembly,
                deployed[analytics.account],
                moto.endpoint_url,
                out / "scheduled-report-bucket",
                frozenset(topology.topic_arn(t) for t in topology.log_streaming_topics),
            )
            for line in result.lines():
                _indent(line)

        step(
            7,
            total,
            "the scheduled job on the conversations' day, as EMR Serverless runs it (its entry "
            "script, the deployed schedule's arguments) after Firehose wrote the day's "
            "delivery-status records, beside the local SNS's own count of its deliveries",
            scheduled_report,
        )

        def delivery_report() -> None:
            analytics = topology.analytics
            report = run_delivery_logs(
                topology,
                out / "delivery-log-bucket",
                analytics=deployed[analytics.account] if analytics else None,
                endpoint_url=moto.endpoint_url if analytics else None,
                records=log_records,
            )
            for line in report.lines():
                _indent(line)

        step(
            8,
            total,
            "scale, not truth: a generated sample day of delivery logs (Firehose layout) and "
            "the Spark report on it",
            delivery_report,
        )

    def report() -> None:
        for line in write_access_report(assembly, out, topology, plan):
            _indent(line)

    step(9, total, "access report", report)
    return 0


def write_access_report(
    assembly: Path, out: Path, topology: Topology, plan: StackPlan
) -> list[str]:
    """Write the access report of ``assembly`` to ``out`` (``access-report.json`` and
    ``access-report.md``) and return its summary to print: per account its grants, whether the
    report equals the topology's intent, and where the full report is. The full report is a
    table per queue and topic, hundreds of lines a reviewer reads in the file, not on screen."""
    result = access_report.build_report(assembly)
    json_path, markdown_path = out / "access-report.json", out / "access-report.md"
    json_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    markdown_path.write_text(access_report.to_markdown(result), encoding="utf-8")
    summary = access_report.summarize(result, topology, plan)
    return access_report.summary_lines(summary, str(markdown_path), str(json_path))


def _rebuilt_plan(
    topology: Topology,
    plan: StackPlan,
    plan_file: PlanFile,
    account: str,
    *,
    credentials: AccountCredentials,
    endpoint_url: str,
) -> str:
    """What ``recover`` rebuilds of the account's plan from its deployed stacks, compared with
    the committed plan: the deployed organization must say the same."""
    _, deployed = deployed_units(
        credentials.session(), topology, topology.account(account), endpoint_url=endpoint_url
    )
    rebuilt = recover(topology, plan.record, plan_file, account, deployed).record[account]
    if rebuilt != plan.record[account]:
        raise RuntimeError(
            f"the plan rebuilt from {account}'s deployed stacks differs from {plan.source}: "
            f"{rebuilt} != {plan.record[account]}"
        )
    return (
        f"plan rebuilt from the deployed stacks: {len(rebuilt.units)} units in "
        f"{rebuilt.stacks} stack(s), as {plan_file.path.name} records them"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the job; exit non-zero with the failing step on error."""
    parser = argparse.ArgumentParser(prog="python -m local_aws", description=__doc__)
    parser.add_argument(
        "--topology",
        type=Path,
        default=CDK_JSON,
        help="topology JSON (default: cdk.json's context)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("out"), help="where the assembly, logs and reports go"
    )
    parser.add_argument(
        "--log-records",
        type=int,
        default=DEFAULT_RECORDS,
        help=f"delivery-log records to generate for the day (default {DEFAULT_RECORDS})",
    )
    args = parser.parse_args(argv)
    if args.log_records < 1:
        parser.error("--log-records: must be at least 1")
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        return run(args.topology, args.out.resolve(), args.log_records)
    except StepFailedError as error:
        cause = error.__cause__
        if isinstance(cause, TopologyError):
            print(str(cause), file=sys.stderr)
        print(f"FAILED: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
