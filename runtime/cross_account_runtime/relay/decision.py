"""The relay's pure core: what to do with one Lambda SQS record, decided without any I/O.

:func:`relay_message` reads a record and the relay's
:class:`~cross_account_runtime.relay.config.RelayConfig` and returns a :class:`Decision`: the
``SendMessage`` request for the record's destination, with the address headers stamped
(outbound) or translated for a released receiver (inbound) as
:mod:`cross_account_runtime.relay.addresses` says, in whichever wire form the message has
(:mod:`cross_account_runtime.nservicebus.wire_format`); for a record of a delay queue's shadow
that is not due yet, the request that puts it back there
(:mod:`cross_account_runtime.relay.delays`); or, for a record it refuses, the original message
for its source queue's dead-letter queue. A message without NServiceBus headers is forwarded
unchanged. The body, the message attributes, the X-Ray trace header and the message group are
kept.

On the way the core keeps the released transport's message semantics across the hop:

* **time to be received** (:mod:`cross_account_runtime.relay.expiry`): a message whose time has
  run out is not delivered (:attr:`DecisionKind.EXPIRED`: acknowledged, as the receiving
  transport would discard it), and every send of a live one carries the time that remains;
* **the receiver's form** (:mod:`cross_account_runtime.relay.forms`): an inbound route delivers
  every NServiceBus message in the form its endpoint's dispatcher writes;
* **size** (:mod:`cross_account_runtime.relay.bodies`): a message that no longer fits inline
  once rewritten goes through S3 as the transport's own large bodies do, when the route has a
  body bucket, and is refused (``oversize``) with the bytes the relay added otherwise;
* **poison messages**: on a route to an error queue (``forwardUnreadable``) a message the relay
  cannot read goes on unchanged, as the transport moves a message it cannot read to its error
  queue (:attr:`DecisionKind.FORWARDED_UNREADABLE`).

Refusals are deterministic (a malformed ARN header, headers that cannot be read or stamped, a
message too large once rewritten), so retrying them would only delay the verdict: the refused
message goes, unchanged, straight to its dead-letter queue, with a ``Relay.Rejection`` attribute
saying why when SQS's limits leave room for one. That keeps the reason on the message, spends no
receives, and on FIFO queues does not hold back (and eventually dead-letter) the messages queued
behind it in its group, as repeated failures would. A record no send can carry (no route, so no
known dead-letter queue; a FIFO record without a group; an attribute without a value) gets no
request: only the queue's redrive policy can move it.

On FIFO routes the forward carries a ``MessageDeduplicationId`` derived from the source queue
ARN and the source's deduplication id (or its message id), so a retried send within SQS's
5-minute interval is dropped, while identical content from two shadow queues stays distinct.

No network and no logging: :mod:`cross_account_runtime.relay.batch` sends what is decided here
and logs it, and passes the time a delay is measured against; tests call :func:`relay_message`
directly.
"""

from __future__ import annotations

import base64
import binascii
import enum
import functools
import json

from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    ArnHeaderError,
    decode,
    substitute_incoming,
)
from cross_account_runtime.nservicebus.transport_address import AddressError, parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import (
    S3_BODY_KEY,
    HeadersUpdate,
    WireFormatError,
    wire_form,
)
from cross_account_runtime.relay.addresses import stamp, translate
from cross_account_runtime.relay.bodies import BodyUpload, body_key, copied_key, upload_key
from cross_account_runtime.relay.config import (
    FILE_ROUTES,
    ROUTE_BODY_BUCKET,
    ReceiverAddressing,
    RelayConfig,
    RelayDirection,
    SourceQueueRoute,
)
from cross_account_runtime.relay.delays import (
    DELAY_SECONDS_ATTRIBUTE,
    QUEUE_DELAY_SECONDS,
    remaining_delay,
)
from cross_account_runtime.relay.expiry import time_left
from cross_account_runtime.relay.forms import conversion_problem, convert, moved_to_s3

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

    from cross_account_runtime.nservicebus.transport_address import QueueArn
    from cross_account_runtime.nservicebus.wire_format import HeadersUpdate
    from cross_account_runtime.relay.forms import SendAttributes

# SQS's limit for one message: body plus attributes (names, data types and values).
MAX_MESSAGE_BYTES: Final = 1_048_576
MAX_MESSAGE_ATTRIBUTES: Final = 10
REJECTION_ATTRIBUTE: Final = "Relay.Rejection"
# Bounds the reason carried on a dead-lettered message; the log line has it whole.
MAX_REASON_CHARACTERS: Final = 2_000


