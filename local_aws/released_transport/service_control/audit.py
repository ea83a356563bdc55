"""ServiceControl 6.19.2's audit instance (``Particular.ServiceControl.Audit``) on SQS.

It reads the audit queue (``audit`` through its own generator and prefix, by name in its own
account) with the released input pump — poison messages go unchanged to ``{instance}.Errors``,
expired ones are dropped — and imports each message:

* ``NServiceBus.EnclosedMessageTypes`` exactly
  ``ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage``: a saga snapshot (the
  saga's id, type, state after the change, ``New`` / ``Updated`` / ``Completed``, the initiating
  and resulting messages);
* anything else: a processed message — its headers and body as received, plus what the enrichers
  read from the headers: ``MessageId`` (the header, else ``DeterministicGuid(native id)``),
  ``MessageIntent``, ``MessageType`` (the first type's name before any comma) and
  ``IsSystemMessage``, ``ConversationId``, ``RelatedToId``, ``TimeSent``, ``CriticalTime``,
  ``ProcessingTime`` and ``DeliveryTime`` (from ``NServiceBus.TimeSent`` / ``NServiceBus.DeliverAt``
  / ``NServiceBus.ProcessingStarted`` / ``NServiceBus.ProcessingEnded``, zero when one is
  missing), ``SendingEndpoint`` (``NServiceBus.OriginatingEndpoint``,
  ``NServiceBus.OriginatingMachine``, ``$.diagnostics.originating.hostid``) and
  ``ReceivingEndpoint`` (``NServiceBus.ProcessingEndpoint``, ``$.diagnostics.hostdisplayname`` else
  ``NServiceBus.ProcessingMachine``, ``$.diagnostics.hostid``; else from ``NServiceBus.FailedQ``),
  ``IsRetried`` and ``InvokedSagas`` / ``OriginatesFromSaga``. An endpoint with a host id seen for
  the first time becomes known. A ServiceControl retry that the endpoint did not acknowledge
  itself (``ServiceControl.Retry.AcknowledgementQueue`` without
  ``ServiceControl.Retry.AcknowledgementSent``) is acknowledged from here: a
  ``ServiceControl.Retry.Successful`` message to that queue, by name in the audit instance's
  account.

A header it cannot read — a timestamp, a host id ``Guid.Parse`` refuses — fails the import; a
message that fails three times is kept as a failed import. Storage is in memory. Not modelled:
the ``RegisterNewEndpoint`` command it sends the main instance for a newly seen endpoint, the
audit log queue (forwarding is off by default), body storage rules and retention.

Facts: ServiceControl 6.19.2 ``src/ServiceControl.Audit/Auditing/AuditIngestion.cs``,
``AuditIngestor.cs``, ``AuditPersister.cs``, ``AuditIngestionFaultPolicy.cs``,
``DefaultEnrichers.cs``, ``ProcessingStatisticsEnricher.cs``,
``src/ServiceControl.Audit/Monitoring/DetectNewEndpointsFromAuditImportsEnricher.cs``,
``Monitoring/EndpointDetailsParser.cs``,
``src/ServiceControl.Audit/Recoverability/DetectSuccessfulRetriesEnricher.cs``,
``src/ServiceControl.Audit/SagaAudit/SagaRelationshipsEnricher.cs``,
``src/ServiceControl.SagaAudit/InvokedSagasParser.cs``, ``SagaSnapshotFactory.cs``,
``src/ServiceControl.Audit/Infrastructure/TransportMessageExtensions.cs``,
``src/ServiceControl.Audit/Infrastructure/Settings/Settings.cs`` (instance name, ``audit``),
``src/ServiceControl.Transports/TransportSettings.cs``; vectors in
``src/ServiceControl.Audit.UnitTests/SagaAudit/SagaRelationshipsEnricherTests.cs`` and
``Receoverability/DetectSuccessfulRetriesEnricherTests.cs``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from local_aws.released_transport.core.incoming import (
    MessageContext,
)
from local_aws.released_transport.core.outgoing import OutgoingMessage, TransportOperation
from local_aws.released_transport.core.pipeline_headers import parse_message_intent
from local_aws.released_transport.dotnet.deterministic_guid import make_id
from local_aws.released_transport.dotnet.guid import EMPTY_GUID, parse_guid
from local_aws.released_transport.dotnet.time_formats import (
    from_wire_format,
    to_wire_format,
)
from local_aws.released_transport.headers import (
    CONTROL_MESSAGE,
    CONVERSATION_ID,
    DELIVER_AT,
    ENCLOSED_MESSAGE_TYPES,
    FAILED_QUEUE,
    HOST_DISPLAY_NAME,
    HOST_ID,
    INVOKED_SAGAS,
    MESSAGE_ID,
    MESSAGE_INTENT,
    OLD_RETRY_ID,
    ORIGINATING_ADDRESS,
    ORIGINATING_ENDPOINT,
    ORIGINATING_HOST_ID,
    ORIGINATING_MACHINE,
    ORIGINATING_SAGA_ID,
    ORIGINATING_SAGA_TYPE,
    PROCESSING_ENDED,
    PROCESSING_ENDPOINT,
    PROCESSING_MACHINE,
    PROCESSING_STARTED,
    RELATED_TO,
    RETRY_ACKNOWLEDGEMENT_QUEUE,
    RETRY_ACKNOWLEDGEMENT_SENT,
    RETRY_SUCCESSFUL,
    RETRY_UNIQUE_MESSAGE_ID,
    SAGA_ID,
    SAGA_STATE_CHANGE,
    SAGA_TYPE,
    TIME_SENT,
    HeaderDict,
)
from local_aws.released_transport.plugins.saga_audit import (
    COMPLETED,
    NEW,
    SAGA_UPDATED_MESSAGE_TYPE,
    UPDATED,
)
from local_aws.released_transport.service_control.instance_transport import (
    IngestingInstance,
    InstanceTransportSettings,
)
from local_aws.released_transport.service_control.messages import (
    SagaChangeInitiator,
    SagaChangeOutput,
    read_saga_updated_message,
)
from local_aws.released_transport.transport.receiving.input_pump import (
    PumpResult,
)

DEFAULT_AUDIT_INSTANCE_NAME: Final = "Particular.ServiceControl.Audit"
DEFAULT_AUDIT_QUEUE: Final = "audit"
SCHEDULED_TASK_TYPE: Final = "NServiceBus.Scheduling.Messages.ScheduledTask"


@dataclass(frozen=True, kw_only=True)
class AuditInstanceSettings(InstanceTransportSettings):
    """The audit instance's settings beside its transport's (``InstanceName``,
    ``ServiceBus/AuditQueue``)."""

    instance_name: str = DEFAULT_AUDIT_INSTANCE_NAME
    audit_queue: str = DEFAULT_AUDIT_QUEUE


@dataclass(frozen=True)
class EndpointDetails:
    """``EndpointDetails``: a name, a host, a host id."""

    name: str | None
    host: str | None
    host_id: uuid.UUID = EMPTY_GUID


@dataclass(frozen=True)
class SagaInfo:
    """``SagaInfo``: a saga the message invoked, and how it changed it."""

    saga_id: uuid.UUID
    saga_type: str
    change_status: str | None = None


@dataclass
class ProcessedMessage:
    """A processed message as stored: the headers and body received, and the enrichers'
    metadata (keys as ServiceControl names them)."""

    headers: HeaderDict
    body: bytes
    metadata: dict[str, Any]

    @property
    def message_id(self) -> str:
        """``MessageId``."""
        return str(self.metadata["MessageId"])

    @property
    def is_system_message(self) -> bool:
        """``IsSystemMessage`` (``MessageTypeEnricher``): a control message without an
        enclosed type, or a scheduled task; what ServicePulse's message list hides."""
        return bool(self.metadata.get("IsSystemMessage"))

    @property
    def receiving_endpoint(self) -> EndpointDetails | None:
        """Where it was processed."""
        value = self.metadata.get("ReceivingEndpoint")
        return value if isinstance(value, EndpointDetails) else None

    @property
    def sending_endpoint(self) -> EndpointDetails | None:
        """Who sent it."""
        value = self.metadata.get("SendingEndpoint")
        return value if isinstance(value, EndpointDetails) else None


