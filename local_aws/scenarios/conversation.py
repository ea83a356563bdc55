"""Conversations between the deployed topology's NServiceBus peers, through the account bridge.

The peers (:mod:`local_aws.scenarios.peers`) are the model of the released transport, so every
message here is sent, received, replied to, retried and delayed as an endpoint on the released
transport (or the seed's ARN-aware one) does it, and nothing reads an ARN on an endpoint's behalf: a
reply goes wherever the endpoint resolves its ``NServiceBus.ReplyToAddress``.

* :func:`exchange`: a request and its reply (optionally forwarded on the way, as
  ``ForwardCurrentMessageTo`` does);
* :func:`recover`: a message whose handler keeps failing, through immediate and delayed retries
  to the error queue, ServiceControl's ingestion, its retry, and the acknowledgement;
* :func:`deliver_later`: a send delayed beyond SQS's 15 minutes;
* :func:`reply_to_originator`: a saga that stores the requester's address, waits for its
  timeout (a delayed message to itself) and then answers the stored address;
* :func:`carry_large_body`: a message whose body goes through the sender's bucket, handled
  with the same bytes in another account.

Each returns what the handlers saw, so that tests and the main job read the same facts; each
raises :class:`ConversationError` naming the step that did not happen and what moved instead.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from cross_account_runtime.relay.bodies import copied_key
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.headers import (
    CORRELATION_ID,
    ENCLOSED_MESSAGE_TYPES,
    REPLY_TO_ADDRESS,
    RETRY_UNIQUE_MESSAGE_ID,
)
from local_aws.released_transport.service_control.main_instance import (
    FailedMessageStatus,
)
from local_aws.scenarios.peers import BODY_KEY_PREFIX, Activity, Peers

REQUEST_TYPE: Final = "LocalAws.Messages.PlaceOrder"
REPLY_TYPE: Final = "LocalAws.Messages.OrderPlaced"
FAILING_TYPE: Final = "LocalAws.Messages.BillOrder"
"""Its handler fails until ServiceControl retries the message (a fault fixed meanwhile)."""
DELAYED_TYPE: Final = "LocalAws.Messages.RemindCustomer"
FORWARD_TO_HEADER: Final = "LocalAws.ForwardTo"
"""On a request: the handler forwards it there instead of replying."""
LARGE_TYPE: Final = "LocalAws.Messages.AttachInvoice"
"""Sent with a body over SQS's 1 MiB limit, which goes through S3."""
SAGA_START_TYPE: Final = "LocalAws.Messages.StartBilling"
SAGA_TIMEOUT_TYPE: Final = "LocalAws.Messages.BillingTimeout"
SAGA_ID_HEADER: Final = "LocalAws.SagaId"
SAGA_TYPE: Final = "LocalAws.Sagas.BillingPolicy"
"""The saga's class, as saga audit names it."""
SAGA_TIMEOUT: Final = timedelta(minutes=20)
"""Beyond 15 minutes, so the timeout goes through the saga endpoint's own delay queue."""

DELAY_STEP_SECONDS: Final = 300
"""How far the local AWS's time moves at a time while a delayed message is on its way."""
RETRY_STEP_SECONDS: Final = 30
"""How far it moves at a time while delayed retries are pending (NServiceBus's default
increase is 10 s per retry)."""
MAX_TIME_STEPS: Final = 40


class ConversationError(RuntimeError):
    """A step of a conversation did not happen; the message says which and what moved."""


class HandlerFailedError(RuntimeError):
    """What the failing handler throws (the fault the retries cannot fix)."""


@dataclass(frozen=True)
class Delivery:
    """A message as a handler saw it."""

    endpoint: str
    message_type: str
    message_id: str
    headers: Mapping[str, str | None]
    body: bytes = field(default=b"", repr=False)


