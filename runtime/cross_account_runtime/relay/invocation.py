"""One invocation of the relay: the Lambda SQS event's records, the order they are decided and
sent in, and what became of each so far.

Each record's receive count and FIFO group are read once. A standard queue's records with the
most receives go first, so a batch larger than the function's time can carry tries the
messages closest to their queue's ``maxReceiveCount``; a FIFO queue's keep their order, and a
failed record stops its group for the rest of the invocation. What the partial batch response
reports failed is kept here, for the batch processor
(:mod:`cross_account_runtime.relay.processor`) to answer with.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from cross_account_runtime.relay.decision import Decision
    from cross_account_runtime.relay.send_batches import BatchCall

    BatchResponse = dict[str, list[dict[str, str]]]
    """``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``."""


class Invocation:
    """What one invocation has found so far: the records (with each one's receive count and
    FIFO group, read once), each decision, which records failed (and so which FIFO groups
    stopped), what was forwarded under which new id, how many had expired."""

    __slots__ = (
        "context",
        "counts",
        "decided",
        "expired",
        "failed",
        "forwarded",
        "groups",
        "records",
        "request_id",
        "stopped",
    )

    def __init__(self, records: list[Mapping[str, Any]], context: Any) -> None:
        self.records = records
        self.counts = [_receive_count(record) for record in records]
        self.groups = [_fifo_group(record) for record in records]
        self.context = context
        self.request_id: str | None = getattr(context, "aws_request_id", None)
        self.decided: dict[int, Decision] = {}
        self.failed: set[int] = set()
        self.forwarded: dict[str, str] = {}
        self.stopped: set[tuple[str, str]] = set()
        self.expired = 0

    def fail(self, index: int) -> None:
        """Record ``index`` is reported failed; on a FIFO queue its group stops."""
        self.failed.add(index)
        group = self.groups[index]
        if group is not None:
            self.stopped.add(group)

    def group_stopped(self, index: int) -> bool:
        """Whether an earlier message of record ``index``'s FIFO group failed."""
        group = self.groups[index]
        return group is not None and group in self.stopped

    def in_priority_order(self) -> list[int]:
        """The records' indices, those of standard queues with the most receives first
        (stable), FIFO queues' in their order."""
        counts, groups = self.counts, self.groups
        return sorted(
            range(len(self.records)), key=lambda i: 0 if groups[i] is not None else -counts[i]
        )

    def remaining_seconds(self) -> float:
        """The function's time left, from Lambda's context; unbounded without one (tests,
        tools)."""
        remaining = getattr(self.context, "get_remaining_time_in_millis", None)
        return float("inf") if remaining is None else remaining() / 1000

    def call_priority(self, call: BatchCall) -> int:
        """Sort key of a planned call: the most receives among its records, negated, for a
        standard queue; 0 for a FIFO queue, whose calls must keep their order."""
        if call.queue.name.endswith(FIFO_SUFFIX):
            return 0
        return -max(self.counts[send.index] for send in call.sends)


def event_records(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
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


def failed_batch(event: Mapping[str, Any]) -> BatchResponse:
    """The partial batch response reporting every record of ``event`` failed: what a relay
    answers while it cannot relay at all, so the messages stay in their queues."""
    return {
        "batchItemFailures": [
            {"itemIdentifier": record["messageId"]} for record in event_records(event)
        ]
    }


def _receive_count(record: Mapping[str, Any]) -> int:
    """The record's ``ApproximateReceiveCount`` (0 if it has none to read)."""
    attributes = record.get("attributes")
    count = attributes.get("ApproximateReceiveCount") if isinstance(attributes, dict) else None
    return int(count) if isinstance(count, str) and count.isdigit() else 0


def _fifo_group(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(source queue, message group)`` for a record from a FIFO queue, else ``None``."""
    source = record.get("eventSourceARN")
    attributes = record.get("attributes")
    if not isinstance(source, str) or not source.endswith(FIFO_SUFFIX):
        return None
    group = attributes.get("MessageGroupId") if isinstance(attributes, dict) else None
    return (source, group if isinstance(group, str) else "")
