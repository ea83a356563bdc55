"""The synthesized templates of an organization as AWS would hold their policies, and requests
against them decided by an independent IAM simulator (``simulate.mjs``).

Each stack's policies are read with the intrinsics resolved as CloudFormation would resolve them
in its account and region (the access report's reader): resource policies by the ARN of the
queue, key, bucket or topic they govern, identity policies by the ARN of the role they attach
to (inline, ``AWS::IAM::Policy`` and managed policies). A principal the templates do not create
(another team's role, a look-alike of a relay role, a role of another account) is given what
its own account could give it at most: every action on every resource. So a request such a
principal makes is allowed exactly when the resource's policy admits it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_aws.cdk_cli import NODE_BIN
from stacks.checks.access_report.assembly import SynthesizedStack, read_assembly

SCRIPT = Path(__file__).with_name("simulate.mjs")
ADMINISTRATOR: Mapping[str, Any] = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
}
"""What an account may grant one of its own roles at most."""
FULL_AWS_ACCESS: Mapping[str, Any] = ADMINISTRATOR
"""The service control policy AWS Organizations attaches everywhere by default, beside which
the organization's own deny what they deny."""


@dataclass(frozen=True)
class Request:
    """One request: who asks, for what, on what, over TLS or not, with the context keys the
    service would add (``kms:ViaService``, an encryption context, S3's headers)."""

    principal: str
    action: str
    resource: str
    context: Mapping[str, str | list[str]] = field(default_factory=dict)
    secure_transport: bool = True


