"""What every SNS subscription the constructs create gets: its own dead-letter queue, and a
filter policy written as SNS reads it.

Used by :class:`~constructs_lib.DeliveryLoggedTopic`, by topics imported with
``DeliveryLoggedTopic.from_topic_arn`` and by
:class:`~constructs_lib.CrossAccountQueueSubscription`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

from aws_cdk import RemovalPolicy, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.secure_queue import secure_queue
from constructs_lib.defaults import DEAD_LETTER_RETENTION
from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy


class FilterPolicyScope(enum.StrEnum):
    """What a subscription's filter policy looks at (SNS's ``FilterPolicyScope``): the message
    attributes (flat policies), or the message body (nested policies allowed)."""

    MESSAGE_ATTRIBUTES = "MessageAttributes"
    MESSAGE_BODY = "MessageBody"


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
    message would cross the internet in clear. A token (a function URL of this app) is HTTPS
    by construction.
    """
    if not Token.is_unresolved(url) and not url.startswith("https://"):
        raise ValueError(f"url: {url!r} must be an https:// URL")
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
    the body says so (``FilterPolicyScope``), since SNS reads a policy as one on attributes."""
    if policy:
        cfn = _cfn_subscription(subscription)
        cfn.filter_policy = dict(policy)
        if scope is not FilterPolicyScope.MESSAGE_ATTRIBUTES:
            cfn.filter_policy_scope = scope.value


def _cfn_subscription(subscription: sns.Subscription) -> sns.CfnSubscription:
    cfn = subscription.node.default_child
    assert isinstance(cfn, sns.CfnSubscription)
    return cfn
