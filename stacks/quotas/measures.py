"""What the quota gate measures in the templates: one :class:`Measurement` per quota and
resource (or per key, log group, function or account, for the quotas that span stacks), each
counted as its row in :mod:`stacks.quotas.table` says."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX
from stacks.quotas.assembly import QuotaGateError, StackTemplate, compact_json
from stacks.quotas.table import (
    ALARM_MATH_METRICS,
    CLOUDFORMATION_DESCRIPTION_BYTES,
    CLOUDFORMATION_MAPPINGS,
    CLOUDFORMATION_OUTPUTS,
    CLOUDFORMATION_PARAMETERS,
    CLOUDFORMATION_RESOURCES,
    CLOUDFORMATION_TEMPLATE_BYTES,
    DASHBOARD_METRICS,
    DASHBOARD_STATUS_ALARMS,
    DASHBOARD_WIDGET_METRICS,
    DASHBOARD_WIDGETS,
    EVENT_SOURCE_BATCH_SIZE,
    EVENT_SOURCE_BATCHING_WINDOW,
    EVENT_SOURCE_FIFO_BATCH_SIZE,
    EVENT_SOURCE_FIFO_BATCHING_WINDOW,
    EVENT_SOURCE_VISIBILITY_TIMEOUT,
    EVENT_SOURCE_WINDOW_FOR_LARGE_BATCHES,
    IAM_MANAGED_POLICIES_PER_ROLE,
    IAM_MANAGED_POLICY_SIZE,
    IAM_ROLE_INLINE_POLICIES,
    IAM_ROLE_TRUST_POLICY,
    IAM_ROLES_PER_ACCOUNT,
    KMS_ALIASES_PER_KEY,
    KMS_KEY_POLICY_BYTES,
    LAMBDA_ENVIRONMENT_BYTES,
    LAMBDA_RESOURCE_POLICY_BYTES,
    LOGS_SUBSCRIPTION_FILTERS,
    S3_BUCKET_POLICY_BYTES,
    SNS_POLICY_BYTES,
    SNS_POLICY_PRINCIPALS,
    SNS_POLICY_RESOURCES,
    SNS_POLICY_STATEMENTS,
    SQS_POLICY_ACTIONS,
    SQS_POLICY_BYTES,
    SQS_POLICY_CONDITIONS,
    SQS_POLICY_PRINCIPALS,
    SQS_POLICY_STATEMENTS,
    Bound,
    Quota,
)

SQS_DEFAULT_VISIBILITY_TIMEOUT = 30
"""SQS's visibility timeout for a queue created without one (seconds)."""
LAMBDA_DEFAULT_TIMEOUT = 3
"""Lambda's timeout for a function created without one (seconds)."""
EVENT_SOURCE_DEFAULT_BATCH_SIZE = 10
"""What an SQS event source mapping reads per invocation when its BatchSize is absent."""
LARGE_BATCH = 10
"""Above this batch size Lambda requires a batching window."""


@dataclass(frozen=True)
class Measurement:
    """What the gate found for one quota in one place: ``value`` against ``limit`` (the
    quota's number, or for a relative quota the value it is bound by)."""

    quota: Quota
    template: str
    resource: str
    value: int
    limit: int

    @property
    def crosses(self) -> bool:
        if self.quota.bound is Bound.AT_MOST:
            return self.value > self.limit
        return self.value < self.limit

    @property
    def share(self) -> float:
        """How much of an upper quota the measurement uses (1.0 at the quota)."""
        return self.value / self.limit if self.limit else float(self.value > 0)

    def problem(self) -> str:
        """The line the gate refuses with: where, which quota, found against allowed, the fix."""
        relative = f" ({self.quota.relative_to})" if self.quota.relative_to else ""
        return (
            f"{self.template}: {self.resource}: {self.quota.name}: {self.value:,} "
            f"{self.quota.bound.value} {self.limit:,} {self.quota.unit}{relative}; "
            f"{self.quota.fix}"
        )


def measured(quota: Quota, stack: StackTemplate, resource: str, value: int) -> Measurement:
    """A measurement of a quota with a fixed number."""
    return Measurement(quota, stack.file, resource, value, quota.fixed)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def statements(document: Any) -> list[Mapping[str, Any]]:
    return as_list(document.get("Statement", [])) if isinstance(document, Mapping) else []


