"""Against the local AWS: the example with an account in two stacks, deployed with the CDK CLI;
its plan deleted, ``recover`` rebuilds it from the deployed stacks, account by account, and
the synth of the rebuilt plan moves no queue (the pre-deploy check finds every named resource in
its stack under its logical id); an assembly synthesized from a plan that lost the second
stacks is refused by the check, naming the stacks."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.deployment import deploy_all, pre_deploy_check
from stacks.checks import gates
from stacks.placement.__main__ import main
from stacks.placement.check import read_assembly
from stacks.placement.deployed import read_deployed
from stacks.placement.placing import new_organization_plan
from stacks.placement.plan import committed_plan
from stacks.placement.plan_file import AccountRecord, PlanFile, read_plan, write_plan
from stacks.topology import load_topology
from tests.stacks.app_process import run_app

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.moto, pytest.mark.synth]

IDS = {"Sales": "121212121212", "Billing": "232323232323", "Ops": "343434343434"}
"""Accounts of this module alone: a stack deployed twice under one name hits moto's bugs."""
SECOND_STACKS = {
    "Sales": {"topic:MyCompany-Messages-OrderBilled": 2, "shadow:Billing": 2},
    "Billing": {"ingress:Billing": 2},
}
"""Units the plan gives their account's second stack."""