@dataclass
class SagaSnapshot:
    """``SagaSnapshot``: one change of one saga."""

    saga_id: str
    saga_type: str | None
    endpoint: str | None
    status: str
    state_after_change: str | None
    start_time: datetime
    finish_time: datetime
    initiating_message: SagaChangeInitiator | None
    outgoing_messages: list[SagaChangeOutput] = field(default_factory=list)


def sending_endpoint(headers: Mapping[str, str | None]) -> EndpointDetails | None:
    """``EndpointDetailsParser.SendingEndpoint``."""
    name = headers.get(ORIGINATING_ENDPOINT)
    host = headers.get(ORIGINATING_MACHINE)
    host_id = EMPTY_GUID
    if ORIGINATING_HOST_ID in headers:
        host_id = parse_guid(str(headers[ORIGINATING_HOST_ID]))
    if name and host:
        return EndpointDetails(name, host, host_id)
    address = headers.get(ORIGINATING_ADDRESS)
    if address is not None:
        queue, machine = _queue_and_machine(address)
        return EndpointDetails(queue, machine, host_id)
    return None


def receiving_endpoint(headers: Mapping[str, str | None]) -> EndpointDetails | None:
    """``EndpointDetailsParser.ReceivingEndpoint``."""
    host_id = EMPTY_GUID
    if HOST_ID in headers:
        host_id = parse_guid(str(headers[HOST_ID]))
    host = (
        headers[HOST_DISPLAY_NAME]
        if HOST_DISPLAY_NAME in headers
        else headers.get(PROCESSING_MACHINE)
    )
    name = headers.get(PROCESSING_ENDPOINT)
    if name and host:
        return EndpointDetails(name, host, host_id)
    address = headers.get(FAILED_QUEUE)
    if address is not None:
        queue, machine = _queue_and_machine(address)
        name = name or queue
        host = host or machine
        if name and host:
            return EndpointDetails(name, host, host_id)
    return None


