"""The names of an account's stacks, the ids they give their top-level constructs and outputs,
and their clashes.

The stack builds ids by joining names (``Topic`` + topic, topic + subscription, endpoint +
``TransportAddress``), so two different declarations can make one id: ``Order`` +
``BilledSales`` and ``OrderBilled`` + ``Sales``, or an endpoint named ``Alarms`` beside the
stack's own alarms. Output ids lose every character but letters and digits in the template,
so ``Sales.Orders`` and ``SalesOrders`` clash there. Either ends synth in a jsii traceback;
the topology refuses it first, naming both declarations. The stack takes its ids from here.

An account's resources may need several stacks (:mod:`stacks.placement.plan`), named
``Messaging-<account>`` and then ``Messaging-<account>-<n>``; an account named like another's
numbered stacks would clash with them, and the pattern that deploys one account would deploy
both, so the topology refuses it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from constructs_lib.account_bridge import INBOUND_RELAY_ID, OUTBOUND_RELAY_ID, ingress_id
from constructs_lib.defaults import QUEUE_KEY_ALIAS
from stacks.topology.model import Account, Endpoint, KeyGranularity, Topology
from stacks.topology.topics import Topic, TopicSubscription

STACK_NAME_PREFIX = "Messaging-"
ALARMS_ID = "Alarms"
DASHBOARD_ID = "Dashboard"
BODY_BUCKET_ID = "MessageBodies"
BODY_BUCKET_OUTPUT_ID = "MessageBodyBucketName"
QUEUE_KEY_ID = "QueueKey"
_NOT_IN_LOGICAL_IDS = re.compile(r"[^A-Za-z0-9]")


def queue_key_alias(n: int) -> str:
    """The alias of the key an account's stack ``n`` shares among its queues under
    ``"keys": "perAccount"``: the package's one name for its first stack (as an account with one
    stack always has), numbered after, since an alias names one key in an account and region."""
    return QUEUE_KEY_ALIAS + (f"-{n}" if n > 1 else "")


def stack_name(account: str, n: int = 1) -> str:
    """``Messaging-<account name>`` for an account's first stack (the name its one stack always
    had, so that a deployed account keeps it), ``Messaging-<account name>-<n>`` for its n-th:
    the CloudFormation stack name and the id ``cdk deploy`` selects it by."""
    return f"{STACK_NAME_PREFIX}{account}" + (f"-{n}" if n > 1 else "")


def stack_number(account: str, name: str) -> int | None:
    """The number of the account's stack called ``name`` (the inverse of :func:`stack_name`),
    or ``None`` when it is not one of the account's messaging stacks."""
    first = stack_name(account)
    if name == first:
        return 1
    number = name.removeprefix(first + "-")
    if number != name and number.isdigit() and not number.startswith("0") and int(number) > 1:
        return int(number)
    return None


def account_stacks_pattern(account: Account) -> str:
    """The ``cdk deploy`` pattern that selects every stack of the account and no other:
    ``Messaging-Sales{,-[0-9]*}`` matches ``Messaging-Sales`` and ``Messaging-Sales-<n>``, not
    ``Messaging-SalesEU`` (the topology refuses an account named ``Sales-2...`` beside ``Sales``)."""
    return f"{stack_name(account.name)}{{,-[0-9]*}}"


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


_STACK_ITSELF = ("the stack itself", "topology")


def _declared(topology: Topology, account: str) -> Iterator[tuple[str, str, tuple[str, str]]]:
    """(kind, id, (what declares it, its field path)) for the ids of ``account``'s stack that
    come from names."""
    for name in (ALARMS_ID, DASHBOARD_ID, BODY_BUCKET_ID, OUTBOUND_RELAY_ID, INBOUND_RELAY_ID):
        yield "construct", name, _STACK_ITSELF
    if topology.keys is KeyGranularity.PER_ACCOUNT:
        yield "construct", QUEUE_KEY_ID, _STACK_ITSELF
    yield "output", BODY_BUCKET_OUTPUT_ID, _STACK_ITSELF
    for endpoint in topology.all_queues:
        if endpoint.account != account:
            continue
        by = (endpoint.description, endpoint.path)
        yield "construct", endpoint_id(endpoint), by
        # The account bridge's ids, which its id Default leaves among the stack's own in
        # logical ids (an ingress queue's resources and an endpoint's could share one).
        yield "construct", ingress_id(endpoint.name), by
        yield "dead-letter alarm", endpoint.name, by
        for output in endpoint_output_ids(endpoint):
            yield "output", output, by
    for topic in topology.topics:
        if topic.account == account:
            by = (f"topic {topic.name!r}", topic.path)
            yield "construct", topic_id(topic), by
            yield "output", topic_output_id(topic), by
        for subscription in topic.subscriptions:
            by = (f"subscription {subscription.name!r} of topic {topic.name!r}", topic.path)
            queue_account = (
                topology.endpoint(subscription.endpoint).account
                if subscription.endpoint is not None
                else topic.account
            )
            if queue_account != account:
                continue
            yield "dead-letter alarm", subscription_id(topic, subscription), by
            if subscription.endpoint is not None:
                # Made in the queue's stack when the topic is in another account, or in another
                # stack of this one.
                yield "construct", subscription_id(topic, subscription), by
            if subscription.function_arn is not None:
                yield "construct", function_id(topic, subscription), by


def stack_id_clashes(topology: Topology) -> Iterator[tuple[str, str]]:
    """A problem for every id of an account's stack that two declarations would share, and for
    every account named like another account's numbered stacks."""
    yield from _stack_name_clashes(topology)
    for account in topology.accounts:
        seen: dict[tuple[str, str], tuple[str, str]] = {}
        reported: set[tuple[tuple[str, str], tuple[str, str]]] = set()
        for kind, name, by in _declared(topology, account.name):
            key = (kind, _NOT_IN_LOGICAL_IDS.sub("", name) if kind == "output" else name)
            first = seen.setdefault(key, by)
            if first != by and (by, first) not in reported:
                reported.add((by, first))
                yield (
                    by[1],
                    f"{_said(by)} and {_said(first)} would both make the {kind} id {key[1]!r} "
                    f"in the stack of account {account.name!r}; rename one",
                )


def _said(by: tuple[str, str]) -> str:
    what, path = by
    return what if by == _STACK_ITSELF else f"{what} ({path})"


_NUMBERED_STACK = re.compile(r"-[0-9]")


def _stack_name_clashes(topology: Topology) -> Iterator[tuple[str, str]]:
    """An account called ``<other account>-<digit>...`` would share the name of one of the other
    account's stacks (``Messaging-Sales-2``), and its stacks would match the pattern that
    deploys the other account's."""
    names = {account.name for account in topology.accounts}
    for index, account in enumerate(topology.accounts):
        for other in sorted(names):
            rest = account.name.removeprefix(other)
            if rest != account.name and _NUMBERED_STACK.match(rest):
                yield (
                    f"topology.accounts[{index}].name",
                    f"account {account.name!r} begins with the name of account {other!r}, '-' "
                    f"and a digit, as {other}'s stacks after its first do ({STACK_NAME_PREFIX}"
                    f"{other}-2, ...): its stack {stack_name(account.name)} could be one of them, and "
                    f"`cdk deploy '{account_stacks_pattern(topology.account(other))}'` would "
                    "deploy both accounts; rename it",
                )