@pytest.fixture(scope="module")
def topology_file(
    example_document: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    document = copy.deepcopy(example_document)
    for account in document["accounts"]:
        account["id"] = IDS[account["name"]]
    path = tmp_path_factory.mktemp("two-stacks") / "org.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def deployed_record(topology_file: Path) -> dict[str, AccountRecord]:
    """The plan the organization is deployed with: Sales and Billing in two stacks each."""
    record = dict(new_organization_plan(load_topology(topology_file)).record)
    for account, units in SECOND_STACKS.items():
        record[account] = AccountRecord(IDS[account], 2, {**record[account].units, **units})
    return record


@pytest.fixture(scope="module")
def deployment(
    topology_file: Path,
    deployed_record: dict[str, AccountRecord],
    moto_endpoint: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, AccountCredentials]:
    """Synthesized through its committed plan and deployed, credentials per account name."""
    plan = PlanFile(topology_file)
    write_plan(plan, deployed_record)
    topology = load_topology(topology_file)
    outdir = tmp_path_factory.mktemp("deployed") / "cdk.out"
    gates.synth(topology, committed_plan(topology, plan), outdir)
    return deploy_all(topology, outdir, moto_endpoint)


def _environment(credentials: AccountCredentials, endpoint_url: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **credentials.environment(endpoint_url),
    }


def test_each_stack_records_the_units_it_holds_in_its_deployed_template(
    deployment: dict[str, AccountCredentials], moto_endpoint: str
) -> None:
    sales = deployment["Sales"]
    stacks = read_deployed(
        sales.session(),
        "us-east-1",
        lambda n: n.startswith("Messaging-"),
        endpoint_url=moto_endpoint,
    )
    assert {s.name: s.units for s in stacks} == {
        "Messaging-Sales": (
            "bodies",
            "endpoint:Sales",
            "endpoint:Shipping",
            "ingress:Sales",
            "ingress:Shipping",
            "shadow:Particular-Monitoring",
            "shadow:Particular-ServiceControl",
            "shadow:audit",
            "shadow:error",
        ),
        "Messaging-Sales-2": ("shadow:Billing", "topic:MyCompany-Messages-OrderBilled"),
    }


@pytest.fixture
def recovered(
    deployment: dict[str, AccountCredentials],
    topology_file: Path,
    moto_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """The plan deleted, then rebuilt by one ``recover`` with a profile per account, as a team
    keeps them in its AWS configuration; what it printed."""
    PlanFile(topology_file).path.unlink()
    credentials = topology_file.with_name("credentials")
    credentials.write_text(
        "".join(
            f"[{name.lower()}]\naws_access_key_id = {account.access_key_id}\n"
            f"aws_secret_access_key = {account.secret_access_key}\nregion = us-east-1\n"
            for name, account in deployment.items()
        ),
        encoding="utf-8",
    )
    for variable in [v for v in os.environ if v.startswith("AWS_")]:
        monkeypatch.delenv(variable)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(credentials.with_name("config")))
    profiles = [argument for name in deployment for argument in ("--profile", name.lower())]
    arguments = ["--topology", str(topology_file), "--endpoint-url", moto_endpoint]
    assert main(["recover", *arguments, *profiles]) == 0
    return capsys.readouterr().out


def test_a_deleted_plan_is_recovered_as_it_was_from_the_deployed_stacks(
    recovered: str, deployed_record: dict[str, AccountRecord], topology_file: Path
) -> None:
    assert "Messaging-Sales-2: CREATE_COMPLETE, 2 units" in recovered
    assert read_plan(PlanFile(topology_file)) == deployed_record


@pytest.mark.usefixtures("recovered")
def test_the_synth_of_a_recovered_plan_moves_no_queue(
    deployment: dict[str, AccountCredentials],
    topology_file: Path,
    moto_endpoint: str,
    tmp_path: Path,
) -> None:

    # Synthesized by the app from the rebuilt plan, as `cdk synth` would.
    outdir = tmp_path / "cdk.out"
    synth = run_app(topology_file, outdir)
    assert synth.returncode == 0, synth.stderr
    results = pre_deploy_check(outdir, deployment.values(), moto_endpoint)
    assert [r.problems for r in results] == [(), (), ()]
    deployed_queues = _queues(deployment, moto_endpoint)
    assembled = {
        (stack.account_id, name): (stack.name, logical_id)
        for stack in read_assembly(outdir)
        for (kind, name), logical_id in stack.named.items()
        if kind == "AWS::SQS::Queue"
    }
    assert assembled == deployed_queues
    assert deployed_queues[(IDS["Billing"], "Billing-ingress")][0] == "Messaging-Billing-2"


def test_an_assembly_that_lost_the_second_stacks_is_refused_before_any_deploy(
    deployment: dict[str, AccountCredentials],
    topology_file: Path,
    moto_endpoint: str,
    tmp_path: Path,
) -> None:
    # A plan started afresh (the deleted plan regenerated): everything back in first stacks.
    topology = load_topology(topology_file)
    outdir = tmp_path / "cdk.out"
    gates.synth(topology, new_organization_plan(topology), outdir)
    results = {
        r.account_id: r for r in pre_deploy_check(outdir, deployment.values(), moto_endpoint)
    }
    assert results[IDS["Ops"]].passed
    billing = results[IDS["Billing"]].problems
    assert any(
        problem.startswith(
            "queue 'Billing-ingress' is held by deployed stack Messaging-Billing-2 and the "
            "assembly puts it in Messaging-Billing: deploying Messaging-Billing-2 would let it go"
        )
        for problem in billing
    )
    assert billing[-1].startswith(
        "deployed stack Messaging-Billing-2 (2 queues) is not in the assembly"
    )
    sales = "\n".join(results[IDS["Sales"]].problems)
    assert (
        "queue 'Billing' is held by deployed stack Messaging-Sales-2 and the assembly puts it in Messaging-Sales"
        in sales
    )
    assert (
        "topic 'MyCompany-Messages-OrderBilled' is held by deployed stack Messaging-Sales-2"
        in sales
    )


def test_recover_refuses_credentials_of_another_account(
    deployment: dict[str, AccountCredentials],
    topology_file: Path,
    moto_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for variable, value in _environment(deployment["Billing"], moto_endpoint).items():
        monkeypatch.setenv(variable, value)
    arguments = ["--topology", str(topology_file), "--endpoint-url", moto_endpoint]
    assert main(["recover", *arguments, "--account", "Sales"]) == 2
    assert (
        "recover: the credentials are AWS account 232323232323, which is not account Sales"
        in capsys.readouterr().err
    )


def _queues(
    deployment: dict[str, AccountCredentials], endpoint_url: str
) -> dict[tuple[str, str], tuple[str, str]]:
    """Every deployed queue's stack and logical id, by account and name."""
    return {
        (credentials.account_id, resource.name): (stack.name, resource.logical_id)
        for credentials in deployment.values()
        for stack in read_deployed(
            credentials.session(), "us-east-1", lambda _: True, endpoint_url=endpoint_url
        )
        for resource in stack.resources
        if resource.type == "AWS::SQS::Queue"
    }
