"""ServiceControl 6.19.2's three instances taking what the plugins send, on the test doubles: the
main instance's own queue (heartbeats, custom checks, misdirected saga audit), the audit instance
(processed messages with the enrichers' metadata, saga snapshots, failed imports) and the
monitoring instance (metric and metadata reports), and the per-endpoint view of all three."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local_aws.released_transport.core.audit import AuditSettings
from local_aws.released_transport.core.recoverability import ImmediateRetry, MoveToError
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.custom_checks import (
    PASS,
    CheckResult,
    CustomCheck,
    CustomCheckSettings,
)
from local_aws.released_transport.plugins.heartbeats import HeartbeatSettings
from local_aws.released_transport.plugins.metrics import MetricsSettings
from local_aws.released_transport.plugins.saga_audit import SagaAuditSettings
from local_aws.released_transport.service_control.audit import (
    AuditInstanceSettings,
    ServiceControlAudit,
)
from local_aws.released_transport.service_control.instance_queue import (
    HeartbeatStatus,
)
from local_aws.released_transport.service_control.main_instance import (
    ServiceControl,
    ServiceControlSettings,
)
from local_aws.released_transport.service_control.monitoring import (
    MonitoringSettings,
    ServiceControlMonitoring,
)
from local_aws.released_transport.service_control.view import (
    UNKNOWN_ENDPOINT,
    describe,
    endpoint_views,
    system_messages,
)
from local_aws.released_transport.transport.receiving.input_pump import MessageFate
from tests.local_aws.released_transport.fake_sqs import FakeSqs
from tests.local_aws.released_transport.fake_wire import as_received, envelope, sent_to

START = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
SAGA_ID = "51b5ad68-8ac4-46ee-a39c-a79900ca4ea8"
ORDER = "Sales.PlaceOrder, Sales, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"


class Clock:
    """A clock tests move."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def _deliver(sqs: FakeSqs, queue: str, *, sent: datetime = START) -> None:
    """Everything sent so far to ``queue`` becomes the next receive's batch."""
    sqs.received.append([as_received(entry, sent=sent) for entry in sent_to(sqs, queue)])


def _service_control(sqs: FakeSqs, clock: Clock, **settings: Any) -> ServiceControl:
    service_control = ServiceControl(
        sqs,
        ServiceControlSettings(wait_time_seconds=0, max_concurrency=10, clock=clock, **settings),
    )
    service_control.start_instance_queue()
    return service_control


def _sales(sqs: FakeSqs, clock: Clock, **settings: Any) -> ReleasedEndpoint:
    sales = ReleasedEndpoint(
        "Sales",
        sqs,
        EndpointSettings(
            disable_unrestricted_delayed_delivery=True,
            machine_name="MACHINE",
            max_concurrency=10,
            clock=clock,
            **settings,
        ),
    )
    sales.start()
    return sales


def test_the_main_instance_records_registrations_and_heartbeats_then_marks_silence_dead() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(sqs, clock, heartbeats=HeartbeatSettings("Particular.ServiceControl"))
    clock.now += timedelta(seconds=10)
    sales.send_heartbeat()
    service_control = _service_control(sqs, clock)
    _deliver(sqs, "Particular-ServiceControl")

    outcomes = service_control.process_instance_queue()
    service_control.check_heartbeats()

    assert [outcome.pump.fate for outcome in outcomes] == [MessageFate.PROCESSED] * 2
    (known,) = service_control.platform.heartbeats.endpoints.values()
    assert known.instance.name == "Sales"
    assert known.instance.host == "MACHINE"
    assert known.instance.host_id == sales.host.host_guid
    assert known.started_at == START
    assert (known.status, known.last_seen) == (HeartbeatStatus.ALIVE, START + timedelta(seconds=10))

    clock.now += timedelta(seconds=41)
    service_control.check_heartbeats()
    assert known.status is HeartbeatStatus.DEAD


def test_an_older_heartbeat_does_not_replace_a_newer_one() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(sqs, clock, heartbeats=HeartbeatSettings("Particular.ServiceControl"))
    clock.now += timedelta(seconds=20)
    sales.send_heartbeat()
    clock.now -= timedelta(seconds=10)
    sales.send_heartbeat()
    service_control = _service_control(sqs, clock)
    _deliver(sqs, "Particular-ServiceControl")

    service_control.process_instance_queue()

    (reading,) = service_control.platform.heartbeats.heartbeats.values()
    assert reading == (HeartbeatStatus.ALIVE, START + timedelta(seconds=20))


