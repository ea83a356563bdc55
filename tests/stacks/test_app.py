"""The app: a stack per account with its outputs and no exports, app.py on a good and a bad
topology, the alarms; and the access report of the example."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stacks import access_report
from stacks.app_builder import build_app, topology_from_context
from stacks.checks import gates
from stacks.topology import parse_topology

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


def test_the_access_report_equals_the_topology_intent(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    assert access_report.actual_access(report) == access_report.expected_access(topology)
    assert all(q["denies_insecure_transport"] for q in report["queues"])
    assert all(t["denies_insecure_transport"] for t in report["topics"])


def test_the_access_report_shows_the_relay_edges(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    assert access_report.actual_relay_edges(report) == access_report.expected_relay_edges(topology)
    roles = {r["role"] for r in report["relays"] if r["direction"] == "outbound"}
    assert roles == {
        "arn:aws:iam::111111111111:role/messaging-relay-outbound-Sales",
        "arn:aws:iam::222222222222:role/messaging-relay-outbound-Billing",
    }
    assert "## Relays (account bridge)" in access_report.to_markdown(report)


def test_whoever_may_send_to_an_endpoint_queue_may_use_its_key(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    for endpoint in topology.all_queues:
        queue = _queue(report, topology.queue_arn(endpoint))
        assert access_report.principal_set(queue["key_users"]) == access_report.principal_set(
            queue["send"]
        ), endpoint.name


def test_the_access_report_shows_topics_and_their_edges(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    (topic,) = report["topics"]
    assert topic["topic"] == "arn:aws:sns:us-east-1:222222222222:OrderBilled"
    assert topic["logged_protocols"] == ["http/s", "sqs"]
    (subscribe,) = topic["subscribe"]
    assert subscribe["principal"] == {"account": "111111111111"}
    assert subscribe["conditions"]["StringEquals"] == {"sns:Protocol": "sqs"}
    edges = {(s["protocol"], s["endpoint"], s["stack"]) for s in report["subscriptions"]}
    assert edges == {
        ("sqs", "arn:aws:sqs:us-east-1:111111111111:Sales", "Messaging-Sales"),
        ("https", "https://partner.example.com/sns/order-billed", "Messaging-Billing"),
    }


def _queue(report: dict[str, Any], arn: str) -> dict[str, Any]:
    return dict(next(q for q in report["queues"] if q["queue"] == arn))


def test_the_access_report_shows_organization_grants(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["accounts"][0]["organizationId"] = "o-a1b2c3d4e5"
    document["routes"].append({"fromOrganization": "o-a1b2c3d4e5", "to": "Billing"})
    topology = parse_topology(document)
    gates.synth(topology, tmp_path)
    report = access_report.build_report(tmp_path)
    assert access_report.actual_access(report) == access_report.expected_access(topology)
    billing = _queue(report, "arn:aws:sqs:us-east-1:222222222222:Billing")
    (org_grant,) = [g for g in billing["send"] if "organization" in g["principal"]]
    assert org_grant["conditions"] == {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}}
    markdown = access_report.to_markdown(report)
    assert "organization `o-a1b2c3d4e5`" in markdown


def test_the_access_report_cli_writes_json_and_markdown(
    example_assembly: Path, tmp_path: Path
) -> None:
    code = access_report.main(
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


def test_app_py_stops_on_a_bad_topology_before_synth(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["accounts"][0]["id"] = "12345"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    outdir = tmp_path / "out"
    env = {
        **os.environ,
        "CDK_CONTEXT_JSON": json.dumps({"topology": str(bad)}),
        "CDK_OUTDIR": str(outdir),
    }
    result = subprocess.run(
        [sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
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
    app = build_app(parse_topology(document), outdir=str(tmp_path), nag=False)
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
