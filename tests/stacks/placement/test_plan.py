"""The stack plan: an account's units spread over as many stacks as they need; every synth builds
exactly the stacks the committed plan records, refusing with the fix whatever it does not
record; and nothing that was placed ever moves when units are added or removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.relay.config_format import RelayDirection
from stacks.placement.placing import new_organization_plan, place
from stacks.placement.plan import (
    OUTPUT_BUDGET,
    RESOURCE_BUDGET,
    StackPlan,
    committed_plan,
    stack_plan,
)
from stacks.placement.plan_file import AccountRecord, PlanFile, StackPlanError
from stacks.placement.relays import ingress_writers
from stacks.quotas.table import CLOUDFORMATION_RESOURCES
from stacks.topology import load_topology, parse_topology, relay_role_name

ROOT = Path(__file__).resolve().parents[3]
PLAN = PlanFile(Path("org.json"))


def _with_endpoints(document: dict[str, Any], account: str, names: list[str]) -> dict[str, Any]:
    document["endpoints"] += [{"name": name, "account": account} for name in names]
    return document


def _placed(document: dict[str, Any], before: StackPlan | None = None) -> StackPlan:
    """The document placed as a new organization's, or by ``place`` on ``before``'s record."""
    topology = parse_topology(document)
    if before is None:
        return new_organization_plan(topology, PLAN)
    return stack_plan(topology, place(topology, before.record, PLAN).record, PLAN)


def _numbers(plan: StackPlan, account: str) -> list[int]:
    return [s.number for s in plan.stacks_of(account)]


def _refusals(document: dict[str, Any], record: dict[str, AccountRecord] | None) -> list[str]:
    with pytest.raises(StackPlanError) as caught:
        stack_plan(parse_topology(document), record, PLAN)
    return [f"{where}: {rule}" for where, rule in caught.value.problems]


def test_the_example_keeps_every_unit_in_its_accounts_first_stack(
    document: dict[str, Any],
) -> None:
    plan = _placed(document)
    assert [s.name for s in plan.stacks] == [
        "Messaging-Sales",
        "Messaging-Billing",
        "Messaging-Ops",
    ]
    assert {n for entry in plan.record.values() for n in entry.units.values()} == {1}


@pytest.mark.parametrize("topology_file", ["cdk.json", "topologies/org.json"])
def test_the_committed_plans_place_their_topologies_exactly(topology_file: str) -> None:
    path = ROOT / topology_file
    plan = committed_plan(load_topology(path), PlanFile(path))
    assert plan.stacks


def test_a_full_account_spreads_over_numbered_stacks_each_within_the_budgets(
    document: dict[str, Any],
) -> None:
    plan = _placed(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
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
    assert _placed(grown).record == _placed(json.loads(json.dumps(grown))).record


def test_adding_endpoints_to_a_full_account_moves_no_placed_unit(
    document: dict[str, Any],
) -> None:
    before = _placed(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
    # New endpoints declared first, in the middle and last, and a new sender across accounts
    # (Billing gains ingress queues, Sales shadows): declaration order must not matter.
    document["endpoints"][:0] = [{"name": "First", "account": "Billing"}]
    document["endpoints"].insert(30, {"name": "Middle", "account": "Billing"})
    _with_endpoints(document, "Billing", [f"New{i}" for i in range(30)])
    document["routes"] += [{"from": "Sales", "to": f"New{i}", "relay": True} for i in range(5)]
    topology = parse_topology(document)
    placement = place(topology, before.record, PLAN)
    after = stack_plan(topology, placement.record, PLAN)

    for account, entry in before.record.items():
        for key, number in entry.units.items():
            assert after.record[account].units[key] == number, (account, key)
    assert {key for _, key, _ in placement.placed} >= {"endpoint:First", "endpoint:Middle"}
    assert placement.dropped == ()
    assert len(_numbers(after, "Billing")) > len(_numbers(before, "Billing"))
    grown = {(account, number) for account, _, number in placement.placed}
    assert all(
        s.resources <= RESOURCE_BUDGET for s in after.stacks if (s.account.name, s.number) in grown
    )


def test_removing_an_endpoint_moves_nothing_else_and_frees_its_room(
    document: dict[str, Any],
) -> None:
    before = _placed(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
    assert before.record["Billing"].units["endpoint:E3"] == 1
    document["endpoints"] = [e for e in document["endpoints"] if e["name"] != "E3"]
    topology = parse_topology(document)
    placement = place(topology, before.record, PLAN)

    dropped = {key for account, key, _ in placement.dropped if account == "Billing"}
    assert dropped == {"endpoint:E3", "ingress:E3"}
    for account, entry in placement.record.items():
        assert all(before.record[account].units[k] == n for k, n in entry.units.items())

    document["endpoints"].append({"name": "Late", "account": "Billing"})
    after = stack_plan(topology, placement.record, PLAN)
    later = _placed(document, after)
    assert later.record["Billing"].units["endpoint:Late"] == 1


def test_a_stack_whose_units_are_all_gone_stays_in_the_app_holding_nothing(
    document: dict[str, Any],
) -> None:
    before = _placed(_with_endpoints(document, "Billing", [f"E{i}" for i in range(60)]))
    # Ops' second stack holds the shadows of the last endpoints only.
    gone = {unit.name for unit in before.stack("Ops", 2).units}
    document["endpoints"] = [e for e in document["endpoints"] if e["name"] not in gone]
    topology = parse_topology(document)
    after = stack_plan(topology, place(topology, before.record, PLAN).record, PLAN)
    assert [(s.name, len(s.units)) for s in after.stacks_of("Ops")] == [
        ("Messaging-Ops", len(before.stack("Ops", 1).units)),
        ("Messaging-Ops-2", 0),
    ]
    assert after.stack("Ops", 2).metadata["Units"] == []


def test_synth_builds_only_what_the_plan_records_and_names_the_command_for_the_rest(
    document: dict[str, Any],
) -> None:
    record = dict(_placed(document).record)
    document["endpoints"].append({"name": "Invoicing", "account": "Billing"})
    document["endpoints"] = [e for e in document["endpoints"] if e["name"] != "Shipping"]
    document["routes"] = [r for r in document["routes"] if "Shipping" not in r.values()]
    document["topics"][0]["messageDrivenSubscribers"] = []
    problems = _refusals(document, record)
    assert "account Billing: unit endpoint:Invoicing is not in the plan: " in "\n".join(problems)
    assert all("`python -m stacks.placement place --topology org.json`" in p for p in problems)
    assert any(
        p.startswith(
            "account Sales: unit endpoint:Shipping of stack 1 (Messaging-Sales) is no "
            "longer in the topology"
        )
        for p in problems
    )


def test_an_account_the_plan_lacks_is_refused_with_the_way_out_that_fits_it(
    document: dict[str, Any],
) -> None:
    grown = _with_endpoints(document, "Billing", [f"E{i}" for i in range(60)])
    problems = _refusals(grown, None)
    billing = next(p for p in problems if p.startswith("account Billing"))
    assert billing == (
        "account Billing: is not in the plan (the plan does not exist) and its units need 3 "
        "stacks: where they are deployed decides which holds what. If it is deployed, rebuild "
        "its entries from its stacks: `python -m stacks.placement recover --topology org.json "
        "--profile <profile> --account Billing`; if it never was, start its plan on purpose: "
        "`python -m stacks.placement start --topology org.json --account Billing`"
    )
    sales = next(p for p in problems if p.startswith("account Sales"))
    assert sales == (
        "account Sales: is not in the plan (the plan does not exist): `python -m "
        "stacks.placement place --topology org.json` records its units in its one stack, "
        "Messaging-Sales"
    )


def test_a_plan_of_another_topology_is_refused_naming_the_accounts(
    document: dict[str, Any],
) -> None:
    record = dict(_placed(document).record)
    record["Billing"] = AccountRecord("999999999999", 1, record["Billing"].units)
    record["Payroll"] = AccountRecord("888888888888", 1, {})
    problems = _refusals(document, record)
    assert problems[0].startswith(
        "account Billing: the plan records it as AWS account 999999999999, the topology as "
        "222222222222: is org.stacks the plan of another topology?"
    )
    assert problems[1].startswith(
        "account Payroll: is in the plan but not in the topology (is this the plan of another "
        "topology?)"
    )
    assert "retire --topology org.json --account Payroll" in problems[1]


def test_a_recorded_stack_over_the_limit_is_refused_in_one_line_naming_recover(
    document: dict[str, Any],
) -> None:
    grown = _with_endpoints(document, "Billing", [f"E{i}" for i in range(60)])
    everything_first = {
        account: AccountRecord(entry.account_id, 1, dict.fromkeys(entry.units, 1))
        for account, entry in _placed(grown).record.items()
    }
    lines = _refusals(grown, everything_first)
    billing = next(line for line in lines if "Messaging-Billing " in line)
    resources = sum(u.resources for u in _placed(grown).stacks_of("Billing")[0].units)
    assert billing.startswith("account Billing: stack Messaging-Billing would ")
    assert f"over CloudFormation's {CLOUDFORMATION_RESOURCES.fixed}" in billing
    assert "two changes placed new units here at once (a merge)" in billing
    assert "recover --topology org.json --profile <profile> --account Billing" in billing
    assert int(billing.split(" would hold ")[1].split()[0]) > resources
    assert len(lines) == 2  # Billing's and Ops' stacks, nothing else


def test_each_stack_with_shadows_has_its_own_outbound_relay_role(
    document: dict[str, Any],
) -> None:
    # Sales fills up before its shadows are placed: its shadow of Billing goes to a later stack.
    plan = _placed(_with_endpoints(document, "Sales", [f"S{i}" for i in range(50)]))
    topology = parse_topology(document)
    number = plan.stack_of("Sales", "shadow:Billing").number
    assert number > 1
    role = relay_role_name(topology.account("Sales"), RelayDirection.OUTBOUND, number)
    assert role == f"messaging-relay-outbound-Sales-{number}"
    # Billing's ingress queue admits it by its exact ARN, and of Sales that relay alone (Ops'
    # relay too, for ServiceControl's retries).
    assert ingress_writers(topology, plan, topology.endpoint("Billing")) == (
        f"arn:aws:iam::111111111111:role/{role}",
        "arn:aws:iam::333333333333:role/messaging-relay-outbound-Ops",
    )