def test_the_main_instance_keeps_each_custom_checks_status_and_its_changes() -> None:
    sqs = FakeSqs()
    clock = Clock()
    results = iter([CheckResult.failed("disk full"), CheckResult.failed("disk full"), PASS])
    check = CustomCheck("Disk", "Storage", lambda: next(results), interval=timedelta(seconds=5))
    sales = _sales(
        sqs, clock, custom_checks=CustomCheckSettings("Particular.ServiceControl", checks=(check,))
    )
    sales.run_custom_checks()
    sales.run_custom_checks()
    service_control = _service_control(sqs, clock)
    _deliver(sqs, "Particular-ServiceControl")

    service_control.process_instance_queue()

    (stored,) = service_control.platform.custom_checks.values()
    assert (stored.custom_check_id, stored.category, stored.has_failed) == (
        "Disk",
        "Storage",
        False,
    )
    assert [change.has_failed for change in service_control.platform.custom_check_changes] == [
        True,
        False,
    ]


def _raw(sqs: FakeSqs, enclosed_type: str, body: dict[str, Any] | str) -> None:
    """A message straight onto ServiceControl's queue, as an old or foreign sender writes it."""
    text = body if isinstance(body, str) else json.dumps(body)
    sqs.received.append(
        [
            {
                "MessageId": "native",
                "ReceiptHandle": "r",
                "Body": json.dumps(
                    {
                        "Body": base64.b64encode(text.encode()).decode(),
                        "S3BodyKey": None,
                        "Headers": {
                            "NServiceBus.MessageId": "m",
                            "NServiceBus.EnclosedMessageTypes": enclosed_type,
                            "NServiceBus.ReplyToAddress": "Sales",
                        },
                    }
                ),
                "MessageAttributes": {},
                "Attributes": {"SentTimestamp": "1", "ApproximateReceiveCount": "1"},
            }
        ]
    )


def test_a_custom_check_without_its_host_is_retried_then_fails_to_the_instances_error_queue() -> (
    None
):
    sqs = FakeSqs()
    service_control = _service_control(sqs, Clock())
    report = {
        "HostId": "1865830e-71b0-dc6c-e146-62cdd0034e6e",
        "CustomCheckId": "Disk",
        "EndpointName": "Sales",
    }
    for attempt in range(1, 5):
        _raw(sqs, "ServiceControl.Plugin.CustomChecks.Messages.ReportCustomCheckResult", report)
        sqs.received[-1][0]["Attributes"]["ApproximateReceiveCount"] = str(attempt)

    actions = [
        outcome.action for _ in range(4) for outcome in service_control.process_instance_queue()
    ]

    assert actions == [ImmediateRetry()] * 3 + [MoveToError("Particular.ServiceControl.Errors")]
    (failed,) = sent_to(sqs, "Particular-ServiceControl-Errors")
    assert (
        "without proper initialization of the Host"
        in (envelope(failed)["Headers"]["NServiceBus.ExceptionInfo.Message"])
    )


@pytest.mark.parametrize(
    ("enclosed_type", "body"),
    [
        ("Ns.Unknown, Asm", {}),
        ("ServiceControl.Plugin.Heartbeat.Messages.EndpointHeartbeat", "{not json"),
        ("ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage", {}),
    ],
)
def test_what_the_instance_cannot_read_or_forward_goes_to_its_error_queue_at_once(
    enclosed_type: str, body: dict[str, Any] | str
) -> None:
    """An unknown type or a body the contract cannot bind fails deserialization; a saga update
    with no audit instance to forward it to is unrecoverable."""
    sqs = FakeSqs()
    service_control = _service_control(sqs, Clock())
    _raw(sqs, enclosed_type, body)

    (outcome,) = service_control.process_instance_queue()

    assert outcome.action == MoveToError("Particular.ServiceControl.Errors")


def test_a_saga_update_on_the_main_instance_is_forwarded_to_the_audit_queue_and_flagged() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(
        sqs,
        clock,
        saga_audit=SagaAuditSettings("Particular.ServiceControl"),
        sagas=("Sales.OrderSaga",),
    )
    sqs.received.append([as_received(_to_sales(sqs))])
    sales.process(lambda context: context.handled_by_saga("Sales.OrderSaga", SAGA_ID, "{}"))
    service_control = _service_control(sqs, clock, saga_audit_queue="audit")
    _deliver(sqs, "Particular-ServiceControl")

    outcomes = service_control.process_instance_queue()

    assert [outcome.pump.fate for outcome in outcomes] == [MessageFate.PROCESSED] * 2
    (forwarded,) = sent_to(sqs, "audit")
    assert envelope(forwarded)["Headers"]["NServiceBus.EnclosedMessageTypes"] == (
        "ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage"
    )
    misconfigured = service_control.instance_queue.saga_audit_misconfigured()
    assert misconfigured is not None
    assert misconfigured.endpoint == "Sales"
    clock.now += timedelta(minutes=6)
    assert service_control.instance_queue.saga_audit_misconfigured() is None


