"""The placement commands as a team runs them: each says what it changed and writes the plan only
when it changed; bad input (a plan with conflict markers, a plan of another topology, an account
that needs its deployed stacks to be placed) exits 2 naming the problem and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.placement.__main__ import main
from stacks.placement.plan_file import PlanFile


@pytest.fixture
def topology_file(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "org.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_place_writes_what_it_placed_then_finds_nothing_to_change(
    topology_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "place", "--topology", str(topology_file))
    assert code == 0
    assert "Billing: endpoint:Billing: placed in stack 1 (Messaging-Billing)" in out
    assert out.rstrip().endswith("org.stacks: written; commit it with the topology")
    written = PlanFile(topology_file).path.read_text(encoding="utf-8")

    code, out, _ = _run(capsys, "place", "--topology", str(topology_file))
    assert (code, out.rstrip().endswith("org.stacks: unchanged")) == (0, True)
    assert PlanFile(topology_file).path.read_text(encoding="utf-8") == written


def test_place_refuses_an_account_that_needs_its_deployed_stacks_and_writes_nothing(
    topology_file: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    document["endpoints"] += [{"name": f"E{i}", "account": "Billing"} for i in range(60)]
    topology_file.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = _run(capsys, "place", "--topology", str(topology_file))
    assert (code, out) == (2, "")
    assert "org.stacks: account Billing: is not in the plan (the plan does not exist)" in err
    assert f"start --topology {topology_file} --account Billing" in err
    assert not PlanFile(topology_file).path.exists()

    code, out, _ = _run(capsys, "start", "--topology", str(topology_file))
    assert code == 0
    assert "Billing: 0 stacks -> 3" in out
    code, _, err = _run(capsys, "start", "--topology", str(topology_file), "--account", "Billing")
    assert code == 2
    assert "account Billing: has entries in the plan" in err


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda text: text.replace(
                "stack Sales 1\n", "<<<<<<< HEAD\nstack Sales 1\n=======\n", 1
            ),
            "'<<<<<<<' marks a merge conflict git left here",
        ),
        (
            lambda text: text.replace("account Sales 111111111111", "account Sales 999999999999"),
            "account Sales: the plan records it as AWS account 999999999999, the topology as "
            "111111111111: is org.stacks the plan of another topology?",
        ),
        (
            lambda text: text + "account Payroll 888888888888\nstack Payroll 1\n",
            "account Payroll: is in the plan but not in the topology",
        ),
    ],
)
def test_a_plan_place_cannot_trust_exits_2_naming_the_problem_and_is_left_as_it_is(
    topology_file: Path, capsys: pytest.CaptureFixture[str], edit: Any, problem: str
) -> None:
    assert _run(capsys, "place", "--topology", str(topology_file))[0] == 0
    path = PlanFile(topology_file).path
    broken = edit(path.read_text(encoding="utf-8"))
    path.write_text(broken, encoding="utf-8")
    code, _, err = _run(capsys, "place", "--topology", str(topology_file))
    assert code == 2
    assert problem in err
    assert path.read_text(encoding="utf-8") == broken


def test_retire_removes_a_stack_only_once_it_holds_nothing(
    topology_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "place", "--topology", str(topology_file))[0] == 0
    path = PlanFile(topology_file).path
    path.write_text(path.read_text(encoding="utf-8") + "stack Sales 2\n", encoding="utf-8")
    code, out, _ = _run(capsys, "retire", "--topology", str(topology_file), "--account", "Sales")
    assert code == 0
    assert "Sales: 2 stacks -> 1" in out
    code, _, err = _run(capsys, "retire", "--topology", str(topology_file), "--account", "Sales")
    assert code == 2
    assert "its last stack, stack 1 (Messaging-Sales), holds 11 units" in err


def test_check_of_a_folder_that_is_no_assembly_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "check", "--app", str(tmp_path / "missing"))
    assert code == 2
    assert "not a cloud assembly" in err
