"""What a delivery-logged topic is to the constructs that take one, as aws-cdk-lib's
``topic-base.ts`` holds ``ITopic`` and ``TopicBase``: :class:`IDeliveryLoggedTopic`, the protocols
SNS logs deliveries of, and the base a created and an imported topic share (HTTPS subscriptions
with their own dead-letter queues)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.keywords import checked_keywords
from constructs_lib._private.subscriptions import subscription_dead_letter_queue, url_subscription
from constructs_lib.filter_policy import FilterPolicyScope
from constructs_lib.queue_naming import subscription_dead_letter_queue_name
from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy


class DeliveryProtocol(enum.StrEnum):
    """The protocols SNS logs delivery status for (CloudFormation ``LoggingConfig.Protocol``)."""

    HTTP = "http/s"
    SQS = "sqs"
    LAMBDA = "lambda"
    FIREHOSE = "firehose"
    APPLICATION = "application"

    @classmethod
    def delivered_by(cls, fifo: bool) -> tuple[DeliveryProtocol, ...]:
        """The protocols a topic of that kind delivers to, and so may log: every one for a
        standard topic, SQS alone for a FIFO topic ("FIFO topics support only SQS
        subscriptions", SNS Developer Guide)."""
        return (cls.SQS,) if fifo else tuple(cls)

    @property
    def logging_protocol(self) -> sns.LoggingProtocol:
        """The aws-cdk-lib enum member for this protocol."""
        return {
            DeliveryProtocol.HTTP: sns.LoggingProtocol.HTTP,
            DeliveryProtocol.SQS: sns.LoggingProtocol.SQS,
            DeliveryProtocol.LAMBDA: sns.LoggingProtocol.LAMBDA,
            DeliveryProtocol.FIREHOSE: sns.LoggingProtocol.FIREHOSE,
            DeliveryProtocol.APPLICATION: sns.LoggingProtocol.APPLICATION,
        }[self]


@runtime_checkable
class IDeliveryLoggedTopic(Protocol):
    """A topic as :class:`~constructs_lib.SnsHttpsEndpoint` subscribes to it, whether this
    app created it (:class:`DeliveryLoggedTopic`) or a team already owns it
    (:meth:`DeliveryLoggedTopic.from_topic_arn`, or an aws-cdk-lib topic through
    :meth:`DeliveryLoggedTopic.from_topic`)."""

    @property
    def topic(self) -> sns.ITopic:
        """The SNS topic."""
        ...

    @property
    def topic_name(self) -> str:
        """Its name (``.fifo`` included for FIFO topics)."""
        ...

    @property
    def fifo(self) -> bool:
        """Whether it is a FIFO topic (which delivers to SQS queues only)."""
        ...

    def add_url_subscription(
        self,
        subscription_id: str,
        url: str,
        *,
        delivery_policy: HttpDeliveryPolicy | None = None,
        raw_message_delivery: bool = False,
        filter_policy: Mapping[str, Any] | None = None,
        filter_policy_scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> tuple[sns.Subscription, sqs.IQueue]:
        """Subscribe an HTTPS endpoint; returns the subscription and its DLQ."""
        ...


class _TopicBase(Construct):
    """What a created and an imported topic share: HTTPS subscriptions with their own DLQs
    (as aws-cdk-lib's ``TopicBase`` serves ``Topic`` and ``Topic.fromTopicArn``)."""

    topic: sns.ITopic
    topic_name: str
    fifo: bool
    encryption_key: kms.IKey | None

    @checked_keywords
    def add_url_subscription(
        self,
        subscription_id: str,
        url: str,
        *,
        delivery_policy: HttpDeliveryPolicy | None = None,
        raw_message_delivery: bool = False,
        filter_policy: Mapping[str, Any] | None = None,
        filter_policy_scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> tuple[sns.Subscription, sqs.IQueue]:
        """Subscribe an HTTPS endpoint; returns the subscription and its DLQ. Plain ``http://``
        is refused: the message would cross the internet in clear.

        :param delivery_policy: the subscription's retry policy, validated against SNS's
            limits. Default: SNS's default policy.
        :param raw_message_delivery: post the message as published, without SNS's JSON
            envelope (and so without its signature). Default: False.
        :param filter_policy: an SNS filter policy, as SNS's JSON syntax writes it.
            Default: none (every message).
        :param filter_policy_scope: what ``filter_policy`` looks at: the message attributes,
            or (nested policies) the body. Default: ``FilterPolicyScope.MESSAGE_ATTRIBUTES``.
        :param dead_letter_queue: the subscription's DLQ. Default: a new one,
            ``<topic>-<subscription_id>-dlq``, encrypted with the topic's key.
        """
        subscription, dlq = url_subscription(
            self,
            subscription_id,
            self.topic,
            url,
            fifo=self.fifo,
            delivery_policy=delivery_policy,
            raw_message_delivery=raw_message_delivery,
            filter_policy=filter_policy,
            filter_policy_scope=filter_policy_scope,
            dead_letter_queue=lambda: dead_letter_queue or self._dead_letter_queue(subscription_id),
        )
        self._subscribed(DeliveryProtocol.HTTP)
        return subscription, dlq

    def _dead_letter_queue(self, subscription_id: str) -> sqs.Queue:
        """A DLQ for one subscription, encrypted with the topic's key."""
        return subscription_dead_letter_queue(
            self,
            f"{subscription_id}DeadLetterQueue",
            queue_name=subscription_dead_letter_queue_name(self.topic_name, subscription_id),
            key=self.encryption_key,
            fifo=self.fifo,
        )

    def _subscribed(self, protocol: DeliveryProtocol) -> None:
        """Called once a subscription of ``protocol`` exists; an imported topic's delivery
        logging is its owner's to turn on."""
