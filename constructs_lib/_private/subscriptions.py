"""What every SNS subscription the constructs create gets: its own dead-letter queue (whose key
admits SNS for the topic), a filter policy written as SNS reads it, and, for a queue, grants
for the subscribed topic alone that the constructs write themselves (whatever feature flags the
app sets) and that keep an endpoint queue's policies in shape.

Used by :class:`~constructs_lib.DeliveryLoggedTopic`, by topics imported with
``DeliveryLoggedTopic.from_topic_arn`` and by
:class:`~constructs_lib.CrossAccountQueueSubscription`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import jsii
from aws_cdk import ArnFormat, Names, RemovalPolicy, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct, IDependable

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.cdk_types import computed_queue_arn, literal_topic_name, same_key
from constructs_lib._private.grants import TOPIC_KEY_ACTIONS, Grantees, KeyGrants, sns_principal
from constructs_lib._private.secure_queue import secure_queue
from constructs_lib.defaults import DEAD_LETTER_RETENTION
from constructs_lib.filter_policy import FilterPolicyScope, check_filter_policy
from constructs_lib.validation import require_customer_managed_queue_key, require_https_url
from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy

TOPIC_DLQ_KEY_ACTIONS = ("kms:GenerateDataKey*", "kms:Decrypt")
"""What SNS needs of a topic's own key to encrypt into its subscription dead-letter queues."""
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
    admit_topic_to_dead_letter_queue(topic, dlq)
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


def admit_topic_to_dead_letter_queue(topic: sns.ITopic, dead_letter_queue: sqs.IQueue) -> None:
    """Let SNS encrypt into a subscription's dead-letter queue for ``topic`` alone
    (``aws:SourceArn``), when the queue's key is one this app writes the policy of.

    ``sns.Subscription`` admits SNS in the dead-letter queue's policy but never on its key, so
    a DLQ encrypted with a key of its own would lose every message SNS gives up on. A DLQ
    encrypted with the topic's own key needs nothing more: the topic's construct admits SNS
    there for the topic (:func:`allow_sns_for_topic`)."""
    key = dead_letter_queue.encryption_master_key
    if isinstance(key, kms.Key) and not same_key(key, topic.master_key):
        _admit_topic_on_key(key, topic, dead_letter_queue)


def _admit_topic_on_key(key: kms.Key, topic: sns.ITopic, queue: sqs.IQueue) -> None:
    """Let SNS use ``key`` for ``topic`` alone (``aws:SourceArn``), and for ``queue``'s
    encryption alone where synth knows its ARN."""
    arn = computed_queue_arn(queue)
    KeyGrants.of(key).grant(
        "AllowSenders",
        Grantees.topics([topic.topic_arn], sns_principal(topic.topic_arn, queue)),
        TOPIC_KEY_ACTIONS,
        via_service=None,
        queue_arns=[arn] if arn else (),
    )


def allow_sns_for_topic(key: kms.IKey | None, topic_arn: str) -> None:
    """Let SNS use a topic's own key for that topic alone (``aws:SourceArn``): it encrypts
    into the topic's subscription dead-letter queues with it. An imported key's policy is its
    owner's."""
    if isinstance(key, kms.Key):
        KeyGrants.of(key).grant(
            "AllowSnsDelivery",
            Grantees.topics([topic_arn], sns_principal(topic_arn, key)),
            TOPIC_DLQ_KEY_ACTIONS,
            via_service=None,
        )


def require_fifo_pairing(field: str, topic: sns.ITopic, queue_fifo: bool, queue: str) -> None:
    """Refuse a FIFO queue subscribed to a standard topic: SNS refuses the subscription
    ("FIFO SQS Queues can not be subscribed to standard SNS topics"; a standard topic's
    deliveries carry no message group, which every send to a FIFO queue needs). A FIFO topic
    delivers to standard queues too (best-effort order, at least once; AWS, "Amazon SNS
    message delivery for FIFO topics")."""
    if queue_fifo and not topic.fifo:
        raise ValueError(
            f"{field}: {queue} is a FIFO queue and {_topic_named(topic)} a standard topic, and "
            "SNS subscribes FIFO queues to FIFO topics only (a standard topic's deliveries "
            "carry no message group); subscribe a standard queue, or make the topic FIFO"
        )


def _topic_named(topic: sns.ITopic) -> str:
    name = literal_topic_name(topic)
    return repr(name) if name is not None else topic.node.path


class SubscribedQueue(NamedTuple):
    """The queue an SQS subscription delivers to, as the construct it was given tells it
    (``subscribed_queue`` of :mod:`constructs_lib.endpoint_queue.queue`)."""

    queue: sqs.IQueue
    key: kms.IKey | None
    """The key SNS encrypts the queue's messages with; ``None`` for SSE-SQS."""
    admit_topic: Callable[[str], None] | None = None
    """How the queue's own construct admits a topic among every topic it admits (an
    :class:`~constructs_lib.EndpointQueue`'s ``add_sender_topics``); ``None`` where the
    subscription writes a statement of its own."""


