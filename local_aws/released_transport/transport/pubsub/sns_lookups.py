"""Finding topics and subscriptions through the endpoint's own SNS client.

``FindTopic`` (the AWS SDK's ``FindTopicAsync``, which the transport calls everywhere it looks a
topic up) pages through ``ListTopics`` of the client's account and region and takes the first
topic whose ARN, after its last ``:``, equals the name (ordinal). There is no way to name another
account: a topic is found *by name in the caller's own account* or not at all.

``FindMatchingSubscription`` pages through ``ListSubscriptionsByTopic`` and takes the first
subscription whose endpoint ends with ``:`` and the queue's physical name (ordinal). It compares
names only, so a subscription of a same-named queue of another account or region matches too.
Paging stops at a page without a ``NextToken`` or without subscriptions.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Extensions/
SnsClientExtensions.cs``; the AWS SDK for .NET ``AmazonSimpleNotificationServiceClient.
Extensions.cs`` (``FindTopicAsync``, ``TopicNameMatcher``).
"""

from __future__ import annotations

from typing import Any

from local_aws.released_transport.transport.queues.queue_cache import QueueCache


def _matches_topic_name(topic_arn: str | None, topic_name: str) -> bool:
    """``TopicNameMatcher``."""
    if not topic_arn or not topic_name or ":" not in topic_arn:
        return False
    return topic_arn[topic_arn.rindex(":") + 1 :] == topic_name


def find_topic(sns: Any, topic_name: str) -> str | None:
    """``FindTopicAsync``: the ARN of the topic named ``topic_name`` in the client's account."""
    request: dict[str, Any] = {}
    while True:
        response = sns.list_topics(**request)
        for topic in response.get("Topics") or []:
            if _matches_topic_name(topic.get("TopicArn"), topic_name):
                return str(topic["TopicArn"])
        next_token = response.get("NextToken")
        if not next_token:
            return None
        request = {"NextToken": next_token}


def find_matching_subscription(
    sns: Any, queue_cache: QueueCache, topic_arn: str, queue_name: str
) -> str | None:
    """``FindMatchingSubscription(topic)``: the ARN of the subscription of ``queue_name``."""
    suffix = f":{queue_cache.physical_queue_name(queue_name)}"
    request: dict[str, Any] = {"TopicArn": topic_arn}
    while True:
        response = sns.list_subscriptions_by_topic(**request)
        subscriptions = response.get("Subscriptions") or []
        for subscription in subscriptions:
            if str(subscription.get("Endpoint", "")).endswith(suffix):
                return str(subscription["SubscriptionArn"])
        next_token = response.get("NextToken")
        if next_token is None or not subscriptions:
            return None
        request = {"TopicArn": topic_arn, "NextToken": next_token}


def find_matching_subscription_by_topic_name(
    sns: Any, queue_cache: QueueCache, topic_name: str, queue_name: str
) -> str | None:
    """``FindMatchingSubscription(topicName)``: ``FindTopic`` (uncached), then the above."""
    topic_arn = find_topic(sns, topic_name)
    if topic_arn is None:
        return None
    return find_matching_subscription(sns, queue_cache, topic_arn, queue_name)
