"""The access report follows the delivery logs out of their accounts: log group to destination,
destination through Firehose to S3, and who may use the log bucket's prefixes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stacks import access_report, gates
from stacks.app_builder import topology_from_context
from stacks.topology import parse_topology

pytestmark = pytest.mark.synth

ANALYTICS_STACK = "DeliveryLogs-Ops"
LOG_BUCKET = "messaging-delivery-logs-333333333333-us-east-1"
DESTINATION = "arn:aws:logs:us-east-1:333333333333:destination:messaging-delivery-logs"
BILLING_LOG_GROUP = (
    "arn:aws:logs:us-east-1:222222222222:log-group:sns/us-east-1/222222222222/OrderBilled"
)

Template = dict[str, Any]


def test_the_log_data_edges_equal_the_topology_intent(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    assert access_report.actual_log_data_edges(report) == access_report.expected_log_data_edges(
        topology
    )


def test_every_log_group_is_admitted_and_every_role_may_take_its_hop(
    example_assembly: Path,
) -> None:
    logs = access_report.build_report(example_assembly)["delivery_logs"]
    assert {f["log_group"] for f in logs["subscription_filters"]} == {
        BILLING_LOG_GROUP,
        f"{BILLING_LOG_GROUP}/Failure",
    }
    assert all(f["admitted"] for f in logs["subscription_filters"])
    (destination,) = logs["destinations"]
    assert destination["destination"] == DESTINATION
    assert destination["role_may_put_records"]
    (stream,) = logs["streams"]
    assert stream["bucket_arn"] == f"arn:aws:s3:::{LOG_BUCKET}"
    assert stream["role_may_write"]
    (bucket,) = logs["buckets"]
    assert bucket["bucket"] == LOG_BUCKET
    assert bucket["denies_insecure_transport"]


def test_the_markdown_has_a_delivery_logs_section(example_assembly: Path) -> None:
    markdown = access_report.to_markdown(access_report.build_report(example_assembly))
    section = markdown[markdown.index("## Delivery logs") :]
    assert (
        f"| `{BILLING_LOG_GROUP}` | 222222222222 | `{DESTINATION}` | yes | Messaging-Billing |"
        in (section)
    )
    assert f"### Log bucket `{LOG_BUCKET}`" in section
    assert (
        "| service `emr-serverless.amazonaws.com` | `delivery-logs/`, `reports/` | `reports/` | "
        "`reports/` | none |"
    ) in section


def test_without_analytics_no_log_data_leaves_its_account(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    del document["analytics"]
    topology = parse_topology(document)
    report = access_report.build_report(gates.synth(topology, tmp_path))
    assert access_report.expected_log_data_edges(topology) == set()
    assert access_report.actual_log_data_edges(report) == set()
    assert "delivery logs stay in their accounts" in access_report.to_markdown(report)


def test_a_log_group_the_destination_policy_does_not_name_is_not_admitted(
    example_assembly: Path, tmp_path: Path
) -> None:
    def admit_only_the_owner(template: Template) -> None:
        (destination,) = _resources(template, "AWS::Logs::Destination")
        policy = {
            "Statement": [
                {
                    "Action": "logs:PutSubscriptionFilter",
                    "Effect": "Allow",
                    "Principal": {"AWS": "333333333333"},
                    "Resource": DESTINATION,
                }
            ]
        }
        destination["Properties"]["DestinationPolicy"] = json.dumps(policy)

    assembly = _edited_copy(example_assembly, tmp_path, admit_only_the_owner)
    report = access_report.build_report(assembly)
    assert {f["admitted"] for f in report["delivery_logs"]["subscription_filters"]} == {False}
    assert f"`{DESTINATION}` | NO | Messaging-Billing |" in access_report.to_markdown(report)


def test_a_destination_outside_the_assembly_is_named_as_such(
    example_assembly: Path, tmp_path: Path
) -> None:
    assembly = _copy(example_assembly, tmp_path)
    manifest = json.loads((assembly / "manifest.json").read_text())
    del manifest["artifacts"][ANALYTICS_STACK]
    (assembly / "manifest.json").write_text(json.dumps(manifest))
    report = access_report.build_report(assembly)
    filters = report["delivery_logs"]["subscription_filters"]
    assert {(f["destination_in_assembly"], f["admitted"]) for f in filters} == {(False, None)}
    assert access_report.actual_log_data_edges(report) == {
        ("subscription-filter", BILLING_LOG_GROUP, DESTINATION),
        ("subscription-filter", f"{BILLING_LOG_GROUP}/Failure", DESTINATION),
    }
    assert "| destination not in the assembly |" in access_report.to_markdown(report)


def test_a_firehose_role_that_may_not_write_its_prefix_is_flagged(
    example_assembly: Path, tmp_path: Path
) -> None:
    def drop_the_object_writes(template: Template) -> None:
        (stream,) = _resources(template, "AWS::KinesisFirehose::DeliveryStream")
        role_id = stream["Properties"]["ExtendedS3DestinationConfiguration"]["RoleARN"][
            "Fn::GetAtt"
        ][0]
        (policy,) = [
            p
            for p in _resources(template, "AWS::IAM::Policy")
            if p["Properties"]["Roles"] == [{"Ref": role_id}]
        ]
        statements = policy["Properties"]["PolicyDocument"]["Statement"]
        statements[:] = [s for s in statements if "s3:PutObject" not in s["Action"]]

    report = access_report.build_report(
        _edited_copy(example_assembly, tmp_path, drop_the_object_writes)
    )
    (stream,) = report["delivery_logs"]["streams"]
    assert not stream["role_may_write"]
    edges = access_report.actual_log_data_edges(report)
    assert not {e for e in edges if e[1] == "firehose.amazonaws.com"}


def test_a_bucket_policy_grant_shows_as_a_reader_of_its_prefix(
    example_assembly: Path, tmp_path: Path
) -> None:
    def let_an_auditor_read_reports(template: Template) -> None:
        (policy,) = [
            p
            for p in _resources(template, "AWS::S3::BucketPolicy")
            if template["Resources"][p["Properties"]["Bucket"]["Ref"]]["Properties"].get(
                "BucketName"
            )
            == LOG_BUCKET
        ]
        policy["Properties"]["PolicyDocument"]["Statement"].append(
            {
                "Action": "s3:GetObject",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::444444444444:root"},
                "Resource": f"arn:aws:s3:::{LOG_BUCKET}/reports/*",
            }
        )

    report = access_report.build_report(
        _edited_copy(example_assembly, tmp_path, let_an_auditor_read_reports)
    )
    assert ("read", "444444444444", f"s3://{LOG_BUCKET}/reports/") in (
        access_report.actual_log_data_edges(report)
    )
    assert "| account `444444444444` | - | `reports/` | - | - | none |" in (
        access_report.to_markdown(report)
    )


def _resources(template: Template, resource_type: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == resource_type]


def _copy(assembly: Path, tmp_path: Path) -> Path:
    """The manifest and templates of an assembly (all the report reads), to change freely."""
    target = tmp_path / "cdk.out"
    shutil.copytree(assembly, target, ignore=shutil.ignore_patterns("asset.*"))
    return target


def _edited_copy(assembly: Path, tmp_path: Path, edit: Callable[[Template], None]) -> Path:
    """A copy of the assembly whose analytics stack template ``edit`` has changed."""
    target = _copy(assembly, tmp_path)
    template_file = target / f"{ANALYTICS_STACK}.template.json"
    template = json.loads(template_file.read_text())
    edit(template)
    template_file.write_text(json.dumps(template))
    return target
