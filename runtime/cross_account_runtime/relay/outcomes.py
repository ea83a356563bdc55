"""What became of each message the relay logs a line about (:class:`LoggedOutcome`), and what
one batch did, as metrics: counted from the batch and from those lines, written as one line of
CloudWatch's embedded metric format (:mod:`cross_account_runtime.common.emf`).

Every batch writes the same core counts, zeros included, so an alarm on any of them has data
each minute the relay runs: ``Records``, ``Forwarded``, ``DeadLettered``, ``Expired`` (a
message whose time to be received ran out: acknowledged, never delivered, otherwise invisible),
``Failed`` (reported for redelivery; not a Lambda ``Errors``) and ``SendRequests``. Then, only
when they happened, one count per outcome of the lines the batch logged (``DestinationMissing``,
``KeyRefused``, ``SendFailed``, ``Refused``, ``NotAttempted``, ``UnreachableAddress``, ...: the
closed set of ``LoggedOutcome``), the bodies carried through S3 (``BodiesCopied``,
``BodiesUploaded``), the messages converted to their receiver's form (``FormsConverted``) and one per reason a message was dead-lettered (``DeadLettered.<Kind>``). The dimensions are the relay's service and direction: bounded, never
a message id or a queue.
"""

from __future__ import annotations

import enum

from cross_account_runtime.common.emf import metric_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class LoggedOutcome(enum.StrEnum):
    """The ``outcome`` of a log line about a message that was not simply forwarded (and of
    the configuration error line). A ``StrEnum``, so the lines carry the plain text."""

    NOT_ATTEMPTED = "not_attempted"
    """FIFO: an earlier message of the same group failed in this batch; or too little of the
    function's time was left for the call."""
    REFUSED = "refused"
    """No send can carry it; reported failed, so the queue's redrive policy moves it."""
    SEND_FAILED = "send_failed"
    """The forward or the dead-letter send failed; reported failed, so SQS retries it."""
    DESTINATION_MISSING = "destination_missing"
    """The send failed because the destination queue does not exist; reported failed."""
    KEY_REFUSED = "key_refused"
    """The send failed because the queue's KMS key refused it; reported failed."""
    BODY_COPY_FAILED = "body_copy_failed"
    """The S3 body could not be copied (for a reason a retry may cure); reported failed."""
    BODY_UPLOAD_FAILED = "body_upload_failed"
    """A body that no longer fits inline could not be put in S3; reported failed."""
    DEAD_LETTERED = "dead_lettered"
    """Refused, or its send failed on its last receive, and sent to the dead-letter queue;
    acknowledged."""
    EXPIRED = "expired"
    """Its time to be received had run out: not delivered, acknowledged (the receiving
    transport would have discarded it; not a loss)."""
    FORWARDED_UNREADABLE = "forwarded_unreadable"
    """Unreadable, forwarded unchanged on a route to an error queue."""
    ERROR = "error"
    """An unexpected error; reported failed (a defect costs a retry, never the message)."""
    MISCONFIGURED = "misconfigured"
    """The configuration is unusable; every record is reported failed."""
    UNREACHABLE_ADDRESS = "unreachable_address"
    """Forwarded, but an address header names a queue the released receiver cannot reach by
    name: an answer to it would fail there (and reach the receiver's error queue)."""


BODY_COPIED = "BodiesCopied"
"""A body in S3 copied into the destination account's bucket (the transport's large bodies)."""
BODY_UPLOADED = "BodiesUploaded"
"""A body put in S3 because it no longer fits inline once rewritten."""
FORM_CONVERTED = "FormsConverted"
"""A message sent in its receiver's wire form rather than its own (wrapped to the attribute
form, or back)."""

DIRECTION_DIMENSION = "Direction"
"""The dimension beside the service's (:data:`~cross_account_runtime.common.emf.SERVICE_DIMENSION`)
on every relay metric: ``outbound`` or ``inbound``."""


class RelayMetric(enum.StrEnum):
    """The counts every batch writes, zeros included (the constructs' alarms and dashboard read
    them by these names)."""

    RECORDS = "Records"
    """Messages the batch brought."""
    FORWARDED = "Forwarded"
    """Sent on to their destination."""
    DEAD_LETTERED = "DeadLettered"
    """Sent to the source queue's dead-letter queue by the relay itself."""
    EXPIRED = "Expired"
    """Acknowledged undelivered: their time to be received had run out."""
    FAILED = "Failed"
    """Reported failed, so SQS delivers them again (a send failure among them)."""
    SEND_REQUESTS = "SendRequests"
    """``SendMessageBatch`` calls made."""


CORE: tuple[RelayMetric, ...] = tuple(RelayMetric)
"""The counts every batch writes, in the order :func:`batch_counts` takes them."""


class OutcomeTally:
    """The outcomes of the lines one batch logged, and why each dead-lettered message was."""

    __slots__ = ("events", "outcomes", "reasons")

    def __init__(self) -> None:
        self.outcomes: dict[str, int] = {}
        self.reasons: dict[str, int] = {}
        self.events: dict[str, int] = {}
        """What the batch did that no line logs: :data:`BODY_COPIED`, :data:`BODY_UPLOADED`."""

    def note(self, event: str) -> None:
        """Count one ``event`` of the batch."""
        self.events[event] = self.events.get(event, 0) + 1

    def count(self, fields: Mapping[str, object]) -> None:
        """Count a logged line by its ``outcome`` (and, dead-lettered, its ``kind``)."""
        outcome = fields.get("outcome")
        if outcome is None:
            return
        name = str(outcome)
        self.outcomes[name] = self.outcomes.get(name, 0) + 1
        kind = fields.get("kind")
        if name == LoggedOutcome.DEAD_LETTERED and kind is not None:
            self.reasons[str(kind)] = self.reasons.get(str(kind), 0) + 1


def batch_counts(core: tuple[int, ...], tally: OutcomeTally) -> dict[str, int]:
    """The metrics of one batch: the :data:`CORE` counts (in that order), then the tally's."""
    counts: dict[str, int] = {str(name): number for name, number in zip(CORE, core, strict=True)}
    for outcome, number in sorted(tally.outcomes.items()):
        name = metric_name(outcome)
        if name not in counts:
            counts[name] = number
    counts.update(sorted(tally.events.items()))
    for reason, number in sorted(tally.reasons.items()):
        counts[f"DeadLettered.{metric_name(reason)}"] = number
    return counts
