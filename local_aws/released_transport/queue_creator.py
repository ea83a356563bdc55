"""What the transport's installers create (``EnableInstallers()``): ``QueueCreator``.

For each sending address (the error queue) a standard queue; for each receive address a standard
queue and, unless unrestricted delayed delivery is disabled, ``{address}-delay.fifo`` with
``FifoQueue=true`` and ``DelaySeconds=900``. Names go through the generator. The retention is set
in a second call (``MaxTimeToLive``, 4 days by default, for the queues; 4 days for the delay
queue) because ``CreateQueue`` on an existing queue with different attributes fails. The URLs
are put into the queue cache, so no ``GetQueueUrl`` follows. No redrive policy and no
visibility timeout are ever set.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Administration/
QueueCreator.cs``, ``Configure/SqsTransport.cs`` (``Initialize``: sending addresses then
receivers).
"""

from __future__ import annotations

from typing import Any, Final

from local_aws.released_transport.headers import (
    AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
    DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS,
)
from local_aws.released_transport.naming import delay_queue_name
from local_aws.released_transport.queue_cache import QueueCache

DEFAULT_MAX_TIME_TO_LIVE_SECONDS: Final = DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS
"""``SqsTransport.MaxTimeToLive``'s default, 4 days."""


class QueueCreator:
    """Creates the queues of one endpoint through its own client."""

    def __init__(
        self,
        sqs: Any,
        queue_cache: QueueCache,
        *,
        max_time_to_live_seconds: int = DEFAULT_MAX_TIME_TO_LIVE_SECONDS,
        queue_delay_seconds: int = AWS_MAXIMUM_QUEUE_DELAY_SECONDS,
    ) -> None:
        self._sqs = sqs
        self._queue_cache = queue_cache
        self._max_time_to_live_seconds = max_time_to_live_seconds
        self._queue_delay_seconds = queue_delay_seconds

    def create_queue_if_necessary(self, address: str, *, create_delay_queue: bool) -> None:
        """``CreateQueueIfNecessary``."""
        self._create(address, {}, self._max_time_to_live_seconds)
        if create_delay_queue:
            self._create(
                delay_queue_name(address),
                {"FifoQueue": "true", "DelaySeconds": str(self._queue_delay_seconds)},
                DELAYED_DELIVERY_QUEUE_RETENTION_SECONDS,
            )

    def _create(self, queue_name: str, attributes: dict[str, str], retention_seconds: int) -> None:
        request: dict[str, Any] = {"QueueName": self._queue_cache.physical_queue_name(queue_name)}
        if attributes:
            request["Attributes"] = attributes
        url = str(self._sqs.create_queue(**request)["QueueUrl"])
        self._queue_cache.set_queue_url(queue_name, url)
        self._sqs.set_queue_attributes(
            QueueUrl=url, Attributes={"MessageRetentionPeriod": str(retention_seconds)}
        )
