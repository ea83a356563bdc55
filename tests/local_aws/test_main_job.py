"""The main job names the failing step and why, and starts nothing when the topology is bad;
its access report goes to files, with a short summary printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local_aws.__main__ import main, write_access_report
from stacks.app_builder import topology_from_context
from stacks.placement.plan import committed_plan
from stacks.placement.plan_file import PlanFile


def test_a_bad_topology_fails_step_one_with_the_field(
    tmp_path: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    document["endpoints"][0]["account"] = "Nowhere"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    assert main(["--topology", str(bad), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "step 1/9 'validate topology" in err
    assert f"{bad}: topology.endpoints[0].account: unknown account 'Nowhere'" in err
    assert not (tmp_path / "out" / "moto.log").exists()


def test_a_topology_without_its_plan_fails_step_one_naming_the_plan_and_the_fix(
    tmp_path: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The main job deploys through the committed plan as cdk deploy does: it places nothing."""
    topology = tmp_path / "mine.json"
    topology.write_text(json.dumps(document))
    assert main(["--topology", str(topology), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "step 1/9 'validate topology" in err
    assert (
        f"{tmp_path / 'mine.stacks'}: account Sales: is not in the plan (the plan does not exist): "
        f"`python -m stacks.placement place --topology {topology}` records its units" in err
    )
    assert not (tmp_path / "out" / "moto.log").exists()


@pytest.mark.synth
def test_the_access_report_is_written_in_full_and_printed_as_a_short_summary(
    tmp_path: Path, example_assembly: Path
) -> None:
    """The full report (hundreds of lines) goes to the files; the job prints a line per
    account, whether the report equals the intent, and where the files are."""
    topology = topology_from_context(None)
    plan = committed_plan(topology, PlanFile())
    lines = write_access_report(example_assembly, tmp_path, topology, plan)
    markdown = (tmp_path / "access-report.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Access report")
    assert json.loads((tmp_path / "access-report.json").read_text(encoding="utf-8"))["queues"]
    assert len(markdown.splitlines()) > 100 > len(lines)
    assert lines[0].startswith("account Sales (111111111111): ")
    assert any(line.startswith("the report equals the topology's intent: ") for line in lines)
    assert lines[-1] == (
        f"full report: {tmp_path / 'access-report.md'}, {tmp_path / 'access-report.json'}"
    )
