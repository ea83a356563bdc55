"""The app's synth refuses what AWS would refuse at deploy (a stack over CloudFormation's
resource or output limit here; every quota of ``docs/quotas.md`` alike), before any account
deploys, with one line naming the stack, the count, the limit and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import CfnOutput, CfnWaitConditionHandle, Environment, Stack

from stacks.app_builder import MessagingApp
from stacks.placement.placing import new_organization_plan
from stacks.placement.plan_file import AccountRecord, PlanFile, write_plan
from stacks.quotas import QuotaError
from stacks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES
from stacks.topology import parse_topology
from tests.stacks.app_process import run_app

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.synth

ENVIRONMENT = Environment(account="111111111111", region="us-east-1")
"""The app's stacks always name their account and region, which the quota gate reads."""


def test_a_template_over_either_limit_is_refused_with_one_line_per_limit(tmp_path: Path) -> None:
    # aws-cdk-lib would refuse 501 resources itself, from inside jsii; the app lifts its check.
    app = MessagingApp(outdir=str(tmp_path))
    stack = Stack(app, "Messaging-Big", env=ENVIRONMENT)
    for index in range(CLOUDFORMATION_RESOURCES.fixed + 1):
        CfnWaitConditionHandle(stack, f"Handle{index}")
    for index in range(CLOUDFORMATION_OUTPUTS.fixed + 1):
        CfnOutput(stack, f"Output{index}", value="x")
    with pytest.raises(QuotaError) as caught:
        app.synth()
    assert str(caught.value).splitlines() == [
        f"Messaging-Big.template.json: Messaging-Big: CloudFormation {what} per stack: "
        f"{limit + 1} > {limit} {what}; units not deployed yet go to another stack with "
        "`python -m stacks.placement recover`, which keeps every deployed unit where it is (a "
        f"deployed queue given another stack is left behind, Retain); or remove units{more}"
        for what, limit, more in (
            ("resources", 500, ', or share one KMS key per account ("keys": "perAccount")'),
            ("outputs", 200, ""),
        )
    ]


def test_a_template_within_the_limits_synthesizes(tmp_path: Path) -> None:
    app = MessagingApp(outdir=str(tmp_path))
    stack = Stack(app, "Messaging-Full", env=ENVIRONMENT)
    for index in range(CLOUDFORMATION_RESOURCES.fixed):
        CfnWaitConditionHandle(stack, f"Handle{index}")
    app.synth()
    template = json.loads((tmp_path / "Messaging-Full.template.json").read_text())
    assert len(template["Resources"]) == CLOUDFORMATION_RESOURCES.fixed


def test_app_py_refuses_a_recorded_stack_over_the_limit_in_one_line(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["endpoints"] += [{"name": f"E{i}", "account": "Billing"} for i in range(30)]
    topology_file = tmp_path / "org.json"
    topology_file.write_text(json.dumps(document))
    # Every unit recorded in its account's first stack: Billing's no longer fits.
    plan = PlanFile(topology_file)
    record = new_organization_plan(parse_topology(document)).record
    write_plan(
        plan,
        {
            account: AccountRecord(entry.account_id, 1, dict.fromkeys(entry.units, 1))
            for account, entry in record.items()
        },
    )
    result = run_app(topology_file, tmp_path / "out")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"{plan.path}: account Billing: stack Messaging-Billing would hold ")
    assert "resources, over CloudFormation's 500: its units grew in place" in line
    assert not list((tmp_path / "out").glob("*.template.json"))
