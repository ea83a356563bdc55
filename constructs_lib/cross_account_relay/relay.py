"""``CrossAccountRelay``, the construct: the relay's function, its role and log group, and an
event source per route; what its role may do is :mod:`.relay_grants`, what its function reads
:mod:`.configuration_file`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from aws_cdk import Duration, Names, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked
from constructs_lib._private.lambda_assets import relay_code
from constructs_lib._private.lambda_function import role_with_own_logs, runtime_function
from constructs_lib.cross_account_relay.configuration_file import (
    CONFIGURATION_FILE,
    configuration_file,
)
from constructs_lib.cross_account_relay.relay_grants import (
    describe_overflow_policies,
    grant_body_puts,
    grant_read_bodies_by_name,
    grant_routes,
)
from constructs_lib.cross_account_relay.relay_route import RelayRoute
from constructs_lib.cross_account_relay.validate_keywords import (
    validate_relay_keywords,
    validate_route,
)
from constructs_lib.defaults import (
    ALARM_EVALUATION_PERIOD,
    LOG_RETENTION,
    RELAY_BATCH_SIZE,
    RELAY_FIFO_BATCH_SIZE,
    RELAY_MAX_CONCURRENCY,
    RELAY_MEMORY_MB,
)
from constructs_lib.endpoint_queue.queue import endpoint_queue_of
from constructs_lib.message_body_bucket import MessageBodyBucket
from constructs_lib.relay_timing import RelayTiming
from cross_account_runtime.common.emf import NAMESPACE, SERVICE_DIMENSION
from cross_account_runtime.common.json_log import ENV_SERVICE_NAME
from cross_account_runtime.relay.config_format import (
    DEFAULT_SERVICE_NAME,
    ENV_BODY_BUCKET,
    ENV_CONFIGURATION,
    ENV_HOME,
    HANDLER,
    RelayDirection,
)
from cross_account_runtime.relay.outcomes import DIRECTION_DIMENSION, RelayMetric


@checked
class CrossAccountRelay(Construct):
    """A relay function with its event sources, its least-privilege role and its logs.

    Example:

    ```python
    from aws_cdk import App, Environment, Stack

    from constructs_lib import (
        CrossAccountRelay,
        EndpointQueue,
        RelayDirection,
        RelayRoute,
        RelayTiming,
    )

    app = App()
    stack = Stack(app, "Sales", env=Environment(account="111111111111", region="eu-west-1"))
    # The relay reads this queue in batches of 10: its visibility timeout must cover one batch.
    shadow = EndpointQueue(
        stack,
        "BillingShadow",
        endpoint_name="Billing",
        visibility_timeout=RelayTiming.for_batch(10).visibility_timeout,
    )
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(shadow, "arn:aws:sqs:eu-west-1:222222222222:Billing-ingress")],
        local_endpoints=["Sales"],
    )
    app.synth()
    ```
    """

    role = Attribute[iam.Role]("The relay function's role (its fixed name other accounts admit).")
    log_group = Attribute[logs.LogGroup]("The relay function's own log group, with a retention.")
    function = Attribute[lambda_.Function]("The relay's Lambda function.")
    configuration = Attribute[str](
        "The relay's configuration file, as written into its code asset."
    )
    direction = Attribute[RelayDirection]("Outbound or inbound.")
    service_name = Attribute[str](
        "The ``service`` of its log lines and metrics: its role's name when fixed, else "
        "``sqs-relay-<unique id>``; one per function, so alarms tell relays apart."
    )
    source_queues = Attribute[list[sqs.IQueue]]("The queues it reads, one per route.")
    delay_queues = Attribute[list[sqs.IQueue]](
        "The queues of its delayed routes, among ``source_queues``: they hold every message "
        "until it is nearly due, so the age of their oldest message says nothing of a route's "
        "health."
    )

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        direction: RelayDirection,
        routes: Sequence[RelayRoute],
        local_endpoints: Sequence[str] = (),
        body_bucket: MessageBodyBucket | str | None = None,
        role_name: str | None = None,
        batch_size: int = RELAY_BATCH_SIZE,
        max_batching_window: Duration | None = None,
        max_concurrency: int = RELAY_MAX_CONCURRENCY,
        log_retention: logs.RetentionDays = LOG_RETENTION,
    ) -> None:
        """Create the function, its role, its log group and an event source per route.

        :param direction: outbound (stamp, cross the boundary) or inbound (deliver).
        :param routes: the queues read and their destinations (at least one); a route's
            source may be an aws-cdk-lib queue (see :class:`RelayRoute`).
        :param local_endpoints: outbound only (and required there): the transport addresses
            (queue names, the values address headers carry) of the queues of the relay's
            account and region that a message may name: endpoint queues and the error queue.
            Default: none (an inbound relay stamps nothing).
        :param body_bucket: outbound only: this account's body bucket, from which the routes
            with a ``body_bucket`` copy S3 bodies (required when one has; an inbound route's
            ``body_bucket`` is this account's bucket by name, which it only puts into); its
            name alone when another stack of the account holds it (the relay may then read
            it by name, and its key only through S3 by the body key's alias).
            Default: none.
        :param role_name: a fixed role name, so that other accounts can admit the role by ARN
            before it exists. Default: a name CloudFormation generates.
        :param batch_size: messages per invocation from a standard queue (1-10,000; above
            10 Lambda requires ``max_batching_window``); FIFO sources take at most 10. The
            function's timeout follows from it, and every source queue whose visibility
            timeout is known must hide a message at least as long as it needs
            (:class:`~constructs_lib.relay_timing.RelayTiming`).
            Default: :data:`~constructs_lib.defaults.RELAY_BATCH_SIZE` (10).
        :param max_batching_window: how long Lambda gathers a batch from a standard queue
            (1 s to 5 min; FIFO sources take none). Default: none.
        :param max_concurrency: the most invocations each route's event source runs at once
            (2-1000), so that a flood into one queue cannot take the account's whole Lambda
            concurrency. Default: :data:`~constructs_lib.defaults.RELAY_MAX_CONCURRENCY` (10).
        :param log_retention: of the function's log group. Default:
            :data:`~constructs_lib.defaults.LOG_RETENTION` (three months).
        """
        super().__init__(scope, construct_id)
        copying = direction is RelayDirection.OUTBOUND and any(
            route.body_bucket is not None for route in routes
        )
        validate_relay_keywords(
            direction=direction,
            routes=routes,
            local_endpoints=local_endpoints,
            body_bucket=body_bucket,
            copying=copying,
            batch_size=batch_size,
            max_batching_window=max_batching_window,
            max_concurrency=max_concurrency,
        )
        timing = RelayTiming.for_batch(batch_size)
        routes = [
            dataclasses.replace(
                route, source=endpoint_queue_of(self, f"Source{index}", route.source, "routes")
            )
            for index, route in enumerate(routes)
        ]
        for route in routes:
            validate_route(direction, route, timing)
        stack = Stack.of(self)
        self.role, self.log_group = role_with_own_logs(
            self,
            description=f"The {direction.value} relay of the account bridge",
            log_retention=log_retention,
            role_name=role_name,
        )
        describe_overflow_policies(self.role)
        grant_routes(self.role, stack, routes)
        own_bucket = None
        if isinstance(body_bucket, str):
            if copying:
                grant_read_bodies_by_name(self.role, stack, body_bucket)
                own_bucket = body_bucket
        elif body_bucket is not None and copying:
            body_bucket.grant_read_bodies(self.role)
            own_bucket = body_bucket.bucket_name
        if any(route.body_bucket is not None for route in routes):
            grant_body_puts(self.role, stack, routes)
        configuration = configuration_file(stack, direction, routes, local_endpoints)
        self.direction = direction
        self.service_name = role_name or f"{DEFAULT_SERVICE_NAME}-{Names.unique_id(self)}"
        environment = {
            ENV_CONFIGURATION: CONFIGURATION_FILE,
            ENV_HOME: f"arn:{stack.partition}:sqs:{stack.region}:{stack.account}",
            ENV_SERVICE_NAME: self.service_name,
        }
        if own_bucket is not None:
            environment[ENV_BODY_BUCKET] = own_bucket
        self.function = runtime_function(
            self,
            role=self.role,
            log_group=self.log_group,
            handler=HANDLER,
            code=relay_code(CONFIGURATION_FILE, configuration),
            memory_size=RELAY_MEMORY_MB,
            timeout=timing.function_timeout,
            environment=environment,
        )
        """The relay's function: it reads every route's queue."""
        self.configuration = configuration
        """The configuration file's text, as the function's code asset holds it."""
        self.source_queues = [route.source_queue.queue for route in routes]
        self.delay_queues = [route.source_queue.queue for route in routes if route.delayed]
        for route in routes:
            route.source_queue.queue.grant_consume_messages(self.role)
            fifo = bool(route.source_queue.queue.fifo)
            self.function.add_event_source(
                event_sources.SqsEventSource(
                    route.source_queue.queue,
                    batch_size=min(batch_size, RELAY_FIFO_BATCH_SIZE) if fifo else batch_size,
                    max_batching_window=None if fifo else max_batching_window,
                    max_concurrency=max_concurrency,
                    report_batch_item_failures=True,
                )
            )

    def metric(
        self,
        name: RelayMetric | str,
        *,
        period: Duration | None = None,
        statistic: str = "Sum",
    ) -> cloudwatch.Metric:
        """One of the counts its batches write (:class:`RelayMetric`; an outcome such as
        ``SendFailed`` or a reason such as ``DeadLettered.DestinationMissing`` by name), under
        its service and direction, in CloudWatch's namespace for the runtimes; ``period``
        defaults to the alarms' (5 minutes)."""
        return cloudwatch.Metric(
            namespace=NAMESPACE,
            metric_name=str(name),
            dimensions_map={
                SERVICE_DIMENSION: self.service_name,
                DIRECTION_DIMENSION: str(self.direction),
            },
            period=period or ALARM_EVALUATION_PERIOD,
            statistic=statistic,
        )
