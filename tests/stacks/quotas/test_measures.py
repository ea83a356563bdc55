"""Each quota of the table, crossed by the smallest template that crosses it, is refused with
the resource, what was found and AWS's number, and nothing else in that template is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stacks.quotas import QUOTAS, Measurement, QuotaGateError, measure_assembly, quota_problems
from stacks.quotas import table as q
from tests.stacks.quotas.assemblies import (
    ACCOUNT,
    OTHER_ACCOUNT,
    compact_size,
    policy,
    resource,
    resources,
    statement,
    write_assembly,
)

FILE = "Stack.template.json"
TOPIC = f"arn:aws:sns:us-east-1:{ACCOUNT}:Billed"


def arns(count: int, service: str = "sns") -> list[str]:
    """``count`` distinct ARNs of about 100 characters each."""
    return [f"arn:aws:{service}:us-east-1:{ACCOUNT}:{'n' * 60}-{i:04d}" for i in range(count)]


def long_resources(count: int) -> dict[str, Any]:
    """A statement allowing one action on ``count`` resources (no whitespace in it)."""
    return {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": arns(count, "sqs")}


def queue_policy(document: dict[str, Any]) -> dict[str, Any]:
    return resources(Policy=resource("AWS::SQS::QueuePolicy", PolicyDocument=document))


def topic_policy(document: dict[str, Any]) -> dict[str, Any]:
    return resources(Policy=resource("AWS::SNS::TopicPolicy", PolicyDocument=document))


def topic_statement(**elements: Any) -> dict[str, Any]:
    return statement(Action="sns:Publish", Resource=TOPIC) | elements


def event_source(
    *, fifo: bool = False, visibility: int = 900, timeout: int = 60, **mapping: Any
) -> dict[str, Any]:
    """A queue read by a function through an event source mapping with ``mapping``."""
    queue = {"QueueName": "Orders.fifo", "FifoQueue": True} if fifo else {"QueueName": "Orders"}
    return resources(
        Queue=resource("AWS::SQS::Queue", VisibilityTimeout=visibility, **queue),
        Function=resource("AWS::Lambda::Function", Timeout=timeout),
        Source=resource(
            "AWS::Lambda::EventSourceMapping",
            EventSourceArn={"Fn::GetAtt": ["Queue", "Arn"]},
            FunctionName={"Ref": "Function"},
            **mapping,
        ),
    )


def roles(count: int) -> dict[str, Any]:
    return resources(
        **{
            f"Role{i}": resource("AWS::IAM::Role", AssumeRolePolicyDocument={})
            for i in range(count)
        }
    )


def crossing(quota: q.Quota, where: str, value: int, limit: int | None = None) -> Measurement:
    return Measurement(quota, FILE, where, value, quota.fixed if limit is None else limit)


Case = tuple[dict[str, dict[str, Any]], dict[str, str], Measurement]


def sqs_bytes() -> Case:
    document = policy(statement(Condition={"ArnLike": {"aws:SourceArn": arns(80)}}))
    return (
        {"Stack": queue_policy(document)},
        {},
        crossing(q.SQS_POLICY_BYTES, "Policy", compact_size(document)),
    )


def sqs_statements() -> Case:
    document = policy(*(statement(Sid=f"Grant{i}") for i in range(21)))
    return {"Stack": queue_policy(document)}, {}, crossing(q.SQS_POLICY_STATEMENTS, "Policy", 21)


def sqs_principals() -> Case:
    senders = [f"{100000000000 + i}" for i in range(51)]
    document = policy(statement(Principal={"AWS": senders}))
    return {"Stack": queue_policy(document)}, {}, crossing(q.SQS_POLICY_PRINCIPALS, "Policy", 51)


def sqs_conditions() -> Case:
    keys = {f"aws:PrincipalTag/team{i}": "billing" for i in range(11)}
    document = policy(statement(Condition={"StringEquals": keys}))
    return {"Stack": queue_policy(document)}, {}, crossing(q.SQS_POLICY_CONDITIONS, "Policy", 11)


def sqs_actions() -> Case:
    document = policy(statement(Action=[f"sqs:Action{i}" for i in range(8)]))
    return {"Stack": queue_policy(document)}, {}, crossing(q.SQS_POLICY_ACTIONS, "Policy", 8)


def sns_bytes() -> Case:
    document = policy(topic_statement(Condition={"ArnLike": {"aws:SourceArn": arns(300)}}))
    return (
        {"Stack": topic_policy(document)},
        {},
        crossing(q.SNS_POLICY_BYTES, "Policy", compact_size(document)),
    )


def sns_statements() -> Case:
    document = policy(*(topic_statement(Sid=f"Grant{i}") for i in range(101)))
    return {"Stack": topic_policy(document)}, {}, crossing(q.SNS_POLICY_STATEMENTS, "Policy", 101)


def sns_principals() -> Case:
    publishers = [f"{100000000000 + i}" for i in range(201)]
    document = policy(topic_statement(Principal={"AWS": publishers}))
    return {"Stack": topic_policy(document)}, {}, crossing(q.SNS_POLICY_PRINCIPALS, "Policy", 201)


def sns_resources() -> Case:
    document = policy(topic_statement(Resource=[TOPIC, f"{TOPIC}-2"]))
    return {"Stack": topic_policy(document)}, {}, crossing(q.SNS_POLICY_RESOURCES, "Policy", 2)


def s3_bytes() -> Case:
    document = policy(statement(Condition={"ArnLike": {"aws:PrincipalArn": arns(200, "iam")}}))
    template = resources(Policy=resource("AWS::S3::BucketPolicy", PolicyDocument=document))
    return (
        {"Stack": template},
        {},
        crossing(q.S3_BUCKET_POLICY_BYTES, "Policy", compact_size(document)),
    )


def kms_bytes() -> Case:
    document = policy(statement(Condition={"ArnLike": {"aws:PrincipalArn": arns(320, "iam")}}))
    template = resources(Key=resource("AWS::KMS::Key", KeyPolicy=document))
    return {"Stack": template}, {}, crossing(q.KMS_KEY_POLICY_BYTES, "Key", compact_size(document))


def kms_aliases() -> Case:
    aliases = {
        f"Alias{i}": resource(
            "AWS::KMS::Alias", AliasName=f"alias/q{i}", TargetKeyId={"Ref": "Key"}
        )
        for i in range(51)
    }
    template = resources(Key=resource("AWS::KMS::Key", KeyPolicy={}), **aliases)
    return {"Stack": template}, {}, crossing(q.KMS_ALIASES_PER_KEY, "Key", 51)


def iam_inline() -> Case:
    own, attached = policy(long_resources(60)), policy(long_resources(60))
    template = resources(
        Role=resource(
            "AWS::IAM::Role",
            RoleName="relay",
            AssumeRolePolicyDocument={},
            Policies=[{"PolicyName": "own", "PolicyDocument": own}],
        ),
        Attached=resource(
            "AWS::IAM::Policy", PolicyName="more", Roles=[{"Ref": "Role"}], PolicyDocument=attached
        ),
    )
    size = compact_size(own) + compact_size(attached)
    return {"Stack": template}, {}, crossing(q.IAM_ROLE_INLINE_POLICIES, "Role", size)


def iam_managed_size() -> Case:
    document = policy(long_resources(62))
    template = resources(Managed=resource("AWS::IAM::ManagedPolicy", PolicyDocument=document))
    return (
        {"Stack": template},
        {},
        crossing(q.IAM_MANAGED_POLICY_SIZE, "Managed", compact_size(document)),
    )


def iam_managed_count() -> Case:
    attached = [f"arn:aws:iam::aws:policy/Policy{i}" for i in range(11)]
    template = resources(
        Role=resource("AWS::IAM::Role", AssumeRolePolicyDocument={}, ManagedPolicyArns=attached)
    )
    return {"Stack": template}, {}, crossing(q.IAM_MANAGED_POLICIES_PER_ROLE, "Role", 11)


def iam_trust() -> Case:
    trust = policy(statement(Action="sts:AssumeRole", Principal={"AWS": arns(20, "iam")}))
    template = resources(Role=resource("AWS::IAM::Role", AssumeRolePolicyDocument=trust))
    return {"Stack": template}, {}, crossing(q.IAM_ROLE_TRUST_POLICY, "Role", compact_size(trust))


def iam_roles() -> Case:
    templates = {"Stack": roles(334), "Stack2": roles(334), "Stack3": roles(333), "Other": roles(5)}
    where = f"account {ACCOUNT}"
    return templates, {"Other": OTHER_ACCOUNT}, crossing(q.IAM_ROLES_PER_ACCOUNT, where, 1001)


def cfn_resources() -> Case:
    handles = {
        f"Handle{i}": {"Type": "AWS::CloudFormation::WaitConditionHandle"} for i in range(501)
    }
    return {"Stack": resources(**handles)}, {}, crossing(q.CLOUDFORMATION_RESOURCES, "Stack", 501)


def cfn_outputs() -> Case:
    template = {"Resources": {}, "Outputs": {f"O{i}": {"Value": "v"} for i in range(201)}}
    return {"Stack": template}, {}, crossing(q.CLOUDFORMATION_OUTPUTS, "Stack", 201)


def cfn_parameters() -> Case:
    template = {"Resources": {}, "Parameters": {f"P{i}": {"Type": "String"} for i in range(201)}}
    return {"Stack": template}, {}, crossing(q.CLOUDFORMATION_PARAMETERS, "Stack", 201)


def cfn_mappings() -> Case:
    template = {"Resources": {}, "Mappings": {f"M{i}": {"k": {"a": "b"}} for i in range(201)}}
    return {"Stack": template}, {}, crossing(q.CLOUDFORMATION_MAPPINGS, "Stack", 201)


def cfn_body() -> Case:
    template = {"Resources": {}, "Metadata": {"Padding": "p" * 1_000_000}}
    size = len('{\n "Resources": {},\n "Metadata": {\n  "Padding": ""\n }\n}') + 1_000_000
    return {"Stack": template}, {}, crossing(q.CLOUDFORMATION_TEMPLATE_BYTES, "Stack", size)


def cfn_description() -> Case:
    template = {"Resources": {}, "Description": "d" * 1_025}
    return {"Stack": template}, {}, crossing(q.CLOUDFORMATION_DESCRIPTION_BYTES, "Stack", 1_025)


def lambda_environment() -> Case:
    variables = {"RELAY_ROUTES": "r" * 4_100}
    template = resources(
        Function=resource("AWS::Lambda::Function", Environment={"Variables": variables})
    )
    return (
        {"Stack": template},
        {},
        crossing(q.LAMBDA_ENVIRONMENT_BYTES, "Function", compact_size(variables)),
    )


def invoked_by_sns(logical_id: str, source_arn: str) -> dict[str, Any]:
    """A permission for SNS to invoke the function ``react`` from one topic."""
    return resource(
        "AWS::Lambda::Permission",
        FunctionName={"Fn::GetAtt": ["Function", "Arn"]},
        Action="lambda:InvokeFunction",
        Principal="sns.amazonaws.com",
        SourceArn=source_arn,
    )


def written_by_lambda(*permissions: tuple[str, str]) -> dict[str, Any]:
    """The policy Lambda writes for permissions of ``invoked_by_sns`` in the stack ``Stack``:
    a statement each, its Sid the longest name CloudFormation generates for it."""
    return {
        "Version": "2012-10-17",
        "Id": "default",
        "Statement": [
            {
                "Sid": f"Stack-{logical_id}-XXXXXXXXXXXXX",
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "lambda:InvokeFunction",
                "Resource": f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:react",
                "Condition": {"ArnLike": {"AWS:SourceArn": source_arn}},
            }
            for logical_id, source_arn in permissions
        ],
    }


def lambda_policy() -> Case:
    sources = [(f"Allow{i}", arn) for i, arn in enumerate(arns(80))]
    template = resources(
        Function=resource("AWS::Lambda::Function", FunctionName="react"),
        **{logical_id: invoked_by_sns(logical_id, arn) for logical_id, arn in sources},
    )
    size = compact_size(written_by_lambda(*sources))
    return {"Stack": template}, {}, crossing(q.LAMBDA_RESOURCE_POLICY_BYTES, "function react", size)


def logs_filters() -> Case:
    def filters(*groups: str) -> dict[str, Any]:
        return resources(
            **{
                f"Filter{i}": resource(
                    "AWS::Logs::SubscriptionFilter",
                    LogGroupName=group,
                    DestinationArn=f"arn:aws:logs:us-east-1:{OTHER_ACCOUNT}:destination:d",
                    FilterPattern="",
                )
                for i, group in enumerate(groups)
            }
        )

    templates = {"Stack": filters("sns/Billed", "sns/Billed"), "Stack2": filters("sns/Billed", "x")}
    return templates, {}, crossing(q.LOGS_SUBSCRIPTION_FILTERS, "log group sns/Billed", 3)


def esm_batch() -> Case:
    template = event_source(BatchSize=10_001, MaximumBatchingWindowInSeconds=1)
    return {"Stack": template}, {}, crossing(q.EVENT_SOURCE_BATCH_SIZE, "Source", 10_001)


def esm_fifo_batch() -> Case:
    template = event_source(fifo=True, BatchSize=11)
    return {"Stack": template}, {}, crossing(q.EVENT_SOURCE_FIFO_BATCH_SIZE, "Source", 11)


def esm_window() -> Case:
    template = event_source(BatchSize=100, MaximumBatchingWindowInSeconds=301)
    return {"Stack": template}, {}, crossing(q.EVENT_SOURCE_BATCHING_WINDOW, "Source", 301)


def esm_fifo_window() -> Case:
    template = event_source(fifo=True, MaximumBatchingWindowInSeconds=1)
    return {"Stack": template}, {}, crossing(q.EVENT_SOURCE_FIFO_BATCHING_WINDOW, "Source", 1)


def esm_large_batch() -> Case:
    template = event_source(BatchSize=11)
    return {"Stack": template}, {}, crossing(q.EVENT_SOURCE_WINDOW_FOR_LARGE_BATCHES, "Source", 0)


def esm_visibility() -> Case:
    template = event_source(visibility=30, timeout=60)
    return {"Stack": template}, {}, crossing(q.EVENT_SOURCE_VISIBILITY_TIMEOUT, "Source", 30, 60)


def dashboard(*widgets: dict[str, Any], **others: dict[str, Any]) -> dict[str, Any]:
    """A dashboard of ``widgets``, its body joined around the intrinsics as CDK writes it (an
    alarm status widget's alarms are ``Fn::GetAtt`` of ``others``' alarms)."""
    parts: list[Any] = []
    for text in json.dumps({"widgets": list(widgets)}).split('"@'):
        logical_id, _, rest = text.partition('@"')
        if rest or text.endswith('@"'):
            parts += ['"', {"Fn::GetAtt": [logical_id, "Arn"]}, '"' + rest]
        else:
            parts.append(text)
    body = {"Fn::Join": ["", parts]}
    return resources(Dashboard=resource("AWS::CloudWatch::Dashboard", DashboardBody=body), **others)


def graph(metrics: int) -> dict[str, Any]:
    queue = ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName"]
    return {
        "type": "metric",
        "properties": {"metrics": [[*queue, f"q{i}"] for i in range(metrics)]},
    }


def alarm(**properties: Any) -> dict[str, Any]:
    return resource(
        "AWS::CloudWatch::Alarm", ComparisonOperator="GreaterThanThreshold", **properties
    )


def dashboard_widgets() -> Case:
    text = {"type": "text", "properties": {"markdown": "#"}}
    return {"Stack": dashboard(*[text] * 501)}, {}, crossing(q.DASHBOARD_WIDGETS, "Dashboard", 501)


def dashboard_widget_metrics() -> Case:
    where = "Dashboard widget 1"
    return {"Stack": dashboard(graph(501))}, {}, crossing(q.DASHBOARD_WIDGET_METRICS, where, 501)


def dashboard_metrics() -> Case:
    template = dashboard(*[graph(500)] * 6)
    return {"Stack": template}, {}, crossing(q.DASHBOARD_METRICS, "Dashboard", 3_000)


def dashboard_status_alarms() -> Case:
    alarms = {f"Alarm{i}": alarm(MetricName="Errors") for i in range(101)}
    status = {"type": "alarm", "properties": {"alarms": [f"@{a}@" for a in alarms]}}
    template = dashboard(status, **alarms)
    where = "Dashboard widget 1"
    return {"Stack": template}, {}, crossing(q.DASHBOARD_STATUS_ALARMS, where, 101)


def alarm_math() -> Case:
    read = [{"Id": f"m{i}", "MetricStat": {"Metric": {"MetricName": "Errors"}}} for i in range(11)]
    template = resources(Alarm=alarm(Metrics=[{"Id": "e", "Expression": "SUM(METRICS())"}, *read]))
    return {"Stack": template}, {}, crossing(q.ALARM_MATH_METRICS, "Alarm", 11)


CASES: dict[q.Quota, Callable[[], Case]] = {
    q.SQS_POLICY_BYTES: sqs_bytes,
    q.SQS_POLICY_STATEMENTS: sqs_statements,
    q.SQS_POLICY_PRINCIPALS: sqs_principals,
    q.SQS_POLICY_CONDITIONS: sqs_conditions,
    q.SQS_POLICY_ACTIONS: sqs_actions,
    q.SNS_POLICY_BYTES: sns_bytes,
    q.SNS_POLICY_STATEMENTS: sns_statements,
    q.SNS_POLICY_PRINCIPALS: sns_principals,
    q.SNS_POLICY_RESOURCES: sns_resources,
    q.S3_BUCKET_POLICY_BYTES: s3_bytes,
    q.KMS_KEY_POLICY_BYTES: kms_bytes,
    q.KMS_ALIASES_PER_KEY: kms_aliases,
    q.IAM_ROLE_INLINE_POLICIES: iam_inline,
    q.IAM_MANAGED_POLICY_SIZE: iam_managed_size,
    q.IAM_MANAGED_POLICIES_PER_ROLE: iam_managed_count,
    q.IAM_ROLE_TRUST_POLICY: iam_trust,
    q.IAM_ROLES_PER_ACCOUNT: iam_roles,
    q.CLOUDFORMATION_RESOURCES: cfn_resources,
    q.CLOUDFORMATION_OUTPUTS: cfn_outputs,
    q.CLOUDFORMATION_PARAMETERS: cfn_parameters,
    q.CLOUDFORMATION_MAPPINGS: cfn_mappings,
    q.CLOUDFORMATION_TEMPLATE_BYTES: cfn_body,
    q.CLOUDFORMATION_DESCRIPTION_BYTES: cfn_description,
    q.LAMBDA_ENVIRONMENT_BYTES: lambda_environment,
    q.LAMBDA_RESOURCE_POLICY_BYTES: lambda_policy,
    q.LOGS_SUBSCRIPTION_FILTERS: logs_filters,
    q.DASHBOARD_WIDGETS: dashboard_widgets,
    q.DASHBOARD_WIDGET_METRICS: dashboard_widget_metrics,
    q.DASHBOARD_METRICS: dashboard_metrics,
    q.DASHBOARD_STATUS_ALARMS: dashboard_status_alarms,
    q.ALARM_MATH_METRICS: alarm_math,
    q.EVENT_SOURCE_BATCH_SIZE: esm_batch,
    q.EVENT_SOURCE_FIFO_BATCH_SIZE: esm_fifo_batch,
    q.EVENT_SOURCE_BATCHING_WINDOW: esm_window,
    q.EVENT_SOURCE_FIFO_BATCHING_WINDOW: esm_fifo_window,
    q.EVENT_SOURCE_WINDOW_FOR_LARGE_BATCHES: esm_large_batch,
    q.EVENT_SOURCE_VISIBILITY_TIMEOUT: esm_visibility,
}


def test_every_quota_of_the_table_has_a_case_that_crosses_it() -> None:
    assert set(CASES) == set(QUOTAS)


@pytest.mark.parametrize("quota", list(CASES), ids=lambda quota: quota.name)
def test_a_template_over_the_quota_is_refused_for_it_alone(quota: q.Quota, tmp_path: Path) -> None:
    templates, accounts, expected = CASES[quota]()
    assembly = write_assembly(tmp_path, templates, accounts)
    assert [m for m in measure_assembly(assembly) if m.crosses] == [expected]
    assert quota_problems(assembly) == [expected.problem()]


def test_a_problem_is_one_line_naming_the_resource_the_numbers_and_the_fix(tmp_path: Path) -> None:
    templates, _, _ = sqs_statements()
    assert quota_problems(write_assembly(tmp_path, templates)) == [
        "Stack.template.json: Policy: SQS queue policy statements: 21 > 20 statements; grant "
        "many principals in one statement (an aws:PrincipalArn list or pattern per account "
        "under an organization condition, topic ARN lists in aws:SourceArn) instead of a "
        "statement per grant"
    ]


def test_a_relative_quota_names_the_value_it_is_bound_by(tmp_path: Path) -> None:
    templates, _, _ = esm_visibility()
    (problem,) = quota_problems(write_assembly(tmp_path, templates))
    assert problem.startswith(
        "Stack.template.json: Source: SQS event source queue visibility timeout: "
        "30 < 60 s (the function's timeout); "
    )


def test_at_the_quota_nothing_is_refused(tmp_path: Path) -> None:
    document = policy(*(statement(Sid=f"Grant{i}") for i in range(20)))
    assert quota_problems(write_assembly(tmp_path, {"Stack": queue_policy(document)})) == []


def test_a_function_policy_is_measured_as_lambda_writes_a_statement_per_permission(
    tmp_path: Path,
) -> None:
    template = resources(
        Function=resource("AWS::Lambda::Function", FunctionName="react"),
        Allow=invoked_by_sns("Allow", TOPIC),
    )
    (found,) = [
        m
        for m in measure_assembly(write_assembly(tmp_path, {"Stack": template}))
        if m.quota is q.LAMBDA_RESOURCE_POLICY_BYTES
    ]
    assert (found.resource, found.value) == (
        "function react",
        compact_size(written_by_lambda(("Allow", TOPIC))),
    )


def test_inline_policies_attached_from_another_stack_of_the_account_count_for_the_role(
    tmp_path: Path,
) -> None:
    half = policy(long_resources(60))
    attached = resource("AWS::IAM::Policy", PolicyName="more", Roles=["relay"], PolicyDocument=half)
    role = resource(
        "AWS::IAM::Role",
        RoleName="relay",
        AssumeRolePolicyDocument={},
        Policies=[{"PolicyName": "own", "PolicyDocument": half}],
    )
    templates = {"Stack": resources(Role=role), "Stack2": resources(Attached=attached)}
    (found,) = [m for m in measure_assembly(write_assembly(tmp_path, templates)) if m.crosses]
    assert (found.quota, found.resource, found.value) == (
        q.IAM_ROLE_INLINE_POLICIES,
        "Role",
        2 * compact_size(half),
    )


def test_a_dashboard_naming_what_the_resolver_cannot_know_is_still_measured(
    tmp_path: Path,
) -> None:
    """An attribute only CloudFormation knows sits inside one of the body's strings: the body
    is measured, not left unread."""
    widget = graph(1)
    template = dashboard(widget)
    parts = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Join"][1]
    text = parts[0].replace('"q0"', '"@q@"')
    before, after = text.split("@q@")
    parts[:] = [before, {"Fn::GetAtt": ["Somewhere", "Unknown"]}, after]
    template["Resources"]["Somewhere"] = resource("AWS::Custom::Thing")
    measured_widgets = [
        m
        for m in measure_assembly(write_assembly(tmp_path, {"Stack": template}))
        if m.quota is q.DASHBOARD_WIDGET_METRICS
    ]
    assert [m.value for m in measured_widgets] == [1]


def test_a_dashboard_body_that_is_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    template = resources(Dashboard=resource("AWS::CloudWatch::Dashboard", DashboardBody="{x"))
    with pytest.raises(QuotaGateError, match=r"Dashboard: its DashboardBody is not JSON"):
        measure_assembly(write_assembly(tmp_path, {"Stack": template}))