@dataclass
class Handlers:
    """The demo's message handlers, for every endpoint, with every delivery recorded."""

    deliveries: list[Delivery] = field(default_factory=list)
    failures: list[Delivery] = field(default_factory=list)
    originators: dict[str, str | None] = field(default_factory=dict)
    """Each saga's stored ``Originator`` (the starting message's reply address), by saga id."""

    def __call__(self, endpoint: str, context: MessageHandlerContext) -> None:
        headers = context.message.headers
        delivery = Delivery(
            endpoint,
            str(headers.get(ENCLOSED_MESSAGE_TYPES) or ""),
            context.message.message_id,
            dict(headers),
            context.message.body,
        )
        if delivery.message_type == FAILING_TYPE and RETRY_UNIQUE_MESSAGE_ID not in headers:
            self.failures.append(delivery)
            raise HandlerFailedError(f"{endpoint} cannot bill the order yet")
        self.deliveries.append(delivery)
        if delivery.message_type == SAGA_START_TYPE:
            # As core's saga persistence stores the originator, then RequestTimeout.
            self.originators[delivery.message_id] = headers.get(REPLY_TO_ADDRESS)
            context.send(
                endpoint,
                SAGA_TIMEOUT_TYPE,
                b"{}",
                delay=SAGA_TIMEOUT,
                headers={SAGA_ID_HEADER: delivery.message_id},
            )
            self._saga_ran(context, delivery.message_id, is_new=True)
        if delivery.message_type == SAGA_TIMEOUT_TYPE:
            # ReplyToOriginator: a send to the stored address, correlated to the start.
            started_by = str(headers[SAGA_ID_HEADER])
            originator = self.originators[started_by]
            context.send(str(originator), REPLY_TYPE, json.dumps({"billed": True}).encode())
            self._saga_ran(context, started_by, is_completed=True)
        if delivery.message_type != REQUEST_TYPE:
            return
        forward_to = headers.get(FORWARD_TO_HEADER)
        if forward_to and forward_to != endpoint:
            context.forward(forward_to)
        else:
            context.reply(REPLY_TYPE, json.dumps({"placed": True}).encode())

    def _saga_ran(
        self,
        context: MessageHandlerContext,
        started_by: str,
        *,
        is_new: bool = False,
        is_completed: bool = False,
    ) -> None:
        """The handler ran as the saga instance ``started_by`` started, which the endpoint's
        saga audit (where configured) reports."""
        context.handled_by_saga(
            SAGA_TYPE,
            str(uuid.uuid5(uuid.NAMESPACE_URL, started_by)),
            json.dumps({"Originator": self.originators.get(started_by)}),
            is_new=is_new,
            is_completed=is_completed,
        )

    def delivered(self, endpoint: str, message_id: str) -> Delivery | None:
        return next(
            (d for d in self.deliveries if d.endpoint == endpoint and d.message_id == message_id),
            None,
        )

    def of_message(self, message_id: str) -> list[Delivery]:
        """Every handling of ``message_id``, at any endpoint, in order."""
        return [d for d in self.deliveries if d.message_id == message_id]

    def reply_to(self, endpoint: str, request_id: str) -> Delivery | None:
        return next(
            (
                d
                for d in self.deliveries
                if d.endpoint == endpoint
                and d.message_type == REPLY_TYPE
                and d.headers.get(CORRELATION_ID) == request_id
            ),
            None,
        )


@dataclass(frozen=True)
class Exchange:
    """A request from ``sender`` to ``receiver`` (through ``forwarder``, if any) and its reply."""

    sender: str
    receiver: str
    forwarder: str | None
    request: Delivery
    """The request as the receiver's handler saw it."""
    reply: Delivery
    """The reply as the sender's handler saw it."""
    relays: tuple[str, ...]
    """The relay functions that carried them, in order."""
    elapsed_ms: float


def exchange(
    peers: Peers,
    handlers: Handlers,
    sender: str,
    receiver: str,
    *,
    forwarder: str | None = None,
) -> Exchange:
    """``sender`` sends a request to ``receiver`` (to ``forwarder``, which forwards it to
    ``receiver``) as its team's code would, everything settles, and the reply must be back."""
    started = time.perf_counter()
    headers = {FORWARD_TO_HEADER: receiver} if forwarder else None
    sent = peers.endpoints[sender].send(
        forwarder or receiver, REQUEST_TYPE, json.dumps({"order": 42}).encode(), headers=headers
    )
    activity = peers.settle()
    request = handlers.delivered(receiver, sent.message_id)
    if request is None:
        raise ConversationError(
            _with_activity(
                f"request {sent.message_id} from {sender} did not reach {receiver}", activity
            )
        )
    reply = handlers.reply_to(sender, sent.message_id)
    if reply is None:
        raise ConversationError(
            _with_activity(
                f"the reply of {receiver} to {sender}'s request {sent.message_id} did not "
                f"arrive (the request carried ReplyToAddress "
                f"{request.headers.get('NServiceBus.ReplyToAddress')!r})",
                activity,
            )
        )
    return Exchange(
        sender,
        receiver,
        forwarder,
        request,
        reply,
        activity.relay_functions(),
        (time.perf_counter() - started) * 1000,
    )


