"""Time to be received across the bridge: the deadline a message's sender set, kept from hop to
hop.

NServiceBus.AmazonSQS 9.1.1 writes a message's time to be received (``DiscardIfNotReceivedBefore``)
into the header ``NServiceBus.AmazonSQS.TimeToBeReceived`` as ``TimeSpan.ToString()`` text
(``TransportMessage.cs``; its unwrapped dispatcher never writes it). The receiving endpoint
discards a message when ``SentTimestamp + TimeSpan.Parse(header) <= now``, with the
``SentTimestamp`` of the copy in *its own* queue; ``TimeSpan.MaxValue`` means none
(``Receiving/InputQueuePump.cs``, ``IsMessageExpired``). Every relay hop is a new send with a
new ``SentTimestamp``, so a message that waited in a shadow, an ingress queue or a dead-letter
queue would start its time afresh at each hop. The relay therefore carries the deadline:

* ``remaining = TTBR - (now - SentTimestamp of the record the relay received)``;
* ``remaining <= 0``: the message has expired. It is not delivered, since the receiver would
  discard it; the relay acknowledges it and logs it as expired, which is not a loss;
* otherwise each send of the message carries ``remaining`` as ``TimeSpan.ToString()`` text,
  so the receiver's own check, counting from its copy's ``SentTimestamp``, sees the original
  deadline (later by the time between counting and sending: the batch processor counts again
  just before a call when more than a second passed since the decision, so at most about a
  second and one call's duration);
* a value ``TimeSpan.Parse`` refuses, or one whose deadline is past what a ``DateTimeOffset``
  holds (the receiver's ``sentAt + timeToBeReceived`` throws): the message goes on unchanged,
  the receiver fails on it as it would have, and the relay logs it.

Pure: ``now`` is passed in. The header text is parsed once per distinct value
(:func:`~cross_account_runtime.nservicebus.dotnet_time.parse_timespan` caches), so a message
with a time to be received costs a few microseconds more than one without.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.dotnet_time import (
    TICKS_PER_MILLISECOND,
    TICKS_PER_SECOND,
    TIMESPAN_MAX_TICKS,
    format_timespan,
    parse_timespan,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

UNIX_EPOCH_TICKS: Final = 621_355_968_000_000_000
"""``DateTimeOffset.UnixEpoch.Ticks``: 1970-01-01 counted from 0001-01-01."""
DATETIME_MAX_TICKS: Final = 3_155_378_975_999_999_999
"""``DateTime.MaxValue.Ticks``: a sum past it (or below 0) throws in .NET."""


class TimeLeft:
    """What a message's time to be received says at the relay: ``remaining``, the text to write
    on each send; or ``expired`` (``overdue`` seconds ago); or ``problem``, why the receiver
    will fail on the value, so the message goes on unchanged."""

    __slots__ = ("expired", "overdue", "problem", "remaining")

    def __init__(
        self, *, remaining: str | None = None, overdue: float | None = None, problem: str = ""
    ) -> None:
        self.remaining = remaining
        self.expired = overdue is not None
        self.overdue = overdue
        self.problem = problem


def time_left(text: str | None, sent_milliseconds: int, now: float) -> TimeLeft | None:
    """The time a message carrying time to be received ``text`` has left, received by the
    relay with ``SentTimestamp`` ``sent_milliseconds`` at ``now`` (epoch seconds); ``None``
    when it carries ``TimeSpan.MaxValue`` (no deadline)."""
    if text is None:
        return TimeLeft(
            problem="its time to be received is null; the receiver's TimeSpan.Parse fails on it"
        )
    ticks = parse_timespan(text)
    if ticks is None:
        return TimeLeft(
            problem=f"its time to be received {text!r} is not a TimeSpan; the receiver's "
            "TimeSpan.Parse fails on it"
        )
    if ticks == TIMESPAN_MAX_TICKS:
        return None
    deadline = UNIX_EPOCH_TICKS + sent_milliseconds * TICKS_PER_MILLISECOND + ticks
    if not 0 <= deadline <= DATETIME_MAX_TICKS:
        return TimeLeft(
            problem=f"its time to be received {text!r} puts the deadline outside the years "
            "1-9999; the receiver's SentTimestamp + TimeToBeReceived fails on it"
        )
    # The clock in whole milliseconds, as SQS's timestamps are (and exact in a float).
    remaining = deadline - UNIX_EPOCH_TICKS - round(now * 1000) * TICKS_PER_MILLISECOND
    if remaining <= 0:
        return TimeLeft(overdue=-remaining / TICKS_PER_SECOND)
    return TimeLeft(remaining=format_timespan(remaining))
