"""The command line writes the report of an assembly as JSON and Markdown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stacks.checks.access_report.__main__ import main

ROOT = Path(__file__).resolve().parents[4]
pytestmark = pytest.mark.synth


def test_the_access_report_cli_writes_json_and_markdown(
    example_assembly: Path, tmp_path: Path
) -> None:
    code = main(
        [
            str(example_assembly),
            "--json",
            str(tmp_path / "a.json"),
            "--markdown",
            str(tmp_path / "a.md"),
        ]
    )
    assert code == 0
    assert json.loads((tmp_path / "a.json").read_text())["queues"]
    assert "| send | account `111111111111` |" in (tmp_path / "a.md").read_text()


def test_without_an_output_file_the_markdown_goes_to_standard_output(
    example_assembly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(example_assembly)]) == 0
    assert capsys.readouterr().out.startswith("# Access report\n")


def test_a_directory_that_is_no_cloud_assembly_exits_2_naming_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"access report: {tmp_path}: not a cloud assembly (")
    assert error.endswith("; run the synth first\n")


def test_the_package_runs_as_a_module(example_assembly: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "stacks.checks.access_report",
            str(example_assembly),
            "--json",
            str(tmp_path / "a.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "a.json").read_text())["queues"]