def principal_count(statement: Mapping[str, Any]) -> int:
    """The values under a statement's Principal (or NotPrincipal); ``*`` is one."""
    principal = statement.get("Principal", statement.get("NotPrincipal"))
    if principal is None:
        return 0
    if not isinstance(principal, Mapping):
        return 1
    return sum(len(as_list(values)) for values in principal.values())


def condition_count(statement: Mapping[str, Any]) -> int:
    conditions = statement.get("Condition", {})
    return sum(len(keys) for keys in conditions.values() if isinstance(keys, Mapping))


def action_count(statement: Mapping[str, Any]) -> int:
    return len(as_list(statement.get("Action", statement.get("NotAction", []))))


def json_bytes(value: Any) -> int:
    return len(compact_json(value).encode("utf-8"))


def iam_characters(value: Any) -> int:
    """Characters of a policy as IAM counts them: compact JSON without whitespace."""
    return len(re.sub(r"\s", "", compact_json(value)))


def number(value: Any, default: int) -> int:
    """A numeric property that a template may hold as a number or a string."""
    return default if value is None else int(str(value))


def _templates(stack: StackTemplate) -> Iterator[Measurement]:
    template = stack.template
    yield measured(CLOUDFORMATION_RESOURCES, stack, stack.name, len(stack.resources))
    yield measured(CLOUDFORMATION_OUTPUTS, stack, stack.name, len(template.get("Outputs", {})))
    yield measured(
        CLOUDFORMATION_PARAMETERS, stack, stack.name, len(template.get("Parameters", {}))
    )
    yield measured(CLOUDFORMATION_MAPPINGS, stack, stack.name, len(template.get("Mappings", {})))
    yield measured(CLOUDFORMATION_TEMPLATE_BYTES, stack, stack.name, stack.body_bytes)
    description = str(template.get("Description", ""))
    yield measured(CLOUDFORMATION_DESCRIPTION_BYTES, stack, stack.name, len(description.encode()))


def _queue_policies(stack: StackTemplate) -> Iterator[Measurement]:
    for logical_id, props in stack.of_type("AWS::SQS::QueuePolicy"):
        document = stack.resolve(props.get("PolicyDocument", {}))
        found = statements(document)
        yield measured(SQS_POLICY_BYTES, stack, logical_id, json_bytes(document))
        yield measured(SQS_POLICY_STATEMENTS, stack, logical_id, len(found))
        yield measured(SQS_POLICY_PRINCIPALS, stack, logical_id, sum(map(principal_count, found)))
        yield measured(SQS_POLICY_CONDITIONS, stack, logical_id, sum(map(condition_count, found)))
        yield measured(
            SQS_POLICY_ACTIONS, stack, logical_id, max(map(action_count, found), default=0)
        )


def _topic_policies(stack: StackTemplate) -> Iterator[Measurement]:
    for logical_id, props in stack.of_type("AWS::SNS::TopicPolicy"):
        document = stack.resolve(props.get("PolicyDocument", {}))
        found = statements(document)
        resources = [len(as_list(s.get("Resource", []))) for s in found]
        yield measured(SNS_POLICY_BYTES, stack, logical_id, json_bytes(document))
        yield measured(SNS_POLICY_STATEMENTS, stack, logical_id, len(found))
        yield measured(
            SNS_POLICY_PRINCIPALS, stack, logical_id, max(map(principal_count, found), default=0)
        )
        yield measured(SNS_POLICY_RESOURCES, stack, logical_id, max(resources, default=0))


def _resource_policies(stack: StackTemplate) -> Iterator[Measurement]:
    for logical_id, props in stack.of_type("AWS::S3::BucketPolicy"):
        document = stack.resolve(props.get("PolicyDocument", {}))
        yield measured(S3_BUCKET_POLICY_BYTES, stack, logical_id, json_bytes(document))
    for logical_id, props in stack.of_type("AWS::KMS::Key"):
        document = stack.resolve(props.get("KeyPolicy", {}))
        yield measured(KMS_KEY_POLICY_BYTES, stack, logical_id, json_bytes(document))
    for logical_id, props in stack.of_type("AWS::IAM::ManagedPolicy"):
        document = stack.resolve(props.get("PolicyDocument", {}))
        yield measured(IAM_MANAGED_POLICY_SIZE, stack, logical_id, iam_characters(document))


