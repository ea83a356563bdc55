"""What every ServiceControl instance's transport is configured with, and what each instance
sets up alike from it, whichever instance it is.

The primary, audit and monitoring instances each run the released transport with settings read
the same way: ``TransportSettings`` (``MaxConcurrency``) and the SQS connection string
(``QueueNamePrefix``, ``DoNotWrapOutgoingMessages``, ``S3BucketForLargeMessages`` and
``S3KeyPrefix``); each instance then adds its own queues. The model's receive long-poll and
clock are settings too, so tests step every instance alike.

From them an instance is built in one of two ways:

* it ingests queues with the transport's receivers directly (the main instance's error side,
  the audit instance: :class:`IngestingInstance`): its own queue cache and dispatcher, by name in
  its own account; a receiver per queue whose poison messages go to ``{instance}.Errors``; and the
  ingestion fault policy, which retries an import at once until its third failure, then keeps it
  as a failed import;
* it is an NServiceBus endpoint on its own queue (the main instance's queue, the monitoring
  instance: :class:`InstanceEndpoint`): the released endpoint with the instance's transport
  settings, its error queue and its recoverability, and no unrestricted delayed delivery.

Either way its setup creates its queues without delay queues.

Facts: ServiceControl 6.19.2 ``src/ServiceControl.Transports/TransportSettings.cs``
(``{EndpointName}.Errors``), ``src/ServiceControl.Transports.SQS/SQSTransportCustomization.cs``,
``src/ServiceControl/Operations/ErrorIngestionFaultPolicy.cs``,
``src/ServiceControl.Audit/Auditing/AuditIngestionFaultPolicy.cs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from local_aws.released_transport.core.incoming import ErrorContext, ErrorHandleResult
from local_aws.released_transport.core.recoverability import RecoverabilitySettings
from local_aws.released_transport.dotnet.time_formats import Clock, system_clock
from local_aws.released_transport.endpoint.released_endpoint import ReleasedEndpoint
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.headers import HeaderDict
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.queue_creator import QueueCreator
from local_aws.released_transport.transport.receiving.input_pump import (
    DEFAULT_WAIT_TIME_SECONDS,
    InputQueuePump,
)
from local_aws.released_transport.transport.s3_settings import S3Settings
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

IMPORT_FAILURES_BEFORE_GIVING_UP: Final = 3


@dataclass(frozen=True, kw_only=True)
class InstanceTransportSettings:
    """An instance's transport settings (the instances' own settings extend it)."""

    queue_name_prefix: str | None = None
    wrap_outgoing_messages: bool = True
    max_concurrency: int | None = None
    wait_time_seconds: int = DEFAULT_WAIT_TIME_SECONDS
    s3: S3Settings | None = None
    """``S3BucketForLargeMessages`` and ``S3KeyPrefix``: bodies over SQS's limit are read from
    and written to that bucket, as any endpoint's with ``transport.S3``."""
    clock: Clock = system_clock


@dataclass(frozen=True)
class FailedImport:
    """A message of an ingested queue that could not be imported."""

    native_message_id: str
    headers: HeaderDict
    body: bytes
    reason: str


def install_queues(sqs: Any, queue_cache: QueueCache, *addresses: str) -> None:
    """What an instance's setup creates: each queue, in order, without a delay queue."""
    creator = QueueCreator(sqs, queue_cache)
    for address in addresses:
        creator.create_queue_if_necessary(address, create_delay_queue=False)


class IngestingInstance:
    """An instance that ingests its queues with the transport's receivers directly."""

    def __init__(self, sqs: Any, instance_name: str, transport: InstanceTransportSettings) -> None:
        self._sqs = sqs
        self._transport = transport
        self.queue_cache = QueueCache(sqs, get_sqs_queue_name, transport.queue_name_prefix)
        self._poison_queue = f"{instance_name}.Errors"
        self.dispatcher = MessageDispatcher(
            sqs,
            self.queue_cache,
            s3=transport.s3,
            wrap_outgoing_messages=transport.wrap_outgoing_messages,
            clock=transport.clock,
        )
        self.failed_imports: list[FailedImport] = []

    def _receiver(self, address: str) -> InputQueuePump:
        """A receiver of ``address`` (through the instance's prefix); its poison messages go to
        the instance's error queue."""
        return InputQueuePump(
            self._sqs,
            self.queue_cache,
            self.queue_cache.physical_queue_name(address),
            self._poison_queue,
            max_concurrency=self._transport.max_concurrency,
            wait_time_seconds=self._transport.wait_time_seconds,
            s3=self._transport.s3,
            clock=self._transport.clock,
        )

    def _install_queues(self, *addresses: str) -> None:
        """The poison queue, then ``addresses``."""
        install_queues(self._sqs, self.queue_cache, self._poison_queue, *addresses)

    def _import_failed(self, context: ErrorContext) -> ErrorHandleResult:
        """The ingestion fault policy (``ErrorIngestionFaultPolicy.OnError``,
        ``AuditIngestionFaultPolicy.OnError``)."""
        if context.immediate_processing_failures < IMPORT_FAILURES_BEFORE_GIVING_UP:
            return ErrorHandleResult.RETRY_REQUIRED
        self.failed_imports.append(
            FailedImport(
                context.native_message_id,
                dict(context.headers),
                context.body,
                str(context.exception),
            )
        )
        return ErrorHandleResult.HANDLED


class InstanceEndpoint:
    """An instance that is an NServiceBus endpoint named after it, on its own queue."""

    def __init__(
        self,
        sqs: Any,
        instance_name: str,
        transport: InstanceTransportSettings,
        *,
        error_queue: str,
        recoverability: RecoverabilitySettings,
    ) -> None:
        self._sqs = sqs
        self.error_queue = error_queue
        self.endpoint = ReleasedEndpoint(
            instance_name,
            sqs,
            EndpointSettings(
                queue_name_prefix=transport.queue_name_prefix,
                wrap_outgoing_messages=transport.wrap_outgoing_messages,
                error_queue=error_queue,
                recoverability=recoverability,
                disable_unrestricted_delayed_delivery=True,
                max_concurrency=transport.max_concurrency,
                wait_time_seconds=transport.wait_time_seconds,
                s3=transport.s3,
                clock=transport.clock,
            ),
        )

    def install(self) -> None:
        """The queues its setup creates: its error queue and its own queue."""
        install_queues(
            self._sqs, self.endpoint.queue_cache, self.error_queue, self.endpoint.receive_address
        )

    def start(self) -> None:
        """The instance's queue must exist."""
        self.endpoint.start()