def _to_sales(sqs: FakeSqs, *, sent: datetime = START) -> dict[str, Any]:
    """A message Billing sent Sales: the entry on Sales' queue."""
    ReleasedEndpoint("Billing", sqs, EndpointSettings(clock=lambda: sent)).send(
        "Sales", ORDER, b'{"OrderId":1}'
    )
    entry: dict[str, Any] = sent_to(sqs, "Sales")[-1]
    return entry


def _audit(sqs: FakeSqs, clock: Clock) -> ServiceControlAudit:
    audit = ServiceControlAudit(
        sqs, AuditInstanceSettings(wait_time_seconds=0, max_concurrency=10, clock=clock)
    )
    audit.start()
    return audit


def test_the_audit_instance_stores_the_processed_message_with_the_enrichers_metadata() -> None:
    """The saga audit plugin's start-up check, sent to the audit queue, is stored too: a
    system message without a type."""
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(
        sqs,
        clock,
        audit=AuditSettings("audit"),
        saga_audit=SagaAuditSettings("audit"),
        sagas=("Sales.OrderSaga",),
    )
    sqs.received.append([as_received(_to_sales(sqs, sent=START - timedelta(seconds=3)))])

    def handle(context: MessageHandlerContext) -> None:
        context.handled_by_saga("Sales.OrderSaga", SAGA_ID, '{"OrderId":1}', is_new=True)
        clock.now += timedelta(milliseconds=500)

    sales.process(handle)
    audit = _audit(sqs, clock)
    _deliver(sqs, "audit")

    fates = [result.fate for result in audit.ingest()]

    assert fates == [MessageFate.PROCESSED] * 3
    start_up_check, processed = audit.processed_messages
    assert start_up_check.metadata["IsSystemMessage"] is True
    assert start_up_check.metadata["MessageType"] is None
    metadata = processed.metadata
    assert metadata["MessageType"] == "Sales.PlaceOrder"
    assert metadata["MessageIntent"] == "Send"
    assert metadata["IsSystemMessage"] is False
    assert metadata["ProcessingTime"] == timedelta(milliseconds=500)
    assert metadata["CriticalTime"] == timedelta(seconds=3, milliseconds=500)
    assert metadata["DeliveryTime"] == timedelta(seconds=3)
    assert processed.receiving_endpoint is not None
    assert (processed.receiving_endpoint.name, processed.receiving_endpoint.host) == (
        "Sales",
        "MACHINE",
    )
    assert processed.sending_endpoint is not None
    assert processed.sending_endpoint.name == "Billing"
    assert metadata["IsRetried"] is False
    (saga,) = metadata["InvokedSagas"]
    assert (saga.saga_type, saga.change_status) == ("Sales.OrderSaga", "New")
    (snapshot,) = audit.saga_snapshots
    assert (snapshot.saga_id, snapshot.status, snapshot.state_after_change) == (
        SAGA_ID,
        "New",
        '{"OrderId":1}',
    )
    assert len(audit.known_endpoints) == 2


def test_the_view_lists_audited_messages_without_system_messages_as_servicepulse_does() -> None:
    """Saga audit's start-up check (a control message, no type, processed by no endpoint) is
    stored but hidden, as ServicePulse's list (``messages2``) hides ``IsSystemMessage``; with
    ``include_system_messages`` it shows under the unknown endpoint."""
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(
        sqs,
        clock,
        audit=AuditSettings("audit"),
        saga_audit=SagaAuditSettings("audit"),
        sagas=("Sales.OrderSaga",),
    )
    sqs.received.append([as_received(_to_sales(sqs))])
    sales.process(lambda _context: None)
    audit = _audit(sqs, clock)
    _deliver(sqs, "audit")
    audit.ingest()

    views = endpoint_views(audit=audit)
    everything = endpoint_views(audit=audit, include_system_messages=True)

    start_up_check, processed = audit.processed_messages
    assert system_messages(audit) == [start_up_check]
    assert list(views) == ["Sales"]
    assert views["Sales"].audited_messages == [processed]
    assert list(everything) == [UNKNOWN_ENDPOINT, "Sales"]
    assert everything[UNKNOWN_ENDPOINT].audited_messages == [start_up_check]
    assert not any("(no message type)" in line for line in describe(views))


