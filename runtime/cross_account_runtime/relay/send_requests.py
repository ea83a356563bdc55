"""The ``SendMessage`` requests the relay makes of a record, and the size SQS counts.

A forward (:func:`send_request`), a delay queue's message back to it until due
(:func:`redelay_request`), a refused record's original message for its source queue's
dead-letter queue (:func:`dead_letter_request`), with a ``Relay.Rejection`` attribute saying
why when SQS's limits leave room for one. Each keeps the record's message attributes (binary
values decoded, a ``Relay.Rejection`` of an earlier refusal dropped), its X-Ray trace header and
its message group. On FIFO routes a forward carries a ``MessageDeduplicationId`` derived from
the source queue ARN and the source's deduplication id (or its message id), so a retried send
within SQS's 5-minute interval is dropped, while identical content from two shadow queues stays
distinct.

Pure: the core (:mod:`cross_account_runtime.relay.core`) builds them, the batch processor sends
them.
"""

from __future__ import annotations

import base64
import binascii
import json

from cross_account_runtime.relay.decision import DecisionKind, RefusedError
from cross_account_runtime.relay.delays import DELAY_SECONDS_ATTRIBUTE

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

    from cross_account_runtime.nservicebus.wire_writing import HeadersUpdate
    from cross_account_runtime.relay.config import RelayConfig
    from cross_account_runtime.relay.forms import SendAttributes
    from cross_account_runtime.relay.routes import SourceQueueRoute

# SQS's limit for one message: body plus attributes (names, data types and values).
MAX_MESSAGE_BYTES: Final = 1_048_576
MAX_MESSAGE_ATTRIBUTES: Final = 10
REJECTION_ATTRIBUTE: Final = "Relay.Rejection"
# Bounds the reason carried on a dead-lettered message; the log line has it whole.
MAX_REASON_CHARACTERS: Final = 2_000


def send_attributes(attributes: object) -> dict[str, dict[str, Any]]:
    """Lambda's ``messageAttributes`` in ``SendMessage``'s shape; binary values decoded.

    A ``Relay.Rejection`` attribute from an earlier refusal is dropped: a message redriven from
    the dead-letter queue should arrive as its sender sent it.
    """
    if attributes is None:
        return {}
    if not isinstance(attributes, dict):
        raise RefusedError(DecisionKind.MALFORMED_RECORD, "messageAttributes is not an object")
    converted: dict[str, dict[str, Any]] = {}
    for name, attribute in attributes.items():
        if name == REJECTION_ATTRIBUTE:
            continue
        data_type = attribute.get("dataType") if isinstance(attribute, dict) else None
        if not isinstance(data_type, str):
            raise RefusedError(
                DecisionKind.MALFORMED_RECORD, f"message attribute {name!r} has no dataType"
            )
        if data_type.startswith("Binary"):
            encoded = attribute.get("binaryValue")
            try:
                value = base64.b64decode(encoded, validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise RefusedError(
                    DecisionKind.MALFORMED_RECORD,
                    f"message attribute {name!r} of type {data_type!r} has no base64 binaryValue",
                ) from None
            converted[name] = {"DataType": data_type, "BinaryValue": value}
            continue
        text = attribute.get("stringValue")
        if not isinstance(text, str):
            raise RefusedError(
                DecisionKind.MALFORMED_RECORD,
                f"message attribute {name!r} of type {data_type!r} has no stringValue",
            )
        converted[name] = {"DataType": data_type, "StringValue": text}
    return converted


def with_time_left(
    record: Mapping[str, Any], update: HeadersUpdate | None, remaining_time: str | None
) -> tuple[str, SendAttributes]:
    """The record's body and attributes, with the time to be received that remains."""
    if update is None or remaining_time is None:
        return record["body"], send_attributes(record.get("messageAttributes"))
    message: Mapping[str, Any] = update.write({}, remaining_time)
    return message["body"], send_attributes(message.get("messageAttributes"))


def send_request(
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


def redelay_request(
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


def dead_letter_request(
    record: Mapping[str, Any],
    route: SourceQueueRoute,
    config: RelayConfig,
    refusal: RefusedError,
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
        attributes = send_attributes(record.get("messageAttributes"))
    except RefusedError:
        return None
    if route.fifo and not record["attributes"].get("MessageGroupId"):
        return None
    if update is not None and remaining_time is not None:
        timed_body, timed_attributes = with_time_left(record, update, remaining_time)
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
    return send_request(record, route, route.dead_letter_url, body, attributes, fifo=route.fifo)
