"""The templates of a cloud assembly as the quota gate reads them: each with its account, region
and size on disk, and its intrinsics resolved to the values CloudFormation would pass on.

AWS counts a policy or an environment once CloudFormation has put the real ARNs and names in,
so the gate measures the same: names the template spells out are exact, and what only
CloudFormation knows is counted at its longest, so that a measure never falls short: a key's
id (a UUID), and a name CloudFormation generates (``<stack>-<logical id>-<13 characters>``,
cut to the type's longest name). An intrinsic the gate does not know counts as its own JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from cross_account_runtime.common.partitions import dns_suffix, partition_of
from stacks.cloud_assembly import read_cloud_assembly


class QuotaGateError(ValueError):
    """The assembly cannot be read: no manifest, a stack without a concrete environment, or a
    dashboard body that is not JSON."""


KEY_ID = "00000000-0000-0000-0000-000000000000"
"""A KMS key id: a UUID, 36 characters, known only once CloudFormation created the key."""
GENERATED_SUFFIX = 13
"""Characters of the random suffix CloudFormation puts at the end of a name it generates."""

NAME_PROPERTIES: Mapping[str, tuple[str, int]] = {
    "AWS::SQS::Queue": ("QueueName", 80),
    "AWS::SNS::Topic": ("TopicName", 256),
    "AWS::IAM::Role": ("RoleName", 64),
    "AWS::IAM::ManagedPolicy": ("ManagedPolicyName", 128),
    "AWS::S3::Bucket": ("BucketName", 63),
    "AWS::Logs::LogGroup": ("LogGroupName", 512),
    "AWS::Logs::Destination": ("DestinationName", 512),
    "AWS::Lambda::Function": ("FunctionName", 64),
    "AWS::Lambda::Permission": ("", 100),
    "AWS::KinesisFirehose::DeliveryStream": ("DeliveryStreamName", 64),
    "AWS::KMS::Alias": ("AliasName", 256),
    "AWS::CloudWatch::Alarm": ("AlarmName", 255),
}
"""Per resource type, the property naming it and the longest name AWS takes for it."""
DEFAULT_NAME_LENGTH = 128
"""The longest generated physical id counted for the types not listed."""


def compact_json(value: Any) -> str:
    """``value`` as compact JSON: how CloudFormation passes a policy document on."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class StackTemplate:
    """One stack of the assembly: its name, template file, account, region and template."""

    name: str
    file: str
    account: str
    region: str
    body_bytes: int
    template: Mapping[str, Any]

    @cached_property
    def partition(self) -> str:
        return partition_of(self.region)

    @property
    def resources(self) -> Mapping[str, Mapping[str, Any]]:
        resources: Mapping[str, Mapping[str, Any]] = self.template.get("Resources", {})
        return resources

    def of_type(self, resource_type: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """The logical id and properties of every resource of ``resource_type``."""
        for logical_id, resource in self.resources.items():
            if resource.get("Type") == resource_type:
                yield logical_id, resource.get("Properties", {})

    def resolve(self, value: Any) -> Any:
        """``value`` with every intrinsic replaced by what CloudFormation would pass on, at its
        longest where only CloudFormation knows it."""
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, Mapping):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref" or key.startswith("Fn::"):
                return self._intrinsic(key, argument)
        return {k: self.resolve(v) for k, v in value.items()}

    def text(self, value: Any) -> str:
        """``value`` resolved, as a string (JSON for what is not one)."""
        resolved = self.resolve(value)
        return resolved if isinstance(resolved, str) else compact_json(resolved)

    def name_of(self, logical_id: str) -> str:
        """The physical name of a resource of this template: the one it is given, or the
        longest CloudFormation generates."""
        resource = self.resources[logical_id]
        resource_type = resource.get("Type", "")
        name_property, longest = NAME_PROPERTIES.get(resource_type, ("", DEFAULT_NAME_LENGTH))
        given = resource.get("Properties", {}).get(name_property) if name_property else None
        if given is not None:
            return self.text(given)
        generated = f"{self.name}-{logical_id}-{'X' * GENERATED_SUFFIX}"
        return generated[:longest]

    def arn(self, service: str, resource: str, *, region: bool = True) -> str:
        """An ARN of this stack's account (and region, unless the service is global)."""
        where = f"{self.region}:{self.account}" if region else f":{self.account}"
        return f"arn:{self.partition}:{service}:{where}:{resource}"

    def _ref(self, logical_id: str) -> Any:
        if logical_id in self.template.get("Parameters", {}):
            return self.template["Parameters"][logical_id].get("Default", "")
        resource_type = self.resources[logical_id].get("Type")
        if resource_type == "AWS::SQS::Queue":
            suffix = dns_suffix(self.partition)
            return f"https://sqs.{self.region}.{suffix}/{self.account}/{self.name_of(logical_id)}"
        if resource_type in ("AWS::SNS::Topic", "AWS::IAM::ManagedPolicy"):
            return self._get_att(logical_id, "Arn")
        if resource_type == "AWS::KMS::Key":
            return KEY_ID
        return self.name_of(logical_id)

    def _get_att(self, logical_id: str, attribute: str) -> Any:
        resource_type = self.resources[logical_id].get("Type", "")
        name = self.name_of(logical_id)
        arns = {
            "AWS::SQS::Queue": lambda: self.arn("sqs", name),
            "AWS::SNS::Topic": lambda: self.arn("sns", name),
            "AWS::KMS::Key": lambda: self.arn("kms", f"key/{KEY_ID}"),
            "AWS::IAM::Role": lambda: self.arn("iam", f"role/{name}", region=False),
            "AWS::IAM::ManagedPolicy": lambda: self.arn("iam", f"policy/{name}", region=False),
            "AWS::S3::Bucket": lambda: f"arn:{self.partition}:s3:::{name}",
            "AWS::Logs::LogGroup": lambda: self.arn("logs", f"log-group:{name}:*"),
            "AWS::Logs::Destination": lambda: self.arn("logs", f"destination:{name}"),
            "AWS::Lambda::Function": lambda: self.arn("lambda", f"function:{name}"),
            "AWS::KinesisFirehose::DeliveryStream": lambda: self.arn(
                "firehose", f"deliverystream/{name}"
            ),
            "AWS::CloudWatch::Alarm": lambda: self.arn("cloudwatch", f"alarm:{name}"),
        }
        if attribute in ("Arn", "TopicArn", "PolicyArn") and resource_type in arns:
            return arns[resource_type]()
        if attribute in ("QueueName", "TopicName"):
            return name
        if attribute == "QueueUrl":
            return self._ref(logical_id)
        if attribute == "KeyId":
            return KEY_ID
        return compact_json({"Fn::GetAtt": [logical_id, attribute]})

    def _intrinsic(self, function: str, argument: Any) -> Any:
        if function == "Ref":
            pseudo = {
                "AWS::Partition": self.partition,
                "AWS::Region": self.region,
                "AWS::AccountId": self.account,
                "AWS::URLSuffix": dns_suffix(self.partition),
                "AWS::StackName": self.name,
            }
            if argument in pseudo:
                return pseudo[argument]
            if argument in self.resources or argument in self.template.get("Parameters", {}):
                return self._ref(argument)
        elif function == "Fn::GetAtt":
            logical_id, attribute = (
                argument.split(".", 1) if isinstance(argument, str) else argument
            )
            if logical_id in self.resources:
                return self._get_att(logical_id, attribute)
        elif function == "Fn::Join":
            separator, parts = argument
            resolved = self.resolve(parts)
            if isinstance(resolved, list):
                return separator.join(
                    p if isinstance(p, str) else compact_json(p) for p in resolved
                )
        elif function == "Fn::Sub":
            return self._sub(argument)
        elif function == "Fn::Select":
            index, values = self.resolve(argument)
            if isinstance(values, list) and str(index).isdigit() and int(index) < len(values):
                return values[int(index)]
        elif function == "Fn::Split":
            separator, source = argument
            return self.text(source).split(separator)
        elif function == "Fn::If":
            _, when_true, when_false = argument
            branches = [self.resolve(when_true), self.resolve(when_false)]
            return max(branches, key=lambda b: len(compact_json(b)))
        elif function == "Fn::FindInMap":
            mapping, first, second = (self.text(a) for a in argument)
            found = self.template.get("Mappings", {}).get(mapping, {}).get(first, {})
            if second in found:
                return found[second]
        return compact_json({function: argument})

    def _sub(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else argument

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return self.text(variables[name])
            if "." in name:
                return self.text({"Fn::GetAtt": name.split(".", 1)})
            return self.text({"Ref": name})

        return re.sub(r"\$\{([^}]+)\}", replace, text)


def read_templates(assembly_dir: str | Path) -> list[StackTemplate]:
    """Every stack template of the cloud assembly in ``assembly_dir``, by the manifest."""
    assembly = read_cloud_assembly(
        assembly_dir, QuotaGateError, "the quota gate needs each stack's account and region"
    )
    templates = []
    for stack in assembly.stacks:
        body = (assembly.root / stack.template_file).read_bytes()
        templates.append(
            StackTemplate(
                stack.name,
                stack.template_file,
                stack.account,
                stack.region,
                len(body),
                json.loads(body.decode("utf-8")),
            )
        )
    return templates
