"""An account's messaging stack: the queues, topics, subscriptions and relays the stack plan gives
it, their alarms, and its dashboard (named as the stack).

An account has one stack, or as many as its units need (:mod:`stacks.placement.plan`); each
builds its own units the same way, so a unit's construct ids (and its resources' logical ids)
are the same whichever stack holds it, and the first stack of an account builds exactly what
the account's one stack always built. Each records the units it holds in its template's
metadata (:data:`~stacks.placement.plan.UNITS_METADATA`), from which a lost plan is rebuilt.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, CfnResource, CfnWaitConditionHandle, Duration, Environment, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from constructs import Construct

from constructs_lib import (
    AccountBridge,
    BridgeIngress,
    BridgeShadow,
    CrossAccountQueueSubscription,
    DeliveryLoggedTopic,
    DeliveryProtocol,
    EndpointQueue,
    MessageBodyBucket,
    MessagingAlarms,
    MessagingDashboard,
    MessagingKey,
)
from constructs_lib.defaults import RELAY_BATCH_SIZE
from stacks.delivery_log_stack import delivery_log_destination_arn
from stacks.placement.plan import UNITS_METADATA, AccountStack, StackPlan
from stacks.placement.relays import body_writers, bridge_sender
from stacks.placement.units import UnitKind
from stacks.topology import (
    Endpoint,
    Topic,
    Topology,
)
from stacks.topology.bridge import bridge_shadows, reachable_queues
from stacks.topology.model import PLATFORM_QUEUE_METADATA
from stacks.topology.stack_ids import (
    ALARMS_ID,
    BODY_BUCKET_ID,
    BODY_BUCKET_OUTPUT_ID,
    DASHBOARD_ID,
    QUEUE_KEY_ID,
    endpoint_id,
    endpoint_output_ids,
    function_id,
    queue_key_alias,
    subscription_id,
    topic_id,
    topic_output_id,
)
from stacks.topology.topics import EVENT_METADATA

RETIRED_STACK = (
    "deploy it to remove its relays and policies, then destroy it and retire it from the plan"
)
"""What a stack that holds no unit any more is for: it stays in the app, so that a deploy removes
its relays instead of leaving them running unseen."""


class MessagingAccountStack(Stack):
    """The units of one of an account's stacks.

    References to anything outside the stack, in other accounts or in the account's other
    stacks, are computed ARNs and names (the topology knows every account id, region, queue and
    topic name), never CloudFormation exports, which cannot cross accounts and would pin the
    exporting stack's resources. For an SQS subscription across accounts, the topic's stack
    grants ``sns:Subscribe`` to the queue's account and logs SQS deliveries; the queue's stack
    creates the subscription, its DLQ and the queue and key grants for that topic, as it does
    for a topic in another stack of its own account.
    """

    def __init__(
        self,
        scope: Construct,
        topology: Topology,
        plan: StackPlan,
        planned: AccountStack,
        **kwargs: Any,
    ) -> None:
        account = planned.account
        description = f"Messaging queues and topics of account {account.name} ({account.id})"
        if planned.number > 1:
            description += f", stack {planned.number}"
        if not planned.units:
            description += f": holds nothing any more ({RETIRED_STACK})"
        super().__init__(
            scope,
            planned.name,
            stack_name=planned.name,
            env=Environment(account=account.id, region=account.region),
            description=description,
            **kwargs,
        )
        self.topology = topology
        self.plan = plan
        self.planned = planned
        self.add_metadata(UNITS_METADATA, planned.metadata)
        if not planned.units:
            # CloudFormation refuses a template without resources.
            CfnWaitConditionHandle(self, "HoldsNothing")
        self.account_config = account
        settings = topology.alarms
        alarm_topic = (
            sns.Topic.from_topic_arn(
                self, "AlarmTopic", self.format_arn(service="sns", resource=settings.topic_name)
            )
            if settings.topic_name
            else None
        )
        self.alarms = MessagingAlarms(
            self,
            ALARMS_ID,
            alarm_topic=alarm_topic,
            max_message_age=Duration.seconds(settings.max_message_age_seconds),
        )
        # Dashboards are global in an account, and its stacks' names unique in it.
        self.dashboard = (
            MessagingDashboard(self, DASHBOARD_ID, dashboard_name=planned.name)
            if planned.units
            else None
        )
        self.organization_id = _shared_organization(topology)
        self.queue_key = (
            MessagingKey(self, QUEUE_KEY_ID, alias_name=queue_key_alias(planned.number))
            if planned.shared_key and any(unit.queues for unit in planned.units)
            else None
        )
        self.body_bucket = self._body_bucket() if planned.holds(UnitKind.BODIES) else None
        endpoints = [topology.endpoint(name) for name in planned.holds(UnitKind.ENDPOINT)]
        self.endpoint_queues: dict[str, EndpointQueue] = {}
        for endpoint in endpoints:
            self.endpoint_queues[endpoint.name] = self._endpoint_queue(endpoint)
        self.topics: dict[str, DeliveryLoggedTopic] = {}
        topics = [t for t in topology.topics_in(account.name) if plan.topic_stack(t) == planned]
        for topic in topics:
            self.topics[topic.name] = self._topic(topic)
        self.streams_logs = delivery_log_destination_arn(topology) is not None and any(
            not topic.anchor for topic in topics
        )
        """Whether its topics stream delivery logs to the analytics account."""
        for endpoint in endpoints:
            self._subscriptions_from_other_stacks(endpoint)
        self._bridge()
        if self.dashboard is not None:
            shown = self.dashboard.shown_alarms
            self.dashboard.show_alarms(
                "Endpoint queues, topics and subscriptions",
                [alarm for alarm in self.alarms.alarms if alarm not in shown],
            )

    def _body_bucket(self) -> MessageBodyBucket | None:
        """The bucket this account's endpoints configure for bodies over SQS's limit, which
        admits the outbound relays whose shadows lead to this account."""
        name = self.topology.body_bucket(self.account_config.name)
        settings = self.topology.large_messages
        if name is None or settings is None:
            return None
        bucket = MessageBodyBucket(
            self,
            BODY_BUCKET_ID,
            bucket_name=name,
            expiration=Duration.days(settings.expiration_days),
            organization_id=self.organization_id,
        )
        bucket.admit_writer_roles(*body_writers(self.topology, self.plan, self.account_config.name))
        CfnOutput(
            self,
            BODY_BUCKET_OUTPUT_ID,
            value=bucket.bucket_name,
            description="The bucket this account's endpoints configure for large message "
            "bodies (S3Settings)",
        )
        return bucket

    def _bridge(self) -> None:
        """This stack's part of the account bridge (:class:`~constructs_lib.AccountBridge`):
        the shadows the stack plan places here, named as this account's endpoints resolve the
        remote endpoints, with the outbound relay; the ingress queues, admitting the outbound
        relay roles of the accounts whose shadows lead here and only those, with the inbound
        relay, which delivers to each endpoint in the form its dispatcher writes
        (ServiceControl wraps), translating the address headers of the released ones
        (ServiceControl's queues included) to what they reach by name. What the error queue's
        shadows and the error queue's ingress cannot read goes on unchanged, as the transport
        moves a message it cannot read to its error queue.

        The bridge has the id ``Default``, which aws-cdk-lib leaves out of logical ids: its
        queues and relays keep the logical ids they had when the stack made them itself (the
        topology checks their ids against the stack's others, :mod:`stacks.topology.stack_ids`).
        """
        topology, account = self.topology, self.account_config
        bridge = bridge_shadows(topology)
        here = set(self.planned.holds(UnitKind.SHADOW))
        shadows = [
            BridgeShadow(
                topology.queue_arn(shadow.remote),
                address=shadow.queue_name,
                delayed_delivery=shadow.delay_queue_name is not None,
                body_bucket=topology.body_bucket(shadow.remote.account),
                error_queue=shadow.remote.is_error_queue,
            )
            for shadow in bridge.shadows_in(account.name)
            if shadow.queue_name in here
        ]
        ingress = [
            BridgeIngress(
                topology.queue_arn(endpoint),
                sender_accounts=[
                    bridge_sender(topology, self.plan, sender, endpoint)
                    for sender in bridge.relay_sender_accounts(endpoint)
                ],
                endpoint_name=endpoint.name,
                arn_aware=endpoint.arn_aware,
                reachable_queues=None
                if endpoint.arn_aware
                else reachable_queues(topology, endpoint),
                wrap_outgoing_messages=endpoint.wrap_outgoing_messages,
                error_queue=endpoint.is_error_queue,
            )
            for endpoint in map(topology.endpoint, self.planned.holds(UnitKind.INGRESS))
        ]
        if not shadows and not ingress:
            return
        AccountBridge(
            self,
            "Default",
            account_name=account.name,
            shadows=shadows,
            local_endpoints=[q.queue_name for q in topology.queues_in(account.name)],
            ingress=ingress,
            # The account's bucket, by name when another of its stacks holds it.
            body_bucket=self.body_bucket or topology.body_bucket(account.name),
            shared_key=self.queue_key,
            organization_id=self.organization_id,
            stack_number=self.planned.number,
            # The stacks' relays read batches of the default size; their shadow and ingress
            # queues hide and redrive messages accordingly.
            batch_size=RELAY_BATCH_SIZE,
            alarms=self.alarms,
            dashboard=self.dashboard,
        )

    def _endpoint_queue(self, endpoint: Endpoint) -> EndpointQueue:
        queue = EndpointQueue(
            self,
            endpoint_id(endpoint),
            endpoint_name=endpoint.name,
            queue_name=endpoint.queue_name,
            dead_letter_queue_name=endpoint.dead_letter_queue_name,
            fifo=endpoint.fifo,
            immediate_retries=endpoint.immediate_retries,
            max_receive_count=endpoint.max_receive_count,
            # ServiceControl runs its transport without unrestricted delayed delivery.
            delayed_delivery=not endpoint.is_platform_queue,
            sender_accounts=self.topology.cross_account_senders(endpoint),
            sender_organization_ids=self.topology.sender_organizations(endpoint),
            shared_key=self.queue_key,
            organization_id=self.organization_id,
        )
        address, url, dead_letter = endpoint_output_ids(endpoint)
        CfnOutput(
            self,
            address,
            value=queue.transport_address,
            description=f"Transport address (queue ARN) of {endpoint.name}",
        )
        CfnOutput(self, url, value=queue.queue_url)
        CfnOutput(self, dead_letter, value=queue.dead_letter_queue.queue_arn)
        if endpoint.platform is not None:
            cfn_queue = queue.queue.node.default_child
            assert isinstance(cfn_queue, CfnResource)
            cfn_queue.add_metadata(PLATFORM_QUEUE_METADATA, endpoint.platform.value)
        self.alarms.watch_endpoint_queue(endpoint.name, queue.queue)
        self.alarms.watch_dead_letter_queue(endpoint.name, queue.dead_letter_queue)
        return queue

    def _topic(self, topic: Topic) -> DeliveryLoggedTopic:
        construct = DeliveryLoggedTopic(
            self,
            topic_id(topic),
            topic_name=topic.name,
            fifo=topic.fifo,
            publisher_accounts=self.topology.cross_account_publishers(topic),
            publisher_organization_ids=topic.publisher_organizations,
            subscriber_accounts=self.topology.subscriber_accounts(topic),
            organization_id=self.organization_id,
            # SQS always: besides the subscriptions the topology declares, the released
            # transport subscribes an endpoint's queue of the topic's own account natively when
            # the endpoint starts (``SubscriptionManager``), so every topic may deliver to SQS.
            logged_protocols=DeliveryProtocol.delivered_by(topic.fifo)
            if topic.log_all_protocols
            else (DeliveryProtocol.SQS,),
            success_sample_rate=topic.success_sample_rate,
        )
        for subscription in topic.subscriptions:
            dlq = None
            if subscription.endpoint is not None:
                # Every SQS subscription is logged here, including those another account creates.
                construct.log_deliveries(DeliveryProtocol.SQS)
                queue = self.endpoint_queues.get(subscription.endpoint)
                if queue is not None:
                    dlq = construct.add_queue_subscription(
                        subscription.name,
                        queue,
                        raw_message_delivery=subscription.raw_message_delivery,
                        filter_policy=subscription.filter_policy,
                        filter_policy_scope=subscription.filter_policy_scope,
                    )
            elif subscription.url is not None:
                _, dlq = construct.add_url_subscription(
                    subscription.name,
                    subscription.url,
                    delivery_policy=subscription.delivery_policy,
                    raw_message_delivery=subscription.raw_message_delivery,
                    filter_policy=subscription.filter_policy,
                    filter_policy_scope=subscription.filter_policy_scope,
                )
            elif subscription.function_arn is not None:
                function = lambda_.Function.from_function_arn(
                    self, function_id(topic, subscription), subscription.function_arn
                )
                dlq = construct.add_lambda_subscription(
                    subscription.name,
                    function,
                    filter_policy=subscription.filter_policy,
                    filter_policy_scope=subscription.filter_policy_scope,
                )
            if dlq is not None:
                self.alarms.watch_dead_letter_queue(subscription_id(topic, subscription), dlq)
        if topic.event_type is not None:
            cfn_topic = construct.topic.node.default_child
            assert isinstance(cfn_topic, CfnResource)
            cfn_topic.add_metadata(
                EVENT_METADATA,
                {
                    "EventType": topic.event_type,
                    "Publishers": [
                        self.topology.queue_arn(self.topology.endpoint(p)) for p in topic.publishers
                    ],
                    "MessageDrivenSubscribers": [
                        self.topology.queue_arn(self.topology.endpoint(s))
                        for s in topic.message_driven_subscribers
                    ],
                    "Anchor": topic.anchor,
                },
            )
        destination = delivery_log_destination_arn(self.topology)
        if destination is not None and not topic.anchor:
            construct.stream_logs_to(destination)
        CfnOutput(self, topic_output_id(topic), value=construct.topic.topic_arn)
        self.alarms.watch_topic(topic_id(topic), construct.topic)
        return construct

    def _subscriptions_from_other_stacks(self, endpoint: Endpoint) -> None:
        """The queue's subscriptions to topics of other accounts, or of another stack of this
        one: the queue's owner subscribes (the topic's stack subscribes the queues beside
        it)."""
        for topic, subscription in self.topology.queue_subscriptions(endpoint):
            if self.plan.topic_stack(topic) == self.planned:
                continue
            construct = CrossAccountQueueSubscription(
                self,
                subscription_id(topic, subscription),
                topic_arn=self.topology.topic_arn(topic),
                subscription_name=subscription.name,
                queue=self.endpoint_queues[endpoint.name],
                raw_message_delivery=subscription.raw_message_delivery,
                filter_policy=subscription.filter_policy,
                filter_policy_scope=subscription.filter_policy_scope,
            )
            self.alarms.watch_dead_letter_queue(
                subscription_id(topic, subscription), construct.dead_letter_queue
            )


def _shared_organization(topology: Topology) -> str | None:
    """The organization every account of the topology declares, if they all declare one: the
    grants to other accounts then also require it."""
    organizations = {account.organization_id for account in topology.accounts}
    return organizations.pop() if len(organizations) == 1 else None
