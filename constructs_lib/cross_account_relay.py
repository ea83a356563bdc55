"""``CrossAccountRelay``: the Lambda relay of the account bridge (:mod:`cross_account_runtime.relay`).

An outbound relay reads shadow queues in the sender's account and forwards to ingress queues
in other accounts, stamping the ARN header; an inbound relay reads ingress queues and delivers
to the local endpoint queues, substituting the headers. Its role may receive only from its own
queues, send only to the declared destinations and their own dead-letter queues, and use a
destination's key only if the key carries that queue's alias.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.lambda_assets import runtime_code
from constructs_lib._private.lambda_function import role_with_own_logs, runtime_function
from constructs_lib.defaults import (
    LOG_RETENTION,
    RELAY_BATCH_SIZE,
    RELAY_BATCH_SIZE_RANGE,
    RELAY_TIMEOUT,
)
from constructs_lib.endpoint_queue import IEndpointQueue
from constructs_lib.queue_naming import key_alias_name
from cross_account_runtime.nservicebus.transport_address import parse_queue_arn
from cross_account_runtime.relay.config import (
    ENV_DIRECTION,
    ENV_LOCAL_ENDPOINTS,
    ENV_ROUTES,
    ROUTE_DEAD_LETTER_QUEUE,
    ROUTE_DESTINATION,
    RelayDirection,
)

__all__ = ["CrossAccountRelay", "RelayDirection", "RelayRoute"]

SEND_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")
"""What the relay needs on a destination's key (and its own queues' keys) to send."""
RELAY_MEMORY_MB = 256


@dataclass(frozen=True)
class RelayRoute:
    """One queue the relay reads and where its messages go.

    ``destination_arn`` is computed (from the topology), never a token from another stack;
    ``destination_encrypted`` says whether the destination's key (aliased
    ``alias/messaging/<queue>``) must be granted.
    """

    source: IEndpointQueue
    destination_arn: str
    destination_encrypted: bool = True


class CrossAccountRelay(Construct):
    """A relay function with its event sources, its least-privilege role and its logs."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        direction: RelayDirection,
        routes: Sequence[RelayRoute],
        local_endpoints: Mapping[str, str] | None = None,
        role_name: str | None = None,
        batch_size: int = RELAY_BATCH_SIZE,
        max_batching_window: Duration | None = None,
        log_retention: logs.RetentionDays = LOG_RETENTION,
    ) -> None:
        """Create the function, its role, its log group and an event source per route.

        :param direction: outbound (stamp, cross the boundary) or inbound (substitute).
        :param routes: the queues read and their destinations (at least one).
        :param local_endpoints: outbound only (and required there): each local endpoint's
            legacy address (the value its headers carry) mapped to its queue ARN. Default:
            none (an inbound relay stamps nothing).
        :param role_name: a fixed role name, so that other accounts can admit the role by ARN
            before it exists. Default: a name CloudFormation generates.
        :param batch_size: messages per invocation (1-10; FIFO queues allow at most 10).
            Default: :data:`~constructs_lib.defaults.RELAY_BATCH_SIZE` (10).
        :param max_batching_window: how long Lambda gathers a batch. Default: none.
        :param log_retention: of the function's log group. Default:
            :data:`~constructs_lib.defaults.LOG_RETENTION` (three months).
        """
        super().__init__(scope, construct_id)
        if not routes:
            raise ValueError("routes: a relay needs at least one queue to read")
        if direction is RelayDirection.OUTBOUND and not local_endpoints:
            raise ValueError(
                "local_endpoints: an outbound relay stamps the local endpoints' ARNs; map each "
                "local address to its queue ARN"
            )
        if direction is RelayDirection.INBOUND and local_endpoints:
            raise ValueError("local_endpoints: an inbound relay stamps nothing; leave it empty")
        low, high = RELAY_BATCH_SIZE_RANGE
        if not low <= batch_size <= high:
            raise ValueError(f"batch_size: must be from {low} to {high}, got {batch_size}")
        for route in routes:
            parse_queue_arn(route.destination_arn)
        stack = Stack.of(self)
        self.role, self.log_group = role_with_own_logs(
            self,
            description=f"The {direction.value} relay of the account bridge",
            log_retention=log_retention,
            role_name=role_name,
        )
        self._grant_routes(stack, routes)
        environment = {
            ENV_DIRECTION: direction.value,
            ENV_ROUTES: stack.to_json_string(
                {
                    route.source.queue_arn: {
                        ROUTE_DESTINATION: route.destination_arn,
                        ROUTE_DEAD_LETTER_QUEUE: route.source.dead_letter_queue.queue_arn,
                    }
                    for route in routes
                }
            ),
        }
        if local_endpoints:
            environment[ENV_LOCAL_ENDPOINTS] = json.dumps(dict(local_endpoints), sort_keys=True)
        self.function = runtime_function(
            self,
            role=self.role,
            log_group=self.log_group,
            handler="cross_account_runtime.relay.lambda_handler.handler",
            code=runtime_code(),
            memory_size=RELAY_MEMORY_MB,
            timeout=RELAY_TIMEOUT,
            environment=environment,
        )
        for route in routes:
            route.source.queue.grant_consume_messages(self.role)
            self.function.add_event_source(
                event_sources.SqsEventSource(
                    route.source.queue,
                    batch_size=batch_size,
                    max_batching_window=max_batching_window,
                    report_batch_item_failures=True,
                )
            )

    def _grant_routes(self, stack: Stack, routes: Sequence[RelayRoute]) -> None:
        """Send to the destinations and to the sources' own DLQs (refused messages go there
        with their reason); use the destinations' keys only through SQS and only if they carry
        the destination queue's alias."""
        destinations = sorted({r.destination_arn for r in routes})
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=destinations)
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["sqs:SendMessage"],
                resources=[r.source.dead_letter_queue.queue_arn for r in routes],
            )
        )
        own_keys = {id(r.source.encryption_key): r.source.encryption_key for r in routes}
        key_arns = [key.key_arn for key in own_keys.values() if key is not None]
        if key_arns:
            self.role.add_to_policy(
                iam.PolicyStatement(actions=list(SEND_KEY_ACTIONS), resources=key_arns)
            )
        aliases = sorted(
            key_alias_name(parse_queue_arn(r.destination_arn).name)
            for r in routes
            if r.destination_encrypted
        )
        if not aliases:
            return
        accounts = sorted({parse_queue_arn(a).account for a in destinations})
        regions = sorted({parse_queue_arn(a).region for a in destinations})
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=list(SEND_KEY_ACTIONS),
                resources=[
                    f"arn:{stack.partition}:kms:{region}:{account}:key/*"
                    for account in accounts
                    for region in regions
                ],
                conditions={
                    "ForAnyValue:StringEquals": {"kms:ResourceAliases": aliases},
                    "StringLike": {"kms:ViaService": "sqs.*.amazonaws.com*"},
                },
            )
        )
        for account in accounts:
            for region in regions:
                acknowledge(
                    self.role,
                    f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:{region}:{account}:key/*]",
                    "Destination keys are created in other accounts with ids unknown here; the "
                    "grant is narrowed to keys carrying the destination queues' aliases "
                    "(kms:ResourceAliases), used through SQS.",
                )
