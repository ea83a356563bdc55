"""The Particular platform across accounts: what ServiceControl's instances in their account see
of endpoints in every other, through the account bridge.

The peers (:mod:`local_aws.scenarios.peers`) run the plugins an organization with ServiceControl
configures on every endpoint (audit, heartbeats, custom checks, metrics, saga audit), each
sending by name in its own account, as the released transport does:

* :func:`audit_trail`: every message a handler processed has its audit copy in the audit
  instance, with the headers ServiceControl reads to place it;
* :func:`report_to_service_control`: one tick of every plugin's timer on every endpoint, and
  each endpoint's heartbeat, custom check result and metrics in ServiceControl's instances;
* :func:`expire_heartbeat`: a heartbeat that waits in its account's shadow queue past its time
  to live is not delivered (the relay counts it expired, as the receiving transport would);
* :func:`carry_inline_megabyte`: a message the sender's transport keeps inline at the most it
  allows, which the bridge's ARN header would push past SQS's limit, reaches the receiver;
* :func:`poison_to_error`: a message an endpoint cannot read reaches the central error queue
  unchanged, and ServiceControl treats it as it would in one account.

Each returns what happened, for tests and the main job, or raises
:class:`~local_aws.scenarios.conversation.ConversationError` naming the step that did not happen.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from local_aws.released_transport.core.outgoing import TransportOperation
from local_aws.released_transport.headers import (
    HEADERS_ATTRIBUTE,
    PROCESSING_ENDED,
    PROCESSING_ENDPOINT,
    PROCESSING_STARTED,
    SQS_MAXIMUM_MESSAGE_SIZE,
)
from local_aws.released_transport.service_control.view import (
    UNKNOWN_ENDPOINT,
    EndpointView,
    describe,
    system_messages,
)
from local_aws.released_transport.transport.sending.dispatcher import (
    LargeMessageError,
    MessageDispatcher,
)
from local_aws.scenarios.conversation import (
    LARGE_TYPE,
    ConversationError,
    Delivery,
    Handlers,
    large_body,
)
from local_aws.scenarios.peers import Activity, Peers
from stacks.topology import PlatformQueueKind
from stacks.topology.bridge import bridge_shadows

AUDIT_HEADERS: Final = (PROCESSING_ENDPOINT, PROCESSING_STARTED, PROCESSING_ENDED)
"""What ServiceControl's audit instance reads to place a processed message: who processed it
and when (``ProcessingStatisticsEnricher``, ``TransportMessageExtensions``)."""
POISON_BODY: Final = "an order from a producer that writes its own headers"
POISON_HEADERS: Final = "{not json"
"""A headers attribute the transport cannot parse: the message is poison to every endpoint."""
EXPIRED_OUTCOME: Final = "expired"
"""The relay's log ``outcome`` of a message whose time to be received ran out."""


@dataclass(frozen=True)
class AuditTrail:
    """The handled messages and their audit copies in the audit instance."""

    handled: int
    audited: int
    """Every message the audit instance stored, system messages included."""
    system: int
    """Of those, the system messages ServicePulse's message list hides: subscribe messages,
    saga audit's start-up checks
    (:func:`~local_aws.released_transport.service_control.view.system_messages`)."""
    by_endpoint: dict[str, int]
    """The messages ServicePulse lists, per processing endpoint: system messages left out, as
    its list leaves them out."""

    @property
    def listed(self) -> int:
        """How many audited messages ServicePulse's message list shows."""
        return self.audited - self.system


