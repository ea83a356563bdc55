"""The cloud assembly as the report reads it: each stack's account, region and template, and the
template intrinsics resolved to the names and ARNs CloudFormation would give.

The report reads what CloudFormation would be given, not what the code meant to write, so every
ARN is computed from the template as written; an intrinsic it cannot resolve with certainty is
refused where it could hide a grant.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cross_account_runtime.common.partitions import dns_suffix, partition_of
from stacks.cloud_assembly import read_cloud_assembly


class AccessReportError(ValueError):
    """The cloud assembly holds something the report cannot read with certainty."""


@dataclass(frozen=True)
class SynthesizedStack:
    """One stack of the assembly: its name, account, region and template, and what the
    template's intrinsics resolve to in that account and region."""

    name: str
    account: str
    region: str
    template: Mapping[str, Any]
    assets: Mapping[str, Path] = field(default_factory=dict)
    """Each file asset's S3 object key to where the assembly holds it (a Lambda function's
    code, a relay's configuration file within it)."""

    @property
    def partition(self) -> str:
        return partition_of(self.region)

    @property
    def url_suffix(self) -> str:
        return dns_suffix(self.partition)

    def code(self, logical_id: str) -> Path:
        """Where the assembly holds the code of the Lambda function ``logical_id``."""
        code = self.template["Resources"][logical_id].get("Properties", {}).get("Code", {})
        key = code.get("S3Key")
        if not isinstance(key, str) or key not in self.assets:
            raise AccessReportError(
                f"{self.name}: function {logical_id} has no code asset of this assembly "
                f"(Code {code!r}); synthesize the stack with its assets"
            )
        return self.assets[key]

    def queue_arn(self, logical_id: str) -> str:
        resource = self.template["Resources"].get(logical_id)
        if not resource or resource.get("Type") != "AWS::SQS::Queue":
            raise AccessReportError(f"{self.name}: {logical_id} is not a queue of this stack")
        name = resource.get("Properties", {}).get("QueueName")
        if not isinstance(name, str):
            raise AccessReportError(
                f"{self.name}: queue {logical_id} has no literal QueueName; the report "
                "needs named queues to compute their ARNs"
            )
        return f"arn:{self.partition}:sqs:{self.region}:{self.account}:{name}"

    def topic_arn(self, logical_id: str) -> str:
        name = self.template["Resources"][logical_id].get("Properties", {}).get("TopicName")
        if not isinstance(name, str):
            raise AccessReportError(f"{self.name}: topic {logical_id} has no literal TopicName")
        return f"arn:{self.partition}:sns:{self.region}:{self.account}:{name}"

    def ref(self, logical_id: str) -> str:
        """What ``Ref`` returns for the resource types that appear in policies and in the
        delivery-log resources."""
        resource_type = self.template["Resources"].get(logical_id, {}).get("Type")
        if resource_type == "AWS::SQS::Queue":
            name = self.queue_arn(logical_id).rsplit(":", 1)[1]
            return f"https://sqs.{self.region}.{self.url_suffix}/{self.account}/{name}"
        if resource_type == "AWS::SNS::Topic":
            return self.topic_arn(logical_id)
        names = {
            "AWS::IAM::Role": "RoleName",
            "AWS::Logs::LogGroup": "LogGroupName",
            "AWS::Logs::Destination": "DestinationName",
            "AWS::S3::Bucket": "BucketName",
            "AWS::KinesisFirehose::DeliveryStream": "DeliveryStreamName",
        }
        if resource_type in names:
            return self.physical_name(logical_id, names[resource_type])
        raise AccessReportError(f"{self.name}: cannot resolve Ref {logical_id}")

    def physical_name(self, logical_id: str, name_property: str) -> str:
        """A resource's name as written in the template, or ``<logical id>`` where
        CloudFormation generates it at deploy time."""
        value = self.template["Resources"][logical_id].get("Properties", {}).get(name_property)
        try:
            name = self.resolve(value)
        except AccessReportError:
            name = None
        return name if isinstance(name, str) else f"<{logical_id}>"

    def role_arn(self, logical_id: str) -> str:
        return self.role_arn_named(self.physical_name(logical_id, "RoleName"))

    def role_arn_named(self, name: str) -> str:
        """The ARN of this account's role called ``name`` (a policy may name a role it does
        not define)."""
        return f"arn:{self.partition}:iam::{self.account}:role/{name}"

    def key_arn(self, logical_id: str) -> str:
        return f"arn:{self.partition}:kms:{self.region}:{self.account}:key/<{logical_id}>"

    def bucket_arn(self, logical_id: str) -> str:
        return f"arn:{self.partition}:s3:::{self.physical_name(logical_id, 'BucketName')}"

    def log_group_arn(self, name: str) -> str:
        """A log group's ARN without the ``:*`` that ``Fn::GetAtt`` appends."""
        return f"arn:{self.partition}:logs:{self.region}:{self.account}:log-group:{name}"

    def destination_arn(self, logical_id: str) -> str:
        name = self.physical_name(logical_id, "DestinationName")
        return f"arn:{self.partition}:logs:{self.region}:{self.account}:destination:{name}"

    def delivery_stream_arn(self, logical_id: str) -> str:
        name = self.physical_name(logical_id, "DeliveryStreamName")
        return f"arn:{self.partition}:firehose:{self.region}:{self.account}:deliverystream/{name}"

    def get_att_arn(self, logical_id: str) -> str:
        """What ``Fn::GetAtt [<logical id>, Arn]`` returns for the types the report knows."""
        resource_type = self.template["Resources"].get(logical_id, {}).get("Type")
        if resource_type == "AWS::SQS::Queue":
            return self.queue_arn(logical_id)
        if resource_type == "AWS::KMS::Key":
            return self.key_arn(logical_id)
        if resource_type == "AWS::IAM::Role":
            return self.role_arn(logical_id)
        if resource_type == "AWS::S3::Bucket":
            return self.bucket_arn(logical_id)
        if resource_type == "AWS::Logs::LogGroup":
            return self.log_group_arn(self.physical_name(logical_id, "LogGroupName")) + ":*"
        if resource_type == "AWS::Logs::Destination":
            return self.destination_arn(logical_id)
        if resource_type == "AWS::KinesisFirehose::DeliveryStream":
            return self.delivery_stream_arn(logical_id)
        raise AccessReportError(f"{self.name}: cannot resolve Fn::GetAtt [{logical_id}, Arn]")

    def resolve(self, value: Any, *, strict: bool = True) -> Any:
        """Resolve the intrinsics CDK writes into policies.

        Strictly (resource policies, whose every grant is reported), anything else is refused.
        Loosely (identity policies, read only for what they allow on the log bucket), anything
        else becomes ``<...>``, which names no bucket, so it can hide no grant the report shows.
        """
        if isinstance(value, list):
            return [self.resolve(v, strict=strict) for v in value]
        if not isinstance(value, Mapping):
            return value
        if len(value) != 1:
            return {k: self.resolve(v, strict=strict) for k, v in value.items()}
        ((fn, arg),) = value.items()
        try:
            return self._resolve_function(fn, arg, strict)
        except AccessReportError:
            if strict:
                raise
            return f"<{fn} {arg}>"

    def _resolve_function(self, fn: str, arg: Any, strict: bool) -> Any:
        if fn == "Ref":
            pseudo = {
                "AWS::Partition": self.partition,
                "AWS::Region": self.region,
                "AWS::AccountId": self.account,
                "AWS::URLSuffix": self.url_suffix,
            }
            if arg in pseudo:
                return pseudo[arg]
            return self.ref(arg)
        if fn == "Fn::Join":
            separator, parts = arg
            return separator.join(str(self.resolve(p, strict=strict)) for p in parts)
        if fn == "Fn::GetAtt":
            logical_id, attribute = arg
            if attribute == "Arn":
                return self.get_att_arn(logical_id)
            raise AccessReportError(f"{self.name}: cannot resolve Fn::GetAtt {arg}")
        if fn.startswith("Fn::") or fn == "Condition":
            raise AccessReportError(f"{self.name}: cannot resolve {fn} in a policy")
        return {fn: self.resolve(arg, strict=strict)}


def read_assembly(assembly_dir: str | Path) -> list[SynthesizedStack]:
    """The stacks of a cloud assembly with their account, region and template."""
    assembly = read_cloud_assembly(
        assembly_dir, AccessReportError, "stacks must name their account and region"
    )
    return [
        SynthesizedStack(
            stack.name,
            stack.account,
            stack.region,
            json.loads((assembly.root / stack.template_file).read_text(encoding="utf-8")),
            _file_assets(assembly.root, assembly.artifacts, stack.artifact),
        )
        for stack in assembly.stacks
    ]


def _file_assets(
    root: Path, artifacts: Mapping[str, Any], stack: Mapping[str, Any]
) -> dict[str, Path]:
    """The stack's file assets (from the asset manifests it depends on) by S3 object key."""
    assets: dict[str, Path] = {}
    for dependency in stack.get("dependencies", []):
        artifact = artifacts.get(dependency, {})
        if artifact.get("type") != "cdk:asset-manifest":
            continue
        manifest = json.loads((root / artifact["properties"]["file"]).read_text(encoding="utf-8"))
        for asset in manifest.get("files", {}).values():
            for destination in asset["destinations"].values():
                assets[destination["objectKey"]] = root / asset["source"]["path"]
    return assets
