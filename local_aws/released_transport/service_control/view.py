"""What ServiceControl's three instances saw, per endpoint: the model's stand-in for ServicePulse.

ServicePulse shows an endpoint through several instances: heartbeats and custom checks from the
main instance (by endpoint instance), audited messages and saga snapshots from the audit
instance (by the endpoint that processed them), metrics from the monitoring instance (by
``NServiceBus.OriginatingEndpoint``), failed messages from the main instance's error side (by
``NServiceBus.ProcessingEndpoint``, else the queue in ``NServiceBus.FailedQ``). An endpoint that
none of them saw is not in the view — which is what an endpoint whose platform messages never
reach the central account looks like. Any of the three instances may be left out.
:func:`describe` renders the view as lines to print.

Audited messages are listed as ServicePulse lists them by default: without system messages.
The audit instance marks a message ``IsSystemMessage`` when it carries
``NServiceBus.ControlMessage`` and no ``NServiceBus.EnclosedMessageTypes`` (a subscribe
message, saga audit's start-up check), or when its type is a scheduled task
(``MessageTypeEnricher``); ServicePulse's message list asks ``messages2``, which the audit instance
answers without them (``includeSystemMessages`` false; its RavenDB store filters them out). Such
messages stay stored (``include_system_messages=True`` shows them, as the ``messages`` API's
``include_system_messages`` does), and :func:`system_messages` counts them.

Facts: the instances' modules (:mod:`~local_aws.released_transport.service_control.main_instance`,
:mod:`~local_aws.released_transport.service_control.instance_queue`,
:mod:`~local_aws.released_transport.service_control.audit`,
:mod:`~local_aws.released_transport.service_control.monitoring`); ServiceControl 6.19.2
``src/ServiceControl.Audit/Infrastructure/TransportMessageExtensions.cs``
(``ProcessingEndpointName``), ``src/ServiceControl.Audit/Auditing/DefaultEnrichers.cs``
(``MessageTypeEnricher``), ``Auditing/MessagesView/GetMessages2Controller.cs``,
``Auditing/MessagesView/GetMessagesController.cs``,
``src/ServiceControl.Audit.Persistence.RavenDB/RavenAuditDataStore.cs`` and
``Extensions/RavenQueryExtensions.cs`` (``IncludeSystemMessagesWhere``); vectors in
``src/ServiceControl.Audit.AcceptanceTests/Auditing/When_messages_are_marked_as_system_messages.cs``;
ServicePulse 2.10.2 ``src/Frontend/src/components/audit/auditClient.ts`` (the list's
``messages2`` query).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from local_aws.released_transport.dotnet.time_formats import to_wire_format
from local_aws.released_transport.headers import (
    EXCEPTION_MESSAGE,
    FAILED_QUEUE,
    PROCESSING_ENDPOINT,
)
from local_aws.released_transport.service_control.audit import (
    ProcessedMessage,
    SagaSnapshot,
    ServiceControlAudit,
)
from local_aws.released_transport.service_control.instance_queue import (
    CustomCheckRecord,
    EndpointInstanceId,
    HeartbeatStatus,
)
from local_aws.released_transport.service_control.main_instance import (
    FailedMessage,
    ServiceControl,
)
from local_aws.released_transport.service_control.monitoring import (
    MetricValue,
    ServiceControlMonitoring,
)

UNKNOWN_ENDPOINT: Final = "(unknown endpoint)"
"""Where the view puts what no endpoint can be named for (a control message sent straight to
the audit queue, which no endpoint processed: a system message, shown only on request)."""


@dataclass(frozen=True)
class HeartbeatView:
    """One endpoint instance as the main instance knows it."""

    host: str | None
    host_id: str
    last_heartbeat: datetime | None
    started_at: datetime | None
    status: HeartbeatStatus


@dataclass
class EndpointView:
    """Everything the instances hold about one endpoint."""

    name: str
    heartbeats: list[HeartbeatView] = field(default_factory=list)
    custom_checks: list[CustomCheckRecord] = field(default_factory=list)
    audited_messages: list[ProcessedMessage] = field(default_factory=list)
    saga_snapshots: list[SagaSnapshot] = field(default_factory=list)
    metrics: dict[str, list[MetricValue]] = field(default_factory=dict)
    """Values per metric type, all instances of the endpoint together."""
    input_queue: str | None = None
    failed_messages: list[FailedMessage] = field(default_factory=list)


def _failing_endpoint(failed: FailedMessage) -> str:
    """``ProcessingEndpointName``: the processing endpoint, else the queue of ``FailedQ``."""
    headers = failed.headers
    if headers.get(PROCESSING_ENDPOINT):
        return str(headers[PROCESSING_ENDPOINT])
    return str(headers.get(FAILED_QUEUE) or failed.failing_endpoint_address).split("@", 1)[0]


def system_messages(audit: ServiceControlAudit) -> list[ProcessedMessage]:
    """The audited messages ServicePulse's message list hides: those marked
    ``IsSystemMessage``."""
    return [m for m in audit.processed_messages if m.is_system_message]


def endpoint_views(
    main: ServiceControl | None = None,
    audit: ServiceControlAudit | None = None,
    monitoring: ServiceControlMonitoring | None = None,
    *,
    include_system_messages: bool = False,
) -> dict[str, EndpointView]:
    """The view of every endpoint any given instance saw, by endpoint name; audited system
    messages only with ``include_system_messages`` (ServicePulse hides them), so that an
    endpoint nothing else names — saga audit's start-up check reaches the audit queue
    processed by no endpoint — shows only then."""
    views: dict[str, EndpointView] = {}

    def view(name: str | None) -> EndpointView:
        key = name or UNKNOWN_ENDPOINT
        return views.setdefault(key, EndpointView(key))

    if main is not None:
        _main_views(main, view)
    if audit is not None:
        for processed in audit.processed_messages:
            if processed.is_system_message and not include_system_messages:
                continue
            receiver = processed.receiving_endpoint
            view(None if receiver is None else receiver.name).audited_messages.append(processed)
        for snapshot in audit.saga_snapshots:
            view(snapshot.endpoint).saga_snapshots.append(snapshot)
    if monitoring is not None:
        for (instance, metric_type), values in monitoring.state.metrics.items():
            view(instance.endpoint_name).metrics.setdefault(metric_type, []).extend(values)
        for endpoint, queue in monitoring.state.input_queues.items():
            view(endpoint).input_queue = queue
    return dict(sorted(views.items()))


def _main_views(main: ServiceControl, view: Callable[[str | None], EndpointView]) -> None:
    """The main instance's part: heartbeats, custom checks, failed messages."""
    heartbeats = main.platform.heartbeats
    instances: dict[EndpointInstanceId, HeartbeatView] = {}
    for known in heartbeats.endpoints.values():
        instances[known.instance] = HeartbeatView(
            known.instance.host, known.instance.host_id, None, known.started_at, known.status
        )
    for instance, (status, last) in heartbeats.heartbeats.items():
        previous = instances.get(instance)
        instances[instance] = HeartbeatView(
            instance.host,
            instance.host_id,
            last,
            None if previous is None else previous.started_at,
            status if previous is None else previous.status,
        )
    for instance, heartbeat in instances.items():
        view(instance.name).heartbeats.append(heartbeat)
    for check in main.platform.custom_checks.values():
        view(check.endpoint.name).custom_checks.append(check)
    for failed in main.failed_messages.values():
        view(_failing_endpoint(failed)).failed_messages.append(failed)


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else to_wire_format(moment)


