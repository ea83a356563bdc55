"""The app: a stack per account with its outputs and no exports, app.py on a good and a bad
topology, the alarms."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stacks.app_builder import build_app
from stacks.checks import gates
from stacks.placement.placing import new_organization_plan
from stacks.topology import parse_topology
from tests.stacks.app_process import run_app

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.synth


def test_one_messaging_stack_per_account_and_the_analytics_stack_in_ops(
    example_assembly: Path,
) -> None:
    manifest = json.loads((example_assembly / "manifest.json").read_text())
    stacks = {
        name: artifact["environment"]
        for name, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    }
    assert stacks == {
        "Messaging-Sales": "aws://111111111111/us-east-1",
        "Messaging-Billing": "aws://222222222222/us-east-1",
        "Messaging-Ops": "aws://333333333333/us-east-1",
        "DeliveryLogs-Ops": "aws://333333333333/us-east-1",
    }


def test_cdk_deploys_billing_whose_topic_sales_subscribes_to_before_sales(
    example_assembly: Path,
) -> None:
    manifest = json.loads((example_assembly / "manifest.json").read_text())
    assert "Messaging-Billing" in manifest["artifacts"]["Messaging-Sales"]["dependencies"]
    assert "Messaging-Sales" not in manifest["artifacts"]["Messaging-Billing"].get(
        "dependencies", []
    )


def test_templates_use_no_cloudformation_exports(example_assembly: Path) -> None:
    for template in gates.templates(example_assembly):
        text = template.read_text()
        assert "Fn::ImportValue" not in text
        outputs = json.loads(text).get("Outputs", {})
        assert all("Export" not in o for o in outputs.values())


def test_each_stack_outputs_its_transport_addresses(example_assembly: Path) -> None:
    template = json.loads((example_assembly / "Messaging-Billing.template.json").read_text())
    assert {"BillingTransportAddress", "BillingQueueUrl", "BillingDeadLetterQueueArn"} <= set(
        template["Outputs"]
    )


def test_app_py_stops_on_a_bad_topology_before_synth(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["accounts"][0]["id"] = "12345"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    outdir = tmp_path / "out"
    result = run_app(bad, outdir)
    assert result.returncode == 2
    assert f"{bad}: topology.accounts[0].id: account id must be exactly 12 digits" in result.stderr
    assert not list(outdir.glob("*.template.json"))


def test_app_py_without_the_cli_reads_cdk_json(tmp_path: Path) -> None:
    env = {**os.environ, "CDK_OUTDIR": str(tmp_path)}
    env.pop("CDK_CONTEXT_JSON", None)
    result = subprocess.run(
        [sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "Messaging-Billing.template.json").exists()


def test_alarms_notify_the_configured_topic_of_the_account(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["alarms"] = {"topicName": "platform-alarms", "maxMessageAgeSeconds": 600}
    topology = parse_topology(document)
    app = build_app(topology, new_organization_plan(topology), outdir=str(tmp_path), nag=False)
    app.synth()
    template = json.loads((tmp_path / "Messaging-Sales.template.json").read_text())
    alarms = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
    ]
    assert alarms
    target = {
        "Fn::Join": [
            "",
            ["arn:", {"Ref": "AWS::Partition"}, ":sns:us-east-1:111111111111:platform-alarms"],
        ]
    }
    assert all(a["AlarmActions"] == [target] and a["OKActions"] == [target] for a in alarms)
    ages = [a["Threshold"] for a in alarms if a["MetricName"] == "ApproximateAgeOfOldestMessage"]
    assert ages
    assert set(ages) == {600}
