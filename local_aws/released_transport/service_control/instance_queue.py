"""ServiceControl 6.19.2's main instance on its own queue: heartbeats, custom checks, saga audit.

The main instance is an NServiceBus endpoint named after the instance (``Particular.ServiceControl``,
so its queue is ``Particular-ServiceControl``) on the released SQS transport — its own client,
prefix and wrapping, no unrestricted delayed delivery — with core's pipeline and
recoverability set to 3 immediate retries, no delayed retries, ``UnrecoverableException`` and
deserialization failures straight to the instance's error queue ``{instance}.Errors``
(:class:`ServiceControlInstanceQueue` runs it as a
:class:`~local_aws.released_transport.endpoint.released_endpoint.ReleasedEndpoint`, so poison and
expired messages meet the released input pump). Its handlers:

* ``RegisterEndpointStartup``: the endpoint instance ``(Endpoint, Host, HostId)`` becomes known
  and monitored, started at ``StartedAt``;
* ``EndpointHeartbeat``: the instance ``(EndpointName, Host, HostId)``'s last heartbeat becomes
  ``ExecutedAt`` — the sender's clock — unless it already has a later one. Every 5 s a timer marks
  dead an instance whose last heartbeat is older than the grace period (40 s), alive otherwise
  (:meth:`HeartbeatMonitoring.check_endpoints`, stepped by hand);
* ``ReportCustomCheckResult``: refused (an ordinary exception, so retried, then the error queue)
  without ``EndpointName``, ``Host`` or a non-empty ``HostId``; else the check's status — keyed by
  ``DeterministicGuid(endpoint name, host id, check id)`` — is overwritten and reported as
  changed when it is new or flips between pass and fail;
* ``SagaUpdatedMessage``: ServiceControl 6.19.2 stores saga audit from the *audit* queue. One
  reaching the main instance is logged as a misconfiguration (what its "Saga Audit Configuration"
  custom check shows for five minutes, naming the ``NServiceBus.ReplyToAddress``) and forwarded —
  the same message, ``ForwardCurrentMessageTo`` — to the audit queue the audit instance
  publishes as its ``SagaAuditQueue`` (the model's
  :attr:`~local_aws.released_transport.service_control.main_instance.ServiceControlSettings.saga_audit_queue`),
  by name in the main instance's own account; without one it fails as unrecoverable.

A control message (the saga audit plugin's start-up check among them) and a message without body
reach no handler. A message of any other type cannot be deserialized (the model knows only these
four of ServiceControl's message types) and goes to the error queue at once.

Facts: ServiceControl 6.19.2 ``src/ServiceControl/Infrastructure/NServiceBusFactory.cs``,
``src/ServiceControl/Infrastructure/Settings/Settings.cs`` (``InstanceName``,
``HeartbeatGracePeriod``), ``src/ServiceControl.Transports/TransportSettings.cs``
(``{EndpointName}.Errors``), ``src/ServiceControl.Transports.SQS/SQSTransportCustomization.cs``,
``src/ServiceControl/Monitoring/Transport/HeartbeatHandler.cs``,
``Monitoring/HeartbeatMonitoring/RegisterEndpointStartupHandler.cs``,
``Monitoring/EndpointInstanceMonitoring.cs``, ``Monitoring/EndpointInstanceMonitor.cs``,
``Monitoring/HeartbeatMonitor.cs``, ``Monitoring/HeartbeatMonitoringHostedService.cs``,
``src/ServiceControl.Persistence/EndpointInstanceId.cs``,
``src/ServiceControl/CustomChecks/ReportCustomCheckResultHandler.cs``,
``CustomChecks/CustomCheckResultProcessor.cs``, ``src/ServiceControl.Persistence/CustomCheckDetail.cs``,
``src/ServiceControl.Persistence.RavenDB/RavenCustomCheckDataStore.cs``,
``src/ServiceControl/SagaAudit/SagaUpdatedHandler.cs``,
``SagaAudit/SagaAuditMisconfigurationCustomCheck.cs``,
``src/ServiceControl.Audit/Connection/ConnectionController.cs`` (``SagaAuditQueue``).
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from local_aws.released_transport.core.recoverability import (
    MessageDeserializationError,
    RecoverabilitySettings,
)
from local_aws.released_transport.dotnet.deterministic_guid import make_id
from local_aws.released_transport.dotnet.guid import EMPTY_GUID
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
)
from local_aws.released_transport.headers import ENCLOSED_MESSAGE_TYPES, REPLY_TO_ADDRESS
from local_aws.released_transport.plugins.custom_checks import REPORT_CUSTOM_CHECK_RESULT_TYPE
from local_aws.released_transport.plugins.heartbeats import (
    ENDPOINT_HEARTBEAT_TYPE,
    REGISTER_ENDPOINT_STARTUP_TYPE,
)
from local_aws.released_transport.plugins.saga_audit import SAGA_UPDATED_MESSAGE_TYPE
from local_aws.released_transport.service_control.instance_transport import (
    InstanceEndpoint,
    InstanceTransportSettings,
)
from local_aws.released_transport.service_control.messages import (
    ContractError,
    read_endpoint_heartbeat,
    read_register_endpoint_startup,
    read_report_custom_check_result,
    read_saga_updated_message,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import full_name

DEFAULT_HEARTBEAT_GRACE_PERIOD: Final = timedelta(seconds=40)
INSTANCE_IMMEDIATE_RETRIES: Final = 3
SAGA_AUDIT_QUEUE_UNKNOWN: Final = (
    "Could not determine audit queue name to forward saga update message. This message can be"
    " replayed after the ServiceControl Audit remote instance is running and accessible."
)
MISCONFIGURATION_WINDOW: Final = timedelta(minutes=5)


class UnrecoverableError(Exception):
    """ServiceControl's ``UnrecoverableException``: straight to the error queue."""


