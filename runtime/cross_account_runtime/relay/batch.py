"""The account bridge: a Lambda relay that forwards NServiceBus messages across AWS accounts.

Seed 000's bridge moves messages between transports through shadow queues; this relay does the
same between accounts, so endpoints that were never upgraded keep sending to a queue in their
own account:

* **outbound** (sender's account): one shadow queue per remote endpoint the topology lets this
  account send to. For every header that carries a local endpoint's address the relay stamps
  that endpoint's queue ARN into ``NServiceBus.Transport.Sqs.ARN``
  (:func:`cross_account_runtime.nservicebus.arn_header.stamp_outgoing`) and sends the message to the remote queue;
* **inbound** (receiver's account): an ingress queue whose relay substitutes the headers named
  in the ARN header (:func:`cross_account_runtime.nservicebus.arn_header.substitute_incoming`) and delivers the message
  to the local endpoint queue.

Both NServiceBus wire forms are handled (:mod:`cross_account_runtime.nservicebus.wire_format`); a message without
NServiceBus headers is forwarded unchanged. The body, the message attributes, the X-Ray trace
header and the FIFO message group are kept.

Configuration (:mod:`cross_account_runtime.relay.config`): ``RELAY_DIRECTION``, ``RELAY_ROUTES``,
``RELAY_LOCAL_ENDPOINTS``, and ``POWERTOOLS_SERVICE_NAME`` for the log lines' ``service``.

**Failure semantics.** A message is acknowledged (left out of ``batchItemFailures``, so Lambda
deletes it) only after SQS accepted a send of it, to its destination or to a dead-letter queue.
Refusals are deterministic (a malformed ARN header, headers that cannot be read or stamped, a
message too large once rewritten), so retrying them would only delay the verdict: the relay sends
such a message, unchanged, straight to its source queue's dead-letter queue, with a
``Relay.Rejection`` attribute saying why when SQS's limits leave room for one, and then
acknowledges it. This keeps the reason on the message, spends no receives, and on FIFO queues
does not hold back (and eventually dead-letter) the messages queued behind it in its group, as
repeated failures would. Every other failure is
reported as a batch-item failure and left to SQS: a failed or throttled ``SendMessage``, a failed
dead-letter send, a message from a queue with no route (whose dead-letter queue is therefore
unknown), an unexpected error. SQS retries the message and, after ``maxReceiveCount`` receives,
its redrive policy moves it to the same dead-letter queue. On FIFO queues a failed message stops
the later messages of its group in the batch (reported failed, not attempted) so that order
within the group holds; other groups go on.

**Delivery guarantee.** At least once. On standard queues a message is forwarded again if the
invocation fails after its send (duplicates possible). On FIFO queues a retry cannot duplicate:
the forward carries the source's ``MessageGroupId`` and a ``MessageDeduplicationId`` derived
deterministically from the source queue ARN and the source's deduplication id (or its message id
when absent), so SQS drops a repeat within its 5-minute deduplication interval; the source queue
is part of the derivation so that identical content arriving from two shadow queues is never
taken for a duplicate.

**Logs** (JSON lines, :mod:`cross_account_runtime.common.json_log`): one ``batch relayed`` line per invocation with
the counts and a map of each forwarded message id to the id it was sent under, and one line per
message that was not simply forwarded (dead-lettered, refused, send failed, not attempted,
unexpected error) with its ``message_id``, ``outcome``, ``kind`` and ``reason``.

Nothing heavy is imported with the module: ``boto3`` loads when the first client is created,
one client per destination region, kept for the life of the container.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import traceback

from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.nservicebus.arn_header import (
    ARN_HEADER,
    ArnHeaderError,
    UnencodableEntryError,
    decode,
    stamp_outgoing,
    substitute_incoming,
)
from cross_account_runtime.nservicebus.transport_address import AddressError, parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import (
    HEADERS_ATTRIBUTE,
    WireFormatError,
    read_headers,
    wire_form,
    write_headers,
)
from cross_account_runtime.relay.config import (
    ENV_ROUTES,
    INBOUND,
    ConfigurationError,
    RelayConfig,
    Route,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final

    from cross_account_runtime.nservicebus.transport_address import QueueArn

    Send = Callable[[str, dict[str, Any]], str]
    """``(region, SendMessage parameters) -> MessageId``; raises when SQS did not accept it."""

ENV_SERVICE_NAME: Final = "POWERTOOLS_SERVICE_NAME"
DEFAULT_SERVICE: Final = "sqs-relay"

# SQS's limit for one message: body plus attributes (names, data types and values).
MAX_MESSAGE_BYTES: Final = 1_048_576
MAX_MESSAGE_ATTRIBUTES: Final = 10
REJECTION_ATTRIBUTE: Final = "Relay.Rejection"
# Bounds the reason carried on a dead-lettered message; the log line has it whole.
MAX_REASON_CHARACTERS: Final = 2_000

FORWARDED: Final = "forwarded"
UNKNOWN_ROUTE: Final = "unknown_route"
MALFORMED_RECORD: Final = "malformed_record"
MALFORMED_ARN_HEADER: Final = "malformed_arn_header"
UNREADABLE_HEADERS: Final = "unreadable_headers"
UNSTAMPABLE_HEADER: Final = "unstampable_header"
OVERSIZE: Final = "oversize"

# Fail fast enough that a batch of ten finishes well within a typical function timeout;
# botocore's standard mode retries throttling and transient errors with backoff first.
_CLIENT_CONFIG: Final = {
    "connect_timeout": 2,
    "read_timeout": 5,
    "retries": {"mode": "standard", "max_attempts": 3},
}


class Outcome:
    """What to do with one record, decided without any I/O.

    ``kind`` is :data:`FORWARDED` or why the record is refused. ``request`` holds the
    ``SendMessage`` parameters for ``queue`` (the destination, or the dead-letter queue of a
    refused record); it is ``None`` when no send is possible, so the record must be reported
    failed and left to the queue's redrive policy. ``rewritten_headers`` names the headers
    stamped or substituted, ``wire_form`` where the NServiceBus headers were.
    """

    __slots__ = ("kind", "queue", "reason", "request", "rewritten_headers", "wire_form")

    def __init__(
        self,
        kind: str,
        queue: QueueArn | None,
        request: dict[str, Any] | None,
        *,
        reason: str = "",
        rewritten_headers: tuple[str, ...] = (),
        wire_form: str | None = None,
    ) -> None:
        self.kind = kind
        self.queue = queue
        self.request = request
        self.reason = reason
        self.rewritten_headers = rewritten_headers
        self.wire_form = wire_form

    @property
    def forwarded(self) -> bool:
        """Whether the record goes to its destination (rather than being refused)."""
        return self.kind == FORWARDED

    def __repr__(self) -> str:
        return f"Outcome(kind={self.kind!r}, queue={str(self.queue)!r}, reason={self.reason!r})"


class _RefusedError(Exception):
    """Ends the relaying of a record with a refusal; each check is one ``raise``."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def relay_message(record: Mapping[str, Any], config: RelayConfig) -> Outcome:
    """Decide what to do with one record of a Lambda SQS event: the pure core of the relay.

    Returns an :class:`Outcome` whose ``request`` is ready for ``SendMessage``: the rewritten
    message for its destination, or for a refused record the original message for its source
    queue's dead-letter queue.
    """
    source = record.get("eventSourceARN")
    route = config.routes.get(source) if isinstance(source, str) else None
    if route is None:
        return Outcome(
            UNKNOWN_ROUTE,
            None,
            None,
            reason=f"no route for source queue {source!r} in {ENV_ROUTES}; the message is "
            "reported failed until the queue's redrive policy moves it to its dead-letter "
            "queue. Add the queue to the topology's routes, or remove it from the function's "
            "event sources",
        )
    found_form: str | None = None
    try:
        _check_record(record, route)
        headers = _nservicebus_headers(record)
        message: Mapping[str, Any] = record
        rewritten: tuple[str, ...] = ()
        if headers is not None:
            # Readers look for the headers attribute before the wrapped body, so once headers
            # were read its presence alone tells the form (asking wire_form would parse again).
            attributes_in = record.get("messageAttributes")
            found_form = (
                "attribute"
                if isinstance(attributes_in, dict) and HEADERS_ATTRIBUTE in attributes_in
                else "wrapped"
            )
            changed, rewritten = _rewrite(headers, config)
            if changed != headers:
                message = write_headers(record, changed)
        attributes = _send_attributes(message.get("messageAttributes"))
        request = _request(record, route, route.destination_url, message["body"], attributes)
        size = _size(message["body"], attributes)
        if size > MAX_MESSAGE_BYTES:
            raise _RefusedError(
                OVERSIZE,
                f"the message would be {size} bytes (body and attributes) once rewritten, over "
                f"SQS's limit of {MAX_MESSAGE_BYTES}; it cannot be forwarded. Send large "
                "payloads through S3 (NServiceBus's S3BodyKey)",
            )
    except _RefusedError as refusal:
        return Outcome(
            refusal.kind,
            route.dead_letter_queue,
            _dead_letter_request(record, route, config, refusal),
            reason=refusal.reason,
            wire_form=found_form,
        )
    return Outcome(
        FORWARDED, route.destination, request, rewritten_headers=rewritten, wire_form=found_form
    )


