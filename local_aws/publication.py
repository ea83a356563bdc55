"""A publish to one of the topology's topics on the deployed local AWS, and what became of it.

It reports only what the local AWS did: which of the topology's subscriptions exist there and
which queues received the message. Nothing is delivered by hand.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import LambdaPoller
from stacks.topology import Topology
from stacks.topology.topics import Topic

DEFAULT_MAX_POLLS: Final = 5
POLL_WAIT_SECONDS: Final = 1
SUBSCRIPTION_MISSING: Final = (
    "not in the local AWS (moto's CloudFormation skips AWS::SNS::Subscription)"
)


class PublicationError(RuntimeError):
    """The publish failed; the message names the topic and what was seen."""


@dataclass(frozen=True)
class SubscriptionOutcome:
    """What the local AWS did with one of the topology's subscriptions of the topic."""

    name: str
    protocol: str
    target: str
    """The queue ARN, URL or function ARN."""
    in_local_aws: bool
    delivered: bool | None
    """Whether the message reached the queue; ``None`` where nothing can be observed here."""
    note: str


@dataclass(frozen=True)
class Publication:
    """A message published to a topic, and where it went."""

    topic_arn: str
    message_id: str
    subscriptions: tuple[SubscriptionOutcome, ...]
    elapsed_ms: float


def publish(
    topology: Topology,
    accounts: Mapping[str, AccountCredentials],
    poller: LambdaPoller,
    topic: Topic,
    max_polls: int = DEFAULT_MAX_POLLS,
) -> Publication:
    """Publish to ``topic`` as its account and report, per subscription of the topology,
    whether the local AWS holds it and whether its queue received the message.

    The clients are the ``poller``'s, kept for the run."""
    topic_arn = topology.topic_arn(topic)
    started = time.perf_counter()
    token = str(uuid.uuid4())
    sns = poller.client(_credentials(accounts, topic.account, "publish"), "sns")
    try:
        message_id: str = sns.publish(
            TopicArn=topic_arn, Message=json.dumps({"publication": token})
        )["MessageId"]
    except Exception as error:
        raise PublicationError(f"publish: publishing to {topic_arn} failed: {error}") from error
    existing = _subscriptions_in_local_aws(topology, accounts, poller, topic, topic_arn)
    outcomes = []
    for subscription in topic.subscriptions:
        target = topology.subscription_target(subscription)
        present = (subscription.protocol, target) in existing
        delivered: bool | None = None
        if subscription.protocol == "sqs" and subscription.endpoint is not None:
            endpoint = topology.endpoint(subscription.endpoint)
            found = _receive_where(
                poller.client(_credentials(accounts, endpoint.account, "publish"), "sqs"),
                poller.queue_url(target),
                lambda m: token in m["Body"],
                max_polls if present else 1,
            )
            delivered = found is not None
        outcomes.append(
            SubscriptionOutcome(
                subscription.name,
                subscription.protocol,
                target,
                present,
                delivered,
                _note(present, delivered, max_polls),
            )
        )
    return Publication(
        topic_arn, message_id, tuple(outcomes), (time.perf_counter() - started) * 1000
    )


def _note(present: bool, delivered: bool | None, max_polls: int) -> str:
    """What happened, in words; a subscription missing from moto is said to be missing."""
    if not present:
        if delivered is None:
            return SUBSCRIPTION_MISSING
        if delivered:
            return SUBSCRIPTION_MISSING + ", yet the queue received the message"
        return SUBSCRIPTION_MISSING + "; nothing arrived in the queue"
    if delivered is None:
        return "in the local AWS; its delivery is not observable here"
    if delivered:
        return "delivered to the queue"
    return f"in the local AWS, but nothing arrived in the queue after {max_polls} polls"


def _subscriptions_in_local_aws(
    topology: Topology,
    accounts: Mapping[str, AccountCredentials],
    poller: LambdaPoller,
    topic: Topic,
    topic_arn: str,
) -> set[tuple[str, str]]:
    """``(protocol, endpoint)`` of the topic's subscriptions the local AWS holds, in the
    topic's account and in every subscriber account (which creates cross-account SQS ones)."""
    owners = {topic.account} | {
        topology.endpoint(s.endpoint).account for s in topic.subscriptions if s.endpoint
    }
    found: set[tuple[str, str]] = set()
    for owner in sorted(owners):
        if owner not in accounts:
            continue
        sns = poller.client(accounts[owner], "sns")
        for page in sns.get_paginator("list_subscriptions").paginate():
            found.update(
                (s["Protocol"], s["Endpoint"])
                for s in page["Subscriptions"]
                if s["TopicArn"] == topic_arn
            )
    return found


def topic_named(topology: Topology, name: str | None) -> Topic | None:
    """The topic called ``name``, or the topology's first (``None`` without topics)."""
    if name is None:
        return topology.topics[0] if topology.topics else None
    for topic in topology.topics:
        if topic.name == name:
            return topic
    raise PublicationError(
        f"publish: no topic {name!r} in the topology; use one of {[t.name for t in topology.topics]}"
    )


def _credentials(
    accounts: Mapping[str, AccountCredentials], account: str, part: str
) -> AccountCredentials:
    if account not in accounts:
        raise PublicationError(
            f"{part}: no credentials for account {account}; deploy it first (deploy_all returns "
            f"them), have {sorted(accounts)}"
        )
    return accounts[account]


def _receive_where(
    sqs: Any, url: str, wanted: Callable[[Mapping[str, Any]], bool], max_polls: int
) -> dict[str, Any] | None:
    """Poll ``url`` up to ``max_polls`` times for a message ``wanted`` accepts; delete and
    return it. Other messages are left alone (they return after their visibility timeout)."""
    for _ in range(max_polls):
        messages = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=POLL_WAIT_SECONDS,
        ).get("Messages", [])
        for message in messages:
            if wanted(message):
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                found: dict[str, Any] = message
                return found
    return None