class CustomCheckRejectedError(Exception):
    """``ReportCustomCheckResultHandler`` refused a report that does not name its endpoint."""


class HeartbeatStatus(enum.Enum):
    """``HeartbeatStatus``."""

    UNKNOWN = "Unknown"
    ALIVE = "Alive"
    DEAD = "Dead"


@dataclass(frozen=True)
class EndpointInstanceId:
    """``EndpointInstanceId``: logical name, host name and host id (``D`` form)."""

    name: str | None
    host: str | None
    host_id: str

    @property
    def unique_id(self) -> uuid.UUID:
        """``DeterministicGuid.MakeId(LogicalName, HostGuid.ToString())``."""
        return make_id(self.name or "", self.host_id)


@dataclass
class EndpointInstance:
    """``EndpointInstanceMonitor``: a known endpoint instance."""

    instance: EndpointInstanceId
    monitored: bool
    status: HeartbeatStatus = HeartbeatStatus.UNKNOWN
    last_seen: datetime | None = None
    """The heartbeat time the last check saw."""
    started_at: datetime | None = None
    """The ``StartedAt`` of the last start-up registration (the ``EndpointStarted`` event)."""


class HeartbeatMonitoring:
    """``EndpointInstanceMonitoring`` with its ``HeartbeatMonitor`` per instance."""

    def __init__(self) -> None:
        self.endpoints: dict[uuid.UUID, EndpointInstance] = {}
        """The known instances by ``UniqueId``."""
        self.heartbeats: dict[EndpointInstanceId, tuple[HeartbeatStatus, datetime | None]] = {}
        """Each heartbeating instance's reading: alive or dead, and its last ``ExecutedAt``."""

    def record_heartbeat(self, instance: EndpointInstanceId, executed_at: datetime) -> None:
        """``RecordHeartbeat`` (``MarkAlive``): alive at ``executed_at`` unless a later one was
        recorded."""
        _, previous = self.heartbeats.get(instance, (HeartbeatStatus.UNKNOWN, None))
        if previous is None or previous <= executed_at:
            self.heartbeats[instance] = (HeartbeatStatus.ALIVE, executed_at)

    def detect_startup(self, instance: EndpointInstanceId, started_at: datetime) -> None:
        """``DetectEndpointFromHeartbeatStartup``: known and monitored, started at
        ``started_at``."""
        known = self.endpoints.setdefault(
            instance.unique_id, EndpointInstance(instance, monitored=True)
        )
        known.started_at = started_at

    def check_endpoints(self, threshold: datetime) -> None:
        """``CheckEndpoints`` (``MarkDeadIfOlderThan``, ``UpdateStatus``): instances silent since
        before ``threshold`` are dead."""
        for instance, (reading, timestamp) in list(self.heartbeats.items()):
            status = HeartbeatStatus.DEAD if timestamp is None or timestamp < threshold else reading
            self.heartbeats[instance] = (status, timestamp)
            known = self.endpoints.setdefault(
                instance.unique_id, EndpointInstance(instance, monitored=True)
            )
            if status is HeartbeatStatus.ALIVE and known.status is HeartbeatStatus.UNKNOWN:
                known.monitored = True
            known.status = status
            known.last_seen = timestamp


@dataclass
class CustomCheckRecord:
    """A stored custom check (``CustomChecks/{id}``)."""

    check_id: uuid.UUID
    custom_check_id: str | None
    category: str | None
    has_failed: bool
    failure_reason: str | None
    reported_at: datetime
    endpoint: EndpointInstanceId


@dataclass(frozen=True)
class MisconfiguredSagaAudit:
    """``SagaAuditMisconfigurationCustomCheck``'s last detail."""

    occurred_at: datetime
    endpoint: str | None
    """The ``NServiceBus.ReplyToAddress`` of the saga audit message, if any."""


