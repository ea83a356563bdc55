"""A publish to one of the topology's topics on the deployed local AWS, and who handled it.

An event topic's publisher publishes as its team's code does (``IMessageSession.Publish`` on
the model of the released transport): natively to the topic, which SNS delivers to the
subscribed queues (in their own accounts), and, for the message-driven subscribers it stored,
a copy to each stored address, which the bridge carries across. A topic without an event
type gets a plain SNS publish from its account. Every peer then runs until nothing moves, and
each subscription is reported with the account its queue is in and how often its endpoint
handled the message. Nothing is delivered by hand.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from local_aws.released_transport.core.subscription_storage import MessageType
from local_aws.scenarios.conversation import Delivery, Handlers
from local_aws.scenarios.peers import Peers, event_type_name
from stacks.topology import TopicSubscription, Topology
from stacks.topology.topics import Topic

MESSAGE_DRIVEN = "message-driven"
"""The protocol reported for a message-driven subscriber: the publisher's copy, not SNS."""


class PublicationError(RuntimeError):
    """The publish failed; the message names the topic and what was seen."""


@dataclass(frozen=True)
class SubscriptionOutcome:
    """What became of the message for one subscriber of the topic."""

    name: str
    protocol: str
    """``sqs``, ``https`` or ``lambda`` (an SNS subscription), or ``message-driven``."""
    target: str
    """The queue ARN, URL or function ARN."""
    account: str | None
    """The account of the subscriber's queue, ``"<name> (<id>)"``; ``None`` for URLs and
    functions."""
    in_local_aws: bool
    """The SNS subscription exists (message-driven: the publisher stored the subscriber)."""
    handled: int | None
    """How often the subscriber's endpoint handled the message; ``None`` where nothing can be
    observed here (HTTPS, Lambda)."""
    note: str


@dataclass(frozen=True)
class Publication:
    """A message published to a topic, and where it went."""

    topic_arn: str
    publisher: str | None
    """The publishing endpoint; ``None`` for a plain SNS publish."""
    message_id: str
    body_bytes: int
    subscriptions: tuple[SubscriptionOutcome, ...]
    elapsed_ms: float


def publish(
    peers: Peers, handlers: Handlers, topic: Topic, body: bytes | None = None
) -> Publication:
    """Publish ``body`` (default: a small JSON document) to ``topic`` as described above; let
    every peer and relay settle; report each subscriber."""
    topology = peers.topology
    topic_arn = topology.topic_arn(topic)
    started = time.perf_counter()
    token = str(uuid.uuid4())
    payload = body if body is not None else json.dumps({"publication": token}).encode()
    publisher = topic.publishers[0] if topic.event_type and topic.publishers else None
    try:
        if publisher is not None and topic.event_type is not None:
            message_id = (
                peers.endpoints[publisher]
                .publish(event_type_name(topic.event_type), payload)
                .message_id
            )
        else:
            sns = peers.poller.client(peers.accounts[topic.account], "sns")
            message_id = sns.publish(TopicArn=topic_arn, Message=payload.decode())["MessageId"]
    except Exception as error:
        raise PublicationError(f"publish: publishing to {topic_arn} failed: {error}") from error
    peers.settle()
    seen = (
        handlers.of_message(message_id)
        if publisher is not None
        else [d for d in handlers.deliveries if token.encode() in d.body]
    )
    existing = _subscriptions_in_local_aws(peers, topic, topic_arn)
    outcomes = [
        _sns_outcome(topology, subscription, existing, seen) for subscription in topic.subscriptions
    ]
    if publisher is not None:
        outcomes += _message_driven_outcomes(peers, topic, publisher, seen)
    return Publication(
        topic_arn,
        publisher,
        message_id,
        len(payload),
        tuple(outcomes),
        (time.perf_counter() - started) * 1000,
    )


