"""Every way a team loses, merges or edits its stack plan, and what synth does: it refuses, naming
the plan and the way out, or every queue keeps its stack; never a silent move.

An account's units move only when a plan says so; their construct ids (and so the logical ids
of their resources) do not depend on the stack that holds them (``test_account_stacks``), so
"keeps its stack" is "keeps its stack and its logical ids".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stacks.placement.placing import place, recover, start
from stacks.placement.plan import RESOURCE_BUDGET, StackPlan, committed_plan, stack_plan
from stacks.placement.plan_file import (
    AccountRecord,
    PlanFile,
    StackPlanError,
    read_plan,
    write_plan,
)
from stacks.topology import Topology, load_topology, parse_topology
from tests.stacks.app_process import run_app

ROOT = Path(__file__).resolve().parents[3]
ENDPOINTS = 60
"""Billing's endpoints in these tests: three stacks of Billing, two of Ops."""


def _grown(document: dict[str, Any], names: list[str], at: int | None = None) -> None:
    added = [{"name": name, "account": "Billing"} for name in names]
    at = len(document["endpoints"]) if at is None else at
    document["endpoints"][at:at] = added


@pytest.fixture
def organization(tmp_path: Path, document: dict[str, Any]) -> Path:
    """The example with sixty more endpoints in Billing, its plan begun, in a git repository
    with the project's ``.gitattributes``."""
    _grown(document, [f"E{i}" for i in range(ENDPOINTS)])
    topology_file = tmp_path / "org.json"
    _write(topology_file, document)
    plan = PlanFile(topology_file)
    write_plan(plan, start(load_topology(topology_file), None, plan).record)
    shutil.copy(ROOT / ".gitattributes", tmp_path / ".gitattributes")
    _git(tmp_path, "init", "--quiet", "--initial-branch=main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "--quiet", "-m", "base")
    return topology_file


def _write(path: Path, document: dict[str, Any]) -> None:
    # One endpoint a line, as a team keeps a long list: insertions apart merge apart.
    lines = json.dumps(document, indent=1).splitlines()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _git(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Platform",
        "GIT_AUTHOR_EMAIL": "platform@example.com",
        "GIT_COMMITTER_NAME": "Platform",
        "GIT_COMMITTER_EMAIL": "platform@example.com",
    }
    return subprocess.run(
        ["git", "-C", str(folder), *arguments],
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )


def _placed_on_a_branch(topology_file: Path, branch: str, names: list[str], at: int) -> None:
    """A branch off the base that adds endpoints and places them, committed."""
    folder = topology_file.parent
    _git(folder, "checkout", "--quiet", "-b", branch, "main")
    document = json.loads(topology_file.read_text(encoding="utf-8"))
    _grown(document, names, at)
    _write(topology_file, document)
    plan = PlanFile(topology_file)
    topology = load_topology(topology_file)
    write_plan(plan, place(topology, read_plan(plan), plan).record)
    _git(folder, "commit", "--quiet", "-am", f"{branch}: {len(names)} endpoints")


def _stacks(plan: StackPlan) -> dict[tuple[str, str], int]:
    return {
        (account, key): number
        for account, entry in plan.record.items()
        for key, number in entry.units.items()
    }


def _deployed(record: AccountRecord) -> dict[int, tuple[str, ...]]:
    """What an account's stacks hold once ``record`` is deployed."""
    return {n: record.holding(n) for n in range(1, record.stacks + 1)}


def _refusal(topology: Topology, plan: PlanFile, account: str) -> str:
    with pytest.raises(StackPlanError) as caught:
        committed_plan(topology, plan)
    return next(rule for where, rule in caught.value.problems if where == f"account {account}")


@pytest.mark.parametrize("how", ["never committed", "deleted", "topology renamed"])
def test_a_lost_plan_is_refused_for_each_account_needing_stacks_naming_both_ways_out(
    organization: Path, how: str
) -> None:
    topology_file = organization
    if how == "topology renamed":
        topology_file = organization.rename(organization.with_name("organization.json"))
    else:
        PlanFile(organization).path.unlink()
    rule = _refusal(load_topology(topology_file), PlanFile(topology_file), "Billing")
    assert rule.startswith(
        "is not in the plan (the plan does not exist) and its units need 3 stacks: where they are "
        "deployed decides which holds what. If it is deployed, rebuild its entries from its "
        "stacks: `python -m stacks.placement recover"
    )
    assert f"start --topology {topology_file} --account Billing`" in rule


def test_synth_refuses_a_lost_plan_before_writing_any_template(
    organization: Path, tmp_path: Path
) -> None:
    PlanFile(organization).path.unlink()
    result = run_app(organization, tmp_path / "out")
    assert result.returncode == 2
    assert [line.split(": ")[1] for line in result.stderr.splitlines()] == [
        "account Sales",
        "account Billing",
        "account Ops",
    ]
    assert not PlanFile(organization).path.exists()
    assert not list((tmp_path / "out").glob("*.template.json"))


@pytest.mark.parametrize("added", [2, 6])
def test_two_branches_adding_endpoints_merge_without_a_conflict_and_move_no_recorded_unit(
    organization: Path, added: int
) -> None:
    folder, plan = organization.parent, PlanFile(organization)
    base = committed_plan(load_topology(organization), plan)
    _placed_on_a_branch(organization, "orders", [f"Orders{i}" for i in range(added)], at=1)
    _placed_on_a_branch(organization, "invoices", [f"Invoices{i}" for i in range(added)], at=-1)
    merge = _git(folder, "merge", "--no-edit", "orders")
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert "<<<<<<<" not in plan.path.read_text(encoding="utf-8")

    topology = load_topology(organization)
    assert {e.name for e in topology.endpoints} >= {"Orders0", "Invoices0"}
    if added == 2:
        # Both branches' units fit where they were placed: the merged plan is the plan.
        merged = committed_plan(topology, plan)
    else:
        # Both branches filled Billing's third stack: together they are over the limit, and
        # which of them may go elsewhere depends on what is deployed. Here the base is.
        rule = _refusal(topology, plan, "Billing")
        assert "two changes placed new units here at once (a merge)" in rule
        record = read_plan(plan)
        assert record is not None
        recovered = recover(topology, record, plan, "Billing", _deployed(base.record["Billing"]))
        merged = stack_plan(topology, recovered.record, plan)
    kept = _stacks(merged)
    assert all(kept[unit] == number for unit, number in _stacks(base).items())
    assert all(stack.resources <= 500 for stack in merged.stacks)
    new_stacks = {n for (account, key), n in kept.items() if account == "Billing"} - {1, 2, 3}
    assert new_stacks == (set() if added == 2 else {4})


def test_a_hand_edit_to_a_stack_the_account_does_not_have_is_refused(organization: Path) -> None:
    plan = PlanFile(organization)
    text = plan.path.read_text(encoding="utf-8")
    edited = text.replace("unit Billing 3 ingress:E40\n", "unit Billing 7 ingress:E40\n")
    assert edited != text
    plan.path.write_text(edited, encoding="utf-8")
    with pytest.raises(StackPlanError) as caught:
        committed_plan(load_topology(organization), plan)
    ((where, rule),) = caught.value.problems
    assert where.startswith("line ")
    assert rule.startswith(
        "puts unit ingress:E40 in stack 7 of account Billing, which the plan does not have (it "
        "records stack 1, stack 2, stack 3)"
    )


def test_an_account_deployed_as_one_stack_before_any_plan_that_grows_keeps_it(
    document: dict[str, Any],
) -> None:
    # Billing as large as one stack holds, deployed before stacks were recorded.
    plan = PlanFile(Path("org.json"))
    count = _fitting_one_stack(document, plan)
    _grown(document, [f"E{i}" for i in range(count)])
    deployed = start(parse_topology(document), None, plan).record
    assert deployed["Billing"].stacks == 1
    # The plan holds the other accounts only; Billing gains two endpoints.
    others = {name: entry for name, entry in deployed.items() if name != "Billing"}
    _grown(document, ["Late0", "Late1"])
    topology = parse_topology(document)
    with pytest.raises(StackPlanError) as caught:
        place(topology, others, plan)
    (rule,) = [rule for where, rule in caught.value.problems if where == "account Billing"]
    assert "its units need 2 stacks" in rule
    recovered = recover(topology, others, plan, "Billing", _deployed(deployed["Billing"]))
    placed = stack_plan(topology, place(topology, recovered.record, plan).record, plan)
    billing = placed.record["Billing"]
    assert all(billing.units[key] == 1 for key in deployed["Billing"].units)
    assert {
        billing.units[f"{kind}:Late{i}"] for kind in ("endpoint", "ingress") for i in (0, 1)
    } == {2}
    assert placed.stack("Billing", 2).resources <= RESOURCE_BUDGET


def _fitting_one_stack(document: dict[str, Any], plan: PlanFile) -> int:
    """How many endpoints Billing takes with all its units still in its one stack."""
    count = 0
    while True:
        candidate = json.loads(json.dumps(document))
        _grown(candidate, [f"E{i}" for i in range(count + 1)])
        if start(parse_topology(candidate), None, plan, ["Billing"]).record["Billing"].stacks > 1:
            return count
        count += 1


def test_a_stack_left_holding_nothing_stays_in_the_app_saying_how_to_retire_it(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    topology_file = tmp_path / "org.json"
    _write(topology_file, document)
    plan = PlanFile(topology_file)
    record = dict(start(load_topology(topology_file), None, plan).record)
    # Sales' second stack held units removed since: it holds nothing.
    record["Sales"] = AccountRecord(record["Sales"].account_id, 2, record["Sales"].units)
    write_plan(plan, record)
    result = run_app(topology_file, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert f"{plan.path}: Messaging-Sales-2 holds nothing any more: deploy it to remove" in (
        result.stderr
    )
    template = json.loads((tmp_path / "out" / "Messaging-Sales-2.template.json").read_text())
    assert [r["Type"] for r in template["Resources"].values()] == [
        "AWS::CloudFormation::WaitConditionHandle"
    ]
    assert template["Metadata"]["MessagingStackPlan"]["Units"] == []