def audit_trail(peers: Peers, handlers: Handlers) -> AuditTrail:
    """Every message a handler processed so far must be in the audit instance, under the
    endpoint that processed it, with the headers ServiceControl reads."""
    audit = peers.audit
    if audit is None:
        raise ConversationError("the topology declares no auditQueue: nothing is audited")
    audited = {
        (m.headers.get(PROCESSING_ENDPOINT), m.message_id): m for m in audit.processed_messages
    }
    missing = [d for d in handlers.deliveries if (d.endpoint, d.message_id) not in audited]
    if missing:
        raise ConversationError(
            f"{len(missing)} of {len(handlers.deliveries)} handled messages have no audit copy "
            "in the audit instance: "
            + ", ".join(f"{d.message_type} {d.message_id} at {d.endpoint}" for d in missing[:5])
        )
    for delivery in handlers.deliveries:
        copy = audited[(delivery.endpoint, delivery.message_id)]
        absent = [h for h in AUDIT_HEADERS if not copy.headers.get(h)]
        if absent:
            raise ConversationError(
                f"the audit copy of {delivery.message_id} at {delivery.endpoint} lacks {absent}"
            )
    counts: dict[str, int] = {}
    for (endpoint, _), message in audited.items():
        if not message.is_system_message:
            key = endpoint or UNKNOWN_ENDPOINT
            counts[key] = counts.get(key, 0) + 1
    return AuditTrail(
        len(handlers.deliveries),
        len(audit.processed_messages),
        len(system_messages(audit)),
        counts,
    )


@dataclass(frozen=True)
class PlatformReport:
    """One tick of every plugin's timer, as ServiceControl's instances then show it."""

    sent: int
    """Messages the plugins handed to their transports."""
    views: dict[str, EndpointView]


def report_to_service_control(peers: Peers) -> PlatformReport:
    """Every endpoint sends a heartbeat, runs its custom checks and reports its metrics; after
    the bridge carried them, each endpoint must show in ServiceControl with each of them."""
    attempts = peers.tick_platform()
    failed = [a for a in attempts if a.failure is not None]
    if failed:
        raise ConversationError(
            "plugins could not send: "
            + "; ".join(f"{a.destination}: {a.failure}" for a in failed[:5])
        )
    activity = peers.settle()
    views = peers.service_control_view()
    topology = peers.topology
    expected: list[tuple[str, str]] = []
    if topology.platform_queue(PlatformQueueKind.SERVICE_CONTROL) is not None:
        expected += [("heartbeats", "a heartbeat"), ("custom_checks", "a custom check result")]
    if topology.platform_queue(PlatformQueueKind.MONITORING) is not None:
        expected.append(("metrics", "metrics"))
    gaps = [
        f"{endpoint.name}: no {what}"
        for endpoint in topology.endpoints
        for attribute, what in expected
        if not getattr(views.get(endpoint.name), attribute, None)
    ]
    if gaps:
        raise ConversationError(_with_relays("ServiceControl misses " + "; ".join(gaps), activity))
    return PlatformReport(len(attempts), views)


@dataclass(frozen=True)
class ExpiredHeartbeat:
    """A heartbeat held in its account's shadow queue past its time to live."""

    endpoint: str
    message_id: str
    time_to_live_seconds: float
    held_seconds: int
    last_heartbeat: datetime | None
    """The endpoint's last heartbeat in ServiceControl, before and after."""


def expire_heartbeat(peers: Peers, endpoint: str) -> ExpiredHeartbeat:
    """``endpoint`` (outside ServiceControl's account) sends a heartbeat that waits in its
    account's shadow queue, with no relay running, longer than its time to live; then the
    bridge runs: the relay must count it expired and ServiceControl must not see it."""
    peer = peers.endpoints[endpoint]
    if peer.heartbeats is None:
        raise ConversationError(f"{endpoint} sends no heartbeats: declare serviceControlQueue")
    ttl = peer.heartbeats.settings.effective_time_to_live
    before = _last_heartbeat(peers, endpoint)
    attempt = peer.send_heartbeat()
    if attempt.failure is not None:
        raise ConversationError(f"{endpoint}'s heartbeat was not sent: {attempt.failure}")
    held = int(ttl.total_seconds()) + 60
    activity = peers.advance(held)
    shadow = _shadow_of(peers, endpoint, PlatformQueueKind.SERVICE_CONTROL)
    expired = _expired_from(activity, shadow)
    if len(expired) != 1:
        raise ConversationError(
            _with_relays(
                f"the relay reading {shadow} counted {len(expired)} message(s) expired, not "
                f"{endpoint}'s one heartbeat {attempt.message.message_id}, after it waited "
                f"{held} s (time to live {ttl})",
                activity,
            )
        )
    after = _last_heartbeat(peers, endpoint)
    if after != before:
        raise ConversationError(
            f"ServiceControl took {endpoint}'s expired heartbeat: last heartbeat {before} "
            f"became {after}"
        )
    return ExpiredHeartbeat(endpoint, attempt.message.message_id, ttl.total_seconds(), held, after)


