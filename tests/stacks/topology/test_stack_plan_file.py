"""The committed stack plan file: written by the synth that places units, read by every synth
after, refused when it is not a plan, and insisted on when frozen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.topology import parse_topology
from stacks.topology.stack_plan import StackPlanError
from stacks.topology.stack_plan_file import plan_file_for, planned_from_file, read_plan_file


def test_the_plan_sits_beside_its_topology() -> None:
    assert plan_file_for(Path("topologies/org.json")) == Path("topologies/org.stacks.json")
    assert plan_file_for(Path("cdk.json")) == Path("cdk.stacks.json")


def test_a_first_synth_writes_the_plan_and_the_next_reads_it_unchanged(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    path = tmp_path / "org.stacks.json"
    first = planned_from_file(parse_topology(document), path)
    written = path.read_text(encoding="utf-8")
    assert read_plan_file(path) == first.assignment

    second = planned_from_file(parse_topology(document), path)
    assert (second.placed, second.dropped) == ((), ())
    assert path.read_text(encoding="utf-8") == written


def test_a_synth_that_places_a_new_unit_records_it(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    path = tmp_path / "org.stacks.json"
    planned_from_file(parse_topology(document), path)
    document["endpoints"].append({"name": "Invoicing", "account": "Billing"})
    plan = planned_from_file(parse_topology(document), path)
    # ServiceControl retries to it from Ops: an ingress queue here, a shadow there.
    assert set(plan.placed) == {
        ("Billing", "endpoint:Invoicing", 1),
        ("Billing", "ingress:Invoicing", 1),
        ("Ops", "shadow:Invoicing", 1),
    }
    assert read_plan_file(path) == plan.assignment


def test_a_frozen_plan_refuses_what_it_does_not_record(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    path = tmp_path / "org.stacks.json"
    with pytest.raises(StackPlanError, match="does not exist; synthesize without stackPlanFrozen"):
        planned_from_file(parse_topology(document), path, frozen=True)

    planned_from_file(parse_topology(document), path)
    written = path.read_text(encoding="utf-8")
    document["endpoints"].append({"name": "Invoicing", "account": "Billing"})
    with pytest.raises(StackPlanError) as caught:
        planned_from_file(parse_topology(document), path, frozen=True)
    assert str(caught.value).splitlines()[0] == (
        f"{path}: accounts.Billing.endpoint:Invoicing: is missing: synth would place it in stack "
        "1; synthesize without stackPlanFrozen and commit the file it writes"
    )
    assert len(caught.value.problems) == 3
    assert path.read_text(encoding="utf-8") == written


@pytest.mark.parametrize(
    ("content", "field", "rule"),
    [
        ("[]", "accounts", "is required"),
        ('{"accounts": {"Sales": 1}}', "accounts.Sales", "must be an object"),
        ('{"accounts": {"Sales": {"bodies": 0}}}', "accounts.Sales.bodies", "from 1 to 999"),
        ('{"accounts": {"Sales": {"bodies": true}}}', "accounts.Sales.bodies", "from 1 to 999"),
    ],
)
def test_a_file_that_is_not_a_plan_is_refused_naming_the_entry(
    tmp_path: Path, content: str, field: str, rule: str
) -> None:
    path = tmp_path / "org.stacks.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StackPlanError) as caught:
        read_plan_file(path)
    ((where, problem),) = caught.value.problems
    assert (where, rule in problem) == (field, True)


def test_the_plan_file_is_refused_when_it_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "org.stacks.json"
    path.write_text('{"accounts": {}', encoding="utf-8")
    with pytest.raises(StackPlanError, match=str(path)):
        read_plan_file(path)


def test_entries_are_written_sorted_one_per_line(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "org.stacks.json"
    planned_from_file(parse_topology(document), path)
    accounts = json.loads(path.read_text(encoding="utf-8"))["accounts"]
    assert list(accounts) == ["Sales", "Billing", "Ops"]
    assert all(list(entries) == sorted(entries) for entries in accounts.values())