def _queue_and_machine(address: str) -> tuple[str, str | None]:
    """``ExtractQueueAndMachineName``: ``queue@machine``."""
    queue, separator, machine = address.partition("@")
    return (queue, machine) if separator else (address, None)


def invoked_sagas(headers: Mapping[str, str | None]) -> dict[str, Any]:
    """``InvokedSagasParser.Parse``: ``InvokedSagas`` and ``OriginatesFromSaga``."""
    metadata: dict[str, Any] = {}
    if INVOKED_SAGAS in headers:
        changes = _saga_changes(headers)
        sagas: list[SagaInfo] = []
        for saga in dict.fromkeys(_split_invoked_sagas(str(headers[INVOKED_SAGAS]))):
            saga_type, saga_id = saga.split(":")[0], saga.split(":")[1]
            sagas.append(SagaInfo(parse_guid(saga_id), saga_type, changes.get(saga_id)))
        metadata["InvokedSagas"] = sagas
    elif SAGA_ID in headers:
        metadata["InvokedSagas"] = [
            SagaInfo(parse_guid(str(headers[SAGA_ID])), _saga_type(headers, SAGA_TYPE))
        ]
    if ORIGINATING_SAGA_ID in headers:
        metadata["OriginatesFromSaga"] = SagaInfo(
            parse_guid(str(headers[ORIGINATING_SAGA_ID])),
            _saga_type(headers, ORIGINATING_SAGA_TYPE),
        )
    return metadata


def _saga_type(headers: Mapping[str, str | None], name: str) -> str:
    """A saga type header's name before any comma, ``Unknown`` without the header."""
    return str(headers[name]).split(",")[0] if name in headers else "Unknown"


