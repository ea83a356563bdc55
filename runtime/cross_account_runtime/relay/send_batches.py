"""Which of a batch's sends share a ``SendMessageBatch`` call, and in what order the calls go.

SQS takes up to :data:`MAX_BATCH_ENTRIES` entries and :data:`MAX_BATCH_BYTES` in all per call,
to one queue. Sends are grouped per destination queue, in the order of the records:

* **Standard queues**: consecutive chunks, each as full as both limits allow.
* **FIFO queues**: a call carries at most one message per message group. SQS reports each
  entry on its own, so a call with two messages of a group could store the second after the
  first failed: the group's order would break with no way back. With one per group, a failed
  entry stops its group before its next message is tried (the batch processor reports those
  failed, not attempted), and a batch that spans ``g`` groups evenly needs about ``1/g``
  calls per message: two groups, 0.5.

Calls to one queue are made one after the other, in the order the batches give, so a group's messages are
stored in the order they were received. Pure: no I/O.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX
from cross_account_runtime.relay.send_requests import message_size

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Final

    from cross_account_runtime.nservicebus.queue_arn import QueueArn

MAX_BATCH_ENTRIES: Final = 10
MAX_BATCH_BYTES: Final = 1_048_576
"""SQS's limit for the sum of a call's message sizes (body plus attributes), as for one
message: a message the core accepts always fits a call of its own."""


TIME_LEFT_GROWTH: Final = 8
"""The most a message's remaining time to be received can grow by when it is counted again
just before its call (``00:00:40`` becomes ``00:00:39.9990000``): planned as part of its size,
so that the call still fits."""


class PendingSend:
    """One message to send: the index of its record in the batch, its queue and its
    ``SendMessage`` parameters (``QueueUrl`` included). ``timed``: its time to be received may be
    counted again before the call (see :data:`TIME_LEFT_GROWTH`)."""

    __slots__ = ("index", "queue", "request", "size")

    def __init__(
        self, index: int, queue: QueueArn, request: dict[str, Any], *, timed: bool = False
    ) -> None:
        self.index = index
        self.queue = queue
        self.request = request
        self.size = message_size(request["MessageBody"], request.get("MessageAttributes", {})) + (
            TIME_LEFT_GROWTH if timed else 0
        )


class BatchCall:
    """One ``SendMessageBatch``: its queue and the sends it carries, in order."""

    __slots__ = ("bytes", "queue", "sends")

    def __init__(self, queue: QueueArn) -> None:
        self.queue = queue
        self.sends: list[PendingSend] = []
        self.bytes = 0

    def fits(self, send: PendingSend) -> bool:
        """Whether ``send`` may join without passing either of SQS's limits."""
        return len(self.sends) < MAX_BATCH_ENTRIES and self.bytes + send.size <= MAX_BATCH_BYTES

    def add(self, send: PendingSend) -> None:
        self.sends.append(send)
        self.bytes += send.size

    def entries(self) -> list[dict[str, Any]]:
        """The call's ``Entries``: each request without ``QueueUrl``, its ``Id`` its position."""
        return [
            {"Id": str(position), **{k: v for k, v in send.request.items() if k != "QueueUrl"}}
            for position, send in enumerate(self.sends)
        ]


def batch_calls(sends: Sequence[PendingSend]) -> list[BatchCall]:
    """The calls that carry ``sends``: per queue in the order each queue first appears, and
    within a queue in the order described above."""
    by_queue: dict[str, list[PendingSend]] = {}
    for send in sends:
        by_queue.setdefault(str(send.queue), []).append(send)
    calls: list[BatchCall] = []
    for queued in by_queue.values():
        fifo = queued[0].queue.name.endswith(FIFO_SUFFIX)
        calls += _fifo_calls(queued) if fifo else _standard_calls(queued)
    return calls


def _standard_calls(sends: Sequence[PendingSend]) -> list[BatchCall]:
    calls = [BatchCall(sends[0].queue)]
    for send in sends:
        if not calls[-1].fits(send):
            calls.append(BatchCall(send.queue))
        calls[-1].add(send)
    return calls


def _fifo_calls(sends: Sequence[PendingSend]) -> list[BatchCall]:
    """Each message goes to the first call with room after the call of its group's previous
    message (so no call holds two messages of a group)."""
    calls: list[BatchCall] = []
    next_call: dict[str, int] = {}
    for send in sends:
        group = send.request.get("MessageGroupId", "")
        position = next_call.get(group, 0)
        while position < len(calls) and not calls[position].fits(send):
            position += 1
        if position == len(calls):
            calls.append(BatchCall(send.queue))
        calls[position].add(send)
        next_call[group] = position + 1
    return calls