def _shadow_of(peers: Peers, endpoint: str, kind: PlatformQueueKind) -> str:
    """The ARN of the shadow queue through which ``endpoint`` reaches the platform queue."""
    topology = peers.topology
    account = topology.endpoint(endpoint).account
    platform = topology.platform_queue(kind)
    if platform is None:
        raise ConversationError(f"the topology declares no {kind.value}")
    (shadow,) = [
        s
        for s in bridge_shadows(topology).shadows_in(account)
        if s.remote == platform and s.queue_name == platform.queue_name
    ]
    return topology.sqs_arn(account, shadow.queue_name)


def _last_heartbeat(peers: Peers, endpoint: str) -> datetime | None:
    view = peers.service_control_view().get(endpoint)
    beats = [] if view is None else [b.last_heartbeat for b in view.heartbeats if b.last_heartbeat]
    return max(beats, default=None)


def _expired_from(activity: Activity, source_queue: str) -> list[str]:
    """The SQS ids of the messages the relays logged as expired when reading ``source_queue``."""
    expired = []
    for result in activity.relayed:
        for invocation in result.invocations:
            for line in invocation.log_lines:
                fields = _json_line(line)
                if (
                    fields.get("outcome") == EXPIRED_OUTCOME
                    and fields.get("source_queue") == source_queue
                ):
                    expired.append(str(fields.get("message_id")))
    return expired


def _json_line(line: str) -> dict[str, Any]:
    try:
        fields = json.loads(line)
    except ValueError:
        return {}
    return fields if isinstance(fields, dict) else {}


@dataclass(frozen=True)
class InlineMegabyte:
    """A message its sender's transport kept inline at the largest size it allows."""

    sender: str
    receiver: str
    counted_size: int
    """The size the sender's transport counted: within a few bytes of SQS's 1,048,576 (a
    wrapped body grows four characters at a time)."""
    delivery: Delivery
    relays: tuple[str, ...]
    elapsed_ms: float


def carry_inline_megabyte(
    peers: Peers, handlers: Handlers, sender: str, receiver: str
) -> InlineMegabyte:
    """``sender`` sends ``receiver`` the largest body its transport keeps inline (SQS's limit
    as the transport counts it); the outbound relay's ARN header would push it over that
    limit, so the bridge must carry it through the receiver's bucket, and the receiver's
    handler must read the very bytes."""
    peer = peers.endpoints[sender]
    started = time.perf_counter()
    operation, counted = _largest_inline(peers, sender, receiver)
    body = operation.message.body
    peer.dispatcher.dispatch([operation])
    activity = peers.settle()
    delivery = handlers.delivered(receiver, operation.message.message_id)
    if delivery is None or delivery.body != body:
        raise ConversationError(
            _with_relays(
                f"the message {operation.message.message_id} that {sender}'s transport kept "
                f"inline at {counted} bytes did not reach {receiver} intact",
                activity,
            )
        )
    return InlineMegabyte(
        sender,
        receiver,
        counted,
        delivery,
        activity.relay_functions(),
        (time.perf_counter() - started) * 1000,
    )


