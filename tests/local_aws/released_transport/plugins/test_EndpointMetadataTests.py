# ruff: noqa: N802, N999 -- module and test names are the upstream tests', for traceability
"""NServiceBus.Metrics.ServiceControl 6.0.1
``src/NServiceBus.Metrics.ServiceControl.Tests/EndpointMetadataTests.cs`` (the approval file, byte
for byte) and ``AcceptanceTests/Tests/When_reporting_to_ServiceControl.cs``, plus what the
reporters and probes hand the SQS dispatcher (``ReportingFeature.cs``, NServiceBus.Metrics 6.0.1
``ProbeBuilders/``), on the test doubles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from local_aws.released_transport.core.recoverability import RecoverabilitySettings
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.metrics import (
    MetricsSettings,
    MetricsSettingsError,
    duration_milliseconds,
    endpoint_metadata_body,
)
from local_aws.released_transport.plugins.metrics_wire import read_tagged_values
from local_aws.released_transport.transport.receiving.input_pump import MessageFate
from tests.local_aws.released_transport.fake_sqs import FakeSqs
from tests.local_aws.released_transport.fake_wire import as_received, envelope, sent_to

APPROVALS = Path(__file__).parent / "approvals"
START = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
ORDER = "Sales.PlaceOrder, Sales, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"


def test_Verify_serialization() -> None:
    assert (
        endpoint_metadata_body("localAddress")
        == (APPROVALS / "EndpointMetadataTests.Verify_serialization.approved.txt").read_bytes()
    )


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def _endpoint(sqs: FakeSqs, clock: Clock, **metrics: object) -> ReleasedEndpoint:
    settings = EndpointSettings(
        queue_name_prefix="DEV-",
        disable_unrestricted_delayed_delivery=True,
        machine_name="MACHINE",
        max_concurrency=1,
        recoverability=RecoverabilitySettings(immediate_retries=1, delayed_retries=0),
        metrics=MetricsSettings("Particular.Monitoring", timedelta(seconds=10), **metrics),  # type: ignore[arg-type]
        clock=clock,
    )
    endpoint = ReleasedEndpoint("Sales", sqs, settings)
    endpoint.start()
    return endpoint


def test_Should_send_metadata_to_configured_queue() -> None:
    """``When_reporting_to_ServiceControl``: plugin version 3, the local address, the host id
    in the ``N`` form, the metadata report's type and JSON."""
    sqs = FakeSqs()
    sales = _endpoint(sqs, Clock())

    (entry,) = sent_to(sqs, "DEV-Particular-Monitoring")

    headers = envelope(entry)["Headers"]
    assert headers["$.diagnostics.originating.hostid"] == sales.host.host_id
    assert headers["NServiceBus.EnclosedMessageTypes"] == (
        "NServiceBus.Metrics.EndpointMetadataReport"
    )
    assert headers["NServiceBus.ContentType"] == "application/json"
    assert headers["NServiceBus.OriginatingEndpoint"] == "Sales"
    assert headers["NServiceBus.AmazonSQS.TimeToBeReceived"] == "7.00:00:00"
    assert "NServiceBus.Metric.InstanceId" not in headers
    assert sales.report_endpoint_metadata().message.body == (
        b'{"PluginVersion":3,"LocalAddress":"DEV-Sales"}'
    )


def _message(sqs: FakeSqs, clock: Clock, *, sent: datetime) -> dict[str, object]:
    """A message to Sales sent at ``sent`` by another endpoint."""
    sender = ReleasedEndpoint(
        "Billing",
        sqs,
        EndpointSettings(queue_name_prefix="DEV-", clock=lambda: sent),
    )
    sender.send("DEV-Sales", ORDER, b"{}")
    return as_received(sent_to(sqs, "DEV-Sales")[-1])


def test_a_completed_receive_records_critical_and_processing_time_tagged_by_message_type() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _endpoint(sqs, clock)
    sqs.received.append([_message(sqs, clock, sent=START - timedelta(seconds=2))])

    def handle(_context: object) -> None:
        clock.now += timedelta(milliseconds=250, microseconds=900)

    (outcome,) = sales.process(handle)
    critical, processing = sales.report_metrics()

    assert outcome.pump.fate is MessageFate.PROCESSED
    for attempt, metric, value in (
        (critical, "CriticalTime", 2250),
        (processing, "ProcessingTime", 250),
    ):
        assert attempt.message.headers["NServiceBus.Metric.Type"] == metric
        assert attempt.message.headers["NServiceBus.ContentType"] == (
            "TaggedLongValueWriterOccurrence"
        )
        assert "NServiceBus.EnclosedMessageTypes" not in attempt.message.headers
        (occurrence,) = read_tagged_values(attempt.message.body)
        assert occurrence.tag_value == ORDER
        assert [entry_value for _, entry_value in occurrence.entries] == [value]
    assert sales.report_metrics() == []


def test_retries_are_signalled_and_a_failed_receive_records_no_timing() -> None:
    sqs = FakeSqs()
    clock = Clock()
    sales = _endpoint(sqs, clock)
    message = _message(sqs, clock, sent=START)
    sqs.received.append([message])
    sqs.received.append(
        [dict(message, Attributes={"SentTimestamp": "1", "ApproximateReceiveCount": "2"})]
    )

    def fail(_context: object) -> None:
        raise RuntimeError("no")

    sales.process(fail)
    sales.process(fail)

    (retries,) = sales.report_metrics()
    assert retries.message.headers["NServiceBus.Metric.Type"] == "Retries"
    (occurrence,) = read_tagged_values(retries.message.body)
    assert [value for _, value in occurrence.entries] == [1]


def test_an_instance_id_goes_on_every_report_and_every_send_but_not_on_a_forward() -> None:
    """``MetricsIdAttachingMutator`` is an outgoing message mutator: sends, replies and
    publishes, not a forward of the incoming message."""
    sqs = FakeSqs()
    clock = Clock()
    sales = _endpoint(sqs, clock, instance_id="sales-1")
    sqs.received.append([_message(sqs, clock, sent=START)])

    def handle(context: MessageHandlerContext) -> None:
        context.send("Shipping", ORDER, b"{}")
        context.forward("Archive")

    sales.process(handle)

    (metadata,) = sent_to(sqs, "DEV-Particular-Monitoring")
    (shipping,) = sent_to(sqs, "DEV-Shipping")
    (archived,) = sent_to(sqs, "DEV-Archive")
    assert envelope(metadata)["Headers"]["NServiceBus.Metric.InstanceId"] == "sales-1"
    assert envelope(shipping)["Headers"]["NServiceBus.Metric.InstanceId"] == "sales-1"
    assert "NServiceBus.Metric.InstanceId" not in envelope(archived)["Headers"]


@pytest.mark.parametrize(
    ("duration", "milliseconds"),
    [
        (timedelta(milliseconds=1, microseconds=999), 1),
        (timedelta(microseconds=-1999), -1),
        (timedelta(0), 0),
    ],
)
def test_durations_are_whole_milliseconds_truncated_toward_zero(
    duration: timedelta, milliseconds: int
) -> None:
    assert duration_milliseconds(duration) == milliseconds


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        (("", timedelta(seconds=1)), "service_control_metrics_address"),
        (("M", timedelta(0)), "interval"),
    ],
)
def test_the_settings_refuse_what_the_plugin_refuses(
    arguments: tuple[str, timedelta], field: str
) -> None:
    with pytest.raises(MetricsSettingsError, match=f"MetricsSettings.{field}"):
        MetricsSettings(*arguments)
