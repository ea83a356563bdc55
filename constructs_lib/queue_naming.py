"""Queue names as NServiceBus endpoints compute them, checked against SQS's rules at synth.

The stacks must create exactly the queue an endpoint will look up by name, so the names come
from the runtime's own generator (:func:`cross_account_runtime.nservicebus.queue_name_generator.default_queue_name`: prefix
applied once, other characters replaced by ``-``) and are checked against SQS's limits before
CloudFormation ever sees them. A prefix the generator would rewrite is refused: with it an
endpoint looks up a different queue (``DEV-DEV-Sales``) than its address names (``DEV-Sales``).
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import (
    FIFO_SUFFIX,
    MAX_QUEUE_NAME_LENGTH,
    check_queue_name,
)
from cross_account_runtime.nservicebus.queue_name_generator import (
    check_queue_name_prefix,
    default_queue_name,
)

DEAD_LETTER_SUFFIX = "-dlq"
DELAY_QUEUE_SUFFIX = "-delay.fifo"
"""What the released transport appends to a destination's address for delays over 15 minutes
(``TransportConstraints.DelayedDeliveryQueueSuffix``); the generator then applies as usual."""
QueueNameError = AddressError
"""A queue name SQS would refuse (the runtime's address error, a ``ValueError``)."""

__all__ = [
    "DEAD_LETTER_SUFFIX",
    "FIFO_SUFFIX",
    "MAX_QUEUE_NAME_LENGTH",
    "QueueNameError",
    "dead_letter_queue_name",
    "delay_queue_name",
    "endpoint_queue_name",
    "ingress_queue_name",
    "key_alias_name",
    "resolved_queue_name",
    "shadow_queue_name",
    "subscription_dead_letter_queue_name",
    "validate_queue_name",
    "validate_queue_name_prefix",
]


def validate_queue_name(name: str, *, fifo: bool) -> str:
    """Return ``name`` if SQS accepts it for a queue of this type; raise otherwise."""
    if fifo and not name.endswith(FIFO_SUFFIX):
        raise QueueNameError(f"queue name {name!r} is for a FIFO queue and must end with '.fifo'")
    if not fifo and name.endswith(FIFO_SUFFIX):
        raise QueueNameError(
            f"queue name {name!r} ends with '.fifo' but the queue is standard; set fifo: true "
            "or drop the suffix"
        )
    return check_queue_name(name)


def validate_queue_name_prefix(prefix: str) -> str:
    """Return ``prefix`` if NServiceBus's default generator keeps it as it is; raise otherwise
    (the generator would then name a queue other than the endpoint's address)."""
    return check_queue_name_prefix(prefix)


def endpoint_queue_name(endpoint_name: str, prefix: str = "", *, fifo: bool = False) -> str:
    """The queue name of an endpoint: NServiceBus's default generator, plus ``.fifo`` for a
    FIFO queue."""
    validate_queue_name_prefix(prefix)
    name = default_queue_name(endpoint_name.removesuffix(FIFO_SUFFIX), prefix)
    return validate_queue_name(name + (FIFO_SUFFIX if fifo else ""), fifo=fifo)


def dead_letter_queue_name(queue_name: str) -> str:
    """The dead-letter queue's name: the queue's name with ``-dlq``, before any ``.fifo``."""
    fifo = queue_name.endswith(FIFO_SUFFIX)
    base = queue_name.removesuffix(FIFO_SUFFIX)
    return validate_queue_name(base + DEAD_LETTER_SUFFIX + (FIFO_SUFFIX if fifo else ""), fifo=fifo)


def resolved_queue_name(address: str, prefix: str = "") -> str:
    """The queue a released endpoint with queue-name prefix ``prefix`` resolves ``address`` to
    in its own account (``GetQueueUrl`` after the generator): where the account bridge puts the
    shadow of a remote endpoint that is known there by ``address``."""
    fifo = address.endswith(FIFO_SUFFIX)
    return validate_queue_name(default_queue_name(address, prefix), fifo=fifo)


def shadow_queue_name(address: str, prefix: str = "") -> str:
    """The shadow queue the account bridge gives a remote endpoint in an account whose
    endpoints (with queue-name prefix ``prefix``) send to it as ``address``: the queue they
    resolve the address to (:func:`resolved_queue_name`). The shadow of its delay queue, for
    delays over 15 minutes, is :func:`delay_queue_name` of the same address and prefix."""
    return resolved_queue_name(address, prefix)


def delay_queue_name(address: str, prefix: str = "") -> str:
    """The delay queue the released transport resolves for ``address``: the generator applied
    to ``<address>-delay.fifo``, always FIFO. For an endpoint's own input queue (whose name
    already carries the prefix) that is ``<queue>-delay.fifo``."""
    return validate_queue_name(default_queue_name(address + DELAY_QUEUE_SUFFIX, prefix), fifo=True)


def subscription_dead_letter_queue_name(topic_name: str, subscription_name: str) -> str:
    """The DLQ of one SNS subscription: ``<topic>-<subscription>-dlq``, FIFO like its topic."""
    fifo = topic_name.endswith(FIFO_SUFFIX)
    base = f"{topic_name.removesuffix(FIFO_SUFFIX)}-{subscription_name}{DEAD_LETTER_SUFFIX}"
    return validate_queue_name(base + (FIFO_SUFFIX if fifo else ""), fifo=fifo)


def ingress_queue_name(queue_name: str) -> str:
    """The queue an inbound relay reads for an endpoint: ``<queue>-ingress``, FIFO like it."""
    fifo = queue_name.endswith(FIFO_SUFFIX)
    base = queue_name.removesuffix(FIFO_SUFFIX)
    return validate_queue_name(base + "-ingress" + (FIFO_SUFFIX if fifo else ""), fifo=fifo)


def key_alias_name(queue_name: str) -> str:
    """``alias/messaging/<queue>``: lets a relay in another account be granted the queue's key
    (``kms:ResourceAliases``) before the key, and so its id, exists."""
    return "alias/messaging/" + queue_name.replace(".", "-")
