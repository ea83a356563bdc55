"""Each SNS rule on a team's plain aws-cdk-lib resources: a stack with the mistake fails it, the
same stack made right passes the whole pack; what the template cannot tell is not applicable."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs

from tests.constructs_lib.messaging_checks.conftest import (
    OTHER,
    REGION,
    Findings,
    logged_topic,
    sound_subscription,
)

pytestmark = pytest.mark.synth
Run = Callable[..., Findings]


def rules(found: Findings) -> set[str]:
    """The rule ids of the findings (aws-cdk-lib names a subscription it makes by hashes)."""
    return {rule for _, rule in found}


def test_a_sound_subscription_passes_every_rule(findings: Run) -> None:
    assert findings(lambda stack: sound_subscription(stack, key=kms.Key(stack, "Key"))) == set()


def _plain_subscription(stack: Stack, topic: sns.ITopic, queue: sqs.IQueue) -> sns.Subscription:
    """A subscription made without SqsSubscription (which writes the grants), with a
    dead-letter queue whose policy aws-cdk-lib writes."""
    return sns.Subscription(
        stack,
        "Subscription",
        topic=topic,
        endpoint=queue.queue_arn,
        protocol=sns.SubscriptionProtocol.SQS,
        dead_letter_queue=sqs.Queue(stack, "DeadLetters"),
    )


def _admit(queue: sqs.Queue, topic: sns.ITopic) -> None:
    queue.add_to_resource_policy(
        iam.PolicyStatement(
            actions=["sqs:SendMessage"],
            principals=[iam.ServicePrincipal("sns.amazonaws.com")],
            resources=[queue.queue_arn],
            conditions={"ArnEquals": {"aws:SourceArn": topic.topic_arn}},
        )
    )


def test_a_queue_under_the_aws_managed_key_fails_subscription_queue_key(findings: Run) -> None:
    def build(stack: Stack) -> None:
        topic = logged_topic(stack)
        queue = sqs.Queue(stack, "Queue")
        queue.node.default_child.add_property_override("KmsMasterKeyId", "alias/aws/sqs")  # type: ignore[union-attr]  # default_child is the CfnQueue
        _admit(queue, topic)
        _plain_subscription(stack, topic, queue)

    assert findings(build) == {("Team/Subscription/Resource", "Messaging-SubscriptionQueueKey")}


def test_a_key_granted_to_no_sns_fails_subscription_queue_key(findings: Run) -> None:
    def build(stack: Stack) -> None:
        topic = logged_topic(stack)
        queue = sqs.Queue(stack, "Queue", encryption_master_key=kms.Key(stack, "Key"))
        _admit(queue, topic)
        _plain_subscription(stack, topic, queue)

    assert findings(build) == {("Team/Subscription/Resource", "Messaging-SubscriptionQueueKey")}


def test_a_key_granted_to_another_topic_fails_subscription_queue_key(findings: Run) -> None:
    def build(stack: Stack) -> None:
        topic, other = logged_topic(stack), logged_topic(stack, "Other")
        key = kms.Key(stack, "Key")
        key.add_to_resource_policy(
            iam.PolicyStatement(
                actions=["kms:GenerateDataKey*", "kms:Decrypt"],
                principals=[iam.ServicePrincipal("sns.amazonaws.com")],
                resources=["*"],
                conditions={"ArnEquals": {"aws:SourceArn": other.topic_arn}},
            )
        )
        queue = sqs.Queue(stack, "Queue", encryption_master_key=key)
        _admit(queue, topic)
        _plain_subscription(stack, topic, queue)

    assert findings(build) == {("Team/Subscription/Resource", "Messaging-SubscriptionQueueKey")}


def test_a_queue_without_a_policy_fails_subscription_queue_policy(findings: Run) -> None:
    def build(stack: Stack) -> None:
        _plain_subscription(stack, logged_topic(stack), sqs.Queue(stack, "Queue"))

    assert findings(build) == {("Team/Subscription/Resource", "Messaging-SubscriptionQueuePolicy")}


def test_a_queue_admitting_another_topic_fails_subscription_queue_policy(findings: Run) -> None:
    def build(stack: Stack) -> None:
        topic = logged_topic(stack)
        queue = sqs.Queue(stack, "Queue")
        _admit(queue, sns.Topic.from_topic_arn(stack, "Old", f"arn:aws:sns:{REGION}:{OTHER}:Old"))
        _plain_subscription(stack, topic, queue)

    assert findings(build) == {("Team/Subscription/Resource", "Messaging-SubscriptionQueuePolicy")}


def test_a_subscription_without_a_dead_letter_queue_fails_subscription_dlq(findings: Run) -> None:
    def build(stack: Stack) -> None:
        logged_topic(stack).add_subscription(
            subscriptions.SqsSubscription(sqs.Queue(stack, "Queue"))
        )

    assert rules(findings(build)) == {"Messaging-SubscriptionDlq"}


def test_a_dead_letter_queue_sns_cannot_encrypt_into_fails_subscription_dlq_access(
    findings: Run,
) -> None:
    def build(stack: Stack) -> None:
        topic = logged_topic(stack)
        dead_letters = sqs.Queue(stack, "DeadLetters", encryption_master_key=kms.Key(stack, "Key"))
        topic.add_subscription(
            subscriptions.SqsSubscription(sqs.Queue(stack, "Queue"), dead_letter_queue=dead_letters)
        )

    assert rules(findings(build)) == {"Messaging-SubscriptionDlqAccess"}


def test_a_fifo_queue_on_a_standard_topic_fails_subscription_fifo(findings: Run) -> None:
    def build(stack: Stack) -> None:
        logged_topic(stack).add_subscription(
            subscriptions.SqsSubscription(
                sqs.Queue(stack, "Queue", fifo=True),
                dead_letter_queue=sqs.Queue(stack, "DeadLetters"),
            )
        )

    assert rules(findings(build)) == {"Messaging-SubscriptionFifo"}


def test_a_standard_queue_on_a_fifo_topic_fails_subscription_fifo(findings: Run) -> None:
    def build(stack: Stack) -> None:
        logged_topic(stack, fifo=True).add_subscription(
            subscriptions.SqsSubscription(
                sqs.Queue(stack, "Queue"),
                dead_letter_queue=sqs.Queue(stack, "DeadLetters", fifo=True),
            )
        )

    assert rules(findings(build)) == {"Messaging-SubscriptionFifo"}


def test_fifo_all_through_passes(findings: Run) -> None:
    assert findings(lambda stack: sound_subscription(stack, fifo=True)) == set()


def test_another_accounts_queue_subscribed_by_the_topic_owner_fails_cross_account(
    findings: Run,
) -> None:
    def build(stack: Stack) -> None:
        sns.Subscription(
            stack,
            "Subscription",
            topic=logged_topic(stack),
            endpoint=f"arn:aws:sqs:{REGION}:{OTHER}:Billing",
            protocol=sns.SubscriptionProtocol.SQS,
            dead_letter_queue=sqs.Queue(stack, "DeadLetters"),
        )

    assert findings(build) == {("Team/Subscription/Resource", "Messaging-SubscriptionCrossAccount")}


def test_the_queue_owner_subscribing_to_another_accounts_topic_passes(findings: Run) -> None:
    """The topic, its queue policy condition and the queue's account are what the queue's
    owner knows; the rules on what they cannot read (the topic) are not applicable."""

    def build(stack: Stack) -> None:
        topic = sns.Topic.from_topic_arn(stack, "Billed", f"arn:aws:sns:{REGION}:{OTHER}:Billed")
        topic.add_subscription(
            subscriptions.SqsSubscription(
                sqs.Queue(stack, "Queue", encryption_master_key=kms.Key(stack, "Key")),
                dead_letter_queue=sqs.Queue(stack, "DeadLetters"),
            )
        )

    assert findings(build) == set()


def test_a_topic_logging_nothing_fails_topic_delivery_logging(findings: Run) -> None:
    def build(stack: Stack) -> None:
        topic = sns.Topic(stack, "Topic")
        topic.add_subscription(
            subscriptions.SqsSubscription(
                sqs.Queue(stack, "Queue"), dead_letter_queue=sqs.Queue(stack, "DeadLetters")
            )
        )

    assert findings(build) == {("Team/Topic/Resource", "Messaging-TopicDeliveryLogging")}


def test_a_topic_logging_another_protocol_fails_topic_delivery_logging(findings: Run) -> None:
    def build(stack: Stack) -> None:
        role = iam.Role(stack, "Logging", assumed_by=iam.ServicePrincipal("sns.amazonaws.com"))
        topic = sns.Topic(
            stack,
            "Topic",
            logging_configs=[
                sns.LoggingConfig(protocol=sns.LoggingProtocol.LAMBDA, failure_feedback_role=role)
            ],
        )
        topic.add_subscription(
            subscriptions.SqsSubscription(
                sqs.Queue(stack, "Queue"), dead_letter_queue=sqs.Queue(stack, "DeadLetters")
            )
        )

    assert findings(build) == {("Team/Topic/Resource", "Messaging-TopicDeliveryLogging")}


def test_an_imported_queue_or_key_is_not_applicable_rather_than_a_finding(findings: Run) -> None:
    """The queue's policy and key live elsewhere: nothing to read, nothing reported."""

    def build(stack: Stack) -> None:
        queue = sqs.Queue.from_queue_attributes(
            stack,
            "Imported",
            queue_arn=f"arn:aws:sqs:{REGION}:111111111111:Imported",
            key_arn=f"arn:aws:kms:{REGION}:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        )
        logged_topic(stack).add_subscription(
            subscriptions.SqsSubscription(queue, dead_letter_queue=sqs.Queue(stack, "DeadLetters"))
        )

    assert findings(build) == set()
