"""ServiceControl 6.19.2's main instance as it runs against SQS: error ingestion, retries,
acknowledgements, and its own queue.

ServiceControl uses the released transport itself (NServiceBus.AmazonSQS 9.1.1) with its own
client, prefix and wrapping, and without unrestricted delayed delivery. So, like every released
endpoint, it reads and sends *by name in its own account*:

* **ingestion** reads its error queue (``error`` through its generator). A message carrying
  ``ServiceControl.Retry.Successful`` is an endpoint's retry acknowledgement and resolves the
  failed message it names. Any other message is a failure; without ``NServiceBus.FailedQ`` (a
  poison message the transport moved unchanged, for instance) the import fails, is retried
  until the third failure and is then kept as a failed import. A failed message's id is the
  ``ServiceControl.Retry.UniqueMessageId`` header when present, else
  ``DeterministicGuid(message id + processing endpoint name)``.
* **retry** stages the message: its stored headers without every key starting with
  ``NServiceBus.Retries``, ``NServiceBus.FailedQ``, ``NServiceBus.TimeOfFailure``,
  ``NServiceBus.ExceptionInfo.`` or ``ServiceControl.EditOf``, plus
  ``ServiceControl.TargetEndpointAddress`` (= the ``FailedQ`` value),
  ``ServiceControl.Retry.UniqueMessageId``, ``ServiceControl.Retry.StagingId`` and
  ``ServiceControl.Retry.Attempt.MessageId``, with an empty body, to its staging queue
  (``Particular.ServiceControl.staging``).
* **forwarding** reads the staging queue; a message of the current staging attempt gets
  ``ServiceControl.Retry.AcknowledgementQueue`` = its error queue's transport address, loses the
  staging id and attempt id, gets the stored body back and goes to
  ``ServiceControl.TargetEndpointAddress`` (removed unless ``ServiceControl.RetryTo`` redirects),
  under the staging message's native id. Others are consumed. A failed forward reverts the
  message to unresolved.

Its own receivers send poison messages to ``{instance}.Errors``. Storage is in memory; edit &
retry, redirects, groups and the error log queue are not modelled.

Besides, the instance reads its own queue (``Particular.ServiceControl``): heartbeats, custom
checks and misdirected saga audit
(:mod:`~local_aws.released_transport.service_control.instance_queue`). Upstream one process starts
all its receivers; the model starts the error side with :meth:`ServiceControl.start` and the
instance's queue with :meth:`ServiceControl.start_instance_queue`, so a deployment without that
queue can still run the error side. The audit and monitoring instances are
:mod:`~local_aws.released_transport.service_control.audit` and
:mod:`~local_aws.released_transport.service_control.monitoring`.

Facts: ServiceControl 6.19.2 ``src/ServiceControl/Operations/ErrorIngestor.cs``,
``Operations/ErrorIngestionFaultPolicy.cs``, ``Operations/FailedMessageFactory.cs``,
``Operations/RetryConfirmationProcessor.cs``, ``Infrastructure/TransportMessageExtensions.cs``,
``Recoverability/Retrying/RetryProcessor.cs``, ``Recoverability/Retrying/HeaderFilter.cs``,
``Recoverability/Retrying/Infrastructure/ReturnToSender.cs``,
``Recoverability/Retrying/Infrastructure/ReturnToSenderDequeuer.cs``,
``src/ServiceControl.Transports/TransportSettings.cs``,
``src/ServiceControl.Transports.SQS/SQSTransportCustomization.cs``.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from local_aws.released_transport.core.incoming import (
    ErrorContext,
    ErrorHandleResult,
    MessageContext,
)
from local_aws.released_transport.core.outgoing import OutgoingMessage, TransportOperation
from local_aws.released_transport.dotnet.deterministic_guid import make_id
from local_aws.released_transport.dotnet.time_formats import from_wire_format
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
)
from local_aws.released_transport.headers import (
    DELAYED_RETRIES,
    EDIT_OF,
    EXCEPTION_INFO_PREFIX,
    FAILED_QUEUE,
    MESSAGE_ID,
    PROCESSING_ENDPOINT,
    REPLY_TO_ADDRESS,
    RETRY_ACKNOWLEDGEMENT_QUEUE,
    RETRY_ATTEMPT_MESSAGE_ID,
    RETRY_STAGING_ID,
    RETRY_SUCCESSFUL,
    RETRY_TO,
    RETRY_UNIQUE_MESSAGE_ID,
    TARGET_ENDPOINT_ADDRESS,
    TIME_OF_FAILURE,
    HeaderDict,
)
from local_aws.released_transport.service_control.instance_queue import (
    DEFAULT_HEARTBEAT_GRACE_PERIOD,
    InstanceQueueState,
    ServiceControlInstanceQueue,
)
from local_aws.released_transport.service_control.instance_transport import (
    IngestingInstance,
    InstanceTransportSettings,
)
from local_aws.released_transport.transport.receiving.input_pump import PumpResult

DEFAULT_INSTANCE_NAME: Final = "Particular.ServiceControl"
DEFAULT_ERROR_QUEUE: Final = "error"
HEADERS_REMOVED_ON_RETRY: Final = (
    DELAYED_RETRIES,
    FAILED_QUEUE,
    TIME_OF_FAILURE,
    EXCEPTION_INFO_PREFIX,
    EDIT_OF,
)
"""``HeaderFilter.KeysToRemoveWhenRetryingAMessage``: prefixes, compared ordinally."""
MISSING_FAILED_QUEUE: Final = (
    f"Missing '{FAILED_QUEUE}' header. Message is poison message or incorrectly send to (error)"
    " queue."
)


class FailedMessageStatus(enum.Enum):
    """Where a failed message stands."""

    UNRESOLVED = "Unresolved"
    RETRY_ISSUED = "RetryIssued"
    RESOLVED = "Resolved"


@dataclass
class FailedMessage:
    """A failed message as stored: its latest processing attempt."""

    unique_message_id: str
    message_id: str
    failing_endpoint_address: str
    headers: HeaderDict
    body: bytes
    status: FailedMessageStatus = FailedMessageStatus.UNRESOLVED
    retry_failure: str | None = None


@dataclass(frozen=True, kw_only=True)
class ServiceControlSettings(InstanceTransportSettings):
    """The primary instance's settings beside its transport's. ``saga_audit_queue`` is what the
    audit instance's connection details report as its ``SagaAuditQueue`` (its audit queue;
    ``None``: the audit instance cannot be reached), ``heartbeat_grace_period`` is
    ``HeartbeatGracePeriod``."""

    instance_name: str = DEFAULT_INSTANCE_NAME
    error_queue: str = DEFAULT_ERROR_QUEUE
    saga_audit_queue: str | None = None
    heartbeat_grace_period: timedelta = DEFAULT_HEARTBEAT_GRACE_PERIOD


def unique_message_id(headers: Mapping[str, str | None]) -> str:
    """``HeaderExtensions.UniqueId``: the retry's unique id, else the deterministic id of the
    message id and the processing endpoint's name (``ProcessingEndpointName``)."""
    if RETRY_UNIQUE_MESSAGE_ID in headers:
        return str(headers[RETRY_UNIQUE_MESSAGE_ID])
    if PROCESSING_ENDPOINT in headers:
        endpoint = headers[PROCESSING_ENDPOINT]
    elif FAILED_QUEUE in headers:
        endpoint = _queue_part(headers[FAILED_QUEUE])
    elif REPLY_TO_ADDRESS in headers:
        endpoint = _queue_part(headers[REPLY_TO_ADDRESS])
    else:
        raise ValueError(
            f"No processing endpoint could be determined for message ({headers.get(MESSAGE_ID)})"
        )
    return str(make_id(headers.get(MESSAGE_ID) or "", endpoint or ""))


