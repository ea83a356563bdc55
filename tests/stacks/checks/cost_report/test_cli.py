"""``python -m stacks.checks.cost_report`` writes the report of an assembly, and
docs/costs.md holds the prices the report uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stacks.checks.cost_report import prices_markdown
from stacks.checks.cost_report.__main__ import main

ROOT = Path(__file__).resolve().parents[4]


def test_docs_costs_md_holds_the_prices_rendered() -> None:
    assert (ROOT / "docs" / "costs.md").read_text(encoding="utf-8").endswith(prices_markdown())


@pytest.mark.synth
def test_the_example_costs_its_keys_alarms_and_relays_as_the_readme_says(
    example_assembly: Path, tmp_path: Path
) -> None:
    code = main(
        [
            str(example_assembly),
            "--json",
            str(tmp_path / "c.json"),
            "--markdown",
            str(tmp_path / "c.md"),
        ]
    )
    assert code == 0
    report = json.loads((tmp_path / "c.json").read_text())
    assert [a["keys"] for a in report["accounts"]] == [11, 10, 13]
    assert set(report["bridge"]["relays"]) == {"outbound", "inbound"}
    assert report["bridge"]["relays"]["outbound"]["batchSize"] == 10
    assert (tmp_path / "c.md").read_text().startswith("# Cost report\n")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    keys = sum(a["keys"] for a in report["accounts"])
    cloudwatch = sum(
        line["usd"]
        for account in report["accounts"]
        for line in account["lines"]
        if line["unit"] in ("alarm metric-month", "dashboard-month", "metric-month")
    )
    assert (
        f"${report['fixedMonthlyUsd']:,.2f} a month for the three accounts ({keys} keys make "
        f"${keys} of it, CloudWatch's alarms, dashboards and metrics ${cloudwatch:,.2f}), and "
        f"${report['bridge']['usd']:,.2f} per million 4 KiB messages"
    ) in readme
    assert [a["dashboards"] for a in report["accounts"]] == [1, 1, 1]


def test_a_directory_that_is_no_assembly_exits_2_naming_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"cost report: {tmp_path}: not a cloud assembly")
