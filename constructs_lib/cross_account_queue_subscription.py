"""``CrossAccountQueueSubscription``: the queue owner's half of an SQS subscription to a topic
in another account."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Token
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked
from constructs_lib._private.subscriptions import (
    QueueSubscription,
    set_filter_policy,
    subscription_dead_letter_queue,
)
from constructs_lib.endpoint_queue import IEndpointQueue
from constructs_lib.endpoint_queue.queue import subscribed_queue
from constructs_lib.filter_policy import FilterPolicyScope
from constructs_lib.queue_naming import subscription_dead_letter_queue_name
from constructs_lib.validation import require_local, require_topic_arn


@checked
class CrossAccountQueueSubscription(Construct):
    """The subscriber account's half of an SQS subscription to a topic in another account.

    The queue owner creates the subscription (so SNS confirms it at once), admits SNS for that
    topic only in the queue policy (one statement lists every topic an
    :class:`~constructs_lib.EndpointQueue` admits), lets SNS use the queue's key for that topic
    (for the queue and the subscription's DLQ), and owns the subscription's DLQ: each grant
    written by the construct itself (``aws:SourceArn``), whatever feature flags the app sets.
    The topic's account grants ``sns:Subscribe`` to this account (see
    :meth:`DeliveryLoggedTopic.add_subscriber_accounts`). For a queue imported with
    :meth:`EndpointQueue.from_queue_arn` or ``sqs.Queue.from_queue_arn`` the queue's and key's
    policies belong to their owner, who must admit SNS for the topic there.

    Example:

    ```python
    from aws_cdk import App, Environment, Stack

    from constructs_lib import CrossAccountQueueSubscription, EndpointQueue

    app = App()
    stack = Stack(app, "Sales", env=Environment(account="111111111111", region="eu-west-1"))
    sales = EndpointQueue(stack, "Sales", endpoint_name="Sales")
    CrossAccountQueueSubscription(
        stack,
        "OrderBilled",
        topic_arn="arn:aws:sns:eu-west-1:222222222222:OrderBilled",
        subscription_name="Sales",
        queue=sales,
    )
    app.synth()
    ```
    """

    dead_letter_queue = Attribute[sqs.Queue](
        "The subscription's own dead-letter queue, in this account."
    )
    subscription = Attribute[sns.Subscription]("The SQS subscription to the other account's topic.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        topic_arn: str,
        subscription_name: str,
        queue: IEndpointQueue | sqs.IQueue,
        raw_message_delivery: bool = True,
        filter_policy: Mapping[str, Any] | None = None,
        filter_policy_scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
    ) -> None:
        """Subscribe ``queue`` to the topic ``topic_arn``.

        :param topic_arn: the topic's ARN as a string (computed, never an export: exports
            cannot cross accounts).
        :param subscription_name: names the subscription's DLQ,
            ``<topic>-<subscription_name>-dlq``.
        :param queue: the subscribed queue: an :class:`~constructs_lib.EndpointQueue`, an
            imported endpoint queue, or an aws-cdk-lib queue (``sqs.Queue`` of this app, or
            imported); its key encrypts the DLQ too. A FIFO queue needs a FIFO topic.
        :param raw_message_delivery: deliver the message as published, without SNS's JSON
            envelope (what NServiceBus endpoints read). Default: True.
        :param filter_policy: an SNS filter policy, as SNS's JSON syntax writes it.
            Default: none (every message).
        :param filter_policy_scope: what ``filter_policy`` looks at: the message attributes,
            or (nested policies) the body. Default: ``FilterPolicyScope.MESSAGE_ATTRIBUTES``.
        """
        super().__init__(scope, construct_id)
        if Token.is_unresolved(topic_arn):
            raise ValueError(
                "topic_arn: give the topic's ARN as a string (compute it from the topology); "
                "a token from another stack would need a CloudFormation export"
            )
        require_topic_arn("topic_arn", topic_arn)
        topic = sns.Topic.from_topic_arn(self, "Topic", topic_arn)
        subscribed = subscribed_queue("queue", queue)
        require_local(
            "queue",
            subscribed.queue,
            self,
            "a queue",
            "the queue's owner subscribes it: create CrossAccountQueueSubscription in a stack "
            "of the queue's account (or, in the topic's stack, "
            "DeliveryLoggedTopic.add_queue_subscription for a queue of the topic's account)",
        )
        # SNS wants a subscription's DLQ of its topic's kind, whatever the queue's.
        self.dead_letter_queue = subscription_dead_letter_queue(
            self,
            "DeadLetterQueue",
            queue_name=subscription_dead_letter_queue_name(
                topic_arn.rsplit(":", 1)[1], subscription_name
            ),
            key=subscribed.key,
            fifo=topic.fifo,
        )
        self.subscription = QueueSubscription(
            subscribed,
            raw_message_delivery=raw_message_delivery,
            dead_letter_queue=self.dead_letter_queue,
        ).subscribe(topic)
        set_filter_policy(self.subscription, filter_policy, filter_policy_scope)