@dataclass
class Organization:
    """Every policy of an assembly, by what it governs."""

    resource_policies: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    identity_policies: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)
    """Per resource ARN (a bucket's has no account), the account that owns it."""
    service_control_policies: list[Mapping[str, Any]] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    """Per queue and bucket ARN, the ARN of the key that encrypts it."""
    aliases: dict[str, list[str]] = field(default_factory=dict)
    """Per key ARN, its aliases: KMS puts them in every request on the key
    (``kms:ResourceAliases``)."""

    @classmethod
    def of(cls, *assemblies: Path) -> Organization:
        organization = cls()
        for assembly in assemblies:
            for stack in read_assembly(assembly):
                organization._read(stack)
        return organization

    def decide(self, requests: Sequence[Request]) -> list[str]:
        """``Allowed``, ``ExplicitlyDenied`` or ``ImplicitlyDenied`` for each request."""
        simulations = [self._simulation(request) for request in requests]
        result = subprocess.run(
            [str(NODE_BIN / "node"), str(SCRIPT)],
            input=json.dumps(simulations),
            capture_output=True,
            text=True,
            check=True,
        )
        decisions: list[dict[str, Any]] = json.loads(result.stdout)
        for request, decision in zip(requests, decisions, strict=True):
            if decision["result"] == "Error":
                raise AssertionError(f"the simulator refused {request}: {decision['errors']}")
            if decision["ignored"]:
                raise AssertionError(
                    f"the simulator ignored {decision['ignored']} of {request}: the request "
                    "would be judged without them"
                )
        return [str(decision["result"]) for decision in decisions]

    def _simulation(self, request: Request) -> dict[str, Any]:
        principal_account = request.principal.split(":")[4]
        resource_account = self.owners.get(request.resource) or request.resource.split(":")[4]
        policies = self.identity_policies.get(request.principal) or [ADMINISTRATOR]
        resource_policies = self.resource_policies.get(request.resource, [])
        statements = [s for policy in resource_policies for s in _statements(policy)]
        return {
            "request": {
                "action": request.action,
                "principal": request.principal,
                "resource": {"accountId": resource_account, "resource": request.resource},
                "contextVariables": {
                    "aws:PrincipalArn": request.principal,
                    "aws:PrincipalAccount": principal_account,
                    "aws:SecureTransport": str(request.secure_transport).lower(),
                    **(
                        {"kms:ResourceAliases": self.aliases[request.resource]}
                        if request.resource in self.aliases
                        else {}
                    ),
                    **request.context,
                },
            },
            "identityPolicies": [
                {"name": f"policy{i}", "policy": policy} for i, policy in enumerate(policies)
            ],
            "resourcePolicy": (
                {"Version": "2012-10-17", "Statement": statements} if statements else None
            ),
            "serviceControlPolicies": (
                [
                    {
                        "orgIdentifier": "r-root",
                        "policies": [
                            {"name": f"scp{i}", "policy": policy}
                            for i, policy in enumerate(
                                [FULL_AWS_ACCESS, *self.service_control_policies]
                            )
                        ],
                    }
                ]
                if self.service_control_policies
                else []
            ),
        }

    def _read(self, stack: SynthesizedStack) -> None:
        for logical_id, resource in stack.template["Resources"].items():
            kind, properties = resource["Type"], resource.get("Properties", {})
            if kind == "AWS::SQS::Queue" and "KmsMasterKeyId" in properties:
                key = stack.resolve(properties["KmsMasterKeyId"], strict=False)
                self.keys[stack.queue_arn(logical_id)] = key
            elif kind == "AWS::S3::Bucket" and "BucketEncryption" in properties:
                (rule,) = properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]
                key = rule["ServerSideEncryptionByDefault"].get("KMSMasterKeyID")
                if key is not None:
                    self.keys[stack.bucket_arn(logical_id)] = stack.resolve(key, strict=False)
            elif kind == "AWS::Organizations::Policy":
                if properties["Type"] == "SERVICE_CONTROL_POLICY":
                    content = stack.resolve(properties["Content"], strict=False)
                    self.service_control_policies.append(content)
            elif kind == "AWS::KMS::Alias":
                key = stack.resolve(properties["TargetKeyId"], strict=False)
                self.aliases.setdefault(key, []).append(properties["AliasName"])
            elif kind == "AWS::SQS::QueuePolicy":
                for queue in stack.resolve(properties["Queues"], strict=False):
                    self._govern(_queue_arn(queue), stack, properties["PolicyDocument"])
            elif kind == "AWS::KMS::Key":
                self._govern(stack.key_arn(logical_id), stack, properties["KeyPolicy"])
            elif kind == "AWS::S3::BucketPolicy":
                bucket = stack.resolve(properties["Bucket"], strict=False)
                arn = f"arn:{stack.partition}:s3:::{bucket}"
                self._govern(arn, stack, properties["PolicyDocument"], objects=True)
            elif kind == "AWS::SNS::TopicPolicy":
                for topic in stack.resolve(properties["Topics"], strict=False):
                    self._govern(topic, stack, properties["PolicyDocument"])
            elif kind == "AWS::IAM::Role":
                role = stack.role_arn(logical_id)
                for inline in properties.get("Policies", []):
                    self._attach(role, stack, inline["PolicyDocument"])
            elif kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
                for role in properties.get("Roles", []):
                    name = stack.resolve(role, strict=False)
                    self._attach(stack.role_arn_named(name), stack, properties["PolicyDocument"])

    def _govern(
        self, arn: str, stack: SynthesizedStack, document: Any, *, objects: bool = False
    ) -> None:
        policy = stack.resolve(document, strict=False)
        self.resource_policies.setdefault(arn, []).append(policy)
        self.owners[arn] = stack.account
        if objects:
            self.owners[f"{arn}/*"] = stack.account

    def _attach(self, role: str, stack: SynthesizedStack, document: Any) -> None:
        self.identity_policies.setdefault(role, []).append(stack.resolve(document, strict=False))

    def bucket_object(self, bucket_arn: str, key: str) -> str:
        """The ARN of an object of a bucket the templates hold, its owner recorded."""
        arn = f"{bucket_arn}/{key}"
        self.owners[arn] = self.owners[bucket_arn]
        self.resource_policies[arn] = self.resource_policies[bucket_arn]
        return arn


def _queue_arn(url: str) -> str:
    """``https://sqs.<region>.<suffix>/<account>/<name>`` -> the queue's ARN."""
    host, account, name = url.removeprefix("https://").split("/")
    region = host.split(".")[1]
    return f"arn:aws:sqs:{region}:{account}:{name}"


def _statements(policy: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    statements = policy.get("Statement", [])
    return statements if isinstance(statements, list) else [statements]
