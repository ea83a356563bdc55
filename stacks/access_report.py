"""The effective access matrix, read back from the synthesized templates.

Local AWS (moto) neither stores queue policies nor enforces them, so who may send to and
receive from each queue is checked statically: this module reads what CloudFormation would be
given (the cloud assembly in ``cdk.out``), not what the code meant to write, and reports every
grant with its conditions. Tests compare the result with the topology's intent.

The same holds for the delivery logs, which leave their account: each log group's subscription
filter and whether the destination admits it, the destination's Firehose stream and where in S3
it writes, and who may read and write that bucket's prefixes.

Run ``python -m stacks.access_report cdk.out --json access.json --markdown access.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from constructs_lib.delivery_logged_topic import delivery_log_group_names
from constructs_lib.queue_naming import (
    dead_letter_queue_name,
    ingress_queue_name,
    subscription_dead_letter_queue_name,
)
from cross_account_runtime.common.partitions import dns_suffix, partition_of
from cross_account_runtime.delivery_report.bucket_layout import (
    ERROR_PREFIX,
    FIREHOSE_ERROR_PREFIX,
    FIREHOSE_PREFIX,
    LOG_PREFIX,
    REPORT_PREFIX,
    bucket_name,
)
from cross_account_runtime.relay.config import (
    ENV_DIRECTION,
    ENV_ROUTES,
    ROUTE_DEAD_LETTER_QUEUE,
    ROUTE_DESTINATION,
)
from stacks.delivery_log_stack import delivery_log_destination_arn
from stacks.topology import Account, Topology

PUBLISH_ACTIONS = frozenset({"sns:Publish", "sns:*"})
SUBSCRIBE_ACTIONS = frozenset({"sns:Subscribe", "sns:*"})
SEND_ACTIONS = frozenset({"sqs:SendMessage", "sqs:SendMessageBatch", "sqs:*"})
RECEIVE_ACTIONS = frozenset(
    {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:DeleteMessageBatch", "sqs:*"}
)


class AccessReportError(ValueError):
    """The cloud assembly holds something the report cannot read with certainty."""


@dataclass(frozen=True)
class _StackContext:
    name: str
    account: str
    region: str
    template: Mapping[str, Any]

    @property
    def partition(self) -> str:
        return partition_of(self.region)

    @property
    def url_suffix(self) -> str:
        return dns_suffix(self.partition)

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


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _principals(principal: Any) -> list[dict[str, str]]:
    """Normalize a policy principal into ``{"account"|"service"|"arn"|"any": ...}`` entries."""
    if principal == "*":
        return [{"any": "*"}]
    result: list[dict[str, str]] = []
    for kind, values in principal.items():
        for value in _as_list(values):
            if kind == "AWS" and value == "*":
                result.append({"any": "*"})
            elif kind == "AWS" and value.endswith(":root"):
                result.append({"account": value.split(":")[4]})
            elif kind == "AWS" and value.isdigit():
                result.append({"account": value})
            elif kind == "AWS":
                result.append({"arn": value})
            elif kind == "Service":
                result.append({"service": value})
            else:
                result.append({kind.lower(): value})
    return result


def _grant_entries(
    statement: Mapping[str, Any], actions_of_interest: frozenset[str]
) -> list[dict[str, Any]]:
    """The grants of one Allow statement that cover ``actions_of_interest``.

    A service principal restricted by ``aws:SourceArn`` is reported as the topic it is
    restricted to; ``"*"`` restricted by ``aws:PrincipalOrgID``
    as the organization.
    """
    if not [a for a in _as_list(statement.get("Action", [])) if a in actions_of_interest]:
        return []
    return _principal_grants(statement, {"actions": sorted(_as_list(statement["Action"]))})


def _principal_grants(
    statement: Mapping[str, Any], details: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One grant per principal of a resource-policy Allow statement: the principal as its
    conditions narrow it, ``details`` (what it may do), and the conditions, so that every kind of
    resource reports its grants alike."""
    conditions = statement.get("Condition", {})
    grants: list[dict[str, Any]] = []
    for principal in _principals(statement.get("Principal", {})):
        grant: dict[str, Any] = {
            "principal": _effective_principal(principal, conditions),
            **details,
        }
        if conditions:
            grant["conditions"] = conditions
        grants.append(grant)
    return grants


def _denies_insecure_transport(statement: Mapping[str, Any]) -> bool:
    """Whether a statement is the Deny of requests made without TLS (what ``enforceSSL``
    writes), which the report notes per resource."""
    secure = statement.get("Condition", {}).get("Bool", {})
    return statement.get("Effect") == "Deny" and secure.get("aws:SecureTransport") == "false"


def _allow_statements(
    statements: Sequence[Mapping[str, Any]], where: str
) -> list[Mapping[str, Any]]:
    """The Allow statements of a policy.

    ``NotAction`` and ``NotResource`` are refused: what they allow cannot be told from the
    template, and skipping them would hide a grant.
    """
    allowed = []
    for statement in statements:
        if statement.get("Effect") != "Allow":
            continue
        if "NotAction" in statement or "NotResource" in statement:
            raise AccessReportError(
                f"{where} allows with NotAction or NotResource; the report cannot tell what it "
                "allows"
            )
        allowed.append(statement)
    return allowed