def _queue_part(address: str | None) -> str:
    """``ExtractQueue``: the part before ``@`` of a ``queue@machine`` address."""
    if address is None:
        raise TypeError("Object reference not set to an instance of an object.")
    return address.split("@", 1)[0]


def retry_headers(headers: Mapping[str, str | None]) -> HeaderDict:
    """``HeaderFilter.RemoveErrorMessageHeaders``."""
    return {
        name: value
        for name, value in headers.items()
        if not any(name.startswith(prefix) for prefix in HEADERS_REMOVED_ON_RETRY)
    }


class ServiceControl(IngestingInstance):
    """A ServiceControl instance with its own SQS client (of its own account)."""

    def __init__(self, sqs: Any, settings: ServiceControlSettings | None = None) -> None:
        self.settings = settings or ServiceControlSettings()
        super().__init__(sqs, self.settings.instance_name, self.settings)
        self.error_queue_address = self.queue_cache.physical_queue_name(self.settings.error_queue)
        """``ToTransportAddress(QueueAddress(ErrorQueue))``: the acknowledgement queue."""
        self.staging_queue_address = self.queue_cache.physical_queue_name(
            f"{self.settings.instance_name}.staging"
        )
        self.failed_messages: dict[str, FailedMessage] = {}
        self._staging_ids: dict[str, str] = {}
        """The current staging attempt of each retried message."""
        self._ingestion = self._receiver(self.settings.error_queue)
        self._return_to_sender = self._receiver(self.staging_queue_address)
        self.instance_queue = ServiceControlInstanceQueue(
            sqs,
            self.settings.instance_name,
            self.settings,
            saga_audit_queue=self.settings.saga_audit_queue,
            heartbeat_grace_period=self.settings.heartbeat_grace_period,
        )
        """The instance's own queue: heartbeats, custom checks, saga audit."""

    def install(self) -> None:
        """The queues its setup creates: the poison queue, the error and staging queues, the
        instance's own queue."""
        self._install_queues(self.settings.error_queue, self.staging_queue_address)
        self.instance_queue.install()

    def start(self) -> None:
        """Both receivers of the error side need their queue; no delay queue (delayed delivery
        is disabled)."""
        self._ingestion.initialize()
        self._return_to_sender.initialize()

    def start_instance_queue(self) -> None:
        """The instance's own endpoint: its queue must exist."""
        self.instance_queue.start()

    # The instance's own queue.

    def process_instance_queue(self) -> list[ProcessingOutcome]:
        """Read one batch from the instance's queue (heartbeats, custom checks, saga audit)."""
        return self.instance_queue.process()

    def check_heartbeats(self) -> None:
        """One tick of the heartbeat monitoring timer (every 5 s upstream)."""
        self.instance_queue.check_heartbeats()

    @property
    def platform(self) -> InstanceQueueState:
        """What the instance took from its own queue."""
        return self.instance_queue.state

    # Ingestion.

    def ingest(self) -> list[PumpResult]:
        """Read one batch from the error queue."""
        return self._ingestion.poll(self._import, self._import_failed)

    def _import(self, context: MessageContext) -> None:
        headers = context.headers
        if RETRY_SUCCESSFUL in headers:
            acknowledged = self.failed_messages.get(str(headers[RETRY_UNIQUE_MESSAGE_ID]))
            if acknowledged is not None:
                acknowledged.status = FailedMessageStatus.RESOLVED
            return
        time_of_failure = headers.get(TIME_OF_FAILURE)
        if time_of_failure is not None:
            from_wire_format(time_of_failure)
        failed_queue = headers.get(FAILED_QUEUE)
        if FAILED_QUEUE not in headers or failed_queue is None:
            raise ValueError(MISSING_FAILED_QUEUE)
        unique_id = unique_message_id(headers)
        self.failed_messages[unique_id] = FailedMessage(
            unique_id,
            str(headers.get(MESSAGE_ID) or context.native_message_id),
            failed_queue,
            dict(headers),
            context.body,
        )

    # Retries.

    def retry(self, unique_message_id: str) -> str:
        """Stage one failed message for retry; returns the staging id."""
        failed = self.failed_messages[unique_message_id]
        staging_id = str(uuid.uuid4())
        headers = retry_headers(failed.headers)
        headers[TARGET_ENDPOINT_ADDRESS] = failed.failing_endpoint_address
        headers[RETRY_UNIQUE_MESSAGE_ID] = failed.unique_message_id
        headers[RETRY_STAGING_ID] = staging_id
        headers[RETRY_ATTEMPT_MESSAGE_ID] = failed.message_id
        staged = OutgoingMessage(f"FailedMessages/{failed.unique_message_id}", headers, b"")
        self.dispatcher.dispatch([TransportOperation(staged, self.staging_queue_address)])
        self._staging_ids[unique_message_id] = staging_id
        failed.status = FailedMessageStatus.RETRY_ISSUED
        return staging_id

    def forward_staged(self) -> list[PumpResult]:
        """Read one batch from the staging queue and return the current ones to their senders."""
        return self._return_to_sender.poll(self._return_to_sender_handle, self._forward_failed)

    def _return_to_sender_handle(self, context: MessageContext) -> None:
        """``ReturnToSenderDequeuer.Handle`` and ``ReturnToSender.HandleMessage``."""
        headers = dict(context.headers)
        unique_id = str(headers.get(RETRY_UNIQUE_MESSAGE_ID))
        if self._staging_ids.get(unique_id) != headers.get(RETRY_STAGING_ID):
            return
        headers.pop(RETRY_STAGING_ID, None)
        headers[RETRY_ACKNOWLEDGEMENT_QUEUE] = self.error_queue_address
        body = b""
        if RETRY_ATTEMPT_MESSAGE_ID in headers:
            body = self.failed_messages[unique_id].body
            headers.pop(RETRY_ATTEMPT_MESSAGE_ID)
        destination = str(headers[TARGET_ENDPOINT_ADDRESS])
        retry_to = headers.get(RETRY_TO)
        if retry_to is None:
            retry_to = destination
            headers.pop(TARGET_ENDPOINT_ADDRESS)
        message = OutgoingMessage(context.native_message_id, headers, body)
        self.dispatcher.dispatch(
            [TransportOperation(message, retry_to)], context.transport_transaction
        )

    def _forward_failed(self, context: ErrorContext) -> ErrorHandleResult:
        """The staging fault manager: the failed message goes back to unresolved."""
        failed = self.failed_messages.get(str(context.headers.get(RETRY_UNIQUE_MESSAGE_ID)))
        if failed is not None:
            failed.status = FailedMessageStatus.UNRESOLVED
            failed.retry_failure = str(context.exception)
        return ErrorHandleResult.HANDLED
