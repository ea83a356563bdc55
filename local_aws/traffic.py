"""A conversation on the deployed local AWS: a request and its reply through the account
bridge, then a publish to a topic, with what arrived where.

The request goes as a legacy endpoint sends it: to the queue named like the receiver's, in the
sender's own account (the shadow queue), in NServiceBus's wrapped-body form. The relays run
through :class:`local_aws.lambda_poller.LambdaPoller`, which plays their event source mappings.
On arrival the headers must be as ``docs/relay.md`` says: every header that carried the
sender's address carries its queue ARN, the ARN header lists exactly those, and nothing else
changed. The receiver replies to the ARN it got, through the shadow queue of that name in its
own account (as the bridge expects of endpoints that were never upgraded), in the
headers-attribute form, so both wire forms cross.

The publish reports only what the local AWS did: which of the topology's subscriptions exist
there and which queues received the message. Nothing is delivered by hand.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode
from cross_account_runtime.nservicebus.transport_address import parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import (
    HEADERS_ATTRIBUTE,
    WireFormatError,
    read_headers,
)
from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import DEFAULT_MAX_ROUNDS, LambdaPoller, PumpLimitError, PumpResult
from stacks.topology import Endpoint, Topology
from stacks.topology.topics import Topic

DEFAULT_MAX_POLLS = 5
POLL_WAIT_SECONDS = 1
REQUEST_TYPE = "LocalAws.Messages.Request"
REPLY_TYPE = "LocalAws.Messages.Reply"
SUBSCRIPTION_MISSING = "not in the local AWS (moto's CloudFormation skips AWS::SNS::Subscription)"


class TrafficError(RuntimeError):
    """A part of the conversation failed; the message names the part and what was seen."""


@dataclass(frozen=True)
class Leg:
    """One message's trip from a sender's queue to its receiver's queue."""

    message_id: str
    """The ``NServiceBus.MessageId``."""
    sent_to: str
    """The queue ARN the sender sent to (a shadow queue)."""
    received_on: str
    """The queue ARN it was received from."""
    relayed_by: tuple[str, ...]
    """The functions that handled it, in order."""
    arn_header: Mapping[str, str]
    """The ARN header on arrival, decoded."""
    elapsed_ms: float


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


@dataclass(frozen=True)
class TrafficResult:
    """The request, its reply and the publication."""

    request: Leg
    reply: Leg
    publication: Publication | None

    def lines(self) -> list[str]:
        """One line per fact, for the main job's progress output."""
        lines = []
        for title, leg in (("request", self.request), ("reply", self.reply)):
            entries = ", ".join(f"{name}={arn}" for name, arn in leg.arn_header.items())
            lines.append(
                f"{title} {leg.message_id}: {leg.sent_to} -> {leg.received_on} "
                f"in {leg.elapsed_ms:.0f} ms via {' -> '.join(leg.relayed_by)}; "
                f"ARN header {entries}"
            )
        if self.publication is not None:
            published = self.publication
            lines.append(
                f"published {published.message_id} to {published.topic_arn} "
                f"in {published.elapsed_ms:.0f} ms"
            )
            for outcome in published.subscriptions:
                lines.append(
                    f"  subscription {outcome.name} ({outcome.protocol} {outcome.target}): "
                    f"{outcome.note}"
                )
        return lines