class DecisionKind(enum.StrEnum):
    """What was decided for a record: forwarded, or why it is refused.

    A ``StrEnum``, so the log lines' ``kind`` and the ``Relay.Rejection`` JSON carry the plain
    text.
    """

    FORWARDED = "forwarded"
    REDELAYED = "redelayed"
    """A delay queue's message not due yet, back to the delay queue it came from."""
    FORWARDED_UNREADABLE = "forwarded_unreadable"
    """Unreadable, on a route to an error queue: forwarded unchanged, as the transport moves
    a message it cannot read to its error queue."""
    EXPIRED = "expired"
    """Its time to be received ran out: not delivered, acknowledged (the receiving transport
    would discard it)."""
    UNKNOWN_ROUTE = "unknown_route"
    """The source queue has no route: no destination and no known dead-letter queue."""
    MALFORMED_RECORD = "malformed_record"
    """Not a record Lambda builds for an SQS queue, or one no send can carry."""
    MALFORMED_ARN_HEADER = "malformed_arn_header"
    UNREADABLE_HEADERS = "unreadable_headers"
    OVERSIZE = "oversize"
    """Over SQS's size limit once stamped or substituted."""
    BODY_MISSING = "body_missing"
    """The body the transport stored in S3 is not in the sender's bucket to be copied."""
    DESTINATION_MISSING = "destination_missing"
    """On its last receive, the destination queue did not exist (SQS's
    ``QueueDoesNotExist``)."""
    KEY_REFUSED = "key_refused"
    """On its last receive, the destination queue's KMS key refused the send."""
    SEND_FAILED = "send_failed"
    """On its last receive, the send failed otherwise."""


FORWARDED_KINDS: Final = frozenset(
    {DecisionKind.FORWARDED, DecisionKind.REDELAYED, DecisionKind.FORWARDED_UNREADABLE}
)


class Decision:
    """What to do with one record, decided without any I/O.

    ``kind`` is :attr:`DecisionKind.FORWARDED` or why the record is refused. ``request`` holds
    the ``SendMessage`` parameters for ``queue`` (the destination, or the dead-letter queue of a
    refused record); it is ``None`` when no send is possible, so the record must be reported
    failed and left to the queue's redrive policy. ``rewritten_headers`` names the headers
    stamped or translated, ``unreachable_headers`` the address headers a released receiver
    cannot resolve back (no shadow leads to their queue from its account), ``wire_form`` where
    the NServiceBus headers were. ``body_copy`` is the S3 key of a body to copy into the
    route's ``body_bucket`` before ``request`` is sent and the key of the copy, which
    ``request`` names (:func:`~cross_account_runtime.relay.bodies.copied_key`), ``upload`` a
    body to put into S3 first. ``warnings`` are ``(outcome, reason)`` pairs to log once the message is sent: what
    the receiver will make of it that the relay could not change. ``decided_at`` is the time
    (epoch seconds) the request's time to be received was counted at, ``None`` when it carries
    none.
    """

    __slots__ = (
        "body_copy",
        "decided_at",
        "kind",
        "queue",
        "reason",
        "request",
        "rewritten_headers",
        "unreachable_headers",
        "upload",
        "warnings",
        "wire_form",
    )

    def __init__(
        self,
        kind: DecisionKind,
        queue: QueueArn | None,
        request: dict[str, Any] | None,
        *,
        reason: str = "",
        rewritten_headers: tuple[str, ...] = (),
        unreachable_headers: tuple[str, ...] = (),
        wire_form: str | None = None,
        body_copy: tuple[str, str] | None = None,
        upload: BodyUpload | None = None,
        warnings: tuple[tuple[str, str], ...] = (),
        decided_at: float | None = None,
    ) -> None:
        self.body_copy = body_copy
        self.decided_at = decided_at
        self.upload = upload
        self.warnings = warnings
        self.kind = kind
        self.queue = queue
        self.request = request
        self.reason = reason
        self.rewritten_headers = rewritten_headers
        self.unreachable_headers = unreachable_headers
        self.wire_form = wire_form

    @property
    def forwarded(self) -> bool:
        """Whether the record goes on (to its destination, or back to its delay queue until
        due) rather than being refused."""
        return self.kind in FORWARDED_KINDS

    def __repr__(self) -> str:
        return (
            f"Decision(kind={self.kind.value!r}, queue={str(self.queue)!r}, reason={self.reason!r})"
        )