def _check_record(record: Mapping[str, Any], route: Route) -> None:
    """Refuse a record Lambda would never produce for an SQS queue (so nothing can be
    forwarded or dead-lettered with a field silently missing)."""
    if record.get("eventSource") != "aws:sqs":
        raise _RefusedError(
            MALFORMED_RECORD,
            f"eventSource is {record.get('eventSource')!r}, not 'aws:sqs'; the relay reads SQS "
            "queues only",
        )
    if not isinstance(record.get("body"), str):
        raise _RefusedError(MALFORMED_RECORD, "the record has no text body")
    attributes = record.get("attributes")
    if not isinstance(attributes, dict):
        raise _RefusedError(MALFORMED_RECORD, "the record has no 'attributes' object")
    if route.fifo and not attributes.get("MessageGroupId"):
        raise _RefusedError(
            MALFORMED_RECORD,
            "the record comes from a FIFO queue but has no MessageGroupId; forwarding it would "
            "lose its ordering",
        )


def _nservicebus_headers(record: Mapping[str, Any]) -> dict[str, str] | None:
    """The record's NServiceBus headers, or ``None`` for a native message (forwarded as is)."""
    try:
        return read_headers(record)
    except WireFormatError as error:
        try:
            native = wire_form(record) == "native"
        except WireFormatError:
            native = False
        if native:
            return None
        raise _RefusedError(
            UNREADABLE_HEADERS, f"the NServiceBus headers cannot be read: {error}"
        ) from None


