"""The log events the sample generator makes, and the truth they add up to.

Each :class:`LogEvent` carries, beside the record's text, its :class:`RecordFacts`: what the
generator knows the record is, rather than what a reader finds in its text. A
:class:`TruthCounter` counts those facts as the events pass, in constant memory, into the
:class:`Truth` the job's summary must reproduce from the text alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# A delivery-status record's ``status``: the two values SNS writes.
SUCCESS = "SUCCESS"
FAILURE = "FAILURE"


class RecordFacts(NamedTuple):
    """What a generated record is, known from the generator rather than read from its text:
    what :class:`Truth` counts."""

    topic: str
    destination: str
    protocol: str
    message_id: str
    status: str
    cause: str | None
    retried: bool
    http_4xx_success: bool


class LogEvent(NamedTuple):
    """One CloudWatch Logs event holding one delivery-status record (``message``)."""

    log_group: str
    log_stream: str
    owner: str
    timestamp_ms: int
    message: str
    facts: RecordFacts


@dataclass
class Truth:
    """Counts of what was generated; the job's summary must report the same numbers.

    A delivery is a (topic, destination, messageId): ``duplicated_deliveries`` have more than
    one record, ``duplicate_extra_records`` are the records beyond each delivery's first, and
    ``lost`` deliveries have a FAILURE record and no SUCCESS one.
    """

    records: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_cause: Counter[str] = field(default_factory=Counter)
    by_protocol: Counter[str] = field(default_factory=Counter)
    retried: int = 0
    retried_succeeded: int = 0
    http_4xx_success: int = 0
    duplicated_deliveries: int = 0
    duplicate_extra_records: int = 0
    lost: int = 0

    def __add__(self, other: Truth) -> Truth:
        """The counts of two streams with no delivery in common (such as two chunks)."""
        return Truth(
            records=self.records + other.records,
            by_status=self.by_status + other.by_status,
            by_cause=self.by_cause + other.by_cause,
            by_protocol=self.by_protocol + other.by_protocol,
            retried=self.retried + other.retried,
            retried_succeeded=self.retried_succeeded + other.retried_succeeded,
            http_4xx_success=self.http_4xx_success + other.http_4xx_success,
            duplicated_deliveries=self.duplicated_deliveries + other.duplicated_deliveries,
            duplicate_extra_records=self.duplicate_extra_records + other.duplicate_extra_records,
            lost=self.lost + other.lost,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "by_status": dict(sorted(self.by_status.items())),
            "by_cause": dict(sorted(self.by_cause.items())),
            "by_protocol": dict(sorted(self.by_protocol.items())),
            "retried": self.retried,
            "retried_succeeded": self.retried_succeeded,
            "http_4xx_success": self.http_4xx_success,
            "duplicated_deliveries": self.duplicated_deliveries,
            "duplicate_extra_records": self.duplicate_extra_records,
            "lost": self.lost,
        }


class _DeliveryState:
    """Records of one delivery seen so far, and whether one said SUCCESS or FAILURE."""

    __slots__ = ("failed", "records", "succeeded")

    def __init__(self) -> None:
        self.records = 0
        self.succeeded = False
        self.failed = False


class TruthCounter:
    """The :class:`Truth` of the events passed to :meth:`add`, kept current as they pass.

    Memory does not grow with the records: the generator writes all records of one published
    message back to back (a delivery's duplicate is the record right after it), and message
    ids are random 128-bit UUIDs, so a delivery's records are all seen while its message is
    the current one. Only that message's deliveries are remembered.
    """

    def __init__(self) -> None:
        self.truth = Truth()
        self._message_id: str | None = None
        self._deliveries: dict[tuple[str, str], _DeliveryState] = {}

    def add(self, event: LogEvent) -> None:
        facts = event.facts
        truth = self.truth
        truth.records += 1
        truth.by_status[facts.status] += 1
        truth.by_protocol[facts.protocol] += 1
        if facts.cause is not None:
            truth.by_cause[facts.cause] += 1
        if facts.retried:
            truth.retried += 1
            truth.retried_succeeded += facts.status == SUCCESS
        truth.http_4xx_success += facts.http_4xx_success
        if facts.message_id != self._message_id:
            self._message_id = facts.message_id
            self._deliveries.clear()
        key = (facts.topic, facts.destination)
        state = self._deliveries.get(key)
        if state is None:
            state = self._deliveries[key] = _DeliveryState()
        if state.records:
            truth.duplicate_extra_records += 1
            truth.duplicated_deliveries += state.records == 1
        state.records += 1
        was_lost = state.failed and not state.succeeded
        if facts.status == SUCCESS:
            state.succeeded = True
        else:
            state.failed = True
        truth.lost += (state.failed and not state.succeeded) - was_lost