@jsii.implements(sns.ITopicSubscription)
class QueueSubscription:
    """An SQS subscription that writes its grants itself, so that a queue admits SNS for the
    subscribed topic alone whatever feature flags the app sets: aws-cdk-lib's
    ``SqsSubscription`` lets SNS use the queue's key for every topic (no ``aws:SourceArn``)
    unless the app sets ``@aws-cdk/aws-sns-subscriptions:restrictSqsDescryption``.

    For an :class:`~constructs_lib.EndpointQueue` the queue admits the topic among every topic
    it admits (:meth:`~constructs_lib.EndpointQueue.add_sender_topics`, the queue's
    ``admit_topic``) instead of in a statement of its own, and its key lets SNS encrypt for the
    queue alone; any other queue of this app gets ``SqsSubscription``'s statement and, on a key
    of this app, a grant conditioned on the topic. The queue's and key's policies of an imported queue are its
    owner's. The subscription's dead-letter queue's key admits SNS for the topic too
    (:func:`admit_topic_to_dead_letter_queue`).

    The subscription is the construct ``SqsSubscription`` makes, at the same place (under the
    queue, named after the topic), so a stack synthesized before keeps its logical id: SNS
    answers a subscribe of an existing endpoint with the existing subscription, so a new
    logical id would create nothing, and deleting the old one would unsubscribe the queue.
    """

    def __init__(
        self,
        queue: SubscribedQueue,
        *,
        raw_message_delivery: bool,
        dead_letter_queue: sqs.IQueue,
    ) -> None:
        self._queue, self._key, self._admit_topic = queue
        require_customer_managed_queue_key("dead_letter_queue", dead_letter_queue)
        self._raw_message_delivery = raw_message_delivery
        self._dead_letter_queue = dead_letter_queue

    def subscribe(self, topic: sns.ITopic) -> sns.Subscription:
        """Subscribe the queue to ``topic``, once the pairing is one SNS accepts (checked here:
        an error raised in :meth:`bind`, which aws-cdk-lib calls, reaches the app as a
        JavaScript error)."""
        require_fifo_pairing("queue", topic, self._queue.fifo, self._queue.node.path)
        return topic.add_subscription(self)

    def bind(self, topic: sns.ITopic) -> sns.TopicSubscriptionConfig:
        """Admit ``topic`` on the queue (and the keys) and say where the subscription goes."""
        queue = self._queue
        principal = sns_principal(topic.topic_arn, queue)
        if self._admit_topic is not None:
            self._admit_topic(topic.topic_arn)
            # The queue's policy exists from the start (it denies requests without TLS); the
            # topic's statement joins it at synth.
            dependency: IDependable | None = queue.node.find_child("Policy")
        else:
            dependency = queue.add_to_resource_policy(
                iam.PolicyStatement(
                    principals=[iam.ServicePrincipal(principal)],
                    actions=["sqs:SendMessage"],
                    resources=[queue.queue_arn],
                    conditions={"ArnEquals": {"aws:SourceArn": topic.topic_arn}},
                )
            ).policy_dependable
            if isinstance(self._key, kms.Key):
                _admit_topic_on_key(self._key, topic, queue)
        admit_topic_to_dead_letter_queue(topic, self._dead_letter_queue)
        if isinstance(topic, sns.Topic) and Stack.of(topic) is not Stack.of(queue):
            Stack.of(queue).add_dependency(Stack.of(topic), "its queues subscribe to the topic")
        return sns.TopicSubscriptionConfig(
            subscriber_scope=queue if isinstance(queue, Construct) else None,
            subscriber_id=Names.node_unique_id(topic.node),
            endpoint=queue.queue_arn,
            protocol=sns.SubscriptionProtocol.SQS,
            raw_message_delivery=self._raw_message_delivery,
            region=_topic_region(topic, queue),
            dead_letter_queue=self._dead_letter_queue,
            subscription_dependency=dependency,
        )


def _topic_region(topic: sns.ITopic, subscriber: IConstruct) -> str | None:
    """The subscription's ``Region``, as ``SqsSubscription`` sets it: an imported topic's
    region (from its ARN), a topic of another stack's where the regions differ."""
    if not isinstance(topic, sns.Topic):
        return Stack.of(topic).split_arn(topic.topic_arn, ArnFormat.SLASH_RESOURCE_NAME).region
    region = Stack.of(topic).region
    if Stack.of(topic) is Stack.of(subscriber) or Token.is_unresolved(region):
        return None
    return region if region != Stack.of(subscriber).region else None
