"""The committed plan file: a line per account, stack and unit beside its topology, written sorted,
read strictly whatever a merge or a hand edit left (every problem named by its line, with the
fix), and the JSON form of an earlier release recognized for conversion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stacks.placement.placing import new_organization_plan
from stacks.placement.plan_file import (
    AccountRecord,
    PlanFile,
    StackPlanError,
    format_plan,
    parse_plan,
    read_earlier_plan,
    read_plan,
    write_plan,
)
from stacks.topology import parse_topology

ROOT = Path(__file__).resolve().parents[3]
BIG = """\
account Big 444444444444
stack Big 1
unit Big 1 bodies
unit Big 1 endpoint:Orders
stack Big 2
unit Big 2 endpoint:Invoices
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(StackPlanError) as caught:
        parse_plan(text, "org.stacks")
    return [f"{where}: {rule}" for where, rule in caught.value.problems]


def test_the_plan_sits_beside_its_topology() -> None:
    assert PlanFile(Path("topologies/org.json")).path == Path("topologies/org.stacks")
    assert PlanFile(Path("cdk.json")).path == Path("cdk.stacks")
    assert PlanFile().path == ROOT / "cdk.stacks"


def test_the_commands_name_the_topology_unless_it_is_the_project_s_cdk_json() -> None:
    assert PlanFile().command("place") == "python -m stacks.placement place"
    assert PlanFile(Path("topologies/org.json")).command("start", "--account", "Ops") == (
        "python -m stacks.placement start --topology topologies/org.json --account Ops"
    )


def test_a_plan_reads_back_as_it_was_written(tmp_path: Path, document: dict[str, Any]) -> None:
    record = new_organization_plan(parse_topology(document)).record
    plan = PlanFile(tmp_path / "org.json")
    write_plan(plan, record)
    assert read_plan(plan) == record


def test_accounts_come_by_name_each_stack_followed_by_its_units_sorted() -> None:
    record = {
        "Big": AccountRecord(
            "444444444444", 2, {"endpoint:Orders": 1, "endpoint:Invoices": 2, "bodies": 1}
        ),
        "Alpha": AccountRecord("555555555555", 1, {"shadow:error": 1}),
    }
    lines = [line for line in format_plan(record).splitlines() if not line.startswith("#")]
    assert lines == [
        "",
        "account Alpha 555555555555",
        "stack Alpha 1",
        "unit Alpha 1 shadow:error",
        "",
        *BIG.splitlines(),
    ]


def test_lines_in_any_order_and_twice_read_as_one_plan() -> None:
    """What git's union merge leaves where both sides added lines side by side."""
    shuffled = "\n".join(reversed(BIG.splitlines())) + "\nstack Big 2\n" + BIG
    assert parse_plan(shuffled, "org.stacks") == parse_plan(BIG, "org.stacks")


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda text: text.replace("stack Big 2\n", "<<<<<<< HEAD\nstack Big 2\n=======\n"),
            "line 5: '<<<<<<<' marks a merge conflict git left here: keep the lines of both "
            "sides and delete the markers",
        ),
        (
            lambda text: text + "unit Big 7 endpoint:Refunds\n",
            "line 7: puts unit endpoint:Refunds in stack 7 of account Big, which the plan does "
            "not have (it records stack 1, stack 2)",
        ),
        (
            lambda text: text + "stack Big 4\n",
            "account Big: stack 3 is missing: an account's stacks are numbered from 1 without "
            "gaps (the plan records stack 1, stack 2, stack 4)",
        ),
        (
            lambda text: text + "unit Big 1 endpoint:Invoices\n",
            "line 7: unit endpoint:Invoices of account Big is in stack 1 here and in stack 2 on "
            "line 6 (both sides of a merge placed it?)",
        ),
        (
            lambda text: text + "account Big 555555555555\n",
            "line 7: account Big is AWS account 555555555555 here and 444444444444 on line 1",
        ),
        (
            lambda text: text.replace("account Big 444444444444\n", ""),
            "account Big: has stacks or units but no 'account Big <12-digit id>' line",
        ),
        (
            lambda text: text + "queue Big 1 Orders\n",
            "line 7: a line is 'account <name> <id>', 'stack <account> <n>' or 'unit <account> "
            "<n> <unit>', not 'queue Big 1 Orders'",
        ),
        (lambda text: text + "unit Big 1\n", "line 7: a unit line is 'unit <account> <n> <unit>'"),
        (lambda text: text + "stack Big 0\n", "line 7: a stack number is from 1 to 999"),
        (lambda text: text + "stack Big two\n", "line 7: a stack number is from 1 to 999"),
        (lambda text: text + "unit Big 1 queue:Refunds\n", "line 7: a unit is 'bodies', "),
        (lambda text: text + "account Big 4444\n", "line 7: an account id is 12 digits"),
        (lambda text: text + "stack Big_2 1\n", "line 7: 'Big_2' is not an account name"),
    ],
)
def test_a_line_that_is_not_a_plan_s_is_refused_naming_it(edit: Any, problem: str) -> None:
    problems = _problems(edit(BIG))
    assert [p for p in problems if p.startswith(problem)] != [], problems


