"""The gates pass the example app and catch what they are for: cdk-nag fails the synth of an
insecure resource, cfn-lint reports a template CloudFormation would refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_sqs as sqs

from stacks.app_builder import build_app
from stacks.checks import gates
from stacks.topology import parse_topology

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.synth


def test_cdk_nag_reports_no_unacknowledged_finding(example_assembly: Path) -> None:
    report = json.loads((example_assembly / "validation-report.json").read_text())
    assert [r for r in report["pluginReports"] if r.get("violations")] == []


def test_cdk_nag_fails_the_synth_of_an_insecure_queue(tmp_path: Path) -> None:
    app = build_app(
        parse_topology(json.loads((ROOT / "cdk.json").read_text())["context"]["topology"]),
        outdir=str(tmp_path),
    )
    sqs.Queue(Stack(app, "Insecure"), "NoDlqNoTls")
    with pytest.raises(RuntimeError, match="AwsSolutions-SQS4"):
        app.synth()
    report = (tmp_path / "validation-report.json").read_text()
    assert "AwsSolutions-SQS3" in report
    assert "AwsSolutions-SQS4" in report


def test_cfn_lint_finds_nothing(example_assembly: Path) -> None:
    assert gates.cfn_lint(example_assembly) == []


def test_cfn_lint_gate_reports_findings(tmp_path: Path) -> None:
    bad = {
        "Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": 7, "Bogus": 1}}}
    }
    (tmp_path / "Bad.template.json").write_text(json.dumps(bad))
    with pytest.raises(gates.GateError, match="E3002"):
        gates.require_clean_cfn_lint(tmp_path)