def _environments(stack: StackTemplate) -> Iterator[Measurement]:
    for logical_id, props in stack.of_type("AWS::Lambda::Function"):
        variables = stack.resolve(props.get("Environment", {}).get("Variables", {}))
        size = json_bytes(variables) if variables else 0
        yield measured(LAMBDA_ENVIRONMENT_BYTES, stack, logical_id, size)


def _reference(value: Any) -> str:
    """The logical id a ``Ref`` or ``Fn::GetAtt`` names, or "" when ``value`` is neither."""
    if isinstance(value, Mapping) and len(value) == 1:
        ((function, argument),) = value.items()
        if function == "Ref" and isinstance(argument, str):
            return argument
        if function == "Fn::GetAtt":
            return str(argument.split(".", 1)[0] if isinstance(argument, str) else argument[0])
    return ""


def _event_sources(stack: StackTemplate) -> Iterator[Measurement]:
    for logical_id, props in stack.of_type("AWS::Lambda::EventSourceMapping"):
        source = stack.text(props.get("EventSourceArn", ""))
        if ":sqs:" not in source:
            continue
        queue_id = _reference(props.get("EventSourceArn"))
        queue = (
            stack.resources[queue_id].get("Properties", {})
            if queue_id in stack.resources
            and stack.resources[queue_id].get("Type") == "AWS::SQS::Queue"
            else None
        )
        fifo = source.endswith(FIFO_SUFFIX) or (
            queue is not None and str(queue.get("FifoQueue", "")).lower() == "true"
        )
        batch = number(props.get("BatchSize"), EVENT_SOURCE_DEFAULT_BATCH_SIZE)
        window = number(props.get("MaximumBatchingWindowInSeconds"), 0)
        if fifo:
            yield measured(EVENT_SOURCE_FIFO_BATCH_SIZE, stack, logical_id, batch)
            yield measured(EVENT_SOURCE_FIFO_BATCHING_WINDOW, stack, logical_id, window)
        else:
            yield measured(EVENT_SOURCE_BATCH_SIZE, stack, logical_id, batch)
            yield measured(EVENT_SOURCE_BATCHING_WINDOW, stack, logical_id, window)
            if batch > LARGE_BATCH:
                yield measured(EVENT_SOURCE_WINDOW_FOR_LARGE_BATCHES, stack, logical_id, window)
        function_id = _reference(props.get("FunctionName"))
        if queue is None or function_id not in stack.resources:
            continue
        function = stack.resources[function_id].get("Properties", {})
        yield Measurement(
            EVENT_SOURCE_VISIBILITY_TIMEOUT,
            stack.file,
            logical_id,
            number(queue.get("VisibilityTimeout"), SQS_DEFAULT_VISIBILITY_TIMEOUT),
            number(function.get("Timeout"), LAMBDA_DEFAULT_TIMEOUT),
        )


def _roles(stacks: Sequence[StackTemplate]) -> Iterator[Measurement]:
    """Each role's trust policy, inline policies (its own and every AWS::IAM::Policy naming it,
    in any stack of its account) and managed policies; and the roles of each account."""
    inline: dict[tuple[str, str], int] = defaultdict(int)
    managed: dict[tuple[str, str], int] = defaultdict(int)
    for stack in stacks:
        for policy_type, counts in (
            ("AWS::IAM::Policy", inline),
            ("AWS::IAM::ManagedPolicy", managed),
        ):
            for _, props in stack.of_type(policy_type):
                size = iam_characters(stack.resolve(props.get("PolicyDocument", {})))
                for role in props.get("Roles", []):
                    counts[(stack.account, stack.text(role))] += (
                        size if policy_type == "AWS::IAM::Policy" else 1
                    )
    roles_of: dict[str, list[StackTemplate]] = defaultdict(list)
    for stack in stacks:
        for logical_id, props in stack.of_type("AWS::IAM::Role"):
            roles_of[stack.account].append(stack)
            key = (stack.account, stack.name_of(logical_id))
            trust = stack.resolve(props.get("AssumeRolePolicyDocument", {}))
            yield measured(IAM_ROLE_TRUST_POLICY, stack, logical_id, iam_characters(trust))
            own = sum(
                iam_characters(stack.resolve(p.get("PolicyDocument", {})))
                for p in props.get("Policies", [])
            )
            yield measured(IAM_ROLE_INLINE_POLICIES, stack, logical_id, own + inline[key])
            attached = len(props.get("ManagedPolicyArns", [])) + managed[key]
            yield measured(IAM_MANAGED_POLICIES_PER_ROLE, stack, logical_id, attached)
    for account, holders in roles_of.items():
        first = min(holders, key=lambda s: s.file)
        yield measured(IAM_ROLES_PER_ACCOUNT, first, f"account {account}", len(holders))


