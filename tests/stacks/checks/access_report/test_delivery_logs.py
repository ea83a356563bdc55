"""The access report follows the delivery logs out of their accounts: log group to destination,
destination through Firehose to S3, and who may use the log bucket's prefixes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stacks.app_builder import topology_from_context
from stacks.checks import access_report, gates
from stacks.placement.placing import new_organization_plan
from stacks.topology import parse_topology

pytestmark = pytest.mark.synth

ANALYTICS_STACK = "DeliveryLogs-Ops"
LOG_BUCKET = "messaging-delivery-logs-333333333333-us-east-1"
DESTINATION = "arn:aws:logs:us-east-1:333333333333:destination:messaging-delivery-logs"
BILLING_LOG_GROUP = "arn:aws:logs:us-east-1:222222222222:log-group:sns/us-east-1/222222222222/MyCompany-Messages-OrderBilled"

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
    report = access_report.build_report(
        gates.synth(topology, new_organization_plan(topology), tmp_path)
    )
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
    let_an_auditor_read_reports = _allow_in_the_log_bucket_policy(
        f"arn:aws:s3:::{LOG_BUCKET}/reports/*"
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


@pytest.mark.parametrize("resource", ["arn:aws:s3:::*", "arn:aws:s3:::messaging-*"])
def test_a_bucket_pattern_without_a_key_covers_every_key_of_the_buckets_it_matches(
    example_assembly: Path, tmp_path: Path, resource: str
) -> None:
    report = access_report.build_report(
        _edited_copy(example_assembly, tmp_path, _allow_in_the_log_bucket_policy(resource))
    )
    assert ("read", "444444444444", f"s3://{LOG_BUCKET}/") in (
        access_report.actual_log_data_edges(report)
    )
    assert "| account `444444444444` | - | `(every key)` | - | - | none |" in (
        access_report.to_markdown(report)
    )


def test_a_grant_on_the_bucket_itself_covers_no_key(example_assembly: Path, tmp_path: Path) -> None:
    report = access_report.build_report(
        _edited_copy(
            example_assembly,
            tmp_path,
            _allow_in_the_log_bucket_policy(f"arn:aws:s3:::{LOG_BUCKET}"),
        )
    )
    edges = access_report.actual_log_data_edges(report)
    assert not {e for e in edges if e[1] == "444444444444"}


@pytest.mark.parametrize("negation", ["NotAction", "NotResource"])
def test_a_bucket_policy_allowing_with_a_negation_is_refused(
    example_assembly: Path, tmp_path: Path, negation: str
) -> None:
    def allow_with_a_negation(template: Template) -> None:
        _allow_in_the_log_bucket_policy(f"arn:aws:s3:::{LOG_BUCKET}/reports/*")(template)
        statement = _log_bucket_policy(template)["Properties"]["PolicyDocument"]["Statement"][-1]
        positive = negation.removeprefix("Not")
        statement[negation] = statement.pop(positive)

    assembly = _edited_copy(example_assembly, tmp_path, allow_with_a_negation)
    with pytest.raises(access_report.AccessReportError, match=negation):
        access_report.build_report(assembly)


def test_a_destination_policy_allowing_with_not_action_is_refused(
    example_assembly: Path, tmp_path: Path
) -> None:
    def admit_with_not_action(template: Template) -> None:
        statement = {
            "NotAction": "logs:DeleteDestination",
            "Effect": "Allow",
            "Principal": {"AWS": "222222222222"},
            "Resource": DESTINATION,
        }
        _set_destination_policy(template, statement)

    assembly = _edited_copy(example_assembly, tmp_path, admit_with_not_action)
    with pytest.raises(access_report.AccessReportError, match="NotAction"):
        access_report.build_report(assembly)


def test_a_stream_into_a_bucket_the_template_does_not_name_is_reported_with_an_unknown_bucket(
    example_assembly: Path, tmp_path: Path
) -> None:
    def import_the_bucket_arn(template: Template) -> None:
        (stream,) = _resources(template, "AWS::KinesisFirehose::DeliveryStream")
        configuration = stream["Properties"]["ExtendedS3DestinationConfiguration"]
        configuration["BucketARN"] = {"Fn::ImportValue": "LogBucketArn"}

    report = access_report.build_report(
        _edited_copy(example_assembly, tmp_path, import_the_bucket_arn)
    )
    logs = report["delivery_logs"]
    (stream,) = logs["streams"]
    assert (stream["bucket"], stream["location"], stream["role_may_write"]) == (None, None, None)
    assert logs["buckets"] == []
    (destination,) = logs["destinations"]
    assert ("delivers", DESTINATION, stream["stream"]) in (
        access_report.actual_log_data_edges(report)
    )
    assert destination["location"] is None
    assert f"| `{stream['role']}` | unknown |" in access_report.to_markdown(report)


def test_a_destination_admitting_an_organization_leaves_admission_unknown(
    example_assembly: Path, tmp_path: Path
) -> None:
    def admit_an_organization(template: Template) -> None:
        statement = {
            "Action": "logs:PutSubscriptionFilter",
            "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}},
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Resource": DESTINATION,
        }
        _set_destination_policy(template, statement)

    report = access_report.build_report(
        _edited_copy(example_assembly, tmp_path, admit_an_organization)
    )
    filters = report["delivery_logs"]["subscription_filters"]
    assert {(f["destination_in_assembly"], f["admitted"]) for f in filters} == {(True, None)}
    assert f"`{DESTINATION}` | unknown | Messaging-Billing |" in access_report.to_markdown(report)


@pytest.mark.parametrize(
    ("principal", "condition"),
    [
        ({"AWS": "*"}, {"StringEquals": {"aws:SourceAccount": "222222222222"}}),
        ({"AWS": "222222222222"}, {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}),
        ({"AWS": "arn:aws:iam::222222222222:role/log-subscriber"}, None),
    ],
    ids=["anyone-under-a-condition", "the-account-under-a-condition", "one-role-of-the-account"],
)
def test_a_grant_the_filter_creator_may_not_meet_leaves_admission_unknown(
    example_assembly: Path,
    tmp_path: Path,
    principal: dict[str, str],
    condition: dict[str, Any] | None,
) -> None:
    def admit_under_a_condition(template: Template) -> None:
        statement: dict[str, Any] = {
            "Action": "logs:PutSubscriptionFilter",
            "Effect": "Allow",
            "Principal": principal,
            "Resource": DESTINATION,
        }
        if condition is not None:
            statement["Condition"] = condition
        _set_destination_policy(template, statement)

    report = access_report.build_report(
        _edited_copy(example_assembly, tmp_path, admit_under_a_condition)
    )
    filters = report["delivery_logs"]["subscription_filters"]
    assert {f["admitted"] for f in filters} == {None}


def _log_bucket_policy(template: Template) -> dict[str, Any]:
    (policy,) = [
        p
        for p in _resources(template, "AWS::S3::BucketPolicy")
        if template["Resources"][p["Properties"]["Bucket"]["Ref"]]["Properties"].get("BucketName")
        == LOG_BUCKET
    ]
    return policy


def _allow_in_the_log_bucket_policy(resource: str) -> Callable[[Template], None]:
    """An edit letting account 444444444444 read ``resource`` by the log bucket's policy."""

    def allow(template: Template) -> None:
        _log_bucket_policy(template)["Properties"]["PolicyDocument"]["Statement"].append(
            {
                "Action": "s3:GetObject",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::444444444444:root"},
                "Resource": resource,
            }
        )

    return allow


def _set_destination_policy(template: Template, statement: dict[str, Any]) -> None:
    (destination,) = _resources(template, "AWS::Logs::Destination")
    destination["Properties"]["DestinationPolicy"] = json.dumps({"Statement": [statement]})


def _resources(template: Template, resource_type: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == resource_type]


def _copy(assembly: Path, tmp_path: Path) -> Path:
    """The manifest and templates of an assembly, to change freely, and its assets (where the
    report reads the relays' configuration files) linked, not copied."""
    target = tmp_path / "cdk.out"
    shutil.copytree(assembly, target, ignore=shutil.ignore_patterns("asset.*"))
    for asset in assembly.glob("asset.*"):
        (target / asset.name).symlink_to(asset)
    return target


def _edited_copy(assembly: Path, tmp_path: Path, edit: Callable[[Template], None]) -> Path:
    """A copy of the assembly whose analytics stack template ``edit`` has changed."""
    target = _copy(assembly, tmp_path)
    template_file = target / f"{ANALYTICS_STACK}.template.json"
    template = json.loads(template_file.read_text())
    edit(template)
    template_file.write_text(json.dumps(template))
    return target