def _rewrite(
    headers: dict[str, str], config: RelayConfig
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Stamp (outbound) or substitute (inbound); return the headers and the names rewritten."""
    if config.direction == INBOUND:
        if ARN_HEADER not in headers:
            return headers, ()
        substituted, entries = _read_arn_header(headers)
        return substituted, tuple(entries)
    if ARN_HEADER in headers:
        _read_arn_header(headers)
    values = set(headers.values())
    present = [address for address in config.local_endpoints if address in values]
    if not present:
        return headers, ()
    stamped = headers
    try:
        for address in present:
            stamped = stamp_outgoing(stamped, address, config.local_endpoints[address])
    except UnencodableEntryError as error:
        raise _RefusedError(
            UNSTAMPABLE_HEADER,
            f"a header carrying the local address cannot be listed in the {ARN_HEADER} header: "
            f"{error}",
        ) from None
    addresses = set(present)
    names = tuple(
        name for name, value in headers.items() if value in addresses and name != ARN_HEADER
    )
    return stamped, names


def _read_arn_header(headers: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The substituted headers and the ARN header's entries, checked as an ARN-aware receiver
    reads them and with every value a queue ARN (the values are addresses replies go to)."""
    try:
        substituted = substitute_incoming(headers)
    except ArnHeaderError as error:
        raise _RefusedError(MALFORMED_ARN_HEADER, str(error)) from None
    entries = decode(headers[ARN_HEADER])
    for name, value in entries.items():
        problem = _queue_arn_problem(value)
        if problem:
            raise _RefusedError(
                MALFORMED_ARN_HEADER,
                f"{ARN_HEADER} header: the entry for {name!r} is not a queue ARN: {problem}",
            )
    return substituted, entries


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
        raise _RefusedError(MALFORMED_RECORD, "messageAttributes is not an object")
    converted: dict[str, dict[str, Any]] = {}
    for name, attribute in attributes.items():
        if name == REJECTION_ATTRIBUTE:
            continue
        data_type = attribute.get("dataType") if isinstance(attribute, dict) else None
        if not isinstance(data_type, str):
            raise _RefusedError(MALFORMED_RECORD, f"message attribute {name!r} has no dataType")
        if data_type.startswith("Binary"):
            encoded = attribute.get("binaryValue")
            try:
                value = base64.b64decode(encoded, validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise _RefusedError(
                    MALFORMED_RECORD,
                    f"message attribute {name!r} of type {data_type!r} has no base64 binaryValue",
                ) from None
            converted[name] = {"DataType": data_type, "BinaryValue": value}
            continue
        text = attribute.get("stringValue")
        if not isinstance(text, str):
            raise _RefusedError(
                MALFORMED_RECORD,
                f"message attribute {name!r} of type {data_type!r} has no stringValue",
            )
        converted[name] = {"DataType": data_type, "StringValue": text}
    return converted


def _request(
    record: Mapping[str, Any],
    route: Route,
    queue_url: str,
    body: str,
    attributes: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """``SendMessage`` parameters keeping the message group, trace header and, on FIFO
    queues, a deduplication id that makes a retried send a no-op."""
    request: dict[str, Any] = {"QueueUrl": queue_url, "MessageBody": body}
    if attributes:
        request["MessageAttributes"] = attributes
    system = record["attributes"]
    group = system.get("MessageGroupId")
    if group:
        # Kept on standard queues too, where it is a fair-queue tenant id.
        request["MessageGroupId"] = group
    if route.fifo:
        request["MessageDeduplicationId"] = _deduplication_id(record, route)
    trace = system.get("AWSTraceHeader")
    if trace:
        request["MessageSystemAttributes"] = {
            "AWSTraceHeader": {"DataType": "String", "StringValue": trace}
        }
    return request


def _deduplication_id(record: Mapping[str, Any], route: Route) -> str:
    """SHA-256 of the source queue ARN and the source's deduplication id (else its message id).

    The same for every retry of the same received message; different for equal content coming
    from two queues, which SQS would otherwise merge when both use content-based deduplication.
    """
    import hashlib  # noqa: PLC0415 (lazy: only FIFO routes need it, and it loads OpenSSL)

    source_id = record["attributes"].get("MessageDeduplicationId") or record.get("messageId")
    return hashlib.sha256(f"{route.source}\n{source_id}".encode()).hexdigest()


def _size(body: str, attributes: Mapping[str, Mapping[str, Any]]) -> int:
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
    record: Mapping[str, Any], route: Route, config: RelayConfig, refusal: _RefusedError
) -> dict[str, Any] | None:
    """The original message for the dead-letter queue, with a ``Relay.Rejection`` attribute
    when it fits; ``None`` when the record is too broken to be sent anywhere."""
    body = record.get("body")
    if not isinstance(body, str) or not isinstance(record.get("attributes"), dict):
        return None
    try:
        attributes = _send_attributes(record.get("messageAttributes"))
    except _RefusedError:
        return None
    if route.fifo and not record["attributes"].get("MessageGroupId"):
        return None
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
    if len(with_reason) <= MAX_MESSAGE_ATTRIBUTES and _size(body, with_reason) <= MAX_MESSAGE_BYTES:
        attributes = with_reason
    return _request(record, route, route.dead_letter_url, body, attributes)


class SqsClients:
    """One SQS client per region, created on first use and kept for the container's life.

    ``create`` makes a client for a region (default: :func:`create_sqs_client`); tests and
    benchmarks pass their own.
    """

    def __init__(self, create: Callable[[str], Any] | None = None) -> None:
        self._create = create if create is not None else create_sqs_client
        self._clients: dict[str, Any] = {}

    def client(self, region: str) -> Any:
        """The client for ``region``."""
        client = self._clients.get(region)
        if client is None:
            client = self._clients[region] = self._create(region)
        return client

    def send(self, region: str, request: dict[str, Any]) -> str:
        """``SendMessage`` in ``region``; returns the new message's id."""
        message_id: str = self.client(region).send_message(**request)["MessageId"]
        return message_id


def create_sqs_client(region: str) -> Any:
    """A boto3 SQS client for ``region``, with short timeouts and standard retries; the
    credentials and any endpoint override come from the environment as usual."""
    import boto3  # noqa: PLC0415 (lazy, for cold starts)
    from botocore.config import Config  # noqa: PLC0415 (lazy, for cold starts)

    return boto3.client("sqs", region_name=region, config=Config(**_CLIENT_CONFIG))


class Relay:
    """The handler: call it with a Lambda SQS event and context; returns the partial batch
    response ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.

    ``send`` performs one ``SendMessage`` (default: :class:`SqsClients`), ``logger`` writes the
    JSON log lines; both are injectable.
    """

    def __init__(
        self,
        config: RelayConfig,
        *,
        send: Send | None = None,
        logger: JsonLogger | None = None,
    ) -> None:
        self.config = config
        self.send = send if send is not None else SqsClients().send
        self.logger = logger if logger is not None else default_logger()
        self._cold = True

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], **dependencies: Any) -> Relay:
        """Build from ``environ`` (see :mod:`cross_account_runtime.relay.config`)."""
        return cls(RelayConfig.from_environment(environ), **dependencies)

    def __call__(
        self, event: Mapping[str, Any], context: Any = None
    ) -> dict[str, list[dict[str, str]]]:
        failures: list[dict[str, str]] = []
        forwarded: dict[str, str] = {}
        stopped_groups: set[tuple[str, str]] = set()
        request_id = getattr(context, "aws_request_id", None)
        records = _records(event)
        for record in records:
            group = _fifo_group(record)
            if group is not None and group in stopped_groups:
                self._log(
                    "INFO",
                    "not attempted: an earlier message of its FIFO group failed in this batch",
                    record,
                    request_id,
                    outcome="not_attempted",
                )
                failures.append({"itemIdentifier": record["messageId"]})
                continue
            if not self._relay(record, request_id, forwarded):
                failures.append({"itemIdentifier": record["messageId"]})
                if group is not None:
                    stopped_groups.add(group)
        # One line for the whole batch: a line per forwarded message would cost more than
        # relaying it. It maps each forwarded message id to the id it was sent under.
        self.logger.info(
            "batch relayed",
            records=len(records),
            forwarded=len(forwarded),
            dead_lettered=len(records) - len(forwarded) - len(failures),
            failed=len(failures),
            forwarded_messages=forwarded or None,
            cold_start=self._cold,
            function_request_id=request_id,
        )
        self._cold = False
        return {"batchItemFailures": failures}

    def _relay(
        self, record: Mapping[str, Any], request_id: str | None, forwarded: dict[str, str]
    ) -> bool:
        """Relay one record; ``True`` once SQS accepted it somewhere (so it may be deleted).

        A forwarded record is added to ``forwarded`` (its id to the id it was sent under)
        instead of being logged on its own line.
        """
        try:
            outcome = relay_message(record, self.config)
        except Exception as error:
            # A defect must cost a retry, never the message.
            self._log(
                "ERROR",
                "unexpected error; the message is reported failed and will be retried",
                record,
                request_id,
                outcome="error",
                exception_name=type(error).__name__,
                exception="".join(traceback.format_exception(error)),
            )
            return False
        facts: dict[str, object] = {
            "kind": outcome.kind,
            "reason": outcome.reason or None,
            "wire_form": outcome.wire_form,
            "rewritten_headers": list(outcome.rewritten_headers) or None,
        }
        if outcome.request is None or outcome.queue is None:
            self._log(
                "ERROR",
                "refused; reported failed, so the queue's redrive policy moves it to its "
                "dead-letter queue",
                record,
                request_id,
                outcome="refused",
                **facts,
            )
            return False
        try:
            sent_id = self.send(outcome.queue.region, outcome.request)
        except Exception as error:
            # Whatever SQS or the network answered, the message stays in its queue to be retried.
            self._log(
                "WARNING",
                ("forward failed" if outcome.forwarded else "dead-letter send failed")
                + "; reported failed, so SQS retries it",
                record,
                request_id,
                outcome="send_failed",
                destination_queue=str(outcome.queue),
                error=f"{type(error).__name__}: {error}",
                **facts,
            )
            return False
        if outcome.forwarded:
            forwarded[record["messageId"]] = sent_id
        else:
            self._log(
                "ERROR",
                "refused; sent to the dead-letter queue",
                record,
                request_id,
                outcome="dead_lettered",
                destination_queue=str(outcome.queue),
                sent_message_id=sent_id,
                **facts,
            )
        return True

    def _log(
        self,
        level: str,
        message: str,
        record: Mapping[str, Any],
        request_id: str | None,
        **fields: object,
    ) -> None:
        attributes = record.get("attributes")
        self.logger.log(
            level,
            message,
            {
                "message_id": record.get("messageId"),
                "source_queue": record.get("eventSourceARN"),
                "receive_count": (
                    attributes.get("ApproximateReceiveCount")
                    if isinstance(attributes, dict)
                    else None
                ),
                **fields,
                "cold_start": self._cold,
                "function_request_id": request_id,
            },
        )


