"""The account bridge a topology needs: which shadow queues each account gets, where its relays
carry messages, and what a released endpoint must be told so that its answers find their way.

A released NServiceBus endpoint resolves every address by name in its own account
(``GetQueueUrl`` after its queue-name generator). So wherever an endpoint must reach one of
another account by name, its account gets a *shadow queue* with exactly the name the endpoint
resolves (and, where what goes there may be delayed, a shadow of that queue's delay queue, for
delays over 15 minutes: not for failed messages or ServiceControl's retries); the account's
outbound relay forwards what arrives to the remote endpoint's ingress queue, and the remote
account's inbound relay delivers it: unchanged to an ARN-aware endpoint, which substitutes the
ARN header itself, and with every address header translated to a name that leads back for a
released one.

An endpoint reaches a remote one by name for four reasons, each provisioned here:

* a relay route: the sender routes to the receiver's endpoint name;
* the answers of a route's receiver that resolves names: it replies to the sender's address
  (``NServiceBus.ReplyToAddress``), and saga ``ReplyToOriginator`` uses the same address;
* the platform queues (:class:`~stacks.topology.model.PlatformQueueKind`): an endpoint sends
  failed messages to the error queue, audit copies to the audit queue, heartbeats, custom
  checks and saga audit to ServiceControl's queue and metric reports to the monitoring queue,
  each by its configured name (after a retry it also acknowledges to the error queue's
  address); the endpoints of the platform queue's own account reach it directly;
* ServiceControl's retries: it sends each failed message back to its ``NServiceBus.FailedQ``
  address, by name in its own account. Only the error queue answers: the audit, heartbeat,
  custom-check and metric ingestion sends nothing back.

What goes to a platform queue is never delayed (ServiceControl runs without delayed delivery
and endpoints delay no failed message, audit copy or report), so their shadows have no delay
queue's shadow.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from constructs_lib import account_bridge
from constructs_lib.queue_naming import delay_queue_name, resolved_queue_name
from stacks.topology.model import Endpoint, PlatformQueueKind, Topology


@dataclass(frozen=True)
class ShadowQueue:
    """A queue named like a remote endpoint's address, in an account whose endpoints send to
    it by that name; its account's outbound relay forwards to the remote endpoint."""

    account: str
    queue_name: str
    remote: Endpoint
    delay_queue_name: str | None
    """The shadow of the remote endpoint's delay queue (``None`` for a FIFO remote, which
    takes no delays)."""
    path: str
    """The topology field that needs the shadow, for error messages."""
    reason: str


@dataclass(frozen=True)
class BridgeShadows:
    """Every shadow queue of the topology, at most one per name and account."""

    shadows: tuple[ShadowQueue, ...]
    conflicts: tuple[tuple[ShadowQueue, ShadowQueue], ...]
    """Pairs of shadows that would share a name in one account but lead to different
    endpoints (the topology refuses them)."""

    def shadows_in(self, account: str) -> tuple[ShadowQueue, ...]:
        """The shadow queues of one account, read by its outbound relay."""
        return tuple(s for s in self.shadows if s.account == account)

    def leads_to(self, endpoint: Endpoint) -> tuple[ShadowQueue, ...]:
        """The shadows whose messages go to ``endpoint``."""
        return tuple(s for s in self.shadows if s.remote == endpoint)

    def relay_sender_accounts(self, endpoint: Endpoint) -> tuple[str, ...]:
        """The accounts whose outbound relay forwards to ``endpoint``'s ingress queue."""
        return tuple(dict.fromkeys(s.account for s in self.leads_to(endpoint)))


@functools.lru_cache(maxsize=32)
def bridge_shadows(topology: Topology) -> BridgeShadows:
    """The shadow queues ``topology`` needs (see the module's docstring for why each one).

    Cached: every account's stack, the access report and the checks ask for the same shadows.
    """
    shadows: dict[tuple[str, str], ShadowQueue] = {}
    conflicts: list[tuple[ShadowQueue, ShadowQueue]] = []

    def reach(
        resolver: Endpoint,
        remote: Endpoint,
        names: list[str],
        path: str,
        reason: str,
        *,
        delays: bool,
    ) -> None:
        """``resolver``'s account needs a shadow of ``remote`` under each name ``resolver``
        resolves one of ``names`` to, and of its delay queue if what goes there may be delayed
        (and ``remote`` takes delays: a FIFO queue does not)."""
        for name in dict.fromkeys(names):
            shadow = ShadowQueue(
                account=resolver.account,
                queue_name=resolved_queue_name(name, resolver.queue_name_prefix),
                remote=remote,
                delay_queue_name=delay_queue_name(name, resolver.queue_name_prefix)
                if delays and not remote.fifo
                else None,
                path=path,
                reason=reason,
            )
            key = (shadow.account, shadow.queue_name)
            known = shadows.setdefault(key, shadow)
            if known.remote != remote:
                conflicts.append((known, shadow))
            elif known.delay_queue_name is None and shadow.delay_queue_name is not None:
                shadows[key] = dataclasses.replace(known, delay_queue_name=shadow.delay_queue_name)

    for route in topology.routes:
        if route.sender is None:
            continue
        sender, receiver = topology.endpoint(route.sender), topology.endpoint(route.receiver)
        if sender.account == receiver.account:
            continue
        if route.relay:
            reach(
                sender,
                receiver,
                [receiver.name],
                route.path,
                f"the route from {sender.name}",
                delays=True,
            )
        if route.replies and not receiver.arn_aware:
            # A reply may be delayed too (DelayDeliveryWith on its options).
            reach(
                receiver,
                sender,
                [sender.queue_name],
                route.path,
                f"{receiver.name}'s replies",
                delays=True,
            )
    for kind in PlatformQueueKind:
        platform = topology.platform_queue(kind)
        if platform is None:
            continue
        for endpoint in topology.endpoints:
            if endpoint.account == platform.account:
                continue
            reach(
                endpoint,
                platform,
                [platform.name, platform.queue_name],
                platform.path,
                f"{kind.traffic} of {endpoint.name}",
                delays=False,
            )
            if platform.is_error_queue:
                reach(
                    platform,
                    endpoint,
                    [endpoint.queue_name],
                    platform.path,
                    f"ServiceControl's retries to {endpoint.name}",
                    delays=False,  # ServiceControl runs without delayed delivery
                )
    return BridgeShadows(tuple(shadows.values()), tuple(conflicts))


def ingress_endpoints(topology: Topology, account: str) -> tuple[Endpoint, ...]:
    """The queues of ``account`` (endpoints and platform queues) that shadows lead to: each
    gets an ingress queue, read by the account's inbound relay."""
    bridge = bridge_shadows(topology)
    return tuple(q for q in topology.queues_in(account) if bridge.leads_to(q))


def reachable_queues(topology: Topology, receiver: Endpoint) -> tuple[str, ...]:
    """For a released receiver: the ARNs of the queues it reaches by name in its own account
    (:func:`constructs_lib.account_bridge.reachable_queues`: the local queues its queue-name
    generator leaves as they are, and the remote ones a shadow there leads to), in the
    topology's order."""
    shadows = bridge_shadows(topology).shadows_in(receiver.account)
    reachable = set(
        account_bridge.reachable_queues(
            receiver.queue_name_prefix,
            [topology.queue_arn(queue) for queue in topology.queues_in(receiver.account)],
            {shadow.queue_name: topology.queue_arn(shadow.remote) for shadow in shadows},
        )
    )
    return tuple(arn for arn in map(topology.queue_arn, topology.all_queues) if arn in reachable)