def _effective_principal(
    principal: dict[str, str], conditions: Mapping[str, Mapping[str, str]]
) -> dict[str, str]:
    org = conditions.get("StringEquals", {}).get("aws:PrincipalOrgID")
    if principal == {"any": "*"} and org:
        return {"organization": org}
    role = conditions.get("ArnEquals", {}).get("aws:PrincipalArn")
    if "account" in principal and role:
        return {"role": role}
    source = next(
        (
            pairs["aws:SourceArn"]
            for op, pairs in conditions.items()
            if op in ("ArnEquals", "ArnLike", "StringEquals") and "aws:SourceArn" in pairs
        ),
        None,
    )
    if principal == {"service": "sns.amazonaws.com"} and source:
        return {"topic": source}
    return principal


def _queue_entry(ctx: _StackContext, logical_id: str) -> dict[str, Any]:
    props = ctx.template["Resources"][logical_id].get("Properties", {})
    kms_key = props.get("KmsMasterKeyId")
    entry: dict[str, Any] = {
        "queue": ctx.queue_arn(logical_id),
        "stack": ctx.name,
        "owner": ctx.account,
        "encryption": "kms" if kms_key else "sqs-managed",
        "send": [],
        "receive": [],
        "denies_insecure_transport": False,
        "key_users": [],
    }
    if isinstance(kms_key, Mapping) and "Fn::GetAtt" in kms_key:
        key_id = kms_key["Fn::GetAtt"][0]
        key_policy = ctx.resolve(
            ctx.template["Resources"][key_id]["Properties"].get("KeyPolicy", {})
        )
        for statement in _as_list(key_policy.get("Statement", [])):
            if statement.get("Effect") != "Allow":
                continue
            conditions = statement.get("Condition", {})
            for principal in _principals(statement.get("Principal", {})):
                if principal == {"account": ctx.account}:
                    continue
                entry["key_users"].append(
                    {
                        "principal": _effective_principal(principal, conditions),
                        "actions": sorted(_as_list(statement["Action"])),
                        "conditions": conditions,
                    }
                )
    return entry


def read_assembly(assembly_dir: str | Path) -> list[_StackContext]:
    """The stacks of a cloud assembly with their account, region and template."""
    root = Path(assembly_dir)
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise AccessReportError(
            f"{root}: not a cloud assembly ({error}); run the synth first"
        ) from error
    stacks: list[_StackContext] = []
    for name, artifact in sorted(manifest.get("artifacts", {}).items()):
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        environment = artifact.get("environment", "")
        account, region = environment.removeprefix("aws://").split("/")
        if not account.isdigit():
            raise AccessReportError(
                f"{name}: environment {environment!r} is not concrete; stacks must name their "
                "account and region"
            )
        template_file = root / artifact["properties"]["templateFile"]
        template = json.loads(template_file.read_text(encoding="utf-8"))
        stacks.append(_StackContext(name, account, region, template))
    return stacks


def _topic_entry(ctx: _StackContext, logical_id: str) -> dict[str, Any]:
    props = ctx.template["Resources"][logical_id].get("Properties", {})
    return {
        "topic": ctx.topic_arn(logical_id),
        "stack": ctx.name,
        "owner": ctx.account,
        "encryption": "kms" if props.get("KmsMasterKeyId") else "none",
        "logged_protocols": sorted(c["Protocol"] for c in props.get("DeliveryStatusLogging", [])),
        "publish": [],
        "subscribe": [],
        "denies_insecure_transport": False,
    }


def _subscription_entry(ctx: _StackContext, resource: Mapping[str, Any]) -> dict[str, Any]:
    props = ctx.resolve(resource["Properties"])
    return {
        "topic": props["TopicArn"],
        "stack": ctx.name,
        "protocol": props["Protocol"],
        "endpoint": props["Endpoint"],
        "dead_letter_queue": props.get("RedrivePolicy", {}).get("deadLetterTargetArn"),
        "raw_message_delivery": bool(props.get("RawMessageDelivery", False)),
        "filter_policy": props.get("FilterPolicy"),
        "delivery_policy": props.get("DeliveryPolicy"),
    }


