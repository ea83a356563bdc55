"""The main job's traffic on the deployed local AWS: conversations between the topology's
NServiceBus peers through the account bridge, a large body through S3, then a publish to a
topic.

Every cross-account route of the topology carries a request and its reply
(:func:`local_aws.scenarios.conversation.exchange`); one receiver's handler fails until
ServiceControl retries the message (:func:`~local_aws.scenarios.conversation.recover`); one send is
delayed by 20 minutes (:func:`~local_aws.scenarios.conversation.deliver_later`), and a saga answers
its originator after a 20-minute timeout
(:func:`~local_aws.scenarios.conversation.reply_to_originator`); the local AWS's time travel lets
the minutes pass in a second. With ServiceControl's other queues declared, every endpoint audits,
sends heartbeats, custom check results and metrics, and the traffic ends with what ServiceControl
saw (:mod:`local_aws.scenarios.platform_traffic`). The peers are the model of the released transport
(:mod:`local_aws.scenarios.peers`), the relays run through
:class:`local_aws.lambda_poller.LambdaPoller`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import LambdaPoller, MetricSource
from local_aws.scenarios.conversation import (
    SAGA_TYPE,
    Exchange,
    Handlers,
    LargeBody,
    LaterDelivery,
    Recovery,
    SagaReply,
    carry_large_body,
    deliver_later,
    exchange,
    recover,
    reply_to_originator,
)
from local_aws.scenarios.peers import Peers, Subscription
from local_aws.scenarios.platform_traffic import PlatformTraffic, run_platform
from local_aws.scenarios.publication import Publication, publish, topic_named
from local_aws.scenarios.relay_alarms import AlarmReading, read_relay_alarms
from stacks.topology import Topology

LATER_DELAY: Final = timedelta(minutes=20)
"""Beyond SQS's 15 minutes, so the delay queues (and their shadows) carry it."""
LARGE_BODY_BYTES: Final = 3 * 512 * 1024
"""1.5 MiB: over SQS's 1 MiB, so the sender's transport puts the body in S3."""


@dataclass(frozen=True)
class TrafficResult:
    """What the traffic did: the exchanges, the recovery, the late delivery, the publication."""

    topology: Topology
    subscriptions: tuple[Subscription, ...]
    exchanges: tuple[Exchange, ...]
    recovery: Recovery | None
    later: LaterDelivery | None
    saga: SagaReply | None
    large: LargeBody | None
    publication: Publication | None
    platform: PlatformTraffic | None = None
    """Audit, heartbeats, custom checks, metrics and what ServiceControl saw (with any of
    ServiceControl's queues beyond the error queue declared)."""
    relay_metrics: Mapping[MetricSource, Mapping[str, int]] = field(default_factory=dict)
    """Per relay function and dimensions, the metrics its embedded-metric-format lines
    carried, summed as CloudWatch would."""
    relay_alarms: tuple[AlarmReading, ...] = ()
    """The deployed alarms on the relays' counts, against those metrics."""

    def lines(self) -> list[str]:
        """One line per fact, for the main job's progress output."""
        lines = [
            f"subscribed {s.subscriber} to {s.event_type.split(',')[0]} with a subscribe "
            f"message ({s.request_id}) to {s.publisher}"
            for s in self.subscriptions
        ]
        lines += [self._exchange_line(e) for e in self.exchanges]
        if self.recovery is not None:
            r = self.recovery
            lines.append(
                f"recovery {r.sender} -> {r.receiver}: {r.attempts} failed attempts, in the "
                f"error queue after {r.waited_seconds} s of local time; ServiceControl retried "
                f"to {r.failed_queue!r}, {r.receiver} handled it, acknowledged: "
                f"{'yes' if r.resolved else 'no'}"
            )
        if self.later is not None:
            later = self.later
            lines.append(
                f"delayed {later.delay_seconds} s {later.sender} -> {later.receiver}: "
                f"{later.arrived.message_id} handled after {later.arrived_after_seconds} s of "
                "local time"
            )
        if self.saga is not None:
            saga = self.saga
            lines.append(
                f"saga on {saga.receiver} for {saga.sender}: stored originator "
                f"{saga.originator!r}, answered it ({saga.reply.message_id}) after its timeout, "
                f"{saga.answered_after_seconds} s of local time later"
            )
        if self.large is not None:
            large = self.large
            lines.append(
                f"large body {large.body_bytes:,} bytes {large.sender} -> {large.receiver}: "
                f"uploaded to s3://{large.sender_bucket}/{large.key}, copied by the relay to "
                f"s3://{large.receiver_bucket}/{large.receiver_key}, {large.receiver} read the same "
                f"{len(large.delivery.body):,} bytes, in {large.elapsed_ms:.0f} ms"
            )
        if self.publication is not None:
            published = self.publication
            by = f"by {published.publisher} " if published.publisher else ""
            lines.append(
                f"published {published.message_id} {by}to {published.topic_arn} "
                f"in {published.elapsed_ms:.0f} ms"
            )
            for outcome in published.subscriptions:
                account = f" in account {outcome.account}" if outcome.account else ""
                lines.append(
                    f"  {outcome.protocol} subscriber {outcome.name} ({outcome.target}"
                    f"{account}): {outcome.note}"
                )
        if self.platform is not None:
            lines += self.platform.lines()
        if self.relay_metrics:
            lines.append("the relays' metrics (their embedded-metric-format lines, summed):")
            lines += [
                f"  {key}: "
                + ", ".join(f"{name} {value}" for name, value in values.items() if value)
                for key, values in sorted(self.relay_metrics.items())
            ]
        if self.relay_alarms:
            set_off = [r for r in self.relay_alarms if r.sets_off]
            lines.append(
                f"the relays' deployed alarms, read back, against those metrics: "
                f"{len(self.relay_alarms)} alarms, {len(set_off)} set off"
            )
            lines += [f"  {r.line()}" for r in set_off]
        return lines

    def _kind(self, name: str) -> str:
        return "ARN-aware" if self.topology.endpoint(name).arn_aware else "released"

    def _exchange_line(self, done: Exchange) -> str:
        via = f" via {done.forwarder}" if done.forwarder else ""
        return (
            f"{done.sender} ({self._kind(done.sender)}) -> {done.receiver} "
            f"({self._kind(done.receiver)}){via}: request {done.request.message_id} handled "
            f"with ReplyToAddress {done.request.headers.get('NServiceBus.ReplyToAddress')!r}, "
            f"reply {done.reply.message_id} handled with ReplyToAddress "
            f"{done.reply.headers.get('NServiceBus.ReplyToAddress')!r}, in "
            f"{done.elapsed_ms:.0f} ms through {len(done.relays)} relay invocation(s)"
        )


