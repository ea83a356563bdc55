"""The whole job on generated data: every layout gives one summary, and it matches the truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from cross_account_runtime.delivery_report import job
from cross_account_runtime.delivery_report.cli import main
from cross_account_runtime.delivery_report.errors import AccountingError
from cross_account_runtime.delivery_report.job import JobConfig, run
from cross_account_runtime.delivery_report.normalize import with_outcome
from cross_account_runtime.delivery_report.sample.writers import LAYOUTS
from cross_account_runtime.delivery_report.summary import comparable
from tests.runtime.delivery_report.conftest import write_lines
from tests.runtime.delivery_report.test_golden import LAMBDA, TLS

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def summaries(
    spark: SparkSession, sample_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("job")
    return {
        layout: run(
            spark, JobConfig(inputs=(str(sample_dir / layout),), output=str(out / layout))
        ).summary
        for layout in LAYOUTS
    } | {"_out": out}


@pytest.fixture(scope="module")
def truth(sample_dir: Path) -> dict[str, Any]:
    """What the generator wrote into the sample, as its manifest says."""
    truth: dict[str, Any] = json.loads((sample_dir / "manifest.json").read_text())["truth"]
    return truth


def test_every_layout_gives_the_same_summary(summaries: dict[str, Any]) -> None:
    export = comparable(summaries["export"])
    for layout in ("firehose", "filter-log-events", "jsonl"):
        assert comparable(summaries[layout]) == export, layout


def test_summary_matches_what_was_generated(
    summaries: dict[str, Any], truth: dict[str, Any]
) -> None:
    summary = summaries["export"]
    assert summary["accounting"]["records_parsed"] == truth["records"]
    assert summary["deliveries"]["by_status"] == {
        s: truth["by_status"].get(s, 0) for s in ("SUCCESS", "FAILURE")
    }
    assert summary["failures"]["by_cause"] == truth["by_cause"]
    protocols = {r["protocol"]: r["total"] for r in summary["deliveries"]["by_protocol"]}
    assert protocols == truth["by_protocol"]
    assert summary["retries"]["retried"] == truth["retried"]
    assert summary["retries"]["retried_succeeded"] == truth["retried_succeeded"]
    assert summary["http_4xx_success"]["total"] == truth["http_4xx_success"]
    assert summary["lost"]["total"] == truth["lost"]
    assert summary["duplicates"]["deliveries"] == truth["duplicated_deliveries"]
    assert summary["duplicates"]["extra_records"] == truth["duplicate_extra_records"]


def test_accounting_per_layout(summaries: dict[str, Any], truth: dict[str, Any]) -> None:
    for layout in LAYOUTS:
        accounting = summaries[layout]["accounting"]
        assert accounting["balanced"], layout
        assert accounting["malformed_by_reason"] == {}, layout
        assert accounting["records_read"] == truth["records"] + accounting["records_rejected"]
    assert summaries["firehose"]["accounting"]["skipped_by_reason"]["control_message"] > 0
    assert summaries["export"]["input"]["files_skipped"][0]["reason"] == "export_write_test_probe"
    # Several objects, so every core works; named .gz (the delivery stream's FileExtension),
    # so Hadoop gunzips them rather than Python workers.
    firehose = summaries["firehose"]["input"]
    assert firehose["files_by_layout"]["firehose"] > 1
    assert firehose["files_gunzipped_in_python"] == 0


def test_outputs(summaries: dict[str, Any]) -> None:
    out: Path = summaries["_out"] / "export"
    stored = json.loads((out / "summary.json").read_text())
    assert stored == json.loads(json.dumps(summaries["export"]))
    assert (out / "summary.json").read_text() == job.dump_summary(summaries["export"])
    dates = sorted(p.name for p in (out / "records" / "outcome=parsed").iterdir())
    assert dates[0] == "date=2025-01-06"
    report = (out / "report.html").read_text()
    for heading in (
        "Accounting",
        "Failures",
        "Lost messages",
        "Dwell time",
        "HTTP 4xx answers",
        "<svg",
    ):
        assert heading in report
    hours = summaries["export"]["series"]["per_hour"]
    assert (
        sum(h["SUCCESS"] + h["FAILURE"] for h in hours)
        == summaries["export"]["deliveries"]["total"]
    )


def test_missing_records_fail_the_accounting(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_lines(tmp_path / "in" / "records.jsonl", [LAMBDA, TLS])
    original = with_outcome

    def losing_one(classified: DataFrame) -> DataFrame:
        return original(classified).filter(sf.col("protocol") != "lambda")

    monkeypatch.setattr(job, "with_outcome", losing_one)
    with pytest.raises(
        AccountingError, match=r"records read \(2\) != parsed \(1\) \+ rejected \(0\)"
    ):
        run(spark, JobConfig(inputs=(str(tmp_path / "in"),), output=str(tmp_path / "out")))


def test_missing_input_path_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    assert main(["--input", str(missing), "--output", str(tmp_path / "out")]) == 2
    assert f"input path {str(missing)!r} does not exist" in capsys.readouterr().err


def test_unknown_layout_is_refused_by_the_command_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cross_account_runtime.delivery_report",
            "--input",
            str(tmp_path),
            "--output",
            "x",
            "--layout",
            "csv",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "invalid choice: 'csv'" in result.stderr