def _key_of_alias(stack: StackTemplate, target: Any) -> tuple[tuple[str, ...], str]:
    """A key an alias targets, as a grouping key and the name to show: the key's logical id
    where it is in the same template, else its id (from an ARN or id the template gives)."""
    logical_id = _reference(target)
    if logical_id in stack.resources:
        return (stack.account, stack.region, stack.name, logical_id), logical_id
    key_id = stack.text(target).rsplit("/", 1)[-1]
    return (stack.account, stack.region, key_id), key_id


def _grouped(
    stacks: Sequence[StackTemplate],
    resource_type: str,
    group: Any,
) -> dict[tuple[str, ...], tuple[StackTemplate, str, list[Mapping[str, Any]]]]:
    """The resources of a type across the assembly, grouped by what ``group(stack, props)``
    returns (a grouping key and a name to show), with the first stack holding each group."""
    groups: dict[tuple[str, ...], tuple[StackTemplate, str, list[Mapping[str, Any]]]] = {}
    for stack in stacks:
        for _, props in stack.of_type(resource_type):
            key, shown = group(stack, props)
            groups.setdefault(key, (stack, shown, []))[2].append(props)
    return groups


def _aliases_and_filters(stacks: Sequence[StackTemplate]) -> Iterator[Measurement]:
    aliases = _grouped(
        stacks, "AWS::KMS::Alias", lambda s, p: _key_of_alias(s, p.get("TargetKeyId"))
    )
    for stack, shown, found in aliases.values():
        yield measured(KMS_ALIASES_PER_KEY, stack, shown, len(found))

    def log_group(stack: StackTemplate, props: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
        name = stack.text(props.get("LogGroupName", ""))
        return (stack.account, stack.region, name), f"log group {name}"

    for stack, shown, found in _grouped(
        stacks, "AWS::Logs::SubscriptionFilter", log_group
    ).values():
        yield measured(LOGS_SUBSCRIPTION_FILTERS, stack, shown, len(found))


_PERMISSION_CONDITIONS = {
    "SourceArn": ("ArnLike", "AWS:SourceArn"),
    "SourceAccount": ("StringEquals", "AWS:SourceAccount"),
    "PrincipalOrgID": ("StringEquals", "aws:PrincipalOrgID"),
    "FunctionUrlAuthType": ("StringEquals", "lambda:FunctionUrlAuthType"),
}
"""How Lambda writes each condition property of a permission into the function's policy."""


def _permission_statement(
    stack: StackTemplate, logical_id: str, props: Mapping[str, Any], function_arn: str
) -> dict[str, Any]:
    """The statement Lambda adds to a function's policy for an AWS::Lambda::Permission."""
    principal = stack.text(props.get("Principal", ""))
    if principal.isdigit():
        principal_element: Any = {"AWS": f"arn:{stack.partition}:iam::{principal}:root"}
    elif principal.endswith((".amazonaws.com", ".amazonaws.com.cn")):
        principal_element = {"Service": principal}
    else:
        principal_element = {"AWS": principal}
    condition: dict[str, dict[str, str]] = {}
    for prop, (operator, key) in _PERMISSION_CONDITIONS.items():
        if prop in props:
            condition.setdefault(operator, {})[key] = stack.text(props[prop])
    statement = {
        "Sid": stack.name_of(logical_id),
        "Effect": "Allow",
        "Principal": principal_element,
        "Action": stack.text(props.get("Action", "")),
        "Resource": function_arn,
    }
    return {**statement, "Condition": condition} if condition else statement


def _function_policies(stacks: Sequence[StackTemplate]) -> Iterator[Measurement]:
    policies: dict[tuple[str, str, str], tuple[StackTemplate, list[dict[str, Any]]]] = {}
    for stack in stacks:
        for logical_id, props in stack.of_type("AWS::Lambda::Permission"):
            named = stack.text(props.get("FunctionName", ""))
            name = named.split(":function:", 1)[1] if ":function:" in named else named
            arn = named if named.startswith("arn:") else stack.arn("lambda", f"function:{name}")
            key = (stack.account, stack.region, name)
            statement = _permission_statement(stack, logical_id, props, arn)
            policies.setdefault(key, (stack, []))[1].append(statement)
    for (_, _, name), (stack, found) in policies.items():
        document = {"Version": "2012-10-17", "Id": "default", "Statement": found}
        yield measured(
            LAMBDA_RESOURCE_POLICY_BYTES, stack, f"function {name}", json_bytes(document)
        )


def _dashboard_body(stack: StackTemplate, logical_id: str, body: Any) -> Any:
    """A dashboard's body as CloudWatch gets it. Every intrinsic CDK joins into it stands
    inside one of its JSON strings, so each is resolved and written as string content (what the
    resolver cannot know, rendered as JSON, would otherwise break the body and leave it
    unmeasured); a body that is still not JSON is refused, as CloudWatch refuses it."""
    if isinstance(body, Mapping) and set(body) == {"Fn::Join"}:
        separator, parts = body["Fn::Join"]
        text = separator.join(
            part if isinstance(part, str) else json.dumps(stack.text(part))[1:-1] for part in parts
        )
    else:
        text = stack.text(body)
    try:
        return json.loads(text)
    except ValueError as error:
        raise QuotaGateError(
            f"{stack.file}: {logical_id}: its DashboardBody is not JSON, which CloudWatch "
            f"refuses: {error}"
        ) from None


def _dashboards_and_alarms(stack: StackTemplate) -> Iterator[Measurement]:
    """Each dashboard's widgets and metrics, each status widget's alarms, read from its body
    as CloudFormation resolves it; each metric-math alarm's metrics."""
    for logical_id, props in stack.of_type("AWS::CloudWatch::Dashboard"):
        body = _dashboard_body(stack, logical_id, props.get("DashboardBody", "{}"))
        widgets = body.get("widgets", []) if isinstance(body, Mapping) else []
        yield measured(DASHBOARD_WIDGETS, stack, logical_id, len(widgets))
        total = 0
        for index, widget in enumerate(widgets):
            properties = widget.get("properties", {}) if isinstance(widget, Mapping) else {}
            where = f"{logical_id} widget {index + 1}"
            if widget.get("type") == "alarm":
                alarms = len(properties.get("alarms", []))
                yield measured(DASHBOARD_STATUS_ALARMS, stack, where, alarms)
            metrics = len(properties.get("metrics", []))
            total += metrics
            if metrics:
                yield measured(DASHBOARD_WIDGET_METRICS, stack, where, metrics)
        yield measured(DASHBOARD_METRICS, stack, logical_id, total)
    for logical_id, props in stack.of_type("AWS::CloudWatch::Alarm"):
        if "Metrics" in props:
            read = sum(1 for m in as_list(props["Metrics"]) if "MetricStat" in m)
            yield measured(ALARM_MATH_METRICS, stack, logical_id, read)


def measure(stacks: Sequence[StackTemplate]) -> list[Measurement]:
    """Every measurement of every quota in the templates."""
    found: list[Measurement] = []
    for stack in stacks:
        found += _templates(stack)
        found += _queue_policies(stack)
        found += _topic_policies(stack)
        found += _resource_policies(stack)
        found += _environments(stack)
        found += _event_sources(stack)
        found += _dashboards_and_alarms(stack)
    found += _roles(stacks)
    found += _aliases_and_filters(stacks)
    found += _function_policies(stacks)
    return found
