"""The stack plan: an account's units spread over as many stacks as they need, and nothing that
was placed ever moves when units are added or removed."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.relay.config import RelayDirection
from stacks.checks.quotas.table import CLOUDFORMATION_RESOURCES
from stacks.topology import parse_topology, relay_role_name, relay_role_pattern
from stacks.topology.stack_plan import (
    OUTPUT_BUDGET,
    RESOURCE_BUDGET,
    StackPlan,
    StackPlanError,
    plan_stacks,
)
from stacks.topology.stack_plan_file import read_plan_file

ROOT = Path(__file__).resolve().parents[3]


def _with_endpoints(document: dict[str, Any], account: str, names: list[str]) -> dict[str, Any]:
    document["endpoints"] += [{"name": name, "account": account} for name in names]
    return document


def _plan(document: dict[str, Any], recorded: StackPlan | None = None) -> StackPlan:
    return plan_stacks(parse_topology(document), recorded.assignment if recorded else None)


def _numbers(plan: StackPlan, account: str) -> list[int]:
    return [s.number for s in plan.stacks_of(account)]


def test_the_example_keeps_every_unit_in_its_accounts_first_stack(
    document: dict[str, Any],
) -> None:
    plan = _plan(document)
    assert [s.name for s in plan.stacks] == [
        "Messaging-Sales",
        "Messaging-Billing",
        "Messaging-Ops",
    ]
    assert {n for entries in plan.assignment.values() for n in entries.values()} == {1}


def test_the_committed_plan_of_the_example_is_current(document: dict[str, Any]) -> None:
    recorded = read_plan_file(ROOT / "cdk.stacks.json")
    plan = plan_stacks(parse_topology(document), recorded)
    assert (plan.placed, plan.dropped) == ((), ())
    assert plan.assignment == recorded


def test_a_full_account_spreads_over_numbered_stacks_each_within_the_budgets(
    document: dict[str, Any],
) -> None:
    plan = _plan(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
    billing = plan.stacks_of("Billing")
    assert [s.name for s in billing] == [
        "Messaging-Billing",
        "Messaging-Billing-2",
        "Messaging-Billing-3",
    ]
    assert all(s.resources <= RESOURCE_BUDGET and s.outputs <= OUTPUT_BUDGET for s in billing)
    # Ops holds a shadow of each new endpoint (ServiceControl retries to it): it grows too.
    assert _numbers(plan, "Ops") == [1, 2]
    assert _numbers(plan, "Sales") == [1]


def test_the_same_topology_is_always_placed_the_same_way(document: dict[str, Any]) -> None:
    grown = _with_endpoints(document, "Billing", [f"E{i}" for i in range(60)])
    assert _plan(grown).assignment == _plan(json.loads(json.dumps(grown))).assignment


def test_adding_endpoints_to_a_full_account_moves_no_placed_unit(
    document: dict[str, Any],
) -> None:
    before = _plan(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
    # New endpoints declared first, in the middle and last, and a new sender across accounts
    # (Billing gains ingress queues, Sales shadows): declaration order must not matter.
    document["endpoints"][:0] = [{"name": "First", "account": "Billing"}]
    document["endpoints"].insert(30, {"name": "Middle", "account": "Billing"})
    _with_endpoints(document, "Billing", [f"New{i}" for i in range(30)])
    document["routes"] += [{"from": "Sales", "to": f"New{i}", "relay": True} for i in range(5)]
    after = _plan(document, recorded=before)

    for account, entries in before.assignment.items():
        for key, number in entries.items():
            assert after.assignment[account][key] == number, (account, key)
    assert {key for _, key, _ in after.placed} >= {"endpoint:First", "endpoint:Middle"}
    assert after.dropped == ()
    assert len(_numbers(after, "Billing")) > len(_numbers(before, "Billing"))
    grown = {(account, number) for account, _, number in after.placed}
    assert all(
        s.resources <= RESOURCE_BUDGET for s in after.stacks if (s.account.name, s.number) in grown
    )


def test_removing_an_endpoint_moves_nothing_else_and_frees_its_room(
    document: dict[str, Any],
) -> None:
    before = _plan(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
    assert before.assignment["Billing"]["endpoint:E3"] == 1
    document["endpoints"] = [e for e in document["endpoints"] if e["name"] != "E3"]
    after = _plan(document, recorded=before)

    dropped = {key for account, key, _ in after.dropped if account == "Billing"}
    assert dropped == {"endpoint:E3", "ingress:E3"}
    for account, entries in after.assignment.items():
        assert all(before.assignment[account][k] == n for k, n in entries.items())

    document["endpoints"].append({"name": "Late", "account": "Billing"})
    later = _plan(document, recorded=after)
    assert later.assignment["Billing"]["endpoint:Late"] == 1


def test_a_recorded_stack_over_the_limit_is_refused_in_one_line(
    document: dict[str, Any],
) -> None:
    grown = _with_endpoints(document, "Billing", [f"E{i}" for i in range(60)])
    everything_first = {
        account: dict.fromkeys(entries, 1) for account, entries in _plan(grown).assignment.items()
    }
    with pytest.raises(StackPlanError) as caught:
        plan_stacks(parse_topology(grown), everything_first, source="org.stacks.json")
    lines = str(caught.value).splitlines()
    billing = next(line for line in lines if "Messaging-Billing " in line)
    resources = sum(u.resources for u in _plan(grown).stacks_of("Billing")[0].units)
    assert billing.startswith("org.stacks.json: accounts.Billing: stack Messaging-Billing would ")
    assert f"over CloudFormation's {CLOUDFORMATION_RESOURCES.fixed}" in billing
    assert "another stack number in org.stacks.json" in billing
    assert int(billing.split(" would hold ")[1].split()[0]) > resources
    assert len(lines) == 2  # Billing's and Ops' stacks, nothing else


def test_each_stack_with_shadows_has_its_own_outbound_relay_role(
    document: dict[str, Any],
) -> None:
    # Sales fills up before its shadows are placed: its shadow of Billing goes to a later stack.
    plan = _plan(_with_endpoints(document, "Sales", [f"S{i}" for i in range(50)]))
    topology = parse_topology(document)
    number = plan.stack_of("Sales", "shadow:Billing").number
    assert number > 1
    role = relay_role_name(topology.account("Sales"), RelayDirection.OUTBOUND, number)
    assert role == f"messaging-relay-outbound-Sales-{number}"
    # Other accounts admit it with every relay of Sales, by one pattern whatever the number.
    pattern = relay_role_pattern(topology.account("Sales"), RelayDirection.OUTBOUND)
    assert fnmatch.fnmatchcase(f"arn:aws:iam::111111111111:role/{role}", pattern)
