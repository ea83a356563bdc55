"""The gates pass the example app and catch what they are for: cdk-nag fails the synth of an
insecure resource (AwsSolutions) or of one that loses messages (MessagingChecks), the quota gate a template over an AWS quota, cfn-lint a template
CloudFormation would refuse; each names every problem on a line of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from cdk_nag import NagRuleCompliance

from constructs_lib import MessagingChecks
from constructs_lib.messaging_checks import RULES
from constructs_lib.messaging_checks._rule import Subject
from constructs_lib.messaging_checks._template import StackTemplate
from stacks.app_builder import build_app
from stacks.checks import gates
from stacks.placement.placing import new_organization_plan
from stacks.quotas import QuotaError, quota_problems, require_within_quotas
from stacks.topology import parse_topology
from tests.stacks.quotas.assemblies import (
    policy,
    resource,
    resources,
    statement,
    write_assembly,
)

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.synth


def test_cdk_nag_reports_no_unacknowledged_finding(example_assembly: Path) -> None:
    report = json.loads((example_assembly / "validation-report.json").read_text())
    assert [r for r in report["pluginReports"] if r.get("violations")] == []


def test_cdk_nag_fails_the_synth_of_an_insecure_queue(tmp_path: Path) -> None:
    topology = parse_topology(json.loads((ROOT / "cdk.json").read_text())["context"]["topology"])
    app = build_app(topology, new_organization_plan(topology), outdir=str(tmp_path))
    sqs.Queue(Stack(app, "Insecure"), "NoDlqNoTls")
    with pytest.raises(RuntimeError, match="AwsSolutions-SQS4") as failed:
        app.synth()
    problems = gates.synth_problems(str(failed.value), tmp_path / "validation-report.json")
    assert [p.split(": ", 2)[:2] for p in problems] == [
        ["Insecure/NoDlqNoTls/Resource", "AwsSolutions-SQS3"],
        ["Insecure/NoDlqNoTls/Resource", "AwsSolutions-SQS4"],
    ]


def test_messaging_checks_judge_the_examples_subscriptions_and_find_nothing(
    example_assembly: Path,
) -> None:
    """The gate's synth ran MessagingChecks (it reports nothing when all is well): its rules,
    run again on the example's templates, find every subscription's queue, key and
    dead-letter queue in the template and admitting, and nothing non-compliant."""
    manifest = json.loads((example_assembly / "manifest.json").read_text())
    verdicts: dict[str, set[NagRuleCompliance]] = {rule.rule_id: set() for rule in RULES}
    for artifact in manifest["artifacts"].values():
        if artifact["type"] != "aws:cloudformation:stack":
            continue
        _, account, region = artifact["environment"].rsplit("/", 2)
        document = json.loads(
            (example_assembly / artifact["properties"]["templateFile"]).read_text()
        )
        template = StackTemplate.of(document, account=account, region=region)
        for rule in RULES:
            for logical_id in template.of_type(rule.resource_type):
                verdicts[rule.rule_id].add(rule.check(Subject(template, logical_id, 5)))
    assert all(NagRuleCompliance.NON_COMPLIANT not in found for found in verdicts.values())
    compliant = {rule for rule, found in verdicts.items() if NagRuleCompliance.COMPLIANT in found}
    assert compliant == set(verdicts)


def test_messaging_checks_fail_the_gate_with_a_line_per_finding(tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "Team")
    queue = sqs.Queue(stack, "Queue", enforce_ssl=True)
    sns.Subscription(
        stack,
        "Unlogged",
        topic=sns.Topic(stack, "Topic"),
        endpoint=queue.queue_arn,
        protocol=sns.SubscriptionProtocol.SQS,
    )
    Validations.of(app).add_plugins(MessagingChecks(app, verbose=True))
    with pytest.raises(gates.GateError) as refused:
        gates.synth_checked(app, tmp_path)
    assert sorted(p.split(": ", 2)[:2] for p in refused.value.problems) == [
        ["Team/Topic/Resource", "Messaging-TopicDeliveryLogging"],
        ["Team/Unlogged/Resource", "Messaging-SubscriptionDlq"],
        ["Team/Unlogged/Resource", "Messaging-SubscriptionQueuePolicy"],
    ]


def test_the_example_is_within_every_aws_quota(example_assembly: Path) -> None:
    assert quota_problems(example_assembly) == []


def test_the_quota_gate_refuses_with_a_line_per_problem(tmp_path: Path) -> None:
    document = policy(*(statement(Sid=f"Grant{i}") for i in range(21)))
    crowded = resources(Policy=resource("AWS::SQS::QueuePolicy", PolicyDocument=document))
    write_assembly(tmp_path, {"Stack": crowded, "Stack2": crowded})
    with pytest.raises(QuotaError) as refused:
        require_within_quotas(tmp_path)
    lines = str(refused.value).splitlines()
    assert lines == refused.value.problems
    assert [line.split(": ", 3)[:3] for line in lines] == [
        ["Stack.template.json", "Policy", "SQS queue policy statements"],
        ["Stack2.template.json", "Policy", "SQS queue policy statements"],
    ]


def test_cfn_lint_finds_nothing(example_assembly: Path) -> None:
    assert gates.cfn_lint(example_assembly) == []


def test_cfn_lint_gate_reports_findings(tmp_path: Path) -> None:
    bad = {
        "Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": 7, "Bogus": 1}}}
    }
    (tmp_path / "Bad.template.json").write_text(json.dumps(bad))
    with pytest.raises(gates.GateError, match="E3002"):
        gates.require_clean_cfn_lint(tmp_path)
