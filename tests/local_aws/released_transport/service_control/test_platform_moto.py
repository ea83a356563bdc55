"""The platform in one account of the local AWS (moto in server mode): two released endpoints
with auditing, heartbeats, custom checks, metrics and saga audit, and ServiceControl's main,
audit and monitoring instances, each reading its queue by name. What ServiceControl saw is read
per endpoint, as the main job prints it. Receives use ``WaitTimeSeconds`` 0; time passes by time
travel (``local_aws.moto.time_travel.age_sqs_messages``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from local_aws.moto.time_travel import age_sqs_messages
from local_aws.released_transport.core.audit import AuditSettings
from local_aws.released_transport.core.recoverability import RecoverabilitySettings
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.custom_checks import (
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
    FailedMessageStatus,
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
from local_aws.released_transport.transport.s3_settings import S3Settings

pytestmark = pytest.mark.moto

ORDER = "Sales.PlaceOrder, Sales, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
BILLED = "Billing.OrderBilled, Billing, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
SAGA_ID = "51b5ad68-8ac4-46ee-a39c-a79900ca4ea8"


def _platform_settings(*sagas: str) -> EndpointSettings:
    return EndpointSettings(
        wait_time_seconds=0,
        max_concurrency=10,
        recoverability=RecoverabilitySettings(immediate_retries=0, delayed_retries=0),
        audit=AuditSettings("audit"),
        heartbeats=HeartbeatSettings("Particular.ServiceControl"),
        custom_checks=CustomCheckSettings(
            "Particular.ServiceControl",
            checks=(CustomCheck("Disk", "Storage", lambda: CheckResult.failed("98% full")),),
        ),
        metrics=MetricsSettings("Particular.Monitoring", timedelta(seconds=10)),
        saga_audit=SagaAuditSettings("audit"),
        sagas=sagas,
    )


def _drain(step: Any) -> int:
    """Run a receive step until it receives nothing; how many messages it took."""
    taken = 0
    while received := step():
        taken += len(received)
    return taken


def test_servicecontrol_sees_each_endpoints_conversation_heartbeats_checks_and_metrics(
    sqs: Any,
) -> None:
    """Saga audit runs on Billing alone, which has a saga; its start-up check, sent to the
    audit queue, is stored by the audit instance as a system message that no endpoint
    processed, which the view shows only on request, as ServicePulse hides system messages."""
    service_control = ServiceControl(
        sqs, ServiceControlSettings(wait_time_seconds=0, saga_audit_queue="audit")
    )
    audit = ServiceControlAudit(sqs, AuditInstanceSettings(wait_time_seconds=0))
    monitoring = ServiceControlMonitoring(sqs, MonitoringSettings(wait_time_seconds=0))
    for instance in (service_control, audit, monitoring):
        instance.install()
    service_control.start()
    service_control.start_instance_queue()
    audit.start()
    monitoring.start()
    sales = ReleasedEndpoint("Sales", sqs, _platform_settings())
    billing = ReleasedEndpoint("Billing", sqs, _platform_settings("Billing.BillingSaga"))
    for endpoint in (sales, billing):
        endpoint.install()
        endpoint.start()

    def bill(context: MessageHandlerContext) -> None:
        context.handled_by_saga("Billing.BillingSaga", SAGA_ID, '{"Billed":true}', is_new=True)
        context.reply(BILLED, b"{}")

    sales.send("Billing", ORDER, b'{"OrderId":1}')
    (billed,) = billing.process(bill)
    (replied,) = sales.process(lambda _context: None)
    for endpoint in (sales, billing):
        endpoint.send_heartbeat()
        endpoint.report_metrics()

    assert (billed.pump.fate, replied.pump.fate) == (MessageFate.PROCESSED,) * 2
    assert _drain(service_control.process_instance_queue) == 6
    assert _drain(audit.ingest) == 4
    assert _drain(monitoring.ingest) == 6
    service_control.check_heartbeats()

    views = endpoint_views(service_control, audit, monitoring)
    print("\n".join(describe(views)))
    assert list(views) == ["Billing", "Sales"]
    (start_up_check,) = system_messages(audit)
    assert start_up_check.headers["NServiceBus.ReplyToAddress"] == "Billing"
    assert start_up_check.receiving_endpoint is None
    everything = endpoint_views(service_control, audit, monitoring, include_system_messages=True)
    assert list(everything) == [UNKNOWN_ENDPOINT, "Billing", "Sales"]
    assert everything[UNKNOWN_ENDPOINT].audited_messages == [start_up_check]
    for name, endpoint in (("Billing", billing), ("Sales", sales)):
        view = views[name]
        (heartbeat,) = view.heartbeats
        assert heartbeat.status is HeartbeatStatus.ALIVE
        assert heartbeat.host_id == endpoint.host.host_guid
        (check,) = view.custom_checks
        assert (check.has_failed, check.failure_reason) == (True, "98% full")
        assert view.input_queue == name
        assert sorted(view.metrics) == ["CriticalTime", "ProcessingTime"]
    typed = [m for m in views["Billing"].audited_messages if m.metadata["MessageType"]]
    assert [m.metadata["MessageType"] for m in typed] == ["Sales.PlaceOrder"]
    assert [m.metadata["MessageType"] for m in views["Sales"].audited_messages] == [
        "Billing.OrderBilled"
    ]
    (snapshot,) = views["Billing"].saga_snapshots
    assert (snapshot.saga_id, snapshot.status) == (SAGA_ID, "New")


def test_an_expired_heartbeat_is_dropped_and_a_retried_failure_is_resolved_and_audited(
    sqs: Any, moto_endpoint: str
) -> None:
    service_control = ServiceControl(sqs, ServiceControlSettings(wait_time_seconds=0))
    audit = ServiceControlAudit(sqs, AuditInstanceSettings(wait_time_seconds=0))
    for instance in (service_control, audit):
        instance.install()
    service_control.start()
    service_control.start_instance_queue()
    audit.start()
    settings = EndpointSettings(
        wait_time_seconds=0,
        recoverability=RecoverabilitySettings(immediate_retries=0, delayed_retries=0),
        audit=AuditSettings("audit"),
        heartbeats=HeartbeatSettings(
            "Particular.ServiceControl", time_to_live=timedelta(seconds=30)
        ),
    )
    billing = ReleasedEndpoint("Billing", sqs, settings)
    billing.install()
    billing.start()
    age_sqs_messages(moto_endpoint, 31)
    billing.send("Billing", ORDER, b"{}")

    (expired,) = service_control.process_instance_queue()

    def fail(_context: MessageHandlerContext) -> None:
        raise RuntimeError("not yet")

    billing.process(fail)
    service_control.ingest()
    (failed,) = service_control.failed_messages.values()
    service_control.retry(failed.unique_message_id)
    service_control.forward_staged()
    (retried,) = billing.process(lambda _context: None)
    service_control.ingest()
    _drain(audit.ingest)

    assert expired.pump.fate is MessageFate.EXPIRED
    assert retried.pump.fate is MessageFate.PROCESSED
    assert failed.status is FailedMessageStatus.RESOLVED
    (audited,) = audit.processed_messages
    assert audited.headers["ServiceControl.Retry.AcknowledgementSent"] == "true"
    assert audited.metadata["IsRetried"] is True
    assert audit.acknowledgements == []
    view = endpoint_views(service_control, audit)["Billing"]
    assert [f.status for f in view.failed_messages] == [FailedMessageStatus.RESOLVED]
    assert view.heartbeats == []


def test_with_s3_settings_servicecontrol_reads_large_audit_copies_and_failed_messages(
    sqs: Any, s3: Any
) -> None:
    """ServiceControl's connection string names the bucket (``S3BucketForLargeMessages``): the
    audit copy of a message over SQS's limit and its error copy carry only the key, and each
    instance reads the body from the bucket; without the setting both would be poison to it."""
    s3.create_bucket(Bucket="bodies")
    bodies = S3Settings("bodies", "sc", s3)
    service_control = ServiceControl(sqs, ServiceControlSettings(wait_time_seconds=0, s3=bodies))
    audit = ServiceControlAudit(sqs, AuditInstanceSettings(wait_time_seconds=0, s3=bodies))
    for instance in (service_control, audit):
        instance.install()
        instance.start()
    settings = EndpointSettings(
        wait_time_seconds=0,
        recoverability=RecoverabilitySettings(immediate_retries=0, delayed_retries=0),
        audit=AuditSettings("audit"),
        s3=S3Settings("bodies", "endpoints", s3),
    )
    billing = ReleasedEndpoint("Billing", sqs, settings)
    billing.install()
    billing.start()
    large = b"x" * (1024 * 1024 + 1)
    processed = billing.send("Billing", ORDER, large)
    failing = billing.send("Billing", ORDER, large)

    def handle(context: MessageHandlerContext) -> None:
        if context.message.message_id == failing.message_id:
            raise RuntimeError("cannot bill")

    assert {o.pump.fate for o in billing.process(handle)} == {
        MessageFate.PROCESSED,
        MessageFate.HANDLED_AFTER_FAILURE,
    }
    assert _drain(audit.ingest) == 1
    assert _drain(service_control.ingest) == 1
    (audited,) = audit.processed_messages
    assert (audited.message_id, audited.body) == (processed.message_id, large)
    (failed,) = service_control.failed_messages.values()
    assert (failed.message_id, failed.body) == (failing.message_id, large)
    assert audit.failed_imports == []
