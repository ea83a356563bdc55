"""The delivery-log part of the report: the logs leave their account, so each edge is checked
in the templates: each log group's subscription filter and whether the destination admits it,
the destination's Firehose stream and where in S3 it writes, and who may read and write that
bucket's prefixes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from stacks.checks.access_report.assembly import AccessReportError, SynthesizedStack
from stacks.checks.access_report.policies import (
    Statement,
    action_grants,
    as_list,
    pattern_matches,
    principal_grants,
    principals,
    read_policy,
)
from stacks.checks.access_report.records import (
    DeliveryLogsRecord,
    DestinationRecord,
    LogBucketRecord,
    PrefixAccess,
    PrefixAccessKind,
    PrefixGrant,
    Principal,
    StreamRecord,
    SubscriptionFilterRecord,
)

ACTIONS_THAT_PUT_A_SUBSCRIPTION_FILTER = frozenset({"logs:PutSubscriptionFilter"})
"""The actions whose grant in a destination's policy admits another account's log groups."""
ACTION_OF_PREFIX_ACCESS: dict[PrefixAccessKind, str] = {
    "read": "s3:GetObject",
    "write": "s3:PutObject",
    "delete": "s3:DeleteObject",
}
"""The object action that stands for each kind of prefix access."""
ACTIONS_NEEDED_TO_PUT_RECORDS = ("firehose:PutRecord", "firehose:PutRecordBatch")
"""What a destination's role must be allowed, every one, on the stream it targets."""


@dataclass
class _Role:
    """An IAM role of the assembly with who may assume it and its Allow statements."""

    arn: str
    assumed_by: list[Principal]
    statements: list[Statement]

    def allows(self, action: str, resource: str) -> bool:
        return any(
            pattern_matches(action, statement.get("Action", []))
            and pattern_matches(resource, statement.get("Resource", []))
            for statement in self.statements
        )


def _identity_allow_statements(
    stack: SynthesizedStack, document: Any, where: str
) -> list[Statement]:
    """The Allow statements of an identity policy, loosely resolved: only what they allow on
    the log bucket is read."""
    return read_policy(stack.resolve(document or {}, strict=False), f"{stack.name}: {where}").allows


def _roles(stacks: Sequence[SynthesizedStack]) -> dict[str, _Role]:
    """Every role of the assembly by ARN, with the statements of its inline and attached
    policies (customer policies in the templates; AWS managed policies are not read)."""
    roles: dict[str, _Role] = {}
    for stack in stacks:
        for logical_id, resource in stack.template.get("Resources", {}).items():
            if resource.get("Type") != "AWS::IAM::Role":
                continue
            props = resource.get("Properties", {})
            trust = stack.resolve(props.get("AssumeRolePolicyDocument", {}), strict=False)
            role = _Role(
                stack.role_arn(logical_id),
                [
                    principal
                    for statement in as_list(trust.get("Statement", []))
                    if statement.get("Effect") == "Allow"
                    for principal in principals(statement.get("Principal", {}))
                ],
                [],
            )
            for inline in props.get("Policies", []):
                role.statements += _identity_allow_statements(
                    stack, inline["PolicyDocument"], logical_id
                )
            roles[role.arn] = role
    for stack in stacks:
        for logical_id, resource in stack.template.get("Resources", {}).items():
            if resource.get("Type") not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
                continue
            props = resource.get("Properties", {})
            statements = _identity_allow_statements(stack, props.get("PolicyDocument"), logical_id)
            for role_ref in props.get("Roles", []):
                name = stack.resolve(role_ref, strict=False)
                arn = stack.role_arn_named(name)
                roles.setdefault(arn, _Role(arn, [], [])).statements += statements
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