@dataclass
class InstanceQueueState:
    """What the main instance took from its queue."""

    heartbeats: HeartbeatMonitoring = field(default_factory=HeartbeatMonitoring)
    custom_checks: dict[uuid.UUID, CustomCheckRecord] = field(default_factory=dict)
    custom_check_changes: list[CustomCheckRecord] = field(default_factory=list)
    """Each report that changed a check's status (``CustomCheckFailed`` / ``Succeeded``)."""
    misconfigured_saga_audit: MisconfiguredSagaAudit | None = None


class ServiceControlInstanceQueue(InstanceEndpoint):
    """The main instance's endpoint on its own queue, stepped by hand."""

    def __init__(
        self,
        sqs: Any,
        instance_name: str,
        transport: InstanceTransportSettings,
        *,
        saga_audit_queue: str | None,
        heartbeat_grace_period: timedelta,
    ) -> None:
        super().__init__(
            sqs,
            instance_name,
            transport,
            error_queue=f"{instance_name}.Errors",
            recoverability=RecoverabilitySettings(
                immediate_retries=INSTANCE_IMMEDIATE_RETRIES,
                delayed_retries=0,
                unrecoverable_exceptions=(MessageDeserializationError, UnrecoverableError),
            ),
        )
        self._clock = transport.clock
        self._saga_audit_queue = saga_audit_queue
        self._grace_period = heartbeat_grace_period
        self.state = InstanceQueueState()

    def process(self) -> list[ProcessingOutcome]:
        """One batch from the instance's queue through the handlers."""
        return self.endpoint.process(self._handle)

    def check_heartbeats(self) -> None:
        """One tick of the heartbeat monitoring timer."""
        self.state.heartbeats.check_endpoints(self._clock() - self._grace_period)

    def _handle(self, context: MessageHandlerContext) -> None:
        message = context.message
        if not message.body:
            return
        enclosed = message.headers.get(ENCLOSED_MESSAGE_TYPES) or ""
        types = [full_name(name) for name in enclosed.split(";") if name.strip()]
        if ENDPOINT_HEARTBEAT_TYPE in types:
            heartbeat = read_endpoint_heartbeat(message.body)
            self.state.heartbeats.record_heartbeat(
                EndpointInstanceId(heartbeat.endpoint_name, heartbeat.host, heartbeat.host_id),
                heartbeat.executed_at,
            )
        elif REGISTER_ENDPOINT_STARTUP_TYPE in types:
            startup = read_register_endpoint_startup(message.body)
            self.state.heartbeats.detect_startup(
                EndpointInstanceId(startup.endpoint, startup.host, startup.host_id),
                startup.started_at,
            )
        elif REPORT_CUSTOM_CHECK_RESULT_TYPE in types:
            self._custom_check(message.body)
        elif SAGA_UPDATED_MESSAGE_TYPE in types:
            read_saga_updated_message(message.body)
            self.state.misconfigured_saga_audit = MisconfiguredSagaAudit(
                self._clock(), message.headers.get(REPLY_TO_ADDRESS)
            )
            if self._saga_audit_queue is None:
                raise UnrecoverableError(SAGA_AUDIT_QUEUE_UNKNOWN)
            context.forward(self._saga_audit_queue)
        else:
            raise ContractError(
                "The System.Text.Json message serializer requires message types to be defined."
                f" (no handler for '{enclosed}' in this model of ServiceControl)"
            )

    def _custom_check(self, body: bytes) -> None:
        """``ReportCustomCheckResultHandler`` and ``UpdateCustomCheckStatus``."""
        report = read_report_custom_check_result(body)
        for value, name in ((report.endpoint_name, "EndpointName"), (report.host, "Host")):
            if not value:
                raise CustomCheckRejectedError(
                    "Received an custom check message without proper initialization of the"
                    f" {name} in the schema"
                )
        if report.host_id == str(EMPTY_GUID):
            raise CustomCheckRejectedError(
                "Received an custom check message without proper initialization of the HostId"
                " in the schema"
            )
        endpoint = EndpointInstanceId(report.endpoint_name, report.host, report.host_id)
        check_id = make_id(report.endpoint_name or "", report.host_id, report.custom_check_id or "")
        previous = self.state.custom_checks.get(check_id)
        record = CustomCheckRecord(
            check_id,
            report.custom_check_id,
            report.category,
            report.has_failed,
            report.failure_reason,
            report.reported_at,
            endpoint,
        )
        self.state.custom_checks[check_id] = record
        if previous is None or previous.has_failed != report.has_failed:
            self.state.custom_check_changes.append(record)

    def saga_audit_misconfigured(self) -> MisconfiguredSagaAudit | None:
        """What the "Saga Audit Configuration" check reports now: the last misconfigured saga
        audit message of the last five minutes."""
        detail = self.state.misconfigured_saga_audit
        if detail is None or detail.occurred_at < self._clock() - MISCONFIGURATION_WINDOW:
            return None
        return detail