def conversation_pairs(topology: Topology) -> tuple[tuple[str, str], ...]:
    """(sender, receiver) of each route across accounts that expects replies, once, in the
    topology's order; FIFO endpoints take no part (the released transport sends them no
    message group)."""
    pairs: dict[tuple[str, str], None] = {}
    for route in topology.routes:
        if route.sender is None or not route.replies:
            continue
        sender, receiver = topology.endpoint(route.sender), topology.endpoint(route.receiver)
        if sender.account != receiver.account and not (sender.fifo or receiver.fifo):
            pairs[(sender.name, receiver.name)] = None
    return tuple(pairs)


def run_traffic(
    topology: Topology,
    accounts: Mapping[str, AccountCredentials],
    endpoint_url: str,
    *,
    topic: str | None = None,
) -> TrafficResult:
    """The message-driven subscribers' subscribe messages; every conversation pair's
    exchange; the recovery, the late delivery, a saga's reply to its originator and (with
    ``largeMessages``) a body through S3 on the first pair whose sender is released (the
    bridge carries it both ways), else the first pair, whose receiver alone hosts the saga;
    then a publish to ``topic`` (default: the topology's first) by its publisher; then the
    platform steps (:func:`~local_aws.scenarios.platform_traffic.run_platform`) on the same
    pair; last, the relays' deployed alarms held against the metrics they wrote
    (:func:`~local_aws.scenarios.relay_alarms.read_relay_alarms`, which refuses a relay no
    alarm watches)."""
    pairs = conversation_pairs(topology)
    released = [p for p in pairs if not topology.endpoint(p[0]).arn_aware]
    chosen = next(iter(released or pairs), None)
    poller = LambdaPoller(list(accounts.values()), endpoint_url)
    handlers = Handlers()
    # The chosen receiver hosts the saga; no other endpoint has one.
    sagas = {} if chosen is None else {chosen[1]: (SAGA_TYPE,)}
    peers = Peers(topology, accounts, poller, handlers, sagas)
    subscriptions = peers.auto_subscribe()
    peers.settle()
    exchanges = tuple(exchange(peers, handlers, s, r) for s, r in pairs)
    recovery = later = saga = large = None
    if chosen is not None:
        recovery = recover(peers, handlers, *chosen)
        later = deliver_later(peers, handlers, *chosen, LATER_DELAY)
        saga = reply_to_originator(peers, handlers, *chosen)
        if topology.large_messages is not None:
            large = carry_large_body(peers, handlers, *chosen, LARGE_BODY_BYTES)
    selected = topic_named(topology, topic)
    publication = None if selected is None else publish(peers, handlers, selected)
    platform = run_platform(peers, handlers, chosen)
    metrics = poller.metrics()
    return TrafficResult(
        topology,
        subscriptions,
        exchanges,
        recovery,
        later,
        saga,
        large,
        publication,
        platform,
        metrics,
        read_relay_alarms(accounts, endpoint_url, metrics),
    )