def run_traffic(
    topology: Topology,
    accounts: Mapping[str, AccountCredentials],
    endpoint_url: str,
    *,
    sender: str | None = None,
    receiver: str | None = None,
    topic: str | None = None,
    max_polls: int = DEFAULT_MAX_POLLS,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> TrafficResult:
    """The request and reply across a relay route, then a publish to a topic.

    ``accounts`` holds the credentials per account name (as :func:`deploy_all` returns them).
    ``sender``/``receiver`` default to the first relay route whose way back is relayed too;
    ``topic`` to the topology's first topic (no publish without topics).
    """
    poller = LambdaPoller(list(accounts.values()), endpoint_url)
    request, reply = request_and_reply(
        topology,
        accounts,
        poller,
        sender=sender,
        receiver=receiver,
        max_polls=max_polls,
        max_rounds=max_rounds,
    )
    chosen = _topic(topology, topic)
    publication = None if chosen is None else publish(topology, accounts, poller, chosen, max_polls)
    return TrafficResult(request, reply, publication)


def request_and_reply(
    topology: Topology,
    accounts: Mapping[str, AccountCredentials],
    poller: LambdaPoller,
    *,
    sender: str | None = None,
    receiver: str | None = None,
    max_polls: int = DEFAULT_MAX_POLLS,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> tuple[Leg, Leg]:
    """Send a request from ``sender`` to ``receiver`` through the relays and the reply back."""
    source, target = _relay_pair(topology, sender, receiver)
    bridge = _Bridge(topology, accounts, poller, max_polls, max_rounds)
    request_id = str(uuid.uuid4())
    request_headers = {
        "NServiceBus.MessageId": request_id,
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ReplyToAddress": source.queue_name,
        "NServiceBus.OriginatingEndpoint": source.queue_name,
        "NServiceBus.EnclosedMessageTypes": REQUEST_TYPE,
        "NServiceBus.ContentType": "application/json",
    }
    payload = json.dumps({"conversation": request_id}).encode()
    wrapped = json.dumps(
        {
            "Headers": request_headers,
            "Body": base64.b64encode(payload).decode(),
            "S3BodyKey": None,
        }
    )
    request_leg, arrived = bridge.leg(
        "request",
        source=source,
        target=target,
        via=topology.sqs_arn(source.account, target.queue_name),
        message={"MessageBody": wrapped},
        headers=request_headers,
    )
    reply_to = arrived["NServiceBus.ReplyToAddress"]
    reply_headers = {
        "NServiceBus.MessageId": str(uuid.uuid4()),
        "NServiceBus.MessageIntent": "Reply",
        "NServiceBus.CorrelationId": request_id,
        "NServiceBus.ReplyToAddress": target.queue_name,
        "NServiceBus.OriginatingEndpoint": target.queue_name,
        "NServiceBus.EnclosedMessageTypes": REPLY_TYPE,
        "NServiceBus.ContentType": "application/json",
    }
    reply_leg, _ = bridge.leg(
        "reply",
        source=target,
        target=source,
        # The bridge's way back: the shadow queue named like the reply-to queue, here.
        via=topology.sqs_arn(target.account, parse_queue_arn(reply_to).name),
        message={
            "MessageBody": json.dumps({"conversation": request_id, "answer": "done"}),
            "MessageAttributes": {
                HEADERS_ATTRIBUTE: {"DataType": "String", "StringValue": json.dumps(reply_headers)}
            },
        },
        headers=reply_headers,
    )
    return request_leg, reply_leg


@dataclass(frozen=True)
class _Bridge:
    """What every leg of the conversation needs: the topology, the accounts, the relays."""

    topology: Topology
    accounts: Mapping[str, AccountCredentials]
    poller: LambdaPoller
    max_polls: int
    max_rounds: int

    def leg(
        self,
        part: str,
        *,
        source: Endpoint,
        target: Endpoint,
        via: str,
        message: dict[str, Any],
        headers: Mapping[str, str],
    ) -> tuple[Leg, dict[str, str]]:
        """Send ``message`` as ``source`` to the queue ``via``, pump the relays, receive it on
        ``target``'s queue and check its headers; returns the leg and the headers on arrival."""
        message_id = headers["NServiceBus.MessageId"]
        started = time.perf_counter()
        try:
            self.sqs(source, part).send_message(QueueUrl=self.poller.queue_url(via), **message)
        except Exception as error:
            raise TrafficError(
                f"{part}: sending to {via} as {source.name} failed: {error}"
            ) from error
        try:
            pumped = self.poller.pump(self.max_rounds)
        except PumpLimitError as error:
            raise TrafficError(f"{part}: the relays did not come to rest: {error}") from error
        if pumped.errors or pumped.kept:
            raise TrafficError(
                _with_warnings(
                    f"{part}: the relays did not pass every message on: errors "
                    f"{list(pumped.errors)}, left for redelivery {list(pumped.kept)}",
                    pumped,
                )
            )
        target_arn = self.topology.queue_arn(target)
        received = _receive_where(
            self.sqs(target, part),
            self.poller.queue_url(target_arn),
            lambda m: _message_id(m) == message_id,
            self.max_polls,
        )
        if received is None:
            raise TrafficError(
                _with_warnings(
                    f"{part} {message_id} did not reach queue {target_arn} after "
                    f"{self.max_polls} polls (the relays handled {pumped.received} message(s))",
                    pumped,
                )
            )
        elapsed_ms = (time.perf_counter() - started) * 1000
        arrived = read_headers(received)
        arn_header = _check_headers(part, arrived, headers, source, self.topology.queue_arn(source))
        relayed_by = tuple(i.mapping.function_name for i in pumped.invocations)
        return Leg(message_id, via, target_arn, relayed_by, arn_header, elapsed_ms), arrived

    def sqs(self, endpoint: Endpoint, part: str) -> Any:
        """An SQS client acting as the endpoint's account."""
        return self.poller.client(_credentials(self.accounts, endpoint.account, part), "sqs")


def _with_warnings(text: str, pumped: PumpResult) -> str:
    """``text`` followed by the relays' warnings and errors, which say why a message was
    refused, dead-lettered or kept (a relay reports them only in its log)."""
    lines = pumped.warning_lines()
    if not lines:
        return f"{text}; the functions logged no warnings or errors"
    return f"{text}; the functions logged:\n  " + "\n  ".join(lines)


def _check_headers(
    part: str,
    arrived: Mapping[str, str],
    sent: Mapping[str, str],
    source: Endpoint,
    source_arn: str,
) -> dict[str, str]:
    """The relays' promise (docs/relay.md): every header that carried the sender's address
    now carries its queue ARN, the ARN header lists exactly those, nothing else changed."""
    stamped = {name: source_arn for name, value in sent.items() if value == source.queue_name}
    if ARN_HEADER not in arrived:
        raise TrafficError(
            f"{part}: arrived without the {ARN_HEADER} header; the outbound relay should have "
            f"stamped {sorted(stamped)} with {source_arn}"
        )
    entries = decode(arrived[ARN_HEADER])
    if entries != stamped:
        raise TrafficError(
            f"{part}: {ARN_HEADER} on arrival lists {entries}, expected {stamped} (every "
            f"header carrying {source.queue_name!r}, with its queue ARN)"
        )
    for name, value in sent.items():
        expected = stamped.get(name, value)
        if arrived.get(name) != expected:
            raise TrafficError(
                f"{part}: header {name} is {arrived.get(name)!r} on arrival, expected "
                f"{expected!r} (the inbound relay substitutes only what the ARN header lists)"
            )
    return entries


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
        raise TrafficError(f"publish: publishing to {topic_arn} failed: {error}") from error
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


def _relay_pair(
    topology: Topology, sender: str | None, receiver: str | None
) -> tuple[Endpoint, Endpoint]:
    """The sender and receiver of the first relay route (in the topology's order) whose way
    back is relayed too."""
    relayed = [(r.sender, r.receiver) for r in topology.routes if r.relay and r.sender]
    pairs = [
        (s, r)
        for s, r in relayed
        if (r, s) in relayed
        and (sender is None or s == sender)
        and (receiver is None or r == receiver)
    ]
    if not pairs:
        wanted = f" from {sender or 'any endpoint'} to {receiver or 'any endpoint'}"
        raise TrafficError(
            f"request: the topology has no relay route{wanted} with a relayed route back; add "
            'both to routes[] with "relay": true'
        )
    source, target = pairs[0]
    assert source is not None
    return topology.endpoint(source), topology.endpoint(target)


def _topic(topology: Topology, name: str | None) -> Topic | None:
    if name is None:
        return topology.topics[0] if topology.topics else None
    for topic in topology.topics:
        if topic.name == name:
            return topic
    raise TrafficError(
        f"publish: no topic {name!r} in the topology; use one of {[t.name for t in topology.topics]}"
    )


def _credentials(
    accounts: Mapping[str, AccountCredentials], account: str, part: str
) -> AccountCredentials:
    if account not in accounts:
        raise TrafficError(
            f"{part}: no credentials for account {account}; deploy it first (deploy_all returns "
            f"them), have {sorted(accounts)}"
        )
    return accounts[account]


def _message_id(message: Mapping[str, Any]) -> str | None:
    try:
        return read_headers(message).get("NServiceBus.MessageId")
    except WireFormatError:
        return None


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