def _relay_edges(ctx: _StackContext, resource: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The queue-to-queue edges of a relay function (from its ``RELAY_ROUTES``)."""
    variables = resource.get("Properties", {}).get("Environment", {}).get("Variables", {})
    if ENV_ROUTES not in variables:
        return []
    routes = json.loads(ctx.resolve(variables[ENV_ROUTES]))
    role = ctx.resolve(resource["Properties"]["Role"])
    return [
        {
            "direction": variables[ENV_DIRECTION],
            "stack": ctx.name,
            "role": role,
            "from": source,
            "to": route[ROUTE_DESTINATION],
            "dead_letter_queue": route[ROUTE_DEAD_LETTER_QUEUE],
        }
        for source, route in routes.items()
    ]


def _apply_policy(
    ctx: _StackContext,
    logical_id: str,
    entry: dict[str, Any],
    kinds: Mapping[str, frozenset[str]],
) -> None:
    """Add the grants of a resource policy's Allow statements to ``entry`` by kind; note a
    TLS-only Deny."""
    document = ctx.template["Resources"][logical_id]["Properties"]["PolicyDocument"]
    statements = _as_list(ctx.resolve(document).get("Statement", []))
    if any(_denies_insecure_transport(s) for s in statements):
        entry["denies_insecure_transport"] = True
    for statement in _allow_statements(statements, f"{ctx.name}: {logical_id}"):
        for kind, actions in kinds.items():
            entry[kind].extend(_grant_entries(statement, actions))


SUBSCRIBE_TO_DESTINATION_ACTIONS = frozenset({"logs:PutSubscriptionFilter", "logs:*"})
OBJECT_ACCESS = {"read": "s3:GetObject", "write": "s3:PutObject", "delete": "s3:DeleteObject"}
"""The object action that stands for each kind of prefix access."""
FIREHOSE_PUT_ACTIONS = ("firehose:PutRecord", "firehose:PutRecordBatch")


@dataclass
class _Role:
    """An IAM role of the assembly with who may assume it and its Allow statements."""

    arn: str
    stack: str
    assumed_by: list[dict[str, str]]
    statements: list[Mapping[str, Any]]

    def allows(self, action: str, resource: str) -> bool:
        return any(
            _matches(action, statement.get("Action", []))
            and _matches(resource, statement.get("Resource", []))
            for statement in self.statements
        )


def _matches(value: str, patterns: Any) -> bool:
    """Whether an IAM action or resource pattern (``*`` and ``?``) covers ``value``."""
    return any(
        isinstance(p, str) and fnmatchcase(value.lower(), p.lower()) for p in _as_list(patterns)
    )


def _identity_allow_statements(
    ctx: _StackContext, document: Any, where: str
) -> list[Mapping[str, Any]]:
    """The Allow statements of an identity policy, loosely resolved: only what they allow on
    the log bucket is read."""
    statements = _as_list(ctx.resolve(document or {}, strict=False).get("Statement", []))
    return _allow_statements(statements, f"{ctx.name}: {where}")


def _roles(contexts: Sequence[_StackContext]) -> dict[str, _Role]:
    """Every role of the assembly by ARN, with the statements of its inline and attached
    policies (customer policies in the templates; AWS managed policies are not read)."""
    roles: dict[str, _Role] = {}
    for ctx in contexts:
        for logical_id, resource in ctx.template.get("Resources", {}).items():
            if resource.get("Type") != "AWS::IAM::Role":
                continue
            props = resource.get("Properties", {})
            trust = ctx.resolve(props.get("AssumeRolePolicyDocument", {}), strict=False)
            role = _Role(
                ctx.role_arn(logical_id),
                ctx.name,
                [
                    principal
                    for statement in _as_list(trust.get("Statement", []))
                    if statement.get("Effect") == "Allow"
                    for principal in _principals(statement.get("Principal", {}))
                ],
                [],
            )
            for inline in props.get("Policies", []):
                role.statements += _identity_allow_statements(
                    ctx, inline["PolicyDocument"], logical_id
                )
            roles[role.arn] = role
    for ctx in contexts:
        for logical_id, resource in ctx.template.get("Resources", {}).items():
            if resource.get("Type") not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
                continue
            props = resource.get("Properties", {})
            statements = _identity_allow_statements(ctx, props.get("PolicyDocument"), logical_id)
            for role_ref in props.get("Roles", []):
                name = ctx.resolve(role_ref, strict=False)
                arn = ctx.role_arn_named(name)
                roles.setdefault(arn, _Role(arn, ctx.name, [], [])).statements += statements
    return roles


def _object_prefix(resource: Any, bucket: str) -> str | None:
    """The key prefix an S3 resource pattern covers in ``bucket`` (``""``: every key), or None
    when it names no object of that bucket.

    IAM's ``*`` also matches ``/``, so a pattern without one (``arn:aws:s3:::*``,
    ``arn:aws:s3:::messaging-*``) covers every object of the buckets it matches the name of.
    """
    if resource == "*":
        return ""
    parts = resource.split(":", 5) if isinstance(resource, str) else []
    if len(parts) != 6 or parts[2] != "s3":
        return None
    bucket_pattern, slash, key_pattern = parts[5].partition("/")
    if not slash:
        return "" if fnmatchcase(f"{bucket}/x", bucket_pattern) else None
    if not fnmatchcase(bucket, bucket_pattern):
        return None
    wildcards = [i for i in (key_pattern.find("*"), key_pattern.find("?")) if i >= 0]
    return key_pattern[: min(wildcards)] if wildcards else key_pattern


def _prefix_access(statements: Sequence[Mapping[str, Any]], bucket: str) -> dict[str, list[str]]:
    """Per kind (read, write, delete), the key prefixes of ``bucket`` the statements allow."""
    access: dict[str, set[str]] = {kind: set() for kind in OBJECT_ACCESS}
    for statement in statements:
        for kind, action in OBJECT_ACCESS.items():
            if not _matches(action, statement.get("Action", [])):
                continue
            for resource in _as_list(statement.get("Resource", [])):
                prefix = _object_prefix(resource, bucket)
                if prefix is not None:
                    access[kind].add(prefix)
    return {kind: sorted(prefixes) for kind, prefixes in access.items()}


def _delivery_streams(contexts: Sequence[_StackContext]) -> dict[str, dict[str, Any]]:
    """Every Firehose stream by ARN with its role and where in S3 it writes."""
    streams: dict[str, dict[str, Any]] = {}
    for ctx in contexts:
        for logical_id, resource in ctx.template.get("Resources", {}).items():
            if resource.get("Type") != "AWS::KinesisFirehose::DeliveryStream":
                continue
            props = resource.get("Properties", {})
            config = ctx.resolve(
                props.get("ExtendedS3DestinationConfiguration")
                or props.get("S3DestinationConfiguration")
                or {},
                strict=False,
            )
            # An ARN the template does not spell out resolves to ``<...>``: the stream is
            # reported, its bucket unknown.
            bucket_arn = config.get("BucketARN")
            bucket = (
                bucket_arn.split(":::", 1)[1]
                if isinstance(bucket_arn, str) and ":::" in bucket_arn
                else None
            )
            error_prefix = config.get("ErrorOutputPrefix")
            arn = ctx.delivery_stream_arn(logical_id)
            streams[arn] = {
                "stream": arn,
                "stack": ctx.name,
                "role": config.get("RoleARN"),
                "bucket": bucket,
                "bucket_arn": bucket_arn,
                "prefix": config.get("Prefix", ""),
                "location": f"s3://{bucket}/{config.get('Prefix', '')}" if bucket else None,
                "error_location": f"s3://{bucket}/{error_prefix}"
                if bucket and error_prefix
                else None,
                "error_prefix": error_prefix,
                "role_may_write": False,
            }
    return streams


def _log_bucket(
    contexts: Sequence[_StackContext], name: str, roles: Mapping[str, _Role]
) -> dict[str, Any]:
    """Who may read, write and delete which prefixes of a bucket Firehose writes to: the roles
    whose policies allow it, and the principals its bucket policy admits."""
    entry: dict[str, Any] = {
        "bucket": name,
        "stack": None,
        "denies_insecure_transport": False,
        "access": [],
    }
    for role in sorted(roles.values(), key=lambda r: r.arn):
        prefixes = _prefix_access(role.statements, name)
        if any(prefixes.values()):
            entry["access"].append(
                {"principal": {"role": role.arn}, "assumed_by": role.assumed_by, **prefixes}
            )
    for ctx in contexts:
        for logical_id, resource in ctx.template.get("Resources", {}).items():
            props = resource.get("Properties", {})
            if (
                resource.get("Type") == "AWS::S3::Bucket"
                and ctx.physical_name(logical_id, "BucketName") == name
            ):
                entry["stack"] = ctx.name
            if resource.get("Type") != "AWS::S3::BucketPolicy":
                continue
            if ctx.resolve(props.get("Bucket"), strict=False) != name:
                continue
            document = ctx.resolve(props.get("PolicyDocument", {}))
            statements = _as_list(document.get("Statement", []))
            if any(_denies_insecure_transport(s) for s in statements):
                entry["denies_insecure_transport"] = True
            for statement in _allow_statements(statements, f"{ctx.name}: {logical_id}"):
                prefixes = _prefix_access([statement], name)
                if any(prefixes.values()):
                    entry["access"] += _principal_grants(statement, {"assumed_by": [], **prefixes})
    return entry


def _destination_entry(
    ctx: _StackContext,
    logical_id: str,
    roles: Mapping[str, _Role],
    streams: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """A CloudWatch Logs destination: whom its policy admits, and where it puts the logs."""
    props = ctx.template["Resources"][logical_id].get("Properties", {})
    target = ctx.resolve(props.get("TargetArn"), strict=False)
    role_arn = ctx.resolve(props.get("RoleArn"), strict=False)
    policy_text = ctx.resolve(props.get("DestinationPolicy", '{"Statement": []}'))
    try:
        policy = json.loads(policy_text)
    except (TypeError, json.JSONDecodeError) as error:
        raise AccessReportError(
            f"{ctx.name}: destination {logical_id} has a DestinationPolicy the report cannot "
            f"read ({error})"
        ) from error
    role = roles.get(role_arn)
    stream = streams.get(target)
    return {
        "destination": ctx.destination_arn(logical_id),
        "stack": ctx.name,
        "owner": ctx.account,
        "admits": [
            grant
            for statement in _allow_statements(
                _as_list(policy.get("Statement", [])), f"{ctx.name}: {logical_id}"
            )
            for grant in _grant_entries(statement, SUBSCRIBE_TO_DESTINATION_ACTIONS)
        ],
        "role": role_arn,
        "target": target,
        "location": stream["location"] if stream else None,
        "error_location": stream["error_location"] if stream else None,
        "role_may_put_records": role is not None
        and all(role.allows(action, target) for action in FIREHOSE_PUT_ACTIONS),
    }


def _admits(destination: Mapping[str, Any], account: str) -> bool | None:
    """Whether a log group of ``account`` may subscribe to the destination.

    Its owner account may (by IAM); another account may when the policy names it, or anyone,
    without conditions. Where a grant could admit the account only under a condition, or only
    for one role or user of it, the template cannot tell whether the filter's creator meets it:
    None (unknown), never a "no" that a deployment would contradict.
    """
    if account == destination["owner"]:
        return True
    maybe = False
    for grant in destination["admits"]:
        principal = grant["principal"]
        names_account = principal in ({"account": account}, {"any": "*"})
        if names_account and not grant.get("conditions"):
            return True
        if names_account or "organization" in principal or _principal_in(principal, account):
            maybe = True
    return None if maybe else False


def _principal_in(principal: Mapping[str, str], account: str) -> bool:
    """Whether a role or user principal (by ARN) belongs to ``account``."""
    arn = principal.get("arn") or principal.get("role")
    parts = arn.split(":") if isinstance(arn, str) else []
    return len(parts) > 4 and parts[4] == account


def _subscription_filter_entry(
    ctx: _StackContext, resource: Mapping[str, Any], destinations: Mapping[str, Any]
) -> dict[str, Any]:
    """A log group's subscription filter: the destination, and whether that admits it."""
    props = ctx.resolve(resource.get("Properties", {}), strict=False)
    log_group = props["LogGroupName"]
    destination = destinations.get(props["DestinationArn"])
    return {
        "log_group": ctx.log_group_arn(log_group),
        "log_group_name": log_group,
        "account": ctx.account,
        "stack": ctx.name,
        "destination": props["DestinationArn"],
        "filter_pattern": props.get("FilterPattern", ""),
        "destination_in_assembly": destination is not None,
        "admitted": _admits(destination, ctx.account) if destination else None,
    }