class _RefusedError(Exception):
    """Ends the relaying of a record with a refusal; each check is one ``raise``."""

    def __init__(self, kind: DecisionKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def relay_message(
    record: Mapping[str, Any], config: RelayConfig, now: float | None = None
) -> Decision:
    """Decide what to do with one record of a Lambda SQS event: the pure core of the relay.

    Returns a :class:`Decision` whose ``request`` is ready for ``SendMessage``: the rewritten
    message for its destination, a delay queue's message back to it until due, or for a
    refused record the original message for its source queue's dead-letter queue. ``now``
    (epoch seconds) is needed for the records of a delay queue's shadow and for messages that
    carry a time to be received.
    """
    source = record.get("eventSourceARN")
    route = config.routes.get(source) if isinstance(source, str) else None
    if route is None:
        return Decision(
            DecisionKind.UNKNOWN_ROUTE,
            None,
            None,
            reason=f"no route for source queue {source!r} in the configuration's {FILE_ROUTES}; "
            "the message is reported failed until the queue's redrive policy moves it to its "
            "dead-letter queue. Add the queue to the topology's routes, or remove it from the "
            "function's event sources",
        )
    found_form: str | None = None
    update: HeadersUpdate | None = None
    remaining_time: str | None = None
    try:
        _check_record(record, route)
        try:
            update = _nservicebus_headers(record)
        except _RefusedError as refusal:
            if route.forward_unreadable:
                return _forwarded_unreadable(record, route, refusal)
            raise
        warnings: list[tuple[str, str]] = []
        if update is not None:
            found_form = update.form
            if update.carries_time_to_be_received:
                left = time_left(update.time_to_be_received, _sent_milliseconds(record), _now(now))
                if left is not None and left.expired:
                    return _expired(update, left.overdue)
                if left is not None:
                    remaining_time = left.remaining
                    if left.problem:
                        warnings.append((_TTBR_UNREADABLE, f"forwarded unchanged: {left.problem}"))
        if route.delayed:
            remaining = remaining_delay(record, _now(now))
            if remaining > QUEUE_DELAY_SECONDS:
                body, attributes = _with_time_left(record, update, remaining_time)
                return Decision(
                    DecisionKind.REDELAYED,
                    route.source,
                    _redelay_request(record, route, body, attributes, remaining),
                    wire_form=found_form,
                    decided_at=None if remaining_time is None else now,
                )
        else:
            remaining = 0
        rewritten: tuple[str, ...] = ()
        unreachable: tuple[str, ...] = ()
        upload: BodyUpload | None = None
        inbound = config.direction is RelayDirection.INBOUND
        source_key = None if inbound or route.body_bucket is None else body_key(record, update)
        copy = (
            None
            if source_key is None
            else (source_key, copied_key(route.source.account, source_key))
        )
        if update is None:
            body, attributes = record["body"], _send_attributes(record.get("messageAttributes"))
            if copy is not None:
                attributes[S3_BODY_KEY] = {"DataType": "String", "StringValue": copy[1]}
        else:
            try:
                changes, rewritten, unreachable = _rewrite(update.headers, route, config)
            except _RefusedError as refusal:
                if route.forward_unreadable:
                    return _forwarded_unreadable(record, route, refusal)
                raise
            form = _delivered_form(update, route, warnings)
            if copy is not None:
                # The message names the copy: in its form's place, and in a header that holds
                # the key (by which the attribute form's receiver would read the body).
                if S3_BODY_KEY in update.headers:
                    changes = {**changes, S3_BODY_KEY: copy[1]}
                body, attributes = moved_to_s3(
                    update,
                    form,
                    _send_attributes(record.get("messageAttributes")),
                    changes=changes,
                    time_to_be_received=remaining_time,
                    s3_body_key=copy[1],
                )
            else:
                body, attributes, upload = _message(
                    record,
                    route,
                    update,
                    form,
                    inbound=inbound,
                    changes=changes,
                    remaining_time=remaining_time,
                )
        if route.delayed:
            attributes.pop(DELAY_SECONDS_ATTRIBUTE, None)
        request = _request(
            record, route, route.destination_url, body, attributes, fifo=route.destination_fifo
        )
        if remaining > 0:
            request["DelaySeconds"] = remaining
    except _RefusedError as refusal:
        return Decision(
            refusal.kind,
            route.dead_letter_queue,
            _dead_letter_request(
                record, route, config, refusal, update=update, remaining_time=remaining_time
            ),
            reason=refusal.reason,
            wire_form=found_form,
        )
    return Decision(
        DecisionKind.FORWARDED,
        route.destination,
        request,
        rewritten_headers=rewritten,
        unreachable_headers=unreachable,
        wire_form=found_form,
        body_copy=copy,
        upload=upload,
        warnings=tuple(warnings),
        decided_at=None if remaining_time is None else now,
    )


_TTBR_UNREADABLE: Final = "time_to_be_received_unreadable"
_FORM_KEPT: Final = "form_kept"


def refuse(
    record: Mapping[str, Any],
    config: RelayConfig,
    kind: DecisionKind,
    reason: str,
    now: float,
) -> Decision:
    """The dead-letter decision for a record refused only when its sending was tried, after
    :func:`relay_message` decided to forward it: a body that cannot be copied, or a send that
    failed on the record's last receive. The copy carries the time to be received that
    remains, as a forward would."""
    route = config.routes[record["eventSourceARN"]]
    refusal = _RefusedError(kind, reason)
    update: HeadersUpdate | None = None
    remaining_time: str | None = None
    try:
        update = _nservicebus_headers(record)
    except _RefusedError:
        update = None
    if update is not None and update.carries_time_to_be_received:
        try:
            left = time_left(update.time_to_be_received, _sent_milliseconds(record), now)
        except _RefusedError:
            left = None
        remaining_time = left.remaining if left is not None else None
    return Decision(
        refusal.kind,
        route.dead_letter_queue,
        _dead_letter_request(
            record, route, config, refusal, update=update, remaining_time=remaining_time
        ),
        reason=reason,
        wire_form=None if update is None else update.form,
    )


def _expired(update: HeadersUpdate, overdue: float | None) -> Decision:
    return Decision(
        DecisionKind.EXPIRED,
        None,
        None,
        reason=f"its time to be received ({update.time_to_be_received}) ran out {overdue:.3f} s "
        "ago; the receiving transport would discard it, so it is not delivered",
        wire_form=update.form,
    )


def _now(now: float | None) -> float:
    if now is None:
        raise ValueError(
            "now: a delay queue's record, or a message with a time to be received, is decided "
            "against the current time"
        )
    return now


def _sent_milliseconds(record: Mapping[str, Any]) -> int:
    """The record's ``SentTimestamp``, as ``long.Parse`` reads it in the transport."""
    try:
        return int(record["attributes"]["SentTimestamp"])
    except (KeyError, ValueError):
        raise _RefusedError(
            DecisionKind.MALFORMED_RECORD,
            "the record has no SentTimestamp to count its time to be received from",
        ) from None


def _forwarded_unreadable(
    record: Mapping[str, Any], route: SourceQueueRoute, refusal: _RefusedError
) -> Decision:
    """A message the relay cannot read, on a route to an error queue: the record as received
    (but a ``Relay.Rejection`` of an earlier refusal) to the destination."""
    request = _request(
        record,
        route,
        route.destination_url,
        record["body"],
        _send_attributes(record.get("messageAttributes")),
        fifo=route.destination_fifo,
    )
    return Decision(
        DecisionKind.FORWARDED_UNREADABLE,
        route.destination,
        request,
        reason=f"{refusal.kind}: {refusal.reason}; forwarded unchanged to the error queue, as "
        "the transport moves a message it cannot read",
    )


def _delivered_form(
    update: HeadersUpdate, route: SourceQueueRoute, warnings: list[tuple[str, str]]
) -> str:
    """The form to deliver in: the route's (inbound), unless the message would not read the
    same in it; else its own."""
    if route.form is None or route.form == update.form:
        return update.form
    problem = conversion_problem(update, route.form)
    if problem:
        warnings.append(
            (
                _FORM_KEPT,
                f"delivered in the {update.form} form, not the receiver's {route.form} form: "
                f"{problem}",
            )
        )
        return update.form
    return route.form


def _message(
    record: Mapping[str, Any],
    route: SourceQueueRoute,
    update: HeadersUpdate,
    form: str,
    *,
    inbound: bool,
    changes: dict[str, str],
    remaining_time: str | None,
) -> tuple[str, SendAttributes, BodyUpload | None]:
    """The body and attributes to forward, in ``form`` with the header ``changes`` and the time
    left, and the upload to make first when the body had to move to S3."""
    if form != update.form:
        body, attributes = convert(
            update,
            form,
            _send_attributes(record.get("messageAttributes")),
            changes=changes,
            time_to_be_received=remaining_time,
        )
    elif changes or remaining_time is not None:
        message: Mapping[str, Any] = update.write(changes, remaining_time)
        body, attributes = message["body"], _send_attributes(message.get("messageAttributes"))
    else:
        body, attributes = record["body"], _send_attributes(record.get("messageAttributes"))
    size = message_size(body, attributes)
    if size <= MAX_MESSAGE_BYTES:
        return body, attributes, None
    original = _send_attributes(record.get("messageAttributes"))
    added = size - message_size(record["body"], original)
    if route.body_bucket is None or update.s3_body_key:
        raise _RefusedError(DecisionKind.OVERSIZE, _oversize_reason(size, added, inbound=inbound))
    key = upload_key(route.source, record["messageId"])
    # The bucket the receiver reads: outbound the receiving account's, inbound the relay's own.
    home = route.source if inbound else route.destination
    upload = BodyUpload(route.body_bucket, key, home.account, home.region, update.view.body_bytes())
    body, attributes = moved_to_s3(
        update,
        form,
        original,
        changes=changes,
        time_to_be_received=remaining_time,
        s3_body_key=key,
    )
    size = message_size(body, attributes)
    if size > MAX_MESSAGE_BYTES:
        raise _RefusedError(
            DecisionKind.OVERSIZE,
            f"the message would be {size} bytes even with its body in S3 (its headers and "
            f"attributes alone pass SQS's limit of {MAX_MESSAGE_BYTES})",
        )
    return body, attributes, upload


def _oversize_reason(size: int, added: int, *, inbound: bool) -> str:
    return (
        f"the message would be {size} bytes (body and attributes) once rewritten, over SQS's "
        f"limit of {MAX_MESSAGE_BYTES}: the relay added {added} bytes "
        + (
            "(the receiver's wire form, the translated addresses) to a message the sender "
            "kept inline. "
            if inbound
            else "(the ARN header) to a message the sender kept inline. "
        )
        + f"Give the route a {ROUTE_BODY_BUCKET} (largeMessages in the topology) so the relay "
        "moves the body to S3 as the transport does, or make the sending endpoints reserve the "
        f"room: ReserveBytesInMessageSizeCalculation of at least {added}"
    )


def _with_time_left(
    record: Mapping[str, Any], update: HeadersUpdate | None, remaining_time: str | None
) -> tuple[str, SendAttributes]:
    """The record's body and attributes, with the time to be received that remains."""
    if update is None or remaining_time is None:
        return record["body"], _send_attributes(record.get("messageAttributes"))
    message: Mapping[str, Any] = update.write({}, remaining_time)
    return message["body"], _send_attributes(message.get("messageAttributes"))


def _check_record(record: Mapping[str, Any], route: SourceQueueRoute) -> None:
    """Refuse a record Lambda would never produce for an SQS queue (so nothing can be
    forwarded or dead-lettered with a field silently missing)."""
    if record.get("eventSource") != "aws:sqs":
        raise _RefusedError(
            DecisionKind.MALFORMED_RECORD,
            f"eventSource is {record.get('eventSource')!r}, not 'aws:sqs'; the relay reads SQS "
            "queues only",
        )
    if not isinstance(record.get("body"), str):
        raise _RefusedError(DecisionKind.MALFORMED_RECORD, "the record has no text body")
    attributes = record.get("attributes")
    if not isinstance(attributes, dict):
        raise _RefusedError(DecisionKind.MALFORMED_RECORD, "the record has no 'attributes' object")
    if route.fifo and not attributes.get("MessageGroupId"):
        raise _RefusedError(
            DecisionKind.MALFORMED_RECORD,
            "the record comes from a FIFO queue but has no MessageGroupId; forwarding it would "
            "lose its ordering",
        )


def _nservicebus_headers(record: Mapping[str, Any]) -> HeadersUpdate | None:
    """The record's NServiceBus headers, read to be written back, or ``None`` for a native
    message (forwarded as is)."""
    try:
        return HeadersUpdate(record)
    except WireFormatError as error:
        try:
            native = wire_form(record) == "native"
        except WireFormatError:
            native = False
        if native:
            return None
        raise _RefusedError(
            DecisionKind.UNREADABLE_HEADERS, f"the NServiceBus headers cannot be read: {error}"
        ) from None


def _rewrite(
    headers: dict[str, str], route: SourceQueueRoute, config: RelayConfig
) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
    """Stamp (outbound) or translate for a released receiver (inbound); return the changes to
    the headers, the names of the address headers stamped or translated and those a released
    receiver cannot resolve back."""
    if ARN_HEADER in headers:
        _check_arn_header(headers)
    if config.direction is RelayDirection.INBOUND:
        if route.receiver is ReceiverAddressing.NAME:
            changes, unreachable = translate(headers, route.addresses)
            return changes, tuple(changes), unreachable
        return {}, (), ()
    # Address header names are plain and ARNs never start with "=" or end with ";", and the
    # ARN header was read above: the entries always encode.
    changes, stamped = stamp(headers, config.local_endpoints)
    return changes, stamped, ()


def _check_arn_header(headers: dict[str, str]) -> None:
    """Refuse an ARN header an ARN-aware receiver could not read, or whose values are not all
    queue ARNs (they are addresses answers go to)."""
    try:
        substitute_incoming(headers)
    except ArnHeaderError as error:
        raise _RefusedError(DecisionKind.MALFORMED_ARN_HEADER, str(error)) from None
    for name, value in decode(headers[ARN_HEADER]).items():
        problem = _queue_arn_problem(value)
        if problem:
            raise _RefusedError(
                DecisionKind.MALFORMED_ARN_HEADER,
                f"{ARN_HEADER} header: the entry for {name!r} is not a queue ARN: {problem}",
            )


@functools.lru_cache(maxsize=1024)
def _queue_arn_problem(text: str) -> str:
    """Why ``text`` is not a queue ARN, or ``""``. Cached: a container sees the same few
    ARNs on message after message, and checking one costs more than the rest of a lookup."""
    try:
        parse_queue_arn(text)
    except AddressError as error:
        return str(error)
    return ""


def _send_attributes(attributes: object) -> dict[str, dict[str, Any]]:
    """Lambda's ``messageAttributes`` in ``SendMessage``'s shape; binary values decoded.

    A ``Relay.Rejection`` attribute from an earlier refusal is dropped: a message redriven from
    the dead-letter queue should arrive as its sender sent it.
    """
    if attributes is None:
        return {}
    if not isinstance(attributes, dict):
        raise _RefusedError(DecisionKind.MALFORMED_RECORD, "messageAttributes is not an object")
    converted: dict[str, dict[str, Any]] = {}
    for name, attribute in attributes.items():
        if name == REJECTION_ATTRIBUTE:
            continue
        data_type = attribute.get("dataType") if isinstance(attribute, dict) else None
        if not isinstance(data_type, str):
            raise _RefusedError(
                DecisionKind.MALFORMED_RECORD, f"message attribute {name!r} has no dataType"
            )
        if data_type.startswith("Binary"):
            encoded = attribute.get("binaryValue")
            try:
                value = base64.b64decode(encoded, validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise _RefusedError(
                    DecisionKind.MALFORMED_RECORD,
                    f"message attribute {name!r} of type {data_type!r} has no base64 binaryValue",
                ) from None
            converted[name] = {"DataType": data_type, "BinaryValue": value}
            continue
        text = attribute.get("stringValue")
        if not isinstance(text, str):
            raise _RefusedError(
                DecisionKind.MALFORMED_RECORD,
                f"message attribute {name!r} of type {data_type!r} has no stringValue",
            )
        converted[name] = {"DataType": data_type, "StringValue": text}
    return converted


def _request(
    record: Mapping[str, Any],
    route: SourceQueueRoute,
    queue_url: str,
    body: str,
    attributes: dict[str, dict[str, Any]],
    *,
    fifo: bool,
) -> dict[str, Any]:
    """``SendMessage`` parameters for a queue (FIFO or not) keeping the trace header, the
    message group and, on FIFO queues, a deduplication id that makes a retried send a no-op."""
    request: dict[str, Any] = {"QueueUrl": queue_url, "MessageBody": body}
    if attributes:
        request["MessageAttributes"] = attributes
    system = record["attributes"]
    group = system.get("MessageGroupId")
    if group and (fifo or not route.delayed):
        # Kept on standard queues too, where it is a fair-queue tenant id; but a delay queue's
        # group is only the message id, which the transport's pump drops too.
        request["MessageGroupId"] = group
    if fifo:
        request["MessageDeduplicationId"] = _deduplication_id(record, route)
    trace = system.get("AWSTraceHeader")
    if trace:
        request["MessageSystemAttributes"] = {
            "AWSTraceHeader": {"DataType": "String", "StringValue": trace}
        }
    return request


def _redelay_request(
    record: Mapping[str, Any],
    route: SourceQueueRoute,
    body: str,
    attributes: SendAttributes,
    remaining: int,
) -> dict[str, Any]:
    """The record (``body`` and ``attributes``) back to its delay queue with ``remaining``
    seconds in its attribute, grouped and deduplicated by its own deduplication id, as the
    transport's pump re-sends it."""
    attributes[DELAY_SECONDS_ATTRIBUTE] = {"DataType": "String", "StringValue": str(remaining)}
    deduplication = record["attributes"].get("MessageDeduplicationId") or record["messageId"]
    request: dict[str, Any] = {
        "QueueUrl": route.source_url,
        "MessageBody": body,
        "MessageAttributes": attributes,
        "MessageGroupId": deduplication,
        "MessageDeduplicationId": deduplication,
    }
    trace = record["attributes"].get("AWSTraceHeader")
    if trace:
        request["MessageSystemAttributes"] = {
            "AWSTraceHeader": {"DataType": "String", "StringValue": trace}
        }
    return request


def _deduplication_id(record: Mapping[str, Any], route: SourceQueueRoute) -> str:
    """SHA-256 of the source queue ARN and the source's deduplication id (else its message id).

    The same for every retry of the same received message; different for equal content coming
    from two queues, which SQS would otherwise merge when both use content-based deduplication.
    """
    import hashlib  # noqa: PLC0415 (lazy: only FIFO routes need it, and it loads OpenSSL)

    source_id = record["attributes"].get("MessageDeduplicationId") or record.get("messageId")
    return hashlib.sha256(f"{route.source}\n{source_id}".encode()).hexdigest()


def message_size(body: str, attributes: Mapping[str, Mapping[str, Any]]) -> int:
    """The size SQS counts: the body plus each attribute's name, data type and value."""
    size = len(body.encode("utf-8", "surrogatepass"))
    for name, attribute in attributes.items():
        value = attribute.get("StringValue")
        size += (
            len(name.encode())
            + len(attribute["DataType"].encode())
            + (len(value.encode()) if isinstance(value, str) else len(attribute["BinaryValue"]))
        )
    return size


def _dead_letter_request(
    record: Mapping[str, Any],
    route: SourceQueueRoute,
    config: RelayConfig,
    refusal: _RefusedError,
    *,
    update: HeadersUpdate | None = None,
    remaining_time: str | None = None,
) -> dict[str, Any] | None:
    """The original message for the dead-letter queue, with the time to be received that
    remains (``remaining_time``, written through ``update``) when it still fits, and a
    ``Relay.Rejection`` attribute when that fits too; ``None`` when the record is too broken
    to be sent anywhere."""
    body = record.get("body")
    if not isinstance(body, str) or not isinstance(record.get("attributes"), dict):
        return None
    try:
        attributes = _send_attributes(record.get("messageAttributes"))
    except _RefusedError:
        return None
    if route.fifo and not record["attributes"].get("MessageGroupId"):
        return None
    if update is not None and remaining_time is not None:
        timed_body, timed_attributes = _with_time_left(record, update, remaining_time)
        if message_size(timed_body, timed_attributes) <= MAX_MESSAGE_BYTES:
            body, attributes = timed_body, timed_attributes
    rejection = json.dumps(
        {
            "kind": refusal.kind,
            "reason": refusal.reason[:MAX_REASON_CHARACTERS],
            "sourceMessageId": record.get("messageId"),
            "sourceQueue": str(route.source),
            "direction": config.direction,
        },
        separators=(",", ":"),
    )
    with_reason = {
        **attributes,
        REJECTION_ATTRIBUTE: {"DataType": "String", "StringValue": rejection},
    }
    if (
        len(with_reason) <= MAX_MESSAGE_ATTRIBUTES
        and message_size(body, with_reason) <= MAX_MESSAGE_BYTES
    ):
        attributes = with_reason
    return _request(record, route, route.dead_letter_url, body, attributes, fifo=route.fifo)
