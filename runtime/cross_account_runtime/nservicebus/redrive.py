"""SQS's rules for a queue's redrive policy: the dead-letter queue it names and the receives
it allows, one home for the relay's configuration, the constructs and the topology."""

from __future__ import annotations

from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from cross_account_runtime.nservicebus.queue_arn import QueueArn

MAX_RECEIVE_COUNT_RANGE: Final = (1, 1000)
"""What SQS accepts as a redrive policy's ``maxReceiveCount`` (both ends included)."""


def dead_letter_queue_problem(queue: QueueArn, dead_letter: QueueArn) -> str | None:
    """Why SQS would refuse ``dead_letter`` as the redrive dead-letter queue of ``queue``, or
    None: SQS redrives a message only within the source queue's account and region, and only to
    a queue of the source's type (FIFO or standard). The relay's configuration and the
    constructs that take a queue with its dead-letter queue apply this one rule."""
    if (dead_letter.account, dead_letter.region) != (queue.account, queue.region):
        return (
            f"dead-letter queue {str(dead_letter)!r} must be in the account ({queue.account}) "
            f"and region ({queue.region}) of its source queue {str(queue)!r}; give the source "
            "queue's own redrive dead-letter queue"
        )
    return dead_letter_kind_problem(
        repr(str(queue)),
        fifo=queue.name.endswith(FIFO_SUFFIX),
        dead_letter=repr(str(dead_letter)),
        dead_letter_fifo=dead_letter.name.endswith(FIFO_SUFFIX),
    )


def dead_letter_kind_problem(
    queue: str, *, fifo: bool, dead_letter: str = "", dead_letter_fifo: bool
) -> str | None:
    """Why SQS would refuse a dead-letter queue of the other type than its source queue (FIFO
    or standard), or None; ``queue`` and ``dead_letter`` say which queues they are as the
    message shows them (a dead-letter queue not named yet may go unnamed). Also where only the
    types are known: a queue whose ARN CloudFormation fills in, a topology's declaration."""
    if dead_letter_fifo == fifo:
        return None
    kinds = ("FIFO", "standard") if fifo else ("standard", "FIFO")
    named = f" {dead_letter}" if dead_letter else ""
    return (
        f"dead-letter queue{named} is a {kinds[1]} queue but its source {queue} is a "
        f"{kinds[0]} queue; SQS requires a dead-letter queue of the source's type"
    )