def _delivery_logs(contexts: Sequence[_StackContext]) -> dict[str, Any]:
    """The log-data edges: log group to destination, destination through Firehose to S3, and
    who may use the prefixes of the buckets Firehose writes to."""
    roles = _roles(contexts)
    streams = _delivery_streams(contexts)
    for stream in streams.values():
        if stream["bucket"] is None:
            # Into a bucket the template does not name, whether the role may write is unknown.
            stream["role_may_write"] = None
            continue
        # An object under the prefix as written: a grant on the static part with a trailing
        # ``*`` covers the ``!{...}`` expressions Firehose fills in; a narrower one does not.
        role = roles.get(stream["role"])
        stream["role_may_write"] = role is not None and all(
            role.allows(OBJECT_ACCESS["write"], f"{stream['bucket_arn']}/{prefix}object")
            for prefix in (stream["prefix"], stream["error_prefix"])
            if prefix is not None
        )
    destinations: dict[str, dict[str, Any]] = {}
    filter_resources: list[tuple[_StackContext, Mapping[str, Any]]] = []
    for ctx in contexts:
        for logical_id, resource in ctx.template.get("Resources", {}).items():
            if resource.get("Type") == "AWS::Logs::Destination":
                entry = _destination_entry(ctx, logical_id, roles, streams)
                destinations[entry["destination"]] = entry
            elif resource.get("Type") == "AWS::Logs::SubscriptionFilter":
                filter_resources.append((ctx, resource))
    buckets = sorted({s["bucket"] for s in streams.values() if s["bucket"]})
    return {
        "subscription_filters": sorted(
            (_subscription_filter_entry(ctx, r, destinations) for ctx, r in filter_resources),
            key=lambda f: (f["log_group"], f["destination"]),
        ),
        "destinations": [destinations[arn] for arn in sorted(destinations)],
        "streams": [streams[arn] for arn in sorted(streams)],
        "buckets": [_log_bucket(contexts, name, roles) for name in buckets],
    }


