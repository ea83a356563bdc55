"""The assembly as the report reads it: each stack's intrinsics resolve to the names and ARNs
CloudFormation would give in its account and partition, and what cannot be resolved with
certainty is refused (strictly) or shown as ``<...>`` (loosely)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.checks.access_report import AccessReportError, SynthesizedStack, read_assembly

ACCOUNT = "111111111111"
TEMPLATE: dict[str, Any] = {
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "Orders"}},
        "Unnamed": {"Type": "AWS::SQS::Queue", "Properties": {}},
        "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "Billed"}},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": "relay"}},
        "GeneratedRole": {"Type": "AWS::IAM::Role", "Properties": {}},
        "Key": {"Type": "AWS::KMS::Key", "Properties": {}},
        "Function": {"Type": "AWS::Lambda::Function", "Properties": {}},
    }
}


def _stack(region: str = "us-east-1") -> SynthesizedStack:
    return SynthesizedStack("Messaging-Sales", ACCOUNT, region, TEMPLATE)


def test_refs_and_arns_are_those_of_the_stacks_account_and_partition() -> None:
    stack = _stack("cn-north-1")
    assert stack.resolve({"Fn::GetAtt": ["Queue", "Arn"]}) == (
        f"arn:aws-cn:sqs:cn-north-1:{ACCOUNT}:Orders"
    )
    assert stack.resolve({"Ref": "Queue"}) == (
        f"https://sqs.cn-north-1.amazonaws.com.cn/{ACCOUNT}/Orders"
    )
    assert stack.resolve({"Ref": "Topic"}) == f"arn:aws-cn:sns:cn-north-1:{ACCOUNT}:Billed"
    assert stack.resolve({"Fn::GetAtt": ["Role", "Arn"]}) == f"arn:aws-cn:iam::{ACCOUNT}:role/relay"


def test_joins_and_pseudo_parameters_resolve_inside_policy_documents() -> None:
    document = {
        "Resource": {
            "Fn::Join": [
                "",
                ["arn:", {"Ref": "AWS::Partition"}, ":s3:::logs-", {"Ref": "AWS::AccountId"}],
            ]
        },
        "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}},
    }
    assert _stack().resolve(document) == {
        "Resource": f"arn:aws:s3:::logs-{ACCOUNT}",
        "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
    }


def test_a_name_cloudformation_generates_shows_as_the_logical_id() -> None:
    stack = _stack()
    assert stack.role_arn("GeneratedRole") == f"arn:aws:iam::{ACCOUNT}:role/<GeneratedRole>"
    assert stack.get_att_arn("Key") == f"arn:aws:kms:us-east-1:{ACCOUNT}:key/<Key>"


def test_a_queue_without_a_literal_name_is_refused() -> None:
    with pytest.raises(AccessReportError, match="Unnamed has no literal QueueName"):
        _stack().queue_arn("Unnamed")


@pytest.mark.parametrize(
    ("intrinsic", "shown"),
    [
        ({"Fn::ImportValue": "LogBucketArn"}, "<Fn::ImportValue LogBucketArn>"),
        ({"Fn::GetAtt": ["Function", "Arn"]}, "<Fn::GetAtt ['Function', 'Arn']>"),
        ({"Ref": "Function"}, "<Ref Function>"),
    ],
)
def test_what_cannot_be_resolved_is_refused_strictly_and_shown_loosely(
    intrinsic: dict[str, Any], shown: str
) -> None:
    stack = _stack()
    with pytest.raises(AccessReportError, match="cannot resolve"):
        stack.resolve(intrinsic)
    assert stack.resolve(intrinsic, strict=False) == shown


def test_a_directory_without_a_manifest_is_no_cloud_assembly(tmp_path: Path) -> None:
    with pytest.raises(AccessReportError, match="not a cloud assembly"):
        read_assembly(tmp_path)


def test_a_stack_without_a_concrete_environment_is_refused(tmp_path: Path) -> None:
    manifest = {
        "artifacts": {
            "Agnostic": {
                "type": "aws:cloudformation:stack",
                "environment": "aws://unknown-account/unknown-region",
                "properties": {"templateFile": "Agnostic.template.json"},
            }
        }
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(AccessReportError, match=r"Agnostic: environment .* is not concrete"):
        read_assembly(tmp_path)


def test_the_stacks_are_read_by_name_with_their_environment(tmp_path: Path) -> None:
    artifacts = {
        name: {
            "type": "aws:cloudformation:stack",
            "environment": f"aws://{account}/eu-west-1",
            "properties": {"templateFile": f"{name}.template.json"},
        }
        for name, account in (("Messaging-Sales", ACCOUNT), ("Messaging-Billing", "222222222222"))
    }
    artifacts["Tree"] = {"type": "cdk:tree", "properties": {"file": "tree.json"}}
    (tmp_path / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    for name in ("Messaging-Sales", "Messaging-Billing"):
        (tmp_path / f"{name}.template.json").write_text(json.dumps(TEMPLATE))
    stacks = read_assembly(tmp_path)
    assert [(s.name, s.account, s.region) for s in stacks] == [
        ("Messaging-Billing", "222222222222", "eu-west-1"),
        ("Messaging-Sales", ACCOUNT, "eu-west-1"),
    ]


def test_a_functions_code_is_found_through_the_stacks_asset_manifest(tmp_path: Path) -> None:
    """Where a relay's configuration file is: the folder the CDK CLI zips and uploads."""
    key = "0123abcd.zip"
    template = {
        "Resources": {
            "Relay": {"Type": "AWS::Lambda::Function", "Properties": {"Code": {"S3Key": key}}},
            "Other": {"Type": "AWS::Lambda::Function", "Properties": {"Code": {"S3Key": "x.zip"}}},
        }
    }
    artifacts = {
        "Messaging-Sales": {
            "type": "aws:cloudformation:stack",
            "environment": f"aws://{ACCOUNT}/us-east-1",
            "properties": {"templateFile": "Messaging-Sales.template.json"},
            "dependencies": ["Messaging-Sales.assets"],
        },
        "Messaging-Sales.assets": {
            "type": "cdk:asset-manifest",
            "properties": {"file": "Messaging-Sales.assets.json"},
        },
    }
    assets = {
        "files": {
            "0123abcd": {
                "source": {"path": "asset.0123abcd", "packaging": "zip"},
                "destinations": {"d": {"bucketName": "assets", "objectKey": key}},
            }
        }
    }
    (tmp_path / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    (tmp_path / "Messaging-Sales.template.json").write_text(json.dumps(template))
    (tmp_path / "Messaging-Sales.assets.json").write_text(json.dumps(assets))
    (stack,) = read_assembly(tmp_path)
    assert stack.code("Relay") == tmp_path / "asset.0123abcd"
    with pytest.raises(AccessReportError, match="function Other has no code asset"):
        stack.code("Other")
