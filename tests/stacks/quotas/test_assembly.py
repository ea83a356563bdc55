"""The templates as the quota gate reads them: intrinsics resolve to what CloudFormation passes
on in the stack's account and partition, and what only CloudFormation knows counts at its
longest, so that a size is never under what AWS measures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.quotas import QuotaGateError, StackTemplate, measure_assembly, read_templates
from stacks.quotas import table as q
from tests.stacks.quotas.assemblies import (
    ACCOUNT,
    compact_size,
    policy,
    resource,
    resources,
    statement,
    write_assembly,
)

TEMPLATE = resources(
    Queue=resource("AWS::SQS::Queue", QueueName="Orders"),
    Topic=resource("AWS::SNS::Topic", TopicName="Billed"),
    Role=resource("AWS::IAM::Role", RoleName="relay"),
    GeneratedRole=resource("AWS::IAM::Role"),
    Key=resource("AWS::KMS::Key"),
    Logs=resource("AWS::Logs::LogGroup", LogGroupName="relay-logs"),
    **{"AVeryLongLogicalIdForARoleWhoseGeneratedNameIsCut": resource("AWS::IAM::Role")},
)


def stack(region: str = "us-east-1", template: dict[str, Any] = TEMPLATE) -> StackTemplate:
    return StackTemplate(
        "Messaging-Sales", "Messaging-Sales.template.json", ACCOUNT, region, 0, template
    )


def test_refs_and_arns_are_those_of_the_stacks_account_and_partition() -> None:
    china = stack("cn-north-1")
    assert china.resolve({"Fn::GetAtt": ["Queue", "Arn"]}) == (
        f"arn:aws-cn:sqs:cn-north-1:{ACCOUNT}:Orders"
    )
    assert china.resolve({"Ref": "Queue"}) == (
        f"https://sqs.cn-north-1.amazonaws.com.cn/{ACCOUNT}/Orders"
    )
    assert china.resolve({"Ref": "Topic"}) == f"arn:aws-cn:sns:cn-north-1:{ACCOUNT}:Billed"
    assert china.resolve({"Fn::GetAtt": ["Role", "Arn"]}) == f"arn:aws-cn:iam::{ACCOUNT}:role/relay"
    assert china.resolve({"Fn::GetAtt": ["Logs", "Arn"]}) == (
        f"arn:aws-cn:logs:cn-north-1:{ACCOUNT}:log-group:relay-logs:*"
    )


def test_a_key_id_counts_as_the_uuid_kms_gives_it() -> None:
    arn = stack().resolve({"Fn::GetAtt": ["Key", "Arn"]})
    assert arn == f"arn:aws:kms:us-east-1:{ACCOUNT}:key/00000000-0000-0000-0000-000000000000"


def test_a_name_cloudformation_generates_counts_at_its_longest() -> None:
    assert (
        stack().resolve({"Ref": "GeneratedRole"}) == "Messaging-Sales-GeneratedRole-XXXXXXXXXXXXX"
    )
    long_name = stack().resolve({"Ref": "AVeryLongLogicalIdForARoleWhoseGeneratedNameIsCut"})
    assert len(long_name) == 64
    assert long_name.startswith("Messaging-Sales-AVeryLongLogicalId")


def test_joins_subs_selects_and_splits_resolve_as_cloudformation_does() -> None:
    resolved = stack().resolve(
        {
            "Join": {
                "Fn::Join": [":", ["arn", {"Ref": "AWS::Partition"}, {"Ref": "AWS::AccountId"}]]
            },
            "Sub": {"Fn::Sub": "${Queue.QueueName}-in-${AWS::Region}-${!Literal}"},
            "SubWithVariables": {"Fn::Sub": ["${Name}!", {"Name": {"Ref": "Role"}}]},
            "Select": {"Fn::Select": [1, {"Fn::Split": ["/", "a/b/c"]}]},
        }
    )
    assert resolved == {
        "Join": f"arn:aws:{ACCOUNT}",
        "Sub": "Orders-in-us-east-1-${Literal}",
        "SubWithVariables": "relay!",
        "Select": "b",
    }


def test_a_condition_counts_its_longer_branch_and_an_unknown_intrinsic_its_own_json() -> None:
    assert stack().resolve({"Fn::If": ["IsProd", "short", "much longer"]}) == "much longer"
    assert stack().resolve({"Fn::ImportValue": "Shared-Arn"}) == '{"Fn::ImportValue":"Shared-Arn"}'


def test_a_policy_is_measured_with_its_intrinsics_resolved(tmp_path: Path) -> None:
    def queue_policy(resource_value: Any) -> dict[str, Any]:
        document = policy(statement(Resource=resource_value))
        return resources(
            Queue=resource("AWS::SQS::Queue", QueueName="Orders"),
            Policy=resource("AWS::SQS::QueuePolicy", PolicyDocument=document),
        )

    intrinsic = queue_policy(
        {
            "Fn::Join": [
                "",
                ["arn:", {"Ref": "AWS::Partition"}, ":sqs:us-east-1:", ACCOUNT, ":Orders"],
            ]
        }
    )
    written = policy(statement(Resource=f"arn:aws:sqs:us-east-1:{ACCOUNT}:Orders"))
    (size,) = [
        m.value
        for m in measure_assembly(write_assembly(tmp_path, {"Stack": intrinsic}))
        if m.quota is q.SQS_POLICY_BYTES
    ]
    assert size == compact_size(written)


def test_the_templates_come_with_their_account_region_and_size_on_disk(tmp_path: Path) -> None:
    write_assembly(tmp_path, {"Stack": TEMPLATE})
    (found,) = read_templates(tmp_path)
    assert (found.name, found.account, found.region) == ("Stack", ACCOUNT, "us-east-1")
    assert found.body_bytes == (tmp_path / "Stack.template.json").stat().st_size


def test_a_directory_without_a_manifest_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(QuotaGateError, match=r"not a cloud assembly .*; run the synth first"):
        read_templates(tmp_path)


def test_a_stack_without_a_concrete_environment_is_refused_naming_it(tmp_path: Path) -> None:
    write_assembly(tmp_path, {"Stack": TEMPLATE})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["artifacts"]["Stack"]["environment"] = "aws://unknown-account/unknown-region"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(QuotaGateError, match=r"^Stack: environment .* is not concrete"):
        read_templates(tmp_path)