def _largest_inline(peers: Peers, sender: str, receiver: str) -> tuple[TransportOperation, int]:
    """The send of the largest body ``sender``'s transport still keeps inline, and the size
    it counts: found by bisection over the body's length, each candidate prepared by a copy of
    the sender's dispatcher without S3 settings (which refuses what would go to S3, instead of
    uploading it)."""
    peer = peers.endpoints[sender]
    measuring = MessageDispatcher(
        peers.client(peers.topology.endpoint(sender).account),
        peer.queue_cache,
        wrap_outgoing_messages=peer.settings.wrap_outgoing_messages,
        reserve_bytes_in_message_size_calculation=(
            peer.settings.reserve_bytes_in_message_size_calculation
        ),
    )

    def inline_size(length: int) -> tuple[TransportOperation, int | None]:
        operation = peer.operations.send_operation(receiver, LARGE_TYPE, large_body(length))
        try:
            message = measuring.prepare(operation)
        except LargeMessageError:
            return operation, None
        if message is None:
            raise ConversationError(f"{sender}'s transport prepares no message to {receiver}")
        return operation, message.size

    low, high = 0, SQS_MAXIMUM_MESSAGE_SIZE
    while low < high:
        middle = (low + high + 1) // 2
        if inline_size(middle)[1] is None:
            high = middle - 1
        else:
            low = middle
    operation, size = inline_size(low)
    if size is None:
        raise ConversationError(f"{sender}'s transport keeps no body inline")
    return operation, size


@dataclass(frozen=True)
class PoisonMessage:
    """A message an endpoint could not read, as it reached ServiceControl's account."""

    endpoint: str
    sent_message_id: str
    arrived: dict[str, Any]
    """The message as ServiceControl's primary instance moved it to its own poison queue."""


