"""An account's units in several stacks: each stack builds what the plan gives it (its own
relays, their roles numbered by the stack), references the account's other stacks by computed
names, deploys after the stacks holding the topics it subscribes to, and holds exactly the
resources and outputs the plan counted for it."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.message_body_bucket import BODY_KEY_ALIAS
from local_aws.cdk_cli import CDK_BIN
from stacks.app_builder import build_app
from stacks.placement.placing import new_organization_plan
from stacks.placement.plan import StackPlan, stack_plan
from stacks.placement.plan_file import AccountRecord, PlanFile
from stacks.topology import Topology, parse_topology
from stacks.topology.stack_ids import account_stacks_pattern

pytestmark = pytest.mark.synth

SALES_TOPIC = "topic:MyCompany-Messages-OrderBilled"
"""Sales' anchor topic, which its Shipping endpoint subscribes to."""
MOVED = {
    "Sales": {SALES_TOPIC: 2, "shadow:Billing": 2},
    "Billing": {"ingress:Billing": 2},
}
"""Entries given a second stack: Sales' topic away from its subscriber, Sales' shadow of Billing
away from Sales' body bucket, Billing's ingress queue away from everything else of Billing."""


@pytest.fixture(scope="module", params=["perQueue", "perAccount"])
def topology(example_document: dict[str, Any], request: pytest.FixtureRequest) -> Topology:
    """The example with a key per queue group, and with one key per stack shared by its queues
    (which each stack holding queues then has, under its own alias)."""
    return parse_topology({**copy.deepcopy(example_document), "keys": request.param})


@pytest.fixture(scope="module")
def plan(topology: Topology) -> StackPlan:
    record = dict(new_organization_plan(topology).record)
    for account, entries in MOVED.items():
        units = {**record[account].units, **entries}
        record[account] = AccountRecord(record[account].account_id, 2, units)
    return stack_plan(topology, record, PlanFile())


@pytest.fixture(scope="module")
def assembly(topology: Topology, plan: StackPlan, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Synthesized with cdk-nag attached, which fails synth on any finding."""
    outdir = tmp_path_factory.mktemp("split") / "cdk.out"
    build_app(topology, plan, outdir=str(outdir)).synth()
    return outdir


def _manifest(assembly: Path) -> dict[str, Any]:
    artifacts: dict[str, Any] = json.loads((assembly / "manifest.json").read_text())["artifacts"]
    return artifacts


def _template(assembly: Path, stack: str) -> dict[str, Any]:
    template: dict[str, Any] = json.loads((assembly / f"{stack}.template.json").read_text())
    return template


def _role_names(template: dict[str, Any]) -> set[str]:
    return {
        r["Properties"]["RoleName"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Role" and "RoleName" in r["Properties"]
    }


def test_an_account_s_stacks_are_numbered_after_its_first(assembly: Path) -> None:
    stacks = {n for n, a in _manifest(assembly).items() if a["type"] == "aws:cloudformation:stack"}
    assert stacks == {
        "Messaging-Sales",
        "Messaging-Sales-2",
        "Messaging-Billing",
        "Messaging-Billing-2",
        "Messaging-Ops",
        "DeliveryLogs-Ops",
    }


def test_a_stack_deploys_after_the_stacks_holding_the_topics_its_queues_subscribe_to(
    assembly: Path,
) -> None:
    needs = {
        name: set(a.get("dependencies", ())) - {f"{name}.assets"}
        for name, a in _manifest(assembly).items()
        if a["type"] == "aws:cloudformation:stack"
    }
    # Shipping subscribes to the anchor topic of its own account, now in Sales' second stack;
    # Sales to Billing's topic, whose log groups stream to the analytics stack.
    assert needs["Messaging-Sales"] == {"Messaging-Sales-2", "Messaging-Billing"}
    assert needs["Messaging-Billing"] == {"DeliveryLogs-Ops"}
    assert needs["Messaging-Sales-2"] == needs["Messaging-Billing-2"] == set()


def test_every_stack_holding_shadows_or_ingress_queues_has_its_own_numbered_relay(
    assembly: Path,
) -> None:
    roles = {
        stack: _role_names(_template(assembly, stack))
        for stack in ("Messaging-Sales", "Messaging-Sales-2", "Messaging-Billing")
    }
    assert roles["Messaging-Sales"] == {
        "messaging-relay-outbound-Sales",
        "messaging-relay-inbound-Sales",
    }
    assert roles["Messaging-Sales-2"] == {"messaging-relay-outbound-Sales-2"}
    assert roles["Messaging-Billing"] == {"messaging-relay-outbound-Billing"}
    assert "messaging-relay-inbound-Billing-2" in _role_names(
        _template(assembly, "Messaging-Billing-2")
    )


def test_the_ingress_queue_and_the_body_bucket_admit_the_relay_of_the_stack_holding_the_shadow(
    assembly: Path,
) -> None:
    sales_2 = "arn:aws:iam::111111111111:role/messaging-relay-outbound-Sales-2"
    for stack, policy in (
        ("Messaging-Billing-2", "AWS::SQS::QueuePolicy"),
        ("Messaging-Billing", "AWS::S3::BucketPolicy"),
    ):
        roles = [
            role
            for resource in _template(assembly, stack)["Resources"].values()
            if resource["Type"] == policy
            for statement in resource["Properties"]["PolicyDocument"]["Statement"]
            for role in statement.get("Condition", {})
            .get("ArnEquals", {})
            .get("aws:PrincipalArn", [])
        ]
        # The relay of Sales' second stack, which holds the shadow of Billing; not Sales' first.
        assert sales_2 in roles, (stack, roles)
        assert sales_2.removesuffix("-2") not in roles, (stack, roles)


def test_a_relay_reads_its_account_s_body_bucket_of_another_stack_by_name(assembly: Path) -> None:
    policies = json.dumps(
        [
            r["Properties"]
            for r in _template(assembly, "Messaging-Sales-2")["Resources"].values()
            if r["Type"] == "AWS::IAM::Policy"
        ]
    )
    assert ":s3:::messaging-bodies-111111111111-us-east-1/*" in policies
    assert f'"kms:ResourceAliases": ["{BODY_KEY_ALIAS}"]' in policies


def test_each_stack_holds_the_resources_and_outputs_its_plan_counted(
    assembly: Path, example_assembly: Path, plan: StackPlan, example_document: dict[str, Any]
) -> None:
    for stacks, outdir in (
        (plan.stacks, assembly),
        (
            new_organization_plan(parse_topology(copy.deepcopy(example_document))).stacks,
            example_assembly,
        ),
    ):
        for planned in stacks:
            template = _template(outdir, planned.name)
            counted = (len(template["Resources"]), len(template.get("Outputs", {})))
            assert counted == (planned.resources, planned.outputs), planned.name


def test_one_cdk_command_deploys_every_stack_of_an_account_in_their_order(
    assembly: Path, topology: Topology
) -> None:
    pattern = account_stacks_pattern(topology.account("Sales"))
    result = subprocess.run(
        [str(CDK_BIN), "list", pattern, "--app", str(assembly), "--no-notices"],
        capture_output=True,
        text=True,
        check=True,
    )
    # The CLI adds the stacks of other accounts they need first, nothing else of theirs.
    assert result.stdout.split() == [
        "DeliveryLogs-Ops",
        "Messaging-Billing",
        "Messaging-Sales-2",
        "Messaging-Sales",
    ]