def _saga_changes(headers: Mapping[str, str | None]) -> dict[str, str]:
    """``ServiceControl.SagaStateChange`` per saga id: ``Completed`` overrides everything,
    ``New`` overrides ``Updated``."""
    changes: dict[str, str] = {}
    if SAGA_STATE_CHANGE not in headers:
        return changes
    for part in str(headers[SAGA_STATE_CHANGE]).split(";"):
        saga_id, change = part.split(":")[0], part.split(":")[1]
        previous = changes.get(saga_id)
        if previous is None or change == COMPLETED or (change == NEW and previous == UPDATED):
            changes[saga_id] = change
    return changes


def _split_invoked_sagas(raw: str) -> list[str]:
    """``SplitInvokedSagas``, which repairs the doubled values of old plugin versions (and
    fails, as ``Substring`` does, on a malformed value without ``;``)."""
    if raw.count(":") == raw.count(";") + 1:
        return raw.split(";")
    tail_at = raw.rfind(";")
    if tail_at < 0:
        raise ValueError(f"malformed {INVOKED_SAGAS} header: {raw!r}")
    head = raw[:tail_at]
    return [*_split_invoked_sagas(head[: len(head) // 2]), raw[tail_at + 1 :]]


def detect_successful_retry(
    headers: Mapping[str, str | None], now: datetime
) -> tuple[bool, TransportOperation | None]:
    """``DetectSuccessfulRetriesEnricher``: whether the message is a ServiceControl retry, and
    the acknowledgement to send for an endpoint that did not send its own."""
    new_retry = RETRY_UNIQUE_MESSAGE_ID in headers
    retried = OLD_RETRY_ID in headers or new_retry
    if not retried or RETRY_ACKNOWLEDGEMENT_SENT in headers:
        return retried, None
    if RETRY_ACKNOWLEDGEMENT_QUEUE not in headers or not new_retry:
        return retried, None
    acknowledgement = OutgoingMessage(
        str(uuid.uuid4()),
        {
            RETRY_SUCCESSFUL: to_wire_format(now),
            RETRY_UNIQUE_MESSAGE_ID: headers[RETRY_UNIQUE_MESSAGE_ID],
        },
        b"",
    )
    return retried, TransportOperation(acknowledgement, str(headers[RETRY_ACKNOWLEDGEMENT_QUEUE]))


def _processing_statistics(headers: Mapping[str, str | None]) -> dict[str, Any]:
    """``ProcessingStatisticsEnricher``."""
    metadata: dict[str, Any] = {}
    start: datetime | None = None
    if TIME_SENT in headers:
        start = from_wire_format(str(headers[TIME_SENT]))
        metadata["TimeSent"] = start
    if DELIVER_AT in headers:
        start = from_wire_format(str(headers[DELIVER_AT]))
    started = (
        None
        if PROCESSING_STARTED not in headers
        else from_wire_format(str(headers[PROCESSING_STARTED]))
    )
    ended = (
        None
        if PROCESSING_ENDED not in headers
        else from_wire_format(str(headers[PROCESSING_ENDED]))
    )
    zero = timedelta(0)
    metadata["CriticalTime"] = ended - start if ended is not None and start is not None else zero
    metadata["ProcessingTime"] = (
        ended - started if ended is not None and started is not None else zero
    )
    metadata["DeliveryTime"] = (
        started - start if started is not None and start is not None else zero
    )
    return metadata


def _message_type(headers: Mapping[str, str | None]) -> dict[str, Any]:
    """``MessageTypeEnricher``."""
    metadata: dict[str, Any] = {}
    is_system = CONTROL_MESSAGE in headers
    message_type: str | None = None
    if ENCLOSED_MESSAGE_TYPES in headers:
        message_type = str(headers[ENCLOSED_MESSAGE_TYPES]).split(",")[0]
        is_system = SCHEDULED_TASK_TYPE in message_type
        metadata["SearchableMessageType"] = message_type.replace(".", " ").replace("+", " ")
    metadata["IsSystemMessage"] = is_system
    metadata["MessageType"] = message_type
    return metadata


class ServiceControlAudit(IngestingInstance):
    """An audit instance with its own SQS client (of its own account)."""

    def __init__(self, sqs: Any, settings: AuditInstanceSettings | None = None) -> None:
        self.settings = settings or AuditInstanceSettings()
        super().__init__(sqs, self.settings.instance_name, self.settings)
        self._ingestion = self._receiver(self.settings.audit_queue)
        self.processed_messages: list[ProcessedMessage] = []
        self.saga_snapshots: list[SagaSnapshot] = []
        self.known_endpoints: dict[uuid.UUID, EndpointDetails] = {}
        """Endpoint instances seen in audited messages (by ``DeterministicGuid(name, host
        id)``), those with a host id only."""
        self.acknowledgements: list[OutgoingMessage] = []
        """Retry acknowledgements sent on behalf of endpoints."""

    def install(self) -> None:
        """The queues its setup creates: the poison queue and the audit queue."""
        self._install_queues(self.settings.audit_queue)

    def start(self) -> None:
        """The audit queue must exist."""
        self._ingestion.initialize()

    def ingest(self) -> list[PumpResult]:
        """Read one batch from the audit queue."""
        return self._ingestion.poll(self._import, self._import_failed)

    def _import(self, context: MessageContext) -> None:
        """``AuditPersister.ProcessMessage``."""
        headers = context.headers
        if headers.get(ENCLOSED_MESSAGE_TYPES) == SAGA_UPDATED_MESSAGE_TYPE:
            self.saga_snapshots.append(self._saga_snapshot(context.body))
        else:
            self.processed_messages.append(self._processed_message(context))

    @staticmethod
    def _saga_snapshot(body: bytes) -> SagaSnapshot:
        """``SagaSnapshotFactory.Create``."""
        message = read_saga_updated_message(body)
        status = NEW if message.is_new else UPDATED
        if message.is_completed:
            status = COMPLETED
        outgoing: dict[str | None, SagaChangeOutput] = {}
        for output in message.resulting_messages:
            outgoing[output.resulting_message_id] = output
        return SagaSnapshot(
            message.saga_id,
            message.saga_type,
            message.endpoint,
            status,
            message.saga_state,
            message.start_time,
            message.finish_time,
            message.initiator,
            list(outgoing.values()),
        )

    def _processed_message(self, context: MessageContext) -> ProcessedMessage:
        """``ProcessAuditMessage``: the enrichers, then what they emit."""
        headers = context.headers
        message_id = headers.get(MESSAGE_ID) if MESSAGE_ID in headers else None
        intent = parse_message_intent(headers.get(MESSAGE_INTENT))
        metadata: dict[str, Any] = {
            "MessageId": message_id
            if MESSAGE_ID in headers
            else str(make_id(context.native_message_id)),
            "MessageIntent": None if intent is None else intent.value,
        }
        metadata.update(_message_type(headers))
        if CONVERSATION_ID in headers:
            metadata["ConversationId"] = headers[CONVERSATION_ID]
        if RELATED_TO in headers:
            metadata["RelatedToId"] = headers[RELATED_TO]
        metadata.update(_processing_statistics(headers))
        for key, endpoint in (
            ("SendingEndpoint", sending_endpoint(headers)),
            ("ReceivingEndpoint", receiving_endpoint(headers)),
        ):
            if endpoint is not None:
                if endpoint.host_id != EMPTY_GUID:
                    self.known_endpoints.setdefault(
                        make_id(endpoint.name or "", str(endpoint.host_id)), endpoint
                    )
                metadata[key] = endpoint
        metadata["IsRetried"], acknowledgement = detect_successful_retry(
            headers, self.settings.clock()
        )
        metadata.update(invoked_sagas(headers))
        if acknowledgement is not None:
            self.dispatcher.dispatch([acknowledgement])
            self.acknowledgements.append(acknowledgement.message)
        return ProcessedMessage(dict(headers), context.body, metadata)