def test_recover_reads_the_other_accounts_lines_of_a_plan_it_rebuilds_an_account_of(
    tmp_path: Path,
) -> None:
    plan = PlanFile(tmp_path / "org.json")
    other = "account Ops 333333333333\nstack Ops 1\nunit Ops 1 endpoint:error\n"
    broken = BIG.replace("stack Big 2\n", "<<<<<<< HEAD\nstack Big 2\n=======\nstack Big 3\n")
    plan.path.write_text(broken + other, encoding="utf-8")
    with pytest.raises(StackPlanError, match="line 5: '<<<<<<<' marks a merge conflict"):
        read_plan(plan)
    assert read_plan(plan, leaving_out=["Big"]) == {
        "Ops": AccountRecord("333333333333", 1, {"endpoint:error": 1})
    }


def test_a_plan_kept_in_the_earlier_json_form_is_refused_naming_the_conversion(
    tmp_path: Path,
) -> None:
    plan = PlanFile(tmp_path / "org.json")
    plan.earlier_path.write_text('{"accounts": {"Big": {"bodies": 1}}}', encoding="utf-8")
    with pytest.raises(StackPlanError) as caught:
        read_plan(plan)
    assert str(caught.value) == (
        f"{plan.earlier_path}: the whole file: holds the plan in the form of an earlier release "
        "(JSON, which git cannot merge): `python -m stacks.placement place --topology "
        f"{plan.topology_file}` rewrites it as org.stacks, a line per unit, keeping every "
        "entry; commit both changes"
    )
    assert read_earlier_plan(plan) == {"Big": {"bodies": 1}}
    plan.path.write_text(BIG, encoding="utf-8")
    with pytest.raises(StackPlanError, match=r"is the plan in an earlier form beside org\.stacks"):
        read_plan(plan)


@pytest.mark.parametrize(
    ("content", "where", "rule"),
    [
        ("[]", "accounts", "is required"),
        ('{"accounts": {"Sales": 1}}', "accounts.Sales", "must be an object"),
        ('{"accounts": {"Sales": {"bodies": 0}}}', "accounts.Sales.bodies", "from 1 to 999"),
        ('{"accounts": {"Sales": {"bodies": true}}}', "accounts.Sales.bodies", "from 1 to 999"),
        (
            '{"accounts": {\n<<<<<<< HEAD\n"Sales": {}\n=======\n"Sales": {"bodies": 1}\n'
            ">>>>>>> branch\n}}",
            "line 2",
            "'<<<<<<<' marks a merge conflict",
        ),
    ],
)
def test_an_earlier_json_plan_that_is_not_one_is_refused_naming_the_entry(
    tmp_path: Path, content: str, where: str, rule: str
) -> None:
    plan = PlanFile(tmp_path / "org.json")
    plan.earlier_path.write_text(content, encoding="utf-8")
    with pytest.raises(StackPlanError) as caught:
        read_earlier_plan(plan)
    (found_where, found_rule), *_ = caught.value.problems
    assert (found_where, rule in found_rule) == (where, True)
