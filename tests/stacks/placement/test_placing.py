"""What changes the plan, each on purpose: ``place`` adds and drops and never moves a recorded
unit, ``start`` begins only accounts the plan lacks, ``recover`` takes each unit's stack from the
deployed stacks and places the rest as new, ``retire`` removes only stacks that hold nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stacks.placement.placing import new_organization_plan, place, recover, retire, start
from stacks.placement.plan import RESOURCE_BUDGET, stack_plan
from stacks.placement.plan_file import AccountRecord, PlanFile, StackPlanError
from stacks.topology import Topology, parse_topology

PLAN = PlanFile(Path("org.json"))


def _grown(document: dict[str, Any], count: int = 60, prefix: str = "E") -> Topology:
    document["endpoints"] += [{"name": f"{prefix}{i}", "account": "Billing"} for i in range(count)]
    return parse_topology(document)


def _deployed(record: AccountRecord) -> dict[int, tuple[str, ...]]:
    """What the account's stacks hold once ``record`` is deployed."""
    return {n: record.holding(n) for n in range(1, record.stacks + 1)}


def test_place_records_an_account_that_fits_its_one_stack_and_refuses_one_that_does_not(
    document: dict[str, Any],
) -> None:
    topology = _grown(document)
    with pytest.raises(StackPlanError) as caught:
        place(topology, None, PLAN)
    assert [where for where, _ in caught.value.problems] == ["account Billing", "account Ops"]
    assert "if it never was, start its plan on purpose" in caught.value.problems[0][1]

    small = parse_topology(document | {"endpoints": document["endpoints"][:3]})
    placement = place(small, None, PLAN)
    assert {entry.stacks for entry in placement.record.values()} == {1}
    assert "Sales: endpoint:Sales: placed in stack 1 (Messaging-Sales)" in placement.lines()


def test_start_begins_the_accounts_the_plan_lacks_and_refuses_one_it_has(
    document: dict[str, Any],
) -> None:
    topology = _grown(document)
    placement = start(topology, None, PLAN)
    assert {a: e.stacks for a, e in placement.record.items()} == {
        "Sales": 1,
        "Billing": 3,
        "Ops": 2,
    }
    with pytest.raises(StackPlanError) as caught:
        start(topology, placement.record, PLAN, ["Billing"])
    ((where, rule),) = caught.value.problems
    assert where == "account Billing"
    assert rule.startswith("has entries in the plan: `start` only begins an account's plan")
    assert "recover --topology org.json --profile <profile> --account Billing" in rule


def test_recover_keeps_every_deployed_unit_in_its_stack_and_places_the_rest_as_new(
    document: dict[str, Any],
) -> None:
    topology = _grown(document)
    deployed = new_organization_plan(topology, PLAN).record["Billing"]
    # The plan was lost; since the deploy, six endpoints were added.
    document["endpoints"] += [{"name": f"New{i}", "account": "Billing"} for i in range(6)]
    grown = parse_topology(document)
    placement = recover(grown, None, PLAN, "Billing", _deployed(deployed))
    recovered = placement.record["Billing"]
    assert {k: n for k, n in recovered.units.items() if k in deployed.units} == deployed.units
    new = {k: n for k, n in recovered.units.items() if k not in deployed.units}
    assert set(new) == {f"{kind}:New{i}" for kind in ("endpoint", "ingress") for i in range(6)}
    plan = stack_plan(grown, {**start(grown, None, PLAN).record, **placement.record}, PLAN)
    assert all(plan.stack("Billing", n).resources <= RESOURCE_BUDGET for n in set(new.values()))


def test_recover_reports_each_entry_the_deployed_stacks_contradict(
    document: dict[str, Any],
) -> None:
    topology = _grown(document)
    deployed = new_organization_plan(topology, PLAN).record
    edited = dict(deployed)
    billing = deployed["Billing"]
    edited["Billing"] = AccountRecord(
        billing.account_id, billing.stacks, {**billing.units, "endpoint:E3": 2}
    )
    placement = recover(topology, edited, PLAN, "Billing", _deployed(billing))
    assert placement.record == deployed
    assert placement.moved == (("Billing", "endpoint:E3", 2, 1),)
    assert placement.lines() == [
        "Billing: endpoint:E3: recorded in stack 2, deployed in stack 1 (Messaging-Billing): "
        "the plan now says 1"
    ]


def test_recover_refuses_a_unit_two_deployed_stacks_hold(document: dict[str, Any]) -> None:
    topology = _grown(document)
    billing = new_organization_plan(topology, PLAN).record["Billing"]
    deployed = _deployed(billing)
    deployed[2] = (*deployed[2], "endpoint:E3")
    with pytest.raises(
        StackPlanError, match=r"unit endpoint:E3 is held by deployed stacks \[1, 2\]"
    ):
        recover(topology, None, PLAN, "Billing", deployed)


def test_recover_of_an_account_nothing_is_deployed_in_places_it_as_new(
    document: dict[str, Any],
) -> None:
    topology = _grown(document)
    placement = recover(topology, None, PLAN, "Billing", {})
    assert placement.record["Billing"] == start(topology, None, PLAN).record["Billing"]


def test_retire_removes_the_last_stacks_that_hold_nothing_and_nothing_else(
    document: dict[str, Any],
) -> None:
    topology = _grown(document)
    record = dict(new_organization_plan(topology, PLAN).record)
    with pytest.raises(StackPlanError, match=r"its last stack, stack 2 \(Messaging-Ops-2\), holds"):
        retire(topology, record, PLAN, "Ops")
    emptied = {k: n for k, n in record["Ops"].units.items() if n == 1}
    record["Ops"] = AccountRecord(record["Ops"].account_id, 2, emptied)
    placement = retire(topology, record, PLAN, "Ops")
    assert placement.record["Ops"].stacks == 1
    assert placement.lines() == ["Ops: 2 stacks -> 1"]


def test_retire_removes_an_account_the_topology_no_longer_has(document: dict[str, Any]) -> None:
    topology = parse_topology(document)
    record = {**new_organization_plan(topology, PLAN).record}
    record["Payroll"] = AccountRecord("888888888888", 1, {})
    assert set(retire(topology, record, PLAN, "Payroll").record) == {"Sales", "Billing", "Ops"}


def test_place_converts_an_earlier_json_plan_keeping_each_entry_and_every_stack_it_numbered(
    document: dict[str, Any],
) -> None:
    topology = parse_topology(document)
    # The earlier release kept no line for a stack, only units: Billing's stack 2 had lost its
    # last unit, while its stack 3 still held one.
    earlier = {
        "Sales": dict.fromkeys(new_organization_plan(topology, PLAN).record["Sales"].units, 1),
        "Billing": {
            **dict.fromkeys(new_organization_plan(topology, PLAN).record["Billing"].units, 1),
            "shadow:Sales": 3,
        },
    }
    placement = place(topology, None, PLAN, earlier=earlier)
    assert placement.record["Billing"].stacks == 3
    assert placement.record["Billing"].units["shadow:Sales"] == 3
    plan = stack_plan(topology, placement.record, PLAN)
    assert [len(s.units) for s in plan.stacks_of("Billing")][1] == 0
    # Ops was not in it: it fits its one stack, so place records it there.
    assert placement.record["Ops"].stacks == 1