def _records(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The event's records; an event that is not an SQS batch fails the whole invocation, so
    Lambda retries the batch rather than the relay guessing which messages it holds."""
    records = event.get("Records") if isinstance(event, dict) else None
    if not isinstance(records, list) or not all(
        isinstance(record, dict) and isinstance(record.get("messageId"), str) for record in records
    ):
        raise ValueError(
            "the event is not a Lambda SQS event (a 'Records' list whose items have a "
            "'messageId'); invoke the relay through an SQS event source mapping"
        )
    return records


def _fifo_group(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(source queue, message group)`` for a record from a FIFO queue, else ``None``."""
    source = record.get("eventSourceARN")
    attributes = record.get("attributes")
    if not isinstance(source, str) or not source.endswith(".fifo"):
        return None
    group = attributes.get("MessageGroupId") if isinstance(attributes, dict) else None
    return (source, group if isinstance(group, str) else "")


def default_logger() -> JsonLogger:
    """A logger named by ``POWERTOOLS_SERVICE_NAME``, else ``sqs-relay``."""
    return JsonLogger(os.environ.get(ENV_SERVICE_NAME) or DEFAULT_SERVICE)


@functools.cache
def _default_relay() -> Relay:
    """The relay configured from ``os.environ``, built on a container's first invocation."""
    return Relay.from_environment(os.environ)


def handler(event: Mapping[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
    """The Lambda entry point (``cross_account_runtime.relay.batch.handler``).

    While the configuration is unusable every record is reported failed, with the error and
    its fix logged: the messages stay in their queues (and reach the dead-letter queues after
    ``maxReceiveCount`` receives) instead of being forwarded anywhere or dropped.
    """
    try:
        relay = _default_relay()
    except ConfigurationError as error:
        default_logger().error(
            "configuration error; every message is reported failed",
            outcome="misconfigured",
            reason=str(error),
            function_request_id=getattr(context, "aws_request_id", None),
        )
        return {
            "batchItemFailures": [
                {"itemIdentifier": record["messageId"]} for record in _records(event)
            ]
        }
    return relay(event, context)
