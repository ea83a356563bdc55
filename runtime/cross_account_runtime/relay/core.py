"""The relay's pure core: what to do with one Lambda SQS record, decided without any I/O.

:func:`relay_message` reads a record and the relay's
:class:`~cross_account_runtime.relay.config.RelayConfig` and returns a
:class:`~cross_account_runtime.relay.decision.Decision`: the ``SendMessage`` request
(:mod:`cross_account_runtime.relay.send_requests`) for the record's destination, with the
address headers stamped (outbound) or translated for a released receiver (inbound) as
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

No network and no logging: :mod:`cross_account_runtime.relay.processor` sends what is decided
here and logs it, and passes the time a delay is measured against; tests call
:func:`relay_message` directly.
"""

from __future__ import annotations

import functools

from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    ArnHeaderError,
    decode,
    substitute_incoming,
)
from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import S3_BODY_KEY, WireFormatError
from cross_account_runtime.nservicebus.wire_reading import wire_form
from cross_account_runtime.nservicebus.wire_writing import HeadersUpdate
from cross_account_runtime.relay.addresses import stamp, translate
from cross_account_runtime.relay.bodies import BodyUpload, body_key, copied_key, upload_key
from cross_account_runtime.relay.config_format import (
    FILE_ROUTES,
    ROUTE_BODY_BUCKET,
    ReceiverAddressing,
    RelayDirection,
)
from cross_account_runtime.relay.decision import Decision, DecisionKind, RefusedError
from cross_account_runtime.relay.delays import (
    DELAY_SECONDS_ATTRIBUTE,
    QUEUE_DELAY_SECONDS,
    remaining_delay,
)
from cross_account_runtime.relay.expiry import time_left
from cross_account_runtime.relay.forms import conversion_problem, convert, moved_to_s3
from cross_account_runtime.relay.send_requests import (
    MAX_MESSAGE_BYTES,
    dead_letter_request,
    message_size,
    redelay_request,
    send_attributes,
    send_request,
    with_time_left,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

    from cross_account_runtime.relay.config import RelayConfig
    from cross_account_runtime.relay.forms import SendAttributes
    from cross_account_runtime.relay.routes import SourceQueueRoute

_TTBR_UNREADABLE: Final = "time_to_be_received_unreadable"
_FORM_KEPT: Final = "form_kept"


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
        except RefusedError as refusal:
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
                body, attributes = with_time_left(record, update, remaining_time)
                return Decision(
                    DecisionKind.REDELAYED,
                    route.source,
                    redelay_request(record, route, body, attributes, remaining),
                    wire_form=found_form,
                    decided_at=None if remaining_time is None else now,
                )
        else:
            remaining = 0
        rewritten: tuple[str, ...] = ()
        unreachable: tuple[str, ...] = ()
        upload: BodyUpload | None = None
        converted_to: str | None = None
        inbound = config.direction is RelayDirection.INBOUND
        source_key = None if inbound or route.body_bucket is None else body_key(record, update)
        copy = (
            None
            if source_key is None
            else (source_key, copied_key(route.source.account, source_key))
        )
        if update is None:
            body, attributes = record["body"], send_attributes(record.get("messageAttributes"))
            if copy is not None:
                attributes[S3_BODY_KEY] = {"DataType": "String", "StringValue": copy[1]}
        else:
            try:
                changes, rewritten, unreachable = _rewrite(update.headers, route, config)
            except RefusedError as refusal:
                if route.forward_unreadable:
                    return _forwarded_unreadable(record, route, refusal)
                raise
            form = _delivered_form(update, route, warnings)
            converted_to = form if form != update.form else None
            if copy is not None:
                # The message names the copy: in its form's place, and in a header that holds
                # the key (by which the attribute form's receiver would read the body).
                if S3_BODY_KEY in update.headers:
                    changes = {**changes, S3_BODY_KEY: copy[1]}
                body, attributes = moved_to_s3(
                    update,
                    form,
                    send_attributes(record.get("messageAttributes")),
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
        request = send_request(
            record, route, route.destination_url, body, attributes, fifo=route.destination_fifo
        )
        if remaining > 0:
            request["DelaySeconds"] = remaining
    except RefusedError as refusal:
        return Decision(
            refusal.kind,
            route.dead_letter_queue,
            dead_letter_request(
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
        converted_to=converted_to,
        decided_at=None if remaining_time is None else now,
    )


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
    refusal = RefusedError(kind, reason)
    update: HeadersUpdate | None = None
    remaining_time: str | None = None
    try:
        update = _nservicebus_headers(record)
    except RefusedError:
        update = None
    if update is not None and update.carries_time_to_be_received:
        try:
            left = time_left(update.time_to_be_received, _sent_milliseconds(record), now)
        except RefusedError:
            left = None
        remaining_time = left.remaining if left is not None else None
    return Decision(
        refusal.kind,
        route.dead_letter_queue,
        dead_letter_request(
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
        raise RefusedError(
            DecisionKind.MALFORMED_RECORD,
            "the record has no SentTimestamp to count its time to be received from",
        ) from None


def _forwarded_unreadable(
    record: Mapping[str, Any], route: SourceQueueRoute, refusal: RefusedError
) -> Decision:
    """A message the relay cannot read, on a route to an error queue: the record as received
    (but a ``Relay.Rejection`` of an earlier refusal) to the destination."""
    request = send_request(
        record,
        route,
        route.destination_url,
        record["body"],
        send_attributes(record.get("messageAttributes")),
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
            send_attributes(record.get("messageAttributes")),
            changes=changes,
            time_to_be_received=remaining_time,
        )
    elif changes or remaining_time is not None:
        message: Mapping[str, Any] = update.write(changes, remaining_time)
        body, attributes = message["body"], send_attributes(message.get("messageAttributes"))
    else:
        body, attributes = record["body"], send_attributes(record.get("messageAttributes"))
    size = message_size(body, attributes)
    if size <= MAX_MESSAGE_BYTES:
        return body, attributes, None
    original = send_attributes(record.get("messageAttributes"))
    added = size - message_size(record["body"], original)
    if route.body_bucket is None or update.s3_body_key:
        raise RefusedError(DecisionKind.OVERSIZE, _oversize_reason(size, added, inbound=inbound))
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
        raise RefusedError(
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


def _check_record(record: Mapping[str, Any], route: SourceQueueRoute) -> None:
    """Refuse a record Lambda would never produce for an SQS queue (so nothing can be
    forwarded or dead-lettered with a field silently missing)."""
    if record.get("eventSource") != "aws:sqs":
        raise RefusedError(
            DecisionKind.MALFORMED_RECORD,
            f"eventSource is {record.get('eventSource')!r}, not 'aws:sqs'; the relay reads SQS "
            "queues only",
        )
    if not isinstance(record.get("body"), str):
        raise RefusedError(DecisionKind.MALFORMED_RECORD, "the record has no text body")
    attributes = record.get("attributes")
    if not isinstance(attributes, dict):
        raise RefusedError(DecisionKind.MALFORMED_RECORD, "the record has no 'attributes' object")
    if route.fifo and not attributes.get("MessageGroupId"):
        raise RefusedError(
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
        raise RefusedError(
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
        raise RefusedError(DecisionKind.MALFORMED_ARN_HEADER, str(error)) from None
    for name, value in decode(headers[ARN_HEADER]).items():
        problem = _queue_arn_problem(value)
        if problem:
            raise RefusedError(
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