def build_report(assembly_dir: str | Path) -> dict[str, Any]:
    """Every queue and topic of the assembly: who may send, receive, publish and subscribe,
    who may use each key, every subscription (the topic-to-endpoint edges), every relay hop,
    and where the delivery logs go (``delivery_logs``)."""
    queues: dict[str, dict[str, Any]] = {}
    topics: dict[str, dict[str, Any]] = {}
    subscriptions: list[dict[str, Any]] = []
    relays: list[dict[str, Any]] = []
    queue_kinds = {"send": SEND_ACTIONS, "receive": RECEIVE_ACTIONS}
    topic_kinds = {"publish": PUBLISH_ACTIONS, "subscribe": SUBSCRIBE_ACTIONS}
    contexts = read_assembly(assembly_dir)
    for ctx in contexts:
        resources = ctx.template.get("Resources", {})
        by_logical_id: dict[str, dict[str, Any]] = {}
        for logical_id, resource in resources.items():
            if resource.get("Type") == "AWS::SQS::Queue":
                by_logical_id[logical_id] = queues.setdefault(
                    ctx.queue_arn(logical_id), _queue_entry(ctx, logical_id)
                )
            elif resource.get("Type") == "AWS::SNS::Topic":
                by_logical_id[logical_id] = topics.setdefault(
                    ctx.topic_arn(logical_id), _topic_entry(ctx, logical_id)
                )
            elif resource.get("Type") == "AWS::SNS::Subscription":
                subscriptions.append(_subscription_entry(ctx, resource))
            elif resource.get("Type") == "AWS::Lambda::Function":
                relays.extend(_relay_edges(ctx, resource))
        for logical_id, resource in resources.items():
            props = resource.get("Properties", {})
            if resource.get("Type") == "AWS::SQS::QueuePolicy":
                for ref in props["Queues"]:
                    _apply_policy(ctx, logical_id, by_logical_id[ref["Ref"]], queue_kinds)
            elif resource.get("Type") == "AWS::SNS::TopicPolicy":
                for ref in props["Topics"]:
                    _apply_policy(ctx, logical_id, by_logical_id[ref["Ref"]], topic_kinds)
    return {
        "queues": [queues[arn] for arn in sorted(queues)],
        "topics": [topics[arn] for arn in sorted(topics)],
        "subscriptions": sorted(
            subscriptions, key=lambda s: (s["topic"], s["protocol"], str(s["endpoint"]))
        ),
        "relays": sorted(relays, key=lambda r: (r["from"], r["to"])),
        "delivery_logs": _delivery_logs(contexts),
    }


