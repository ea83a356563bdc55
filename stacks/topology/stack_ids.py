"""The ids an account's stack gives its top-level constructs and outputs, and their clashes.

The stack builds ids by joining names (``Topic`` + topic, topic + subscription, endpoint +
``TransportAddress``), so two different declarations can make one id: ``Order`` +
``BilledSales`` and ``OrderBilled`` + ``Sales``, or an endpoint named ``Alarms`` beside the
stack's own alarms. Output ids lose every character but letters and digits in the template,
so ``Sales.Orders`` and ``SalesOrders`` clash there. Either ends synth in a jsii traceback;
the topology refuses it first, naming both declarations. The stack takes its ids from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from stacks.topology.model import Endpoint, Topology
from stacks.topology.topics import Topic, TopicSubscription

ALARMS_ID = "Alarms"
BODY_BUCKET_ID = "MessageBodies"
BODY_BUCKET_OUTPUT_ID = "MessageBodyBucketName"
OUTBOUND_RELAY_ID = "OutboundRelay"
INBOUND_RELAY_ID = "InboundRelay"
_NOT_IN_LOGICAL_IDS = re.compile(r"[^A-Za-z0-9]")


def endpoint_id(endpoint: Endpoint) -> str:
    return endpoint.name


def endpoint_output_ids(endpoint: Endpoint) -> tuple[str, str, str]:
    """The transport address (queue ARN), queue URL and DLQ ARN outputs."""
    return (
        f"{endpoint.name}TransportAddress",
        f"{endpoint.name}QueueUrl",
        f"{endpoint.name}DeadLetterQueueArn",
    )


def topic_id(topic: Topic) -> str:
    return f"Topic{topic.name}"


def topic_output_id(topic: Topic) -> str:
    return f"Topic{topic.name}Arn"


def subscription_id(topic: Topic, subscription: TopicSubscription) -> str:
    """A subscription made in the queue's account, and its DLQ's alarm."""
    return f"{topic.name}{subscription.name}"


def function_id(topic: Topic, subscription: TopicSubscription) -> str:
    """A Lambda subscription's function, imported by ARN."""
    return f"{subscription_id(topic, subscription)}Function"


def shadow_id(queue_name: str) -> str:
    return f"Shadow{queue_name}"


def ingress_id(endpoint: Endpoint) -> str:
    return f"Ingress{endpoint.name}"


def _declared(topology: Topology, account: str) -> Iterator[tuple[str, str, str]]:
    """(kind, id, what declares it) for the ids of ``account``'s stack that come from names."""
    for name in (ALARMS_ID, BODY_BUCKET_ID, OUTBOUND_RELAY_ID, INBOUND_RELAY_ID):
        yield "construct", name, "the stack itself"
    yield "output", BODY_BUCKET_OUTPUT_ID, "the stack itself"
    declared = [(f"topology.endpoints[{i}]", e) for i, e in enumerate(topology.endpoints)]
    for path, endpoint in [*declared, ("topology.errorQueue", topology.error_queue)]:
        if endpoint.account != account:
            continue
        what = f"endpoint {endpoint.name!r} ({path})"
        yield "construct", endpoint_id(endpoint), what
        yield "construct", ingress_id(endpoint), what
        yield "dead-letter alarm", endpoint.name, what
        for output in endpoint_output_ids(endpoint):
            yield "output", output, what
    for topic in topology.topics:
        if topic.account == account:
            what = f"topic {topic.name!r} ({topic.path})"
            yield "construct", topic_id(topic), what
            yield "output", topic_output_id(topic), what
        for subscription in topic.subscriptions:
            what = f"subscription {subscription.name!r} of topic {topic.name!r} ({topic.path})"
            queue_account = (
                topology.endpoint(subscription.endpoint).account
                if subscription.endpoint is not None
                else topic.account
            )
            if queue_account != account:
                continue
            yield "dead-letter alarm", subscription_id(topic, subscription), what
            if topic.account != account:
                yield "construct", subscription_id(topic, subscription), what
            if subscription.function_arn is not None:
                yield "construct", function_id(topic, subscription), what


def stack_id_clashes(topology: Topology) -> Iterator[tuple[str, str]]:
    """A problem for every id of an account's stack that two declarations would share."""
    for account in topology.accounts:
        seen: dict[tuple[str, str], str] = {}
        reported: set[tuple[str, str]] = set()
        for kind, name, what in _declared(topology, account.name):
            key = (kind, _NOT_IN_LOGICAL_IDS.sub("", name) if kind == "output" else name)
            first = seen.setdefault(key, what)
            if first != what and (what, first) not in reported:
                reported.add((what, first))
                yield (
                    what.rsplit("(", 1)[-1].rstrip(")") if "(" in what else "topology",
                    f"{what} and {first} would both make the {kind} id {key[1]!r} in the "
                    f"stack of account {account.name!r}; rename one",
                )