def _prefix_access(statements: Sequence[Statement], bucket: str) -> PrefixAccess:
    """Per kind (read, write, delete), the key prefixes of ``bucket`` the statements allow."""
    access: dict[PrefixAccessKind, set[str]] = {kind: set() for kind in ACTION_OF_PREFIX_ACCESS}
    for statement in statements:
        for kind, action in ACTION_OF_PREFIX_ACCESS.items():
            if not pattern_matches(action, statement.get("Action", [])):
                continue
            for resource in as_list(statement.get("Resource", [])):
                prefix = _object_prefix(resource, bucket)
                if prefix is not None:
                    access[kind].add(prefix)
    return PrefixAccess(
        read=sorted(access["read"]), write=sorted(access["write"]), delete=sorted(access["delete"])
    )


def _delivery_streams(stacks: Sequence[SynthesizedStack]) -> dict[str, StreamRecord]:
    """Every Firehose stream by ARN with its role and where in S3 it writes."""
    streams: dict[str, StreamRecord] = {}
    for stack in stacks:
        for logical_id, resource in stack.template.get("Resources", {}).items():
            if resource.get("Type") != "AWS::KinesisFirehose::DeliveryStream":
                continue
            props = resource.get("Properties", {})
            config = stack.resolve(
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
            arn = stack.delivery_stream_arn(logical_id)
            streams[arn] = {
                "stream": arn,
                "stack": stack.name,
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


def _log_bucket_record(
    stacks: Sequence[SynthesizedStack], name: str, roles: Mapping[str, _Role]
) -> LogBucketRecord:
    """Who may read, write and delete which prefixes of a bucket Firehose writes to: the roles
    whose policies allow it, and the principals its bucket policy admits."""
    bucket: LogBucketRecord = {
        "bucket": name,
        "stack": None,
        "denies_insecure_transport": False,
        "access": [],
    }
    for role in sorted(roles.values(), key=lambda r: r.arn):
        prefixes = _prefix_access(role.statements, name)
        if any(prefixes.values()):
            bucket["access"].append(_prefix_grant({"role": role.arn}, role.assumed_by, prefixes))
    for stack in stacks:
        for logical_id, resource in stack.template.get("Resources", {}).items():
            props = resource.get("Properties", {})
            if (
                resource.get("Type") == "AWS::S3::Bucket"
                and stack.physical_name(logical_id, "BucketName") == name
            ):
                bucket["stack"] = stack.name
            if resource.get("Type") != "AWS::S3::BucketPolicy":
                continue
            if stack.resolve(props.get("Bucket"), strict=False) != name:
                continue
            policy = read_policy(
                stack.resolve(props.get("PolicyDocument", {})), f"{stack.name}: {logical_id}"
            )
            if policy.denies_insecure_transport:
                bucket["denies_insecure_transport"] = True
            for statement in policy.allows:
                bucket["access"] += _bucket_policy_grants(statement, name)
    return bucket


def _prefix_grant(
    principal: Principal, assumed_by: list[Principal], prefixes: PrefixAccess
) -> PrefixGrant:
    """A principal's access to a bucket's prefixes, its keys in the report's order."""
    return PrefixGrant(
        principal=principal,
        assumed_by=assumed_by,
        read=prefixes["read"],
        write=prefixes["write"],
        delete=prefixes["delete"],
    )


def _bucket_policy_grants(statement: Statement, bucket: str) -> list[PrefixGrant]:
    """The prefixes of ``bucket`` that a bucket-policy Allow statement opens, per principal."""
    prefixes = _prefix_access([statement], bucket)
    if not any(prefixes.values()):
        return []
    assumed_by: list[Principal] = []
    return principal_grants(statement, lambda p: _prefix_grant(p, assumed_by, prefixes))


def _destination_record(
    stack: SynthesizedStack,
    logical_id: str,
    roles: Mapping[str, _Role],
    streams: Mapping[str, StreamRecord],
) -> DestinationRecord:
    """A CloudWatch Logs destination: whom its policy admits, and where it puts the logs."""
    props = stack.template["Resources"][logical_id].get("Properties", {})
    target = stack.resolve(props.get("TargetArn"), strict=False)
    role_arn = stack.resolve(props.get("RoleArn"), strict=False)
    policy_text = stack.resolve(props.get("DestinationPolicy", '{"Statement": []}'))
    try:
        policy = json.loads(policy_text)
    except (TypeError, json.JSONDecodeError) as error:
        raise AccessReportError(
            f"{stack.name}: destination {logical_id} has a DestinationPolicy the report cannot "
            f"read ({error})"
        ) from error
    role = roles.get(role_arn)
    stream = streams.get(target)
    return {
        "destination": stack.destination_arn(logical_id),
        "stack": stack.name,
        "owner": stack.account,
        "admits": [
            grant
            for statement in read_policy(policy, f"{stack.name}: {logical_id}").allows
            for grant in action_grants(statement, ACTIONS_THAT_PUT_A_SUBSCRIPTION_FILTER)
        ],
        "role": role_arn,
        "target": target,
        "location": stream["location"] if stream else None,
        "error_location": stream["error_location"] if stream else None,
        "role_may_put_records": role is not None
        and all(role.allows(action, target) for action in ACTIONS_NEEDED_TO_PUT_RECORDS),
    }


def _admission(destination: DestinationRecord, account: str) -> bool | None:
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


def _principal_in(principal: Principal, account: str) -> bool:
    """Whether a role or user principal (by ARN) belongs to ``account``."""
    arn = principal.get("arn") or principal.get("role")
    parts = arn.split(":") if isinstance(arn, str) else []
    return len(parts) > 4 and parts[4] == account


def _subscription_filter_record(
    stack: SynthesizedStack,
    resource: Mapping[str, Any],
    destinations: Mapping[str, DestinationRecord],
) -> SubscriptionFilterRecord:
    """A log group's subscription filter: the destination, and whether that admits it."""
    props = stack.resolve(resource.get("Properties", {}), strict=False)
    log_group = props["LogGroupName"]
    destination = destinations.get(props["DestinationArn"])
    return {
        "log_group": stack.log_group_arn(log_group),
        "log_group_name": log_group,
        "account": stack.account,
        "stack": stack.name,
        "destination": props["DestinationArn"],
        "filter_pattern": props.get("FilterPattern", ""),
        "destination_in_assembly": destination is not None,
        "admitted": _admission(destination, stack.account) if destination else None,
    }


def read_delivery_logs(stacks: Sequence[SynthesizedStack]) -> DeliveryLogsRecord:
    """The log-data edges: log group to destination, destination through Firehose to S3, and
    who may use the prefixes of the buckets Firehose writes to."""
    roles = _roles(stacks)
    streams = _delivery_streams(stacks)
    for stream in streams.values():
        if stream["bucket"] is None:
            # Into a bucket the template does not name, whether the role may write is unknown.
            stream["role_may_write"] = None
            continue
        # An object under the prefix as written: a grant on the static part with a trailing
        # ``*`` covers the ``!{...}`` expressions Firehose fills in; a narrower one does not.
        role = roles.get(stream["role"]) if stream["role"] is not None else None
        stream["role_may_write"] = role is not None and all(
            role.allows(ACTION_OF_PREFIX_ACCESS["write"], f"{stream['bucket_arn']}/{prefix}object")
            for prefix in (stream["prefix"], stream["error_prefix"])
            if prefix is not None
        )
    destinations: dict[str, DestinationRecord] = {}
    filter_resources: list[tuple[SynthesizedStack, Mapping[str, Any]]] = []
    for stack in stacks:
        for logical_id, resource in stack.template.get("Resources", {}).items():
            if resource.get("Type") == "AWS::Logs::Destination":
                destination = _destination_record(stack, logical_id, roles, streams)
                destinations[destination["destination"]] = destination
            elif resource.get("Type") == "AWS::Logs::SubscriptionFilter":
                filter_resources.append((stack, resource))
    buckets = sorted({s["bucket"] for s in streams.values() if s["bucket"]})
    return {
        "subscription_filters": sorted(
            (_subscription_filter_record(stack, r, destinations) for stack, r in filter_resources),
            key=lambda f: (f["log_group"], f["destination"]),
        ),
        "destinations": [destinations[arn] for arn in sorted(destinations)],
        "streams": [streams[arn] for arn in sorted(streams)],
        "buckets": [_log_bucket_record(stacks, name, roles) for name in buckets],
    }
