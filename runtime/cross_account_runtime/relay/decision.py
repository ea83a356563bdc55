"""What the relay decides for one record: a :class:`Decision`, of a :class:`DecisionKind`.

The core (:func:`cross_account_runtime.relay.core.relay_message`) makes the decision without any
I/O; the batch processor (:mod:`cross_account_runtime.relay.processor`) carries it out: copies
or puts the body it names, sends its request, logs it. A refusal travels through the core as a
:class:`RefusedError` until it becomes the decision to dead-letter the record.
"""

from __future__ import annotations

import enum

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than most
# of this module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from cross_account_runtime.nservicebus.queue_arn import QueueArn
    from cross_account_runtime.relay.bodies import BodyUpload


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
    the receiver will make of it that the relay could not change. ``converted_to`` is the form
    the request carries when the relay converted the message for its receiver (``None``: sent
    in ``wire_form``, its own). ``decided_at`` is the time
    (epoch seconds) the request's time to be received was counted at, ``None`` when it carries
    none.
    """

    __slots__ = (
        "body_copy",
        "converted_to",
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
        converted_to: str | None = None,
        decided_at: float | None = None,
    ) -> None:
        self.body_copy = body_copy
        self.converted_to = converted_to
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


class RefusedError(Exception):
    """Ends the relaying of a record with a refusal; each check is one ``raise``, and the core
    turns it into the dead-letter decision."""

    def __init__(self, kind: DecisionKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
