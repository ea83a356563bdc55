"""The main job names the failing step and why, and starts nothing when the topology is bad."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local_aws.__main__ import main


def test_a_bad_topology_fails_step_one_with_the_field(
    tmp_path: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    document["endpoints"][0]["account"] = "Nowhere"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    assert main(["--topology", str(bad), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "step 1/8 'validate topology" in err
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
    assert "step 1/8 'validate topology" in err
    assert (
        f"{tmp_path / 'mine.stacks'}: account Sales: is not in the plan (the plan does not exist): "
        f"`python -m stacks.placement place --topology {topology}` records its units" in err
    )
    assert not (tmp_path / "out" / "moto.log").exists()
