"""What the model sent through :class:`~tests.local_aws.released_transport.fake_sqs.FakeSqs`,
read back: the entries a queue got (batched or alone), their envelopes, and each as the message a
receive of that queue would return — so one model endpoint's output can be another's input
without AWS."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from tests.local_aws.released_transport.fake_sqs import FakeSqs

SENT: datetime = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def sent_to(sqs: FakeSqs, queue_url: str) -> list[dict[str, Any]]:
    """Every message sent to ``queue_url`` (the fake answers a queue's name as its URL), in
    order: batch entries and single sends alike."""
    sent: list[dict[str, Any]] = []
    for operation, request in sqs.requests:
        if operation == "send_message_batch" and request["QueueUrl"] == queue_url:
            sent.extend(request["Entries"])
        elif operation == "send_message" and request["QueueUrl"] == queue_url:
            sent.append(request)
    return sent


def envelope(entry: dict[str, Any]) -> dict[str, Any]:
    """The wrapped body of a sent message."""
    parsed: dict[str, Any] = json.loads(entry["MessageBody"])
    return parsed


def attribute(entry: dict[str, Any], name: str) -> str | None:
    """One message attribute's text, if the message has it."""
    value = entry.get("MessageAttributes", {}).get(name)
    return None if value is None else value.get("StringValue")


def as_received(
    entry: dict[str, Any], *, sent: datetime = SENT, receive_count: int = 1
) -> dict[str, Any]:
    """A sent message as a receive returns it: a new native id, a receipt handle, the body, the
    attributes and the system attributes the pumps ask for."""
    return {
        "MessageId": str(uuid.uuid4()),
        "ReceiptHandle": str(uuid.uuid4()),
        "Body": entry["MessageBody"],
        "MessageAttributes": dict(entry.get("MessageAttributes", {})),
        "Attributes": {
            "SentTimestamp": str(int(sent.timestamp() * 1000)),
            "ApproximateReceiveCount": str(receive_count),
        },
    }
