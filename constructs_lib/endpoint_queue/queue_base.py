"""What an endpoint queue is to the constructs that take one, as aws-cdk-lib's
``queue-base.ts`` holds ``IQueue``: :class:`IEndpointQueue`, whether this app creates the queue
or a team already owns it, and how its messages are encrypted at rest."""

from __future__ import annotations

import enum
from typing import Protocol, runtime_checkable

from aws_cdk import Duration
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs


class EndpointQueueEncryption(enum.StrEnum):
    """How the queue and its DLQ are encrypted at rest."""

    KMS = "KMS"
    """A customer-managed KMS key (created unless one is given), rotation on. The default."""

    SQS_MANAGED = "SQS_MANAGED"
    """SSE-SQS: SQS-owned keys; no key policy to manage, no KMS charges, no key to audit."""


@runtime_checkable
class IEndpointQueue(Protocol):
    """An endpoint's input queue as the other constructs use it, whether this app created it
    (:class:`EndpointQueue`) or a team already owns it (:meth:`EndpointQueue.from_queue_arn`),
    as aws-cdk-lib's constructs take an ``IQueue``."""

    @property
    def queue(self) -> sqs.IQueue:
        """The queue itself."""
        ...

    @property
    def dead_letter_queue(self) -> sqs.IQueue:
        """Its redrive dead-letter queue (where refused messages go, with their reason)."""
        ...

    @property
    def encryption_key(self) -> kms.IKey | None:
        """The key both queues are encrypted with; ``None`` for SSE-SQS."""
        ...

    @property
    def fifo(self) -> bool:
        """Whether the queue is a FIFO queue."""
        ...

    @property
    def queue_arn(self) -> str:
        """The queue's ARN, the endpoint's transport address."""
        ...

    @property
    def max_receive_count(self) -> int | None:
        """Receives before SQS moves a message to the dead-letter queue; ``None`` where
        unknown (an imported queue not told it)."""
        ...

    @property
    def visibility_timeout(self) -> Duration | None:
        """How long a received message stays invisible; ``None`` where unknown (an imported
        queue not told it)."""
        ...