@dataclass(frozen=True)
class Recovery:
    """A message that failed on ``receiver`` until ServiceControl retried it."""

    sender: str
    receiver: str
    attempts: int
    """Handler invocations that failed before the message went to the error queue."""
    failed_queue: str
    """``NServiceBus.FailedQ`` as ServiceControl stored it: where it retries to."""
    retried: Delivery
    """The retried message as the receiver's handler saw it."""
    resolved: bool
    """Whether ServiceControl received the receiver's acknowledgement."""
    waited_seconds: int
    """Time the local AWS let pass for the delayed retries."""


def recover(peers: Peers, handlers: Handlers, sender: str, receiver: str) -> Recovery:
    """A message from ``sender`` that ``receiver``'s handler keeps failing: through its
    retries to the error queue; then ServiceControl retries it and it succeeds."""
    sent = peers.endpoints[sender].send(receiver, FAILING_TYPE, json.dumps({"order": 43}).encode())
    service_control = peers.service_control
    activity = peers.settle()
    waited = 0
    for _ in range(MAX_TIME_STEPS):
        failed = [
            f for f in service_control.failed_messages.values() if f.message_id == sent.message_id
        ]
        if failed:
            break
        activity = peers.advance(RETRY_STEP_SECONDS)
        waited += RETRY_STEP_SECONDS
    else:
        raise ConversationError(
            _with_activity(
                f"message {sent.message_id} that {receiver} cannot handle never reached "
                f"ServiceControl ({len(handlers.failures)} failed attempts seen; imports that "
                f"failed: {len(service_control.failed_imports)})",
                activity,
            )
        )
    (stored,) = failed
    attempts = sum(1 for f in handlers.failures if f.message_id == sent.message_id)
    service_control.retry(stored.unique_message_id)
    activity = peers.settle()
    retried = handlers.delivered(receiver, sent.message_id)
    if retried is None:
        raise ConversationError(
            _with_activity(
                f"ServiceControl's retry of {sent.message_id} to {stored.failing_endpoint_address!r} "
                f"did not reach {receiver}",
                activity,
            )
        )
    return Recovery(
        sender,
        receiver,
        attempts,
        stored.failing_endpoint_address,
        retried,
        stored.status is FailedMessageStatus.RESOLVED,
        waited,
    )


@dataclass(frozen=True)
class LaterDelivery:
    """A message sent with a delay beyond SQS's 15 minutes, and when it arrived."""

    sender: str
    receiver: str
    delay_seconds: int
    arrived: Delivery
    arrived_after_seconds: int
    """The local AWS's time that had passed when the receiver handled it."""


def deliver_later(
    peers: Peers, handlers: Handlers, sender: str, receiver: str, delay: timedelta
) -> LaterDelivery:
    """``sender`` sends to ``receiver`` with ``delay``; the local AWS's time passes in steps
    until the receiver handles it, and it must not have arrived before the delay was up."""
    sent = peers.endpoints[sender].send(
        receiver, DELAYED_TYPE, json.dumps({"remind": True}).encode(), delay=delay
    )
    activity = peers.settle()
    elapsed = 0
    while (arrived := handlers.delivered(receiver, sent.message_id)) is None:
        if elapsed >= delay.total_seconds() + DELAY_STEP_SECONDS * 3:
            raise ConversationError(
                _with_activity(
                    f"message {sent.message_id} delayed by {delay} did not reach {receiver} "
                    f"after {elapsed} s of the local AWS's time",
                    activity,
                )
            )
        activity = peers.advance(DELAY_STEP_SECONDS)
        elapsed += DELAY_STEP_SECONDS
    if elapsed < delay.total_seconds():
        raise ConversationError(
            f"message {sent.message_id} delayed by {delay} reached {receiver} after only "
            f"{elapsed} s"
        )
    return LaterDelivery(sender, receiver, int(delay.total_seconds()), arrived, elapsed)


@dataclass(frozen=True)
class SagaReply:
    """A saga on ``receiver`` that answered ``sender`` after its timeout."""

    sender: str
    receiver: str
    originator: str | None
    """The address the saga stored from the starting message."""
    reply: Delivery
    """The answer as the sender's handler saw it."""
    answered_after_seconds: int
    """The local AWS's time that had passed when the sender handled it."""


