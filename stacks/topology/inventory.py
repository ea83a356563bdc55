"""Every SQS queue the stacks create for a topology, by account, so that no two share a name.

Two queues with one name in one account would be the same queue (an account has one region
here, and account ids are unique, so the account name stands for both). Names come from many
places: endpoints and their dead-letter and delay queues, the platform queues, the bridge's ingress
and shadow queues (and theirs), and each SNS subscription's dead-letter queue. A clash, or a
name SQS would refuse, is reported at the topology field that makes the queue, before any synth.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from constructs_lib.queue_naming import (
    QueueNameError,
    dead_letter_queue_name,
    delay_queue_name,
    ingress_queue_name,
    key_alias_name,
    subscription_dead_letter_queue_name,
)
from stacks.topology.bridge import bridge_shadows
from stacks.topology.model import Topology


@dataclass(frozen=True)
class StackQueue:
    """One queue a stack creates: where, under which name, for what, and which field asks."""

    account: str
    name: str
    role: str
    path: str
    keyed: bool = False
    """The queue gets its own key, aliased ``alias/messaging/<queue>`` (``.`` read as ``-``);
    dead-letter and delay queues share their queue's."""


Problem = tuple[str, str]
"""``(field path, rule)``, as the topology reports problems."""


def stack_queues(topology: Topology) -> tuple[list[StackQueue], list[Problem]]:
    """The queues of every account's stack, and the problems of names that cannot be built."""
    queues: list[StackQueue] = []
    problems: list[Problem] = []

    def add(
        account: str,
        role: str,
        path: str,
        build: Callable[[str], str],
        base: str,
        *,
        keyed: bool = False,
    ) -> str | None:
        """Plan the queue ``build(base)`` names (``str`` for a name given whole)."""
        try:
            name = build(base)
        except QueueNameError as error:
            problems.append((path, f"{role}: {error}"))
            return None
        queues.append(StackQueue(account, name, role, path, keyed))
        return name

    bridge = bridge_shadows(topology)
    for queue in topology.all_queues:
        what = queue.description
        add(queue.account, f"{what}'s queue", queue.path, str, queue.queue_name, keyed=True)
        add(
            queue.account,
            f"{what}'s dead-letter queue",
            queue.path,
            str,
            queue.dead_letter_queue_name,
        )
        if not queue.is_platform_queue:
            add(
                queue.account,
                f"{what}'s delay queue",
                queue.path,
                delay_queue_name,
                queue.queue_name,
            )
        if bridge.leads_to(queue):
            ingress = add(
                queue.account,
                f"{what}'s ingress queue",
                queue.path,
                ingress_queue_name,
                queue.queue_name,
                keyed=True,
            )
            if ingress is not None:
                add(
                    queue.account,
                    f"{what}'s ingress dead-letter queue",
                    queue.path,
                    dead_letter_queue_name,
                    ingress,
                )
    for shadow in bridge.shadows:
        role = f"the bridge's shadow queue for {shadow.reason}"
        add(shadow.account, role, shadow.path, str, shadow.queue_name, keyed=True)
        add(
            shadow.account,
            f"{role}'s dead-letter queue",
            shadow.path,
            dead_letter_queue_name,
            shadow.queue_name,
        )
        if shadow.delay_queue_name is not None:
            add(shadow.account, f"{role}'s delay queue", shadow.path, str, shadow.delay_queue_name)
            add(
                shadow.account,
                f"{role}'s delay dead-letter queue",
                shadow.path,
                dead_letter_queue_name,
                shadow.delay_queue_name,
            )
    for topic in topology.topics:
        for subscription in topic.subscriptions:
            owner = (
                topology.endpoint(subscription.endpoint).account
                if subscription.endpoint is not None
                else topic.account
            )
            add(
                owner,
                f"the dead-letter queue of subscription {subscription.name!r} of topic {topic.name!r}",
                topic.path,
                functools.partial(subscription_dead_letter_queue_name, topic.topic_name),
                subscription.name,
            )
    return queues, problems


def name_clashes(queues: list[StackQueue]) -> Iterator[Problem]:
    """A problem for every queue whose name an earlier queue of its account already has."""
    first: dict[tuple[str, str], StackQueue] = {}
    aliases: dict[tuple[str, str], StackQueue] = {}
    for queue in queues:
        known = first.setdefault((queue.account, queue.name), queue)
        if known is not queue:
            yield (
                queue.path,
                f"{queue.role} would be named {queue.name!r} in account {queue.account!r}, but "
                f"that name is also used by {known.role} ({known.path}); rename an endpoint or "
                "give one a queueNamePrefix",
            )
            continue
        if not queue.keyed:
            continue
        alias = key_alias_name(queue.name)
        owner = aliases.setdefault((queue.account, alias), queue)
        if owner is not queue:
            yield (
                queue.path,
                f"{queue.role} ({queue.name!r}) and {owner.role} ({owner.name!r}, {owner.path}) "
                f"would both need the key alias {alias!r} in account {queue.account!r} (a "
                "queue's '.' reads as '-' there); rename one",
            )