def _sns_outcome(
    topology: Topology,
    subscription: TopicSubscription,
    existing: dict[tuple[str, str], bool],
    seen: Sequence[Delivery],
) -> SubscriptionOutcome:
    target = topology.subscription_target(subscription)
    present = (subscription.protocol, target) in existing
    if subscription.endpoint is None:
        note = (
            "in the local AWS, which invokes no function"
            if subscription.protocol == "lambda"
            else "in the local AWS, pending confirmation (no stand-in answers for its host); its "
            "delivery is not observable here"
            if existing.get((subscription.protocol, target))
            else "confirmed by a stand-in partner on 127.0.0.1, which the local SNS delivers "
            "to (its attempts are listed with the scheduled report)"
        )
        return SubscriptionOutcome(
            subscription.name,
            subscription.protocol,
            target,
            None,
            present,
            None,
            note if present else "not in the local AWS",
        )
    endpoint = topology.endpoint(subscription.endpoint)
    handled = sum(1 for d in seen if d.endpoint == endpoint.name)
    return SubscriptionOutcome(
        subscription.name,
        subscription.protocol,
        target,
        _account(topology, endpoint.account),
        present,
        handled,
        _handled_note(endpoint.name, handled, "in its queue" if present else "not subscribed"),
    )


def _message_driven_outcomes(
    peers: Peers, topic: Topic, publisher: str, seen: Sequence[Delivery]
) -> list[SubscriptionOutcome]:
    """One outcome per message-driven subscriber: the address the publisher stored for it
    (what its copy was sent to) and how often it handled the event."""
    topology = peers.topology
    assert topic.event_type is not None
    storage = peers.endpoints[publisher].subscription_storage
    stored = (
        {}
        if storage is None
        else {
            s.endpoint: s.transport_address
            for s in storage.subscribers([MessageType.parse(event_type_name(topic.event_type))])
        }
    )
    outcomes = []
    for name in topic.message_driven_subscribers:
        endpoint = topology.endpoint(name)
        handled = sum(1 for d in seen if d.endpoint == name)
        address = stored.get(name)
        where = (
            f"sent by {publisher} to the stored address {address!r}"
            if address is not None
            else f"{publisher} stored no subscription"
        )
        outcomes.append(
            SubscriptionOutcome(
                name,
                MESSAGE_DRIVEN,
                topology.queue_arn(endpoint),
                _account(topology, endpoint.account),
                address is not None,
                handled,
                _handled_note(name, handled, where),
            )
        )
    return outcomes


def _handled_note(endpoint: str, handled: int, where: str) -> str:
    times = {0: "never handled it", 1: "handled it once"}.get(
        handled, f"handled it {handled} times"
    )
    return f"{where}; {endpoint} {times}"


def _account(topology: Topology, name: str) -> str:
    return f"{name} ({topology.account(name).id})"


def _subscriptions_in_local_aws(
    peers: Peers, topic: Topic, topic_arn: str
) -> dict[tuple[str, str], bool]:
    """``(protocol, endpoint)`` of the topic's subscriptions the local AWS holds (on the
    topic, in its account, whoever created them), each with whether it is still pending
    confirmation."""
    if topic.account not in peers.accounts:
        return {}
    sns = peers.poller.client(peers.accounts[topic.account], "sns")
    found: dict[tuple[str, str], bool] = {}
    for page in sns.get_paginator("list_subscriptions_by_topic").paginate(TopicArn=topic_arn):
        for held in page["Subscriptions"]:
            attributes = sns.get_subscription_attributes(SubscriptionArn=held["SubscriptionArn"])
            pending = attributes["Attributes"].get("PendingConfirmation") == "true"
            found[(held["Protocol"], held["Endpoint"])] = pending
    return found


def topic_named(topology: Topology, name: str | None) -> Topic | None:
    """The topic called ``name`` (a declared one, not an anchor), or the topology's first
    (``None`` without topics)."""
    declared = [t for t in topology.topics if not t.anchor]
    if name is None:
        return declared[0] if declared else None
    for topic in declared:
        if topic.name == name:
            return topic
    raise PublicationError(
        f"publish: no topic {name!r} in the topology; use one of {[t.name for t in declared]}"
    )
