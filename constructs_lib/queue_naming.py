"""Queue names as NServiceBus endpoints compute them, checked against SQS's rules at synth.

The stacks must create exactly the queue an endpoint will look up by name, so the names come
from the same rule the endpoints use (prefix applied once, other characters replaced by ``-``)
and are checked against SQS's limits before CloudFormation ever sees them.
"""

from __future__ import annotations

import re

MAX_QUEUE_NAME_LENGTH = 80
FIFO_SUFFIX = ".fifo"
DEAD_LETTER_SUFFIX = "-dlq"
_SQS_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


class QueueNameError(ValueError):
    """A queue name SQS would refuse."""


def validate_queue_name(name: str, *, fifo: bool) -> str:
    """Return ``name`` if SQS accepts it for a queue of this type; raise otherwise."""
    base = name.removesuffix(FIFO_SUFFIX) if fifo else name
    if fifo and not name.endswith(FIFO_SUFFIX):
        raise QueueNameError(f"queue name {name!r} is for a FIFO queue and must end with '.fifo'")
    if not fifo and name.endswith(FIFO_SUFFIX):
        raise QueueNameError(
            f"queue name {name!r} ends with '.fifo' but the queue is standard; set fifo: true "
            "or drop the suffix"
        )
    if not base:
        raise QueueNameError("queue name is empty")
    if len(name) > MAX_QUEUE_NAME_LENGTH:
        raise QueueNameError(
            f"queue name {name!r} has {len(name)} characters; SQS allows at most "
            f"{MAX_QUEUE_NAME_LENGTH}: shorten the name or the prefix"
        )
    if not _SQS_NAME.match(base):
        bad = sorted(set(_NOT_ALLOWED.findall(base)))
        raise QueueNameError(
            f"queue name {name!r} has characters SQS refuses ({' '.join(map(repr, bad))}); "
            "use only letters, digits, '-' and '_'"
        )
    return name


def endpoint_queue_name(endpoint_name: str, prefix: str = "", *, fifo: bool = False) -> str:
    """The queue name of an endpoint: NServiceBus's default generator.

    The prefix is applied only if the name does not already start with it (so applying the
    rule twice changes nothing), characters other than letters, digits, ``-`` and ``_`` become
    ``-``, and a FIFO queue takes the ``.fifo`` suffix.
    """
    name = endpoint_name if prefix and endpoint_name.startswith(prefix) else prefix + endpoint_name
    name = name.removesuffix(FIFO_SUFFIX)
    name = _NOT_ALLOWED.sub("-", name) + (FIFO_SUFFIX if fifo else "")
    return validate_queue_name(name, fifo=fifo)


def dead_letter_queue_name(queue_name: str) -> str:
    """The dead-letter queue's name: the queue's name with ``-dlq``, before any ``.fifo``."""
    fifo = queue_name.endswith(FIFO_SUFFIX)
    base = queue_name.removesuffix(FIFO_SUFFIX)
    return validate_queue_name(base + DEAD_LETTER_SUFFIX + (FIFO_SUFFIX if fifo else ""), fifo=fifo)