def reply_to_originator(peers: Peers, handlers: Handlers, sender: str, receiver: str) -> SagaReply:
    """``sender`` starts a saga on ``receiver``, which must register it (:data:`SAGA_TYPE`, as
    :class:`~local_aws.scenarios.peers.Peers` was told); the saga answers the stored originator
    when its timeout (:data:`SAGA_TIMEOUT`) fires, and the answer must reach ``sender``."""
    registered = peers.endpoints[receiver].settings.sagas
    if SAGA_TYPE not in registered:
        raise ConversationError(
            f"{receiver} registers no saga {SAGA_TYPE} (its sagas: "
            f"{', '.join(registered) or 'none'}): give it to Peers' sagas"
        )
    sent = peers.endpoints[sender].send(
        receiver, SAGA_START_TYPE, json.dumps({"order": 44}).encode()
    )
    activity = peers.settle()
    elapsed = 0
    while (reply := handlers.reply_to(sender, sent.message_id)) is None:
        if elapsed >= SAGA_TIMEOUT.total_seconds() + DELAY_STEP_SECONDS * 3:
            raise ConversationError(
                _with_activity(
                    f"the saga {receiver} started for {sender} ({sent.message_id}) did not "
                    f"answer its originator {handlers.originators.get(sent.message_id)!r} after "
                    f"{elapsed} s of the local AWS's time",
                    activity,
                )
            )
        activity = peers.advance(DELAY_STEP_SECONDS)
        elapsed += DELAY_STEP_SECONDS
    return SagaReply(sender, receiver, handlers.originators[sent.message_id], reply, elapsed)


@dataclass(frozen=True)
class LargeBody:
    """A message whose body the sender's transport put in S3, handled in another account."""

    sender: str
    receiver: str
    body_bytes: int
    delivery: Delivery
    """The message as the receiver's handler saw it, with the body read from S3."""
    key: str
    """``{KeyPrefix}/{MessageId}``: the body's key in the sender's bucket."""
    receiver_key: str
    """The key of the relay's copy in the receiver's bucket, under the sending account's prefix
    (``relay/<account id>/{KeyPrefix}/{MessageId}``)."""
    sender_bucket: str
    receiver_bucket: str
    relays: tuple[str, ...]
    elapsed_ms: float


def carry_large_body(
    peers: Peers, handlers: Handlers, sender: str, receiver: str, body_bytes: int
) -> LargeBody:
    """``sender`` sends a body of ``body_bytes`` (over SQS's 1 MiB, so its transport uploads
    it to its account's bucket and sends the key) to ``receiver``; after everything settles
    the receiver's handler must have read the very bytes, from its own account's bucket."""
    topology = peers.topology
    buckets = [topology.body_bucket(topology.endpoint(e).account) for e in (sender, receiver)]
    sender_bucket, receiver_bucket = buckets
    if sender_bucket is None or receiver_bucket is None:
        raise ConversationError(
            f"large body {sender} -> {receiver}: the topology has no largeMessages, so the "
            "endpoints have no bucket for bodies over SQS's limit"
        )
    started = time.perf_counter()
    body = large_body(body_bytes)
    sent = peers.endpoints[sender].send(receiver, LARGE_TYPE, body)
    activity = peers.settle()
    delivery = handlers.delivered(receiver, sent.message_id)
    if delivery is None:
        raise ConversationError(
            _with_activity(
                f"the {body_bytes}-byte message {sent.message_id} from {sender} did not reach "
                f"{receiver}",
                activity,
            )
        )
    if delivery.body != body:
        raise ConversationError(
            f"{receiver} handled {sent.message_id} with {len(delivery.body)} bytes that are not "
            f"the {body_bytes} {sender} sent"
        )
    return LargeBody(
        sender,
        receiver,
        body_bytes,
        delivery,
        f"{BODY_KEY_PREFIX}/{sent.message_id}",
        copied_key(
            topology.account(topology.endpoint(sender).account).id,
            f"{BODY_KEY_PREFIX}/{sent.message_id}",
        ),
        sender_bucket,
        receiver_bucket,
        activity.relay_functions(),
        (time.perf_counter() - started) * 1000,
    )


def large_body(size: int) -> bytes:
    """A JSON document of ``size`` bytes whose content varies, so a truncated or mixed-up body
    cannot pass for it."""
    head, tail = b'{"lines":"', b'"}'
    filler = hashlib.sha256(str(size).encode()).hexdigest().encode()
    room = size - len(head) - len(tail)
    return head + (filler * (room // len(filler) + 1))[:room] + tail


def _with_activity(text: str, activity: Activity) -> str:
    """``text`` with what moved meanwhile: the relays' warnings (why a message was refused or
    kept) and each endpoint's processing outcomes that were not a plain success."""
    lines = [line for result in activity.relayed for line in result.warning_lines()]
    for endpoint, outcomes in activity.processed.items():
        for outcome in outcomes:
            if outcome.pump.error is not None:
                lines.append(f"{endpoint}: {outcome.pump.fate.value}: {outcome.pump.error}")
    if not lines:
        return f"{text}; nothing was refused or failed on the way"
    return f"{text}; on the way:\n  " + "\n  ".join(lines)
