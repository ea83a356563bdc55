"""What every SNS subscription the constructs create gets: its own dead-letter queue, a filter
policy written as SNS reads it, and, for an endpoint queue, grants that keep its policies in
shape.

Used by :class:`~constructs_lib.DeliveryLoggedTopic`, by topics imported with
``DeliveryLoggedTopic.from_topic_arn`` and by
:class:`~constructs_lib.CrossAccountQueueSubscription`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jsii
from aws_cdk import ArnFormat, Names, RemovalPolicy, Stack, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.grants import TOPIC_KEY_ACTIONS, Grantees, KeyGrants, sns_principal
from constructs_lib._private.secure_queue import secure_queue
from constructs_lib.defaults import DEAD_LETTER_RETENTION
from constructs_lib.endpoint_queue import EndpointQueue
from constructs_lib.filter_policy import FilterPolicyScope, check_filter_policy
from constructs_lib.validation import require_https_url
from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy

SUBSCRIPTION_DLQ_REASON = (
    "This queue is the dead-letter queue of an SNS subscription (the subscription's "
    "RedrivePolicy), which the rule does not recognise as a dead-letter queue."
)


def subscription_dead_letter_queue(
    scope: Construct, construct_id: str, *, queue_name: str, key: kms.IKey | None, fifo: bool
) -> sqs.Queue:
    """The DLQ of one SNS subscription: TLS-only, retained, kept as long as SQS allows,
    encrypted with ``key`` (SSE-SQS without one)."""
    queue = secure_queue(
        scope,
        construct_id,
        queue_name=queue_name,
        fifo=fifo,
        encryption_key=key,
        retention_period=DEAD_LETTER_RETENTION,
        removal_policy=RemovalPolicy.RETAIN,
    )
    acknowledge(queue, "AwsSolutions-SQS3", SUBSCRIPTION_DLQ_REASON)
    return queue


def url_subscription(
    scope: Construct,
    subscription_id: str,
    topic: sns.ITopic,
    url: str,
    *,
    fifo: bool,
    delivery_policy: HttpDeliveryPolicy | None,
    raw_message_delivery: bool,
    filter_policy: Mapping[str, Any] | None,
    filter_policy_scope: FilterPolicyScope,
    dead_letter_queue: Callable[[], sqs.IQueue],
) -> tuple[sns.Subscription, sqs.IQueue]:
    """An HTTPS subscription with a validated delivery policy (SNS's default without one) and
    the dead-letter queue ``dead_letter_queue()`` gives, created once the URL is accepted.

    Plain ``http://`` is refused: the subscriber must see SNS's TLS certificate, and the
    message would cross the internet in clear; so is what SNS would refuse
    (:func:`~constructs_lib.validation.https_url_problem`). A token (a function URL of this
    app) is HTTPS by construction.
    """
    if not Token.is_unresolved(url):
        require_https_url("url", url)
    if fifo:
        raise ValueError("url: FIFO topics deliver only to SQS queues")
    dlq = dead_letter_queue()
    subscription = sns.Subscription(
        scope,
        subscription_id,
        topic=topic,
        endpoint=url,
        protocol=sns.SubscriptionProtocol.HTTPS,
        raw_message_delivery=raw_message_delivery or None,
        dead_letter_queue=dlq,
    )
    set_filter_policy(subscription, filter_policy, filter_policy_scope)
    policy = delivery_policy or HttpDeliveryPolicy()
    _cfn_subscription(subscription).delivery_policy = policy.to_subscription_json()
    return subscription, dlq


def set_filter_policy(
    subscription: sns.Subscription,
    policy: Mapping[str, Any] | None,
    scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
) -> None:
    """Apply an SNS filter policy document as written (the JSON operators use), not through
    aws-cdk-lib's typed builders, so a topology can carry any filter SNS accepts; a policy on
    the body says so (``FilterPolicyScope``), since SNS reads a policy as one on attributes.
    A policy SNS would refuse is refused here, at synth
    (:func:`~constructs_lib.filter_policy.check_filter_policy`)."""
    if policy is not None:
        check_filter_policy(policy, scope)
        scope = FilterPolicyScope(scope)
        cfn = _cfn_subscription(subscription)
        cfn.filter_policy = dict(policy)
        if scope is not FilterPolicyScope.MESSAGE_ATTRIBUTES:
            cfn.filter_policy_scope = scope.value


def _cfn_subscription(subscription: sns.Subscription) -> sns.CfnSubscription:
    cfn = subscription.node.default_child
    assert isinstance(cfn, sns.CfnSubscription)
    return cfn


@jsii.implements(sns.ITopicSubscription)
class EndpointQueueSubscription:
    """aws-cdk-lib's ``SqsSubscription`` for an :class:`~constructs_lib.EndpointQueue`, whose
    grants keep the queue's policies in shape: the queue admits the topic among every topic
    it admits (:meth:`~constructs_lib.EndpointQueue.add_sender_topics`) instead of in a
    statement of its own, and its key lets SNS encrypt for the queue and for the
    subscription's dead-letter queue when that shares the key.

    The subscription is the construct ``SqsSubscription`` makes, at the same place (under the
    queue, named after the topic), so a stack synthesized before keeps its logical id: SNS
    answers a subscribe of an existing endpoint with the existing subscription, so a new
    logical id would create nothing, and deleting the old one would unsubscribe the queue.
    """

    def __init__(
        self,
        queue: EndpointQueue,
        *,
        raw_message_delivery: bool,
        dead_letter_queue: sqs.IQueue,
    ) -> None:
        self._queue = queue
        self._raw_message_delivery = raw_message_delivery
        self._dead_letter_queue = dead_letter_queue

    def bind(self, topic: sns.ITopic) -> sns.TopicSubscriptionConfig:
        """Admit ``topic`` on the queue (and the keys) and say where the subscription goes."""
        queue = self._queue
        queue.add_sender_topics(topic.topic_arn)
        key = queue.encryption_key
        dlq_key = self._dead_letter_queue.encryption_master_key
        if isinstance(key, kms.Key) and dlq_key is not None and dlq_key.node.path == key.node.path:
            KeyGrants.of(key).grant(
                "AllowSenders",
                Grantees.topics([topic.topic_arn], sns_principal(topic.topic_arn, queue)),
                TOPIC_KEY_ACTIONS,
                via_service=None,
                queue_arns=[_computed_arn(self._dead_letter_queue)],
            )
        if isinstance(topic, sns.Topic) and Stack.of(topic) is not Stack.of(queue):
            Stack.of(queue).add_dependency(Stack.of(topic), "its queues subscribe to the topic")
        # The queue's policy exists from the start (it denies requests without TLS); the
        # topic's statement joins it at synth.
        policy = queue.queue.node.find_child("Policy")
        return sns.TopicSubscriptionConfig(
            subscriber_scope=queue.queue,
            subscriber_id=Names.node_unique_id(topic.node),
            endpoint=queue.queue_arn,
            protocol=sns.SubscriptionProtocol.SQS,
            raw_message_delivery=self._raw_message_delivery,
            region=_topic_region(topic, queue),
            dead_letter_queue=self._dead_letter_queue,
            subscription_dependency=policy,
        )


def _computed_arn(queue: sqs.IQueue) -> str:
    """The queue's ARN from its name: its key's policy names it, and a reference to the
    queue, which the key encrypts, would be a cycle."""
    cfn = queue.node.default_child
    name = cfn.queue_name if isinstance(cfn, sqs.CfnQueue) else None
    if name is None:
        raise ValueError(f"{queue.node.path}: a subscription's dead-letter queue needs a name")
    return Stack.of(queue).format_arn(service="sqs", resource=name)


def _topic_region(topic: sns.ITopic, subscriber: Construct) -> str | None:
    """The subscription's ``Region``, as ``SqsSubscription`` sets it: an imported topic's
    region (from its ARN), a topic of another stack's where the regions differ."""
    if not isinstance(topic, sns.Topic):
        return Stack.of(topic).split_arn(topic.topic_arn, ArnFormat.SLASH_RESOURCE_NAME).region
    region = Stack.of(topic).region
    if Stack.of(topic) is Stack.of(subscriber) or Token.is_unresolved(region):
        return None
    return region if region != Stack.of(subscriber).region else None