def test_a_header_the_audit_instance_cannot_read_fails_the_import_three_times() -> None:
    sqs = FakeSqs()
    audit = _audit(sqs, Clock())
    entry = _to_sales(sqs)
    wrapped = envelope(entry)
    wrapped["Headers"]["$.diagnostics.originating.hostid"] = "MACHINE"
    entry["MessageBody"] = json.dumps(wrapped)
    for attempt in range(1, 4):
        sqs.received.append([as_received(entry, receive_count=attempt)])

    fates = [result.fate for _ in range(3) for result in audit.ingest()]

    assert fates == [MessageFate.RETRY_REQUIRED] * 2 + [MessageFate.HANDLED_AFTER_FAILURE]
    (failed,) = audit.failed_imports
    assert failed.reason == "Unrecognized Guid format."
    assert audit.processed_messages == []


def test_the_monitoring_instance_stores_metric_and_metadata_reports() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(
        sqs,
        clock,
        metrics=MetricsSettings("Particular.Monitoring", timedelta(seconds=10), instance_id="s1"),
    )
    sqs.received.append([as_received(_to_sales(sqs))])
    sales.process(lambda _context: None)
    sales.report_metrics()
    monitoring = ServiceControlMonitoring(
        sqs, MonitoringSettings(wait_time_seconds=0, max_concurrency=10, clock=clock)
    )
    monitoring.start()
    _deliver(sqs, "Particular-Monitoring")
    sqs.queue_attributes["Sales"] = {"ApproximateNumberOfMessages": "7"}

    fates = [outcome.pump.fate for outcome in monitoring.ingest()]
    lengths = monitoring.poll_queue_lengths()

    assert fates == [MessageFate.PROCESSED] * 3
    assert monitoring.state.input_queues == {"Sales": "Sales"}
    assert sorted(metric for _, metric in monitoring.state.metrics) == [
        "CriticalTime",
        "ProcessingTime",
    ]
    for (instance, _), values in monitoring.state.metrics.items():
        assert (instance.endpoint_name, instance.instance_id) == ("Sales", "s1")
        assert [value.message_type for value in values] == [ORDER]
    assert lengths == {"Sales": 7}


def test_a_metric_report_without_its_endpoint_is_retried_then_goes_to_the_error_queue() -> None:
    sqs = FakeSqs()
    clock = Clock()
    _sales(sqs, clock, metrics=MetricsSettings("Particular.Monitoring", timedelta(seconds=1)))
    entry = sent_to(sqs, "Particular-Monitoring")[0]
    wrapped = envelope(entry)
    del wrapped["Headers"]["NServiceBus.OriginatingEndpoint"]
    entry["MessageBody"] = json.dumps(wrapped)
    monitoring = ServiceControlMonitoring(sqs, MonitoringSettings(wait_time_seconds=0, clock=clock))
    monitoring.start()
    for attempt in range(1, 5):
        sqs.received.append([as_received(entry, receive_count=attempt)])

    actions = [outcome.action for _ in range(4) for outcome in monitoring.ingest()]

    assert actions == [ImmediateRetry()] * 3 + [MoveToError("error")]


def test_the_view_puts_each_instances_findings_under_the_endpoint() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _sales(
        sqs,
        clock,
        audit=AuditSettings("audit"),
        heartbeats=HeartbeatSettings("Particular.ServiceControl"),
        custom_checks=CustomCheckSettings(
            "Particular.ServiceControl", checks=(CustomCheck("Disk", "Storage", lambda: PASS),)
        ),
        metrics=MetricsSettings("Particular.Monitoring", timedelta(seconds=10)),
    )
    sqs.received.append([as_received(_to_sales(sqs))])
    sales.process(lambda _context: None)
    sales.report_metrics()
    service_control = _service_control(sqs, clock)
    audit = _audit(sqs, clock)
    monitoring = ServiceControlMonitoring(sqs, MonitoringSettings(wait_time_seconds=0, clock=clock))
    monitoring.start()
    for queue in ("Particular-ServiceControl", "audit", "Particular-Monitoring"):
        _deliver(sqs, queue)
    service_control.process_instance_queue()
    audit.ingest()
    monitoring.ingest()

    views = endpoint_views(service_control, audit, monitoring)
    lines = describe(views)

    assert list(views) == ["Sales"]
    view = views["Sales"]
    assert len(view.heartbeats) == 1
    assert len(view.custom_checks) == 1
    assert len(view.audited_messages) == 1
    assert sorted(view.metrics) == ["CriticalTime", "ProcessingTime"]
    assert view.input_queue == "Sales"
    assert lines[0] == "Sales:"
    assert any(line.startswith("  audited Sales.PlaceOrder") for line in lines)
    assert any(line.startswith("  custom check Storage/Disk: passed") for line in lines)
