"""A FIFO queue's own delay, which an explicit ``DelaySeconds=0`` does not override.

SQS takes no per-message delay on a FIFO queue: a send to one carries at most
``DelaySeconds=0``, and the queue's ``DelaySeconds`` applies to every message. NServiceBus's
SQS transport depends on that: its dispatcher writes ``DelaySeconds`` on every request, 0 when
the message is not delayed, including the sends to an endpoint's delay queue
(``<queue>-delay.fifo``, whose own 900 s delay is what holds a long-delayed message). moto
refuses a positive per-message delay on a FIFO queue as SQS does, but applies an explicit 0,
which would make a delay queue deliver at once. The local AWS server patches moto's send
(:func:`register`) so that on a FIFO queue the queue's delay applies, as in SQS.
"""

from __future__ import annotations

import inspect
from typing import Any

from local_aws.moto.patching import replacing

_PATCHED = "_local_aws_fifo_queue_delay"


def register() -> None:
    """Make moto's SQS apply a FIFO queue's own delay to every message sent to it (single and
    batch sends go through the same method). Idempotent."""
    from moto.sqs.models import SQSBackend  # noqa: PLC0415 (only the server process needs it)

    original = SQSBackend.send_message
    signature = inspect.signature(original)

    @replacing(SQSBackend, "send_message", _PATCHED)
    def send_message(self: SQSBackend, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        delay = bound.arguments.get("delay_seconds")
        if delay is not None and int(delay) == 0:
            queue = self.get_queue(bound.arguments["queue_name"])
            if queue.fifo_queue:
                bound.arguments["delay_seconds"] = None
        return original(*bound.args, **bound.kwargs)
