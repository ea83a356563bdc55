"""Native subscriptions of an endpoint's input queue: ``SubscriptionManager``.

Subscribing to event types (``SubscribeAll``), for each type not subscribed before by this
endpoint instance:

1. the topic: with installers (``EnableInstallers()``) ``CreateTopic`` (which answers the
   existing topic's ARN too); without, ``FindTopic`` by name in the endpoint's own account, and
   a topic not there fails the subscribe with the transport's message;
2. the queue's ARN (``QueueArn``, cached).

If any type failed, the first failure is raised and nothing is settled. Otherwise the policy is
settled once for all of them (:mod:`~local_aws.released_transport.transport.pubsub.queue_policy`;
skipped when ``SetupTopicPoliciesWhenSubscribing`` is off): read the queue's attributes, update the
policy, write it, and read again until the policy read back needs no update — at most ten reads, the
reads from the third on after 2, 3, … 9 s — then every topic is subscribed: ``Subscribe`` with
protocol ``sqs``, the queue ARN and ``RawMessageDelivery=true`` (SNS answers the existing
subscription for the same endpoint). All the types are then remembered as subscribed, so subscribing
again does nothing until they are unsubscribed.

Unsubscribing: ``FindTopic`` (uncached), the subscription whose endpoint ends with ``:`` and the
queue's name, ``Unsubscribe``; the policy is left as it is, the topic too.

Everything is by name in the endpoint's own account and region: the topic a subscriber creates
or finds is the one of *its* account. ``MapEvent`` (custom topics, event-to-event mappings) is
not modelled.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Receiving/
SubscriptionManager.cs``, ``Configure/SqsTransportInfrastructure.cs`` (the receive address, the
installers' flag), the AWS SDK's ``GetAttributesAsync`` (all attributes); vectors in
``src/NServiceBus.Transport.SQS.Tests/Receiving/SubscriptionManagerTests.cs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from local_aws.released_transport.transport.pubsub.queue_policy import (
    POLICY_ATTRIBUTE,
    PolicySettings,
    PolicyStatement,
    extract_policy,
    update_policy,
)
from local_aws.released_transport.transport.pubsub.sns_lookups import (
    find_matching_subscription_by_topic_name,
    find_topic,
)
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.queues.queue_cache import QueueCache

POLICY_READS: Final = 10
RAW_MESSAGE_DELIVERY: Final = "RawMessageDelivery"
_QUEUE_ARN: Final = "QueueArn"
_ALL_ATTRIBUTES: Final = "All"


class TopicNotFoundError(Exception):
    """A subscribe without installers found no topic (the transport's plain ``Exception``)."""


class PolicyNotSetError(Exception):
    """The queue's ``QueueArn`` attribute was empty (the transport's plain ``Exception``)."""


class SubscriptionManager:
    """The subscription manager of one input queue (``queue_name`` is its receive address)."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        topic_cache: TopicCache,
        queue_name: str,
        *,
        policy_settings: PolicySettings,
        topic_name_prefix: str | None,
        setup_infrastructure: bool,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._sqs = sqs
        self._queue_cache = queue_cache
        self._topic_cache = topic_cache
        self._queue_name = queue_name
        self._policies = policy_settings
        self._topic_name_prefix = topic_name_prefix
        self._setup_infrastructure = setup_infrastructure
        self._sleep = sleep
        self._configured: set[str] = set()

    def subscribe_all(self, event_types: Sequence[str]) -> None:
        """``SubscribeAll``: event types by ``FullName``."""
        queue_url = self._queue_cache.queue_url(self._queue_name)
        statements: list[PolicyStatement] = []
        failures: list[BaseException] = []
        for event_type in event_types:
            if event_type in self._configured:
                continue
            try:
                topic_name = self._topic_cache.topic_name(event_type)
                topic_arn = self._topic_arn(topic_name)
                queue_arn = self._queue_cache.queue_arn(queue_url)
                statements.append(PolicyStatement(topic_name, topic_arn, queue_arn))
            except Exception as failure:
                failures.append(failure)
        if failures:
            raise failures[0]
        self._set_policy(queue_url, statements)
        for statement in statements:
            self._topic_cache.sns.subscribe(
                TopicArn=statement.topic_arn,
                Protocol="sqs",
                Endpoint=statement.queue_arn,
                ReturnSubscriptionArn=True,
                Attributes={RAW_MESSAGE_DELIVERY: "true"},
            )
        self._configured.update(event_types)

    def unsubscribe(self, event_type: str) -> None:
        """``Unsubscribe``: the queue's subscription to the type's topic, if any."""
        subscription_arn = find_matching_subscription_by_topic_name(
            self._topic_cache.sns,
            self._queue_cache,
            self._topic_cache.topic_name(event_type),
            self._queue_name,
        )
        if subscription_arn is not None:
            self._topic_cache.sns.unsubscribe(SubscriptionArn=subscription_arn)
        self._configured.discard(event_type)

    def _topic_arn(self, topic_name: str) -> str:
        """``CreateTopicAndSubscribe``'s topic: created with installers, else found."""
        sns = self._topic_cache.sns
        if self._setup_infrastructure:
            return str(sns.create_topic(Name=topic_name)["TopicArn"])
        topic_arn = find_topic(sns, topic_name)
        if not topic_arn:
            raise TopicNotFoundError(
                f"Topic {topic_name} not found. Call endpointConfiguration.EnableInstallers() to"
                " create the topic at startup, or create them manually."
            )
        return topic_arn

    def _set_policy(self, queue_url: str, statements: Sequence[PolicyStatement]) -> None:
        """``SetNecessaryDeliveryPolicyWithRetries``."""
        if not self._policies.setup_topic_policies_when_subscribing or not statements:
            return
        queue_arn = ""
        for attempt in range(POLICY_READS):
            if attempt > 1:
                self._sleep(attempt)
            attributes = self._sqs.get_queue_attributes(
                QueueUrl=queue_url, AttributeNames=[_ALL_ATTRIBUTES]
            )["Attributes"]
            queue_arn = attributes[_QUEUE_ARN]
            policy = extract_policy(attributes)
            if not update_policy(
                policy,
                statements,
                account_condition=self._policies.account_condition,
                topic_name_prefix_condition=self._policies.topic_name_prefix_condition,
                namespace_conditions=self._policies.topic_namespace_conditions,
                topic_name_prefix=self._topic_name_prefix,
                queue_arn=queue_arn,
            ):
                break
            self._sqs.set_queue_attributes(
                QueueUrl=queue_url, Attributes={POLICY_ATTRIBUTE: policy.to_json()}
            )
        if not queue_arn:
            raise PolicyNotSetError(
                f"Unable to setup necessary policies for queue '{self._queue_name}"
            )