def principal_set(grants: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The principals of a list of grants as comparable pairs."""
    return {next(iter(g["principal"].items())) for g in grants}


Access = dict[str, dict[str, set[tuple[str, str]]]]


def expected_access(topology: Topology) -> Access:
    """What the topology means: per queue and topic ARN, the principals of each grant kind.

    Senders and publishers in the resource's own account are authorized by IAM, so they have
    no policy grant; nobody outside the owner account may receive; an endpoint's DLQ grants
    nobody; a queue subscribed to a topic admits that topic; a subscription's DLQ admits that
    topic; other accounts may subscribe only their own queues.
    """
    expected: Access = {}
    for queue in topology.all_queues:
        account = topology.account(queue.account)
        send = {("account", a) for a in topology.cross_account_senders(queue)}
        send |= {("organization", o) for o in topology.sender_organizations(queue)}
        send |= {("topic", topology.topic_arn(t)) for t, _ in topology.queue_subscriptions(queue)}
        expected[topology.queue_arn(queue)] = {"send": send, "receive": set()}
        expected[_sqs_arn(account, queue.dead_letter_queue_name)] = {
            "send": set(),
            "receive": set(),
        }
    for route in topology.relay_routes:
        assert route.sender is not None
        sender_account = topology.account(topology.endpoint(route.sender).account)
        receiver = topology.endpoint(route.receiver)
        shadow = receiver.queue_name
        for name in (shadow, dead_letter_queue_name(shadow)):
            expected[topology.sqs_arn(sender_account.name, name)] = {
                "send": set(),
                "receive": set(),
            }
        ingress = ingress_queue_name(receiver.queue_name)
        role = ("role", topology.relay_role_arn(sender_account, "outbound"))
        ingress_arn = topology.sqs_arn(receiver.account, ingress)
        expected.setdefault(ingress_arn, {"send": set(), "receive": set()})["send"].add(role)
        expected[topology.sqs_arn(receiver.account, dead_letter_queue_name(ingress))] = {
            "send": set(),
            "receive": set(),
        }
    for topic in topology.topics:
        publish = {("account", a) for a in topology.cross_account_publishers(topic)}
        publish |= {("organization", o) for o in topic.publisher_organizations}
        subscribe = {("account", a) for a in topology.subscriber_accounts(topic)}
        expected[topology.topic_arn(topic)] = {"publish": publish, "subscribe": subscribe}
        for subscription in topic.subscriptions:
            owner = (
                topology.endpoint(subscription.endpoint).account
                if subscription.endpoint
                else topic.account
            )
            dlq = subscription_dead_letter_queue_name(topic.topic_name, subscription.name)
            expected[_sqs_arn(topology.account(owner), dlq)] = {
                "send": {("topic", topology.topic_arn(topic))},
                "receive": set(),
            }
    return expected


def _sqs_arn(account: Account, queue_name: str) -> str:
    return f"arn:{account.partition}:sqs:{account.region}:{account.id}:{queue_name}"


def expected_relay_edges(topology: Topology) -> set[tuple[str, str, str]]:
    """(direction, from, to) for every relay hop: shadow queue to the remote ingress queue,
    ingress queue to the endpoint queue."""
    edges: set[tuple[str, str, str]] = set()
    for route in topology.relay_routes:
        assert route.sender is not None
        receiver = topology.endpoint(route.receiver)
        sender_account = topology.endpoint(route.sender).account
        ingress = topology.sqs_arn(receiver.account, ingress_queue_name(receiver.queue_name))
        edges.add(("outbound", topology.sqs_arn(sender_account, receiver.queue_name), ingress))
        edges.add(("inbound", ingress, topology.queue_arn(receiver)))
    return edges


def actual_relay_edges(report: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """The report's relay hops in the shape of :func:`expected_relay_edges`."""
    return {(r["direction"], r["from"], r["to"]) for r in report["relays"]}


LogDataEdge = tuple[str, str, str]
"""(kind, from, to): ``subscription-filter`` (log group ARN to destination ARN), ``delivers``
and ``delivers-errors`` (destination to the S3 location its Firehose stream writes records and
failures to), and ``read``, ``write``, ``delete`` (the service assuming a role, or a
bucket-policy principal, to an ``s3://bucket/prefix``)."""


def expected_log_data_edges(topology: Topology) -> set[LogDataEdge]:
    """Where the topology means delivery logs to go: each topic's success and failure log
    groups to the analytics destination, through Firehose into the log prefix of the analytics
    bucket (failures under the error prefix), written by Firehose only and read by the daily
    job, which alone writes (and replaces) reports. Nothing without ``analytics``."""
    destination = delivery_log_destination_arn(topology)
    if topology.analytics is None or destination is None:
        return set()
    edges: set[LogDataEdge] = set()
    for topic in topology.topics:
        account = topology.account(topic.account)
        for name in delivery_log_group_names(topic.topic_name, account.region, account.id):
            log_group = (
                f"arn:{account.partition}:logs:{account.region}:{account.id}:log-group:{name}"
            )
            edges.add(("subscription-filter", log_group, destination))
    analytics = topology.account(topology.analytics.account)
    bucket = f"s3://{bucket_name(analytics.id, analytics.region)}/"
    firehose, job = "firehose.amazonaws.com", "emr-serverless.amazonaws.com"
    return edges | {
        ("delivers", destination, bucket + FIREHOSE_PREFIX),
        ("delivers-errors", destination, bucket + FIREHOSE_ERROR_PREFIX),
        ("write", firehose, bucket + LOG_PREFIX),
        ("write", firehose, bucket + ERROR_PREFIX),
        ("read", job, bucket + LOG_PREFIX),
        ("read", job, bucket + REPORT_PREFIX),
        ("write", job, bucket + REPORT_PREFIX),
        ("delete", job, bucket + REPORT_PREFIX),
    }


def actual_log_data_edges(report: Mapping[str, Any]) -> set[LogDataEdge]:
    """The report's delivery-log edges in the shape of :func:`expected_log_data_edges`.

    A destination whose target is not a Firehose stream of the assembly leads to the target's
    ARN; a role is named by who assumes it, since CloudFormation names the roles.
    """
    logs = report["delivery_logs"]
    edges: set[LogDataEdge] = {
        ("subscription-filter", f["log_group"], f["destination"])
        for f in logs["subscription_filters"]
    }
    for d in logs["destinations"]:
        edges.add(("delivers", d["destination"], d["location"] or d["target"]))
        if d["error_location"]:
            edges.add(("delivers-errors", d["destination"], d["error_location"]))
    for bucket in logs["buckets"]:
        for grant in bucket["access"]:
            principals = grant["assumed_by"] or [grant["principal"]]
            for kind in OBJECT_ACCESS:
                for prefix in grant[kind]:
                    for principal in principals:
                        source = next(iter(principal.values()))
                        edges.add((kind, source, f"s3://{bucket['bucket']}/{prefix}"))
    return edges


def actual_access(report: Mapping[str, Any]) -> Access:
    """The report reduced to the same shape as :func:`expected_access`."""
    actual: Access = {
        q["queue"]: {"send": principal_set(q["send"]), "receive": principal_set(q["receive"])}
        for q in report["queues"]
    }
    for t in report["topics"]:
        actual[t["topic"]] = {
            "publish": principal_set(t["publish"]),
            "subscribe": principal_set(t["subscribe"]),
        }
    return actual


def _describe(principal: Mapping[str, str]) -> str:
    kind, value = next(iter(principal.items()))
    return f"{kind} `{value}`"


def _conditions(grant: Mapping[str, Any]) -> str:
    conditions = grant.get("conditions")
    if not conditions:
        return "none"
    return "; ".join(
        f"{op} {key}={value}" for op, pairs in conditions.items() for key, value in pairs.items()
    )


def _grant_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    lines = ["| access | principal | actions | conditions |", "|---|---|---|---|"]
    if not rows:
        lines.append("| - | no grant beyond the owner account | - | - |")
    for access, grant in rows:
        lines.append(
            f"| {access} | {_describe(grant['principal'])} | "
            f"{', '.join(grant['actions'])} | {_conditions(grant)} |"
        )
    return [*lines, ""]


def _header(entry: Mapping[str, Any]) -> str:
    return (
        f"Owner account `{entry['owner']}` (its IAM principals, by their own policies); "
        f"encryption: {entry['encryption']}; "
        f"non-TLS requests denied: {'yes' if entry['denies_insecure_transport'] else 'NO'}."
    )


def _yes_no(value: bool | None) -> str:
    if value is None:
        return "unknown"
    return "yes" if value else "NO"


def _admission(subscription_filter: Mapping[str, Any]) -> str:
    """Whether the destination admits the log group; unknown both where the destination is
    outside the assembly and where its grants leave it open (an organization, a condition, one
    role of the account), so the two are told apart."""
    if not subscription_filter["destination_in_assembly"]:
        return "destination not in the assembly"
    return _yes_no(subscription_filter["admitted"])


def _prefixes(prefixes: Sequence[str]) -> str:
    return ", ".join(f"`{p or '(every key)'}`" for p in prefixes) or "-"


def _delivery_logs_markdown(logs: Mapping[str, Any]) -> list[str]:
    """The delivery-log edges: log group to destination (admitted or not), destination through
    Firehose to S3, and per log bucket who may read, write and delete which prefixes."""
    lines = ["## Delivery logs", ""]
    if not any(logs.values()):
        return [
            *lines,
            "No subscription filter, destination or Firehose stream: delivery logs stay in "
            "their accounts.",
            "",
        ]
    lines += [
        "### Subscription filters (log group to destination)",
        "",
        "| log group | account | destination | admitted by the destination | created by |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| `{f['log_group']}` | {f['account']} | `{f['destination']}` | "
        f"{_admission(f)} | {f['stack']} |"
        for f in logs["subscription_filters"]
    ]
    lines += [
        "",
        "### Destinations (to Firehose, to S3)",
        "",
        "| destination | admits | target | records to | failures to | role may put records |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{d['destination']}` | "
        f"{', '.join(_describe(g['principal']) for g in d['admits']) or 'owner account only'} | "
        f"`{d['target']}` | `{d['location']}` | `{d['error_location']}` | "
        f"{_yes_no(d['role_may_put_records'])} |"
        for d in logs["destinations"]
    ]
    lines += [
        "",
        "### Firehose streams",
        "",
        "| stream | bucket | records to | failures to | role | role may write there |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{s['stream']}` | `{s['bucket_arn']}` | `{s['location']}` | "
        f"`{s['error_location']}` | `{s['role']}` | {_yes_no(s['role_may_write'])} |"
        for s in logs["streams"]
    ]
    for bucket in logs["buckets"]:
        lines += [
            "",
            f"### Log bucket `{bucket['bucket']}`",
            "",
            f"Defined in {bucket['stack'] or 'no stack of the assembly'}; non-TLS requests "
            f"denied: {_yes_no(bucket['denies_insecure_transport'])}.",
            "",
            "| principal | assumed by | reads | writes | deletes | conditions |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {_describe(g['principal'])} | "
            f"{', '.join(_describe(p) for p in g['assumed_by']) or '-'} | "
            f"{_prefixes(g['read'])} | {_prefixes(g['write'])} | {_prefixes(g['delete'])} | "
            f"{_conditions(g)} |"
            for g in bucket["access"]
        ]
    return [*lines, ""]


def to_markdown(report: Mapping[str, Any]) -> str:
    """A table per queue and topic (who may send, receive, publish, subscribe, use the key,
    under which conditions), then the subscriptions (every topic-to-endpoint edge), the relays
    and the delivery logs."""
    lines = ["# Access report", "", "## Queues", ""]
    for q in report["queues"]:
        rows = [("send", g) for g in q["send"]] + [("receive", g) for g in q["receive"]]
        rows += [("key", g) for g in q["key_users"]]
        lines += [f"### `{q['queue']}`", "", _header(q), "", *_grant_table(rows)]
    lines += ["## Topics", ""]
    for t in report["topics"]:
        rows = [("publish", g) for g in t["publish"]] + [("subscribe", g) for g in t["subscribe"]]
        logged = ", ".join(t["logged_protocols"]) or "none"
        lines += [
            f"### `{t['topic']}`",
            "",
            _header(t) + f" Delivery status logged for: {logged}.",
            "",
            *_grant_table(rows),
        ]
    lines += [
        "## Subscriptions (topic to endpoint)",
        "",
        "| topic | protocol | endpoint | dead-letter queue | created by |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| `{s['topic']}` | {s['protocol']} | `{s['endpoint']}` | "
        f"`{s['dead_letter_queue']}` | {s['stack']} |"
        for s in report["subscriptions"]
    ]
    lines += [
        "",
        "## Relays (account bridge)",
        "",
        "| direction | from | to | role |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['direction']} | `{r['from']}` | `{r['to']}` | `{r['role']}` |"
        for r in report["relays"]
    ]
    lines += ["", *_delivery_logs_markdown(report["delivery_logs"])]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the access report of a cloud assembly as JSON and Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("assembly", help="the cloud assembly directory (cdk.out)")
    parser.add_argument("--json", type=Path, help="write the JSON report here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown report here")
    args = parser.parse_args(argv)
    try:
        report = build_report(args.assembly)
    except AccessReportError as error:
        print(f"access report: {error}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(to_markdown(report), encoding="utf-8")
    if not args.json and not args.markdown:
        print(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