def poison_to_error(peers: Peers, endpoint: str) -> PoisonMessage:
    """A producer of ``endpoint``'s account puts a message with a headers attribute no
    transport can parse into ``endpoint``'s queue. Its transport moves it, unchanged, to the
    error queue (by name: the shadow, outside the error queue's account); the bridge must carry
    it unchanged to the central error queue, where ServiceControl's ingestion, finding it
    unreadable too, moves it to its own poison queue, as it would in one account."""
    topology = peers.topology
    queue = topology.endpoint(endpoint)
    error = topology.error_queue
    sqs = peers.client(queue.account)
    attributes = {HEADERS_ATTRIBUTE: {"DataType": "String", "StringValue": POISON_HEADERS}}
    url = sqs.get_queue_url(QueueName=queue.queue_name)["QueueUrl"]
    sent = sqs.send_message(QueueUrl=url, MessageBody=POISON_BODY, MessageAttributes=attributes)
    service_control = peers.service_control
    activity = peers.settle()
    ops = peers.client(error.account)
    poison_queue = service_control.queue_cache.physical_queue_name(
        f"{service_control.settings.instance_name}.Errors"
    )
    poison_url = ops.get_queue_url(QueueName=poison_queue)["QueueUrl"]
    received = ops.receive_message(
        QueueUrl=poison_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", [])
    arrived = next((m for m in received if m.get("Body") == POISON_BODY), None)
    if arrived is None:
        raise ConversationError(
            _with_relays(
                f"the unreadable message {sent['MessageId']} put in {queue.queue_name} did not "
                f"reach ServiceControl's poison queue {poison_queue} in account {error.account}",
                activity,
            )
        )
    ops.delete_message(QueueUrl=poison_url, ReceiptHandle=arrived["ReceiptHandle"])
    if arrived.get("MessageAttributes", {}).get(HEADERS_ATTRIBUTE) != attributes[HEADERS_ATTRIBUTE]:
        raise ConversationError(
            f"the unreadable message reached {poison_queue} changed: its attributes are "
            f"{arrived.get('MessageAttributes')}"
        )
    return PoisonMessage(endpoint, sent["MessageId"], arrived)


def _with_relays(text: str, activity: Activity) -> str:
    lines = [line for result in activity.relayed for line in result.warning_lines()]
    return text if not lines else f"{text}; the relays said:\n  " + "\n  ".join(lines)


@dataclass(frozen=True)
class PlatformTraffic:
    """What the platform steps of the main job's traffic did, and what ServiceControl saw."""

    report: PlatformReport | None
    expired: ExpiredHeartbeat | None
    inline: InlineMegabyte | None
    poison: PoisonMessage | None
    audit: AuditTrail | None
    views: dict[str, EndpointView]

    def lines(self) -> list[str]:
        """One line per fact, then ServiceControl's view per endpoint."""
        lines = []
        if self.report is not None:
            lines.append(
                f"platform: {self.report.sent} heartbeat, custom check and metric message(s) "
                "sent by name in each endpoint's own account, through the bridge"
            )
        if self.expired is not None:
            expired = self.expired
            lines.append(
                f"heartbeat {expired.message_id} of {expired.endpoint} held {expired.held_seconds}"
                f" s in its shadow (time to live {expired.time_to_live_seconds:.0f} s): "
                "counted expired by the relay, never delivered"
            )
        if self.inline is not None:
            inline = self.inline
            lines.append(
                f"inline body {inline.counted_size:,} bytes as {inline.sender}'s transport counts"
                f" it -> {inline.receiver}: too large once stamped, carried through "
                f"{inline.receiver}'s bucket, the same {len(inline.delivery.body):,} bytes handled"
                f" in {inline.elapsed_ms:.0f} ms"
            )
        if self.poison is not None:
            lines.append(
                f"unreadable message {self.poison.sent_message_id} in {self.poison.endpoint}'s "
                "queue: moved unchanged to the error queue, carried unchanged to ServiceControl,"
                " which moved it to its poison queue as in one account"
            )
        if self.audit is not None:
            audit = self.audit
            per = ", ".join(f"{e} {n}" for e, n in sorted(audit.by_endpoint.items()))
            lines.append(
                f"audit: {audit.handled} handled message(s), each in the audit instance; "
                f"ServicePulse lists {audit.listed} ({per}), hiding {audit.system} system "
                f"message(s) of the {audit.audited} audited"
            )
        lines.append("ServiceControl saw, per endpoint (as ServicePulse shows it):")
        lines += [f"  {line}" for line in describe(self.views)]
        return lines


def run_platform(
    peers: Peers, handlers: Handlers, pair: tuple[str, str] | None
) -> PlatformTraffic | None:
    """The platform steps the topology allows: the plugins' reports (with a service control or
    monitoring queue), a heartbeat expired in a shadow (an endpoint outside ServiceControl's
    account), the inline megabyte on ``pair`` (with ``largeMessages``), a poison message (an
    endpoint outside the error queue's account), and last the audit trail of every message
    handled so far (with an audit queue). ``None`` for a topology with the error queue only."""
    topology = peers.topology
    if len(topology.platform_queues) == 1:
        return None
    declared = {q.platform for q in topology.platform_queues}
    report = None
    if declared & {PlatformQueueKind.SERVICE_CONTROL, PlatformQueueKind.MONITORING}:
        report = report_to_service_control(peers)
    expired = None
    service_control = topology.platform_queue(PlatformQueueKind.SERVICE_CONTROL)
    if service_control is not None:
        outside = _first_endpoint_outside(peers, service_control.account)
        if outside is not None:
            expired = expire_heartbeat(peers, outside)
    inline = None
    if pair is not None and topology.large_messages is not None:
        inline = carry_inline_megabyte(peers, handlers, *pair)
    poisoned = _first_endpoint_outside(peers, topology.error_queue.account)
    poison = None if poisoned is None else poison_to_error(peers, poisoned)
    audit = None
    if PlatformQueueKind.AUDIT in declared:
        audit = audit_trail(peers, handlers)
    return PlatformTraffic(report, expired, inline, poison, audit, peers.service_control_view())


def _first_endpoint_outside(peers: Peers, account: str) -> str | None:
    """The first (non-FIFO) endpoint of another account than ``account``, if any."""
    return next(
        (e.name for e in peers.topology.endpoints if e.account != account and not e.fifo),
        None,
    )
