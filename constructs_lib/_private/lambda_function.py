"""The shape every function of this package takes: its own log group, a role that writes only
there (no managed policy), and the runtime on arm64 that starts only once its role's policy
exists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.lambda_assets import LAMBDA_ARCHITECTURE, LAMBDA_RUNTIME


def role_with_own_logs(
    scope: Construct,
    *,
    description: str,
    log_retention: logs.RetentionDays,
    role_name: str | None = None,
) -> tuple[iam.Role, logs.LogGroup]:
    """A Lambda role (``Role``) and the log group (``Logs``, retained) it may write to."""
    log_group = logs.LogGroup(
        scope, "Logs", retention=log_retention, removal_policy=RemovalPolicy.RETAIN
    )
    role = iam.Role(
        scope,
        "Role",
        role_name=role_name,
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=description,
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[log_group.log_group_arn],
        )
    )
    logical_id = Stack.of(scope).get_logical_id(log_group.node.default_child)  # type: ignore[arg-type]
    acknowledge(
        role,
        f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>]",
        "The wildcard covers the log streams Lambda creates inside this function's own log group.",
    )
    return role, log_group


def runtime_function(
    scope: Construct,
    *,
    role: iam.Role,
    log_group: logs.LogGroup,
    handler: str,
    construct_id: str = "Function",
    code: lambda_.Code,
    environment: Mapping[str, str],
    memory_size: int,
    timeout: Duration,
    layers: Sequence[lambda_.ILayerVersion] = (),
) -> lambda_.Function:
    """The function (``construct_id``) running ``handler`` with ``role`` and ``log_group``."""
    function = lambda_.Function(
        scope,
        construct_id,
        runtime=LAMBDA_RUNTIME,
        architecture=LAMBDA_ARCHITECTURE,
        handler=handler,
        code=code,
        layers=list(layers) or None,
        role=role,
        log_group=log_group,
        memory_size=memory_size,
        timeout=timeout,
        environment=dict(environment),
    )
    # The function must not take traffic before its permissions exist.
    function.node.add_dependency(role.node.find_child("DefaultPolicy"))
    return function