def describe(views: dict[str, EndpointView]) -> list[str]:
    """The view as lines of text, one block per endpoint."""
    lines: list[str] = []
    for name, endpoint in views.items():
        lines.append(f"{name}:")
        for beat in endpoint.heartbeats:
            lines.append(
                f"  heartbeat {beat.host} ({beat.host_id}): last {_when(beat.last_heartbeat)},"
                f" started {_when(beat.started_at)}, {beat.status.value}"
            )
        for check in endpoint.custom_checks:
            outcome = f"failed: {check.failure_reason}" if check.has_failed else "passed"
            lines.append(
                f"  custom check {check.category}/{check.custom_check_id}: {outcome}"
                f" at {_when(check.reported_at)}"
            )
        for processed in endpoint.audited_messages:
            sender = processed.sending_endpoint
            kind = processed.metadata.get("MessageType") or "(no message type)"
            lines.append(
                f"  audited {kind} {processed.message_id}"
                f" from {'-' if sender is None else sender.name},"
                f" processing {processed.metadata.get('ProcessingTime')}"
            )
        for snapshot in endpoint.saga_snapshots:
            lines.append(f"  saga {snapshot.saga_type} {snapshot.saga_id}: {snapshot.status}")
        for metric_type, values in endpoint.metrics.items():
            lines.append(
                f"  metric {metric_type}: {len(values)} values,"
                f" last {values[-1].value if values else '-'}"
            )
        if endpoint.input_queue is not None:
            lines.append(f"  input queue {endpoint.input_queue}")
        for failed in endpoint.failed_messages:
            lines.append(
                f"  failed {failed.message_id} ({failed.status.value}):"
                f" {failed.headers.get(EXCEPTION_MESSAGE)}"
            )
    return lines
