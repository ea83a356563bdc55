"""NServiceBus.Metrics 6.0.1 with NServiceBus.Metrics.ServiceControl 6.0.1:
``EnableMetrics().SendMetricDataToServiceControl(address, interval, instanceId)``.

What is measured (the probes ServiceControl is sent, named without spaces):

* ``ProcessingTime`` and ``CriticalTime``, when a receive pipeline *completed* (after the
  handler's batched dispatch): ``(long)`` milliseconds from the pipeline's start to its end, and
  from ``NServiceBus.DeliverAt`` — else ``NServiceBus.TimeSent``, else nothing — to its end;
* ``Retries``, a 1 each time core's recoverability schedules an immediate or a delayed retry
  (after its dispatch);
* ``QueueLength``, from a transport that reports native queue lengths — the SQS transport does
  not, so nothing is ever sent for it.

Each value is kept with ``DateTime.UtcNow.Ticks`` and the message type
(``NServiceBus.EnclosedMessageTypes`` as it is, ``""`` without it) as its tag. A reporter per
metric flushes at most 2048 entries at a time (when 2048 wait, or after ``interval``) into one
message: body :func:`~local_aws.released_transport.plugins.metrics_wire.write_tagged_values`,
headers ``NServiceBus.OriginatingEndpoint`` (the endpoint name), ``NServiceBus.OriginatingMachine``,
``$.diagnostics.originating.hostid`` (``N`` form), ``$.diagnostics.hostdisplayname``,
``NServiceBus.Metric.InstanceId`` (only with an ``instanceId``), ``NServiceBus.ContentType``
``TaggedLongValueWriterOccurrence`` and ``NServiceBus.Metric.Type`` — no
``NServiceBus.EnclosedMessageTypes``. Besides, at start and then every ``interval``, an endpoint
metadata report: body ``{"PluginVersion":3,"LocalAddress":<receive address>}``, the same first four
(or five) headers, then ``NServiceBus.EnclosedMessageTypes``
``NServiceBus.Metrics.EndpointMetadataReport`` and ``NServiceBus.ContentType`` ``application/json``.
All go straight to the dispatcher (:mod:`~local_aws.released_transport.plugins.service_platform`)
with a time to be received of 7 days unless ``SetServiceControlMetricsMessageTTBR`` says otherwise,
to the address as configured, resolved by name in the endpoint's own account; a failure is logged
and the reporting goes on (the entries of a failed report are lost). Each reporter — and the
metadata report — reuses one header dictionary for all its messages, which the wrapped form writes
into (see :mod:`~local_aws.released_transport.plugins.custom_checks`). With an ``instanceId``, every
message the endpoint sends, replies or publishes also gets ``NServiceBus.Metric.InstanceId`` (an
outgoing message mutator; not forwards, audit copies, recoverability or control messages).

The released reporters run in the background and their 4096-entry ring buffers make a writer
wait while full; the model keeps the entries until :meth:`MetricsReporter.report` (one flush of
every metric with entries, in the plugin's metric order) and does not bound them.
:meth:`MetricsReporter.report_endpoint_metadata` is one metadata report. Metrics are not
supported on send-only endpoints (the model has none).

Facts: NServiceBus.Metrics 6.0.1 ``src/NServiceBus.Metrics/MetricsFeature.cs``,
``MetricsOptions.cs``, ``MetricsConfigurationExtensions.cs``, ``Extensions.cs``,
``ProbeBuilders/ProcessingTimeProbeBuilder.cs``, ``ProbeBuilders/CriticalTimeProbeBuilder.cs``,
``ProbeBuilders/RetriesProbeBuilder.cs``; NServiceBus.Metrics.ServiceControl 6.0.1
``src/NServiceBus.Metrics.ServiceControl/MetricsOptionsExtensions.cs``, ``ReportingOptions.cs``,
``ReportingFeature.cs``, ``RawDataReporter.cs``, ``RingBuffer.cs``, ``RingBufferExtensions.cs``,
``IReportNativeQueueLength.cs``, ``MetricHeaders.cs``,
``ServiceControlReporting/EndpointMetadata.cs``,
``ServiceControlReporting/NServiceBusMetadataReport.cs``; vectors in
``src/NServiceBus.Metrics.ServiceControl.Tests/EndpointMetadataTests.cs`` and its approval file,
``AcceptanceTests/Tests/When_reporting_to_ServiceControl.cs``; NServiceBus 10.2.5
``src/NServiceBus.Core/Pipeline/MainPipelineExecutor.cs`` (``ReceivePipelineCompleted``),
``Recoverability/RecoverabilityRoutingConnector.cs`` (retry notifications after dispatch),
``MessageMutators/MutateInstanceMessage/MutateOutgoingMessageBehavior.cs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.dotnet.system_text_json import write_json
from local_aws.released_transport.dotnet.text import is_null_or_whitespace, utf8_bytes
from local_aws.released_transport.dotnet.time_formats import (
    Clock,
    TimeSpan,
    from_wire_format,
    ticks_of,
    to_ticks,
)
from local_aws.released_transport.headers import (
    CONTENT_TYPE,
    DELIVER_AT,
    ENCLOSED_MESSAGE_TYPES,
    HOST_DISPLAY_NAME,
    METRIC_INSTANCE_ID,
    METRIC_TYPE,
    ORIGINATING_ENDPOINT,
    ORIGINATING_HOST_ID,
    ORIGINATING_MACHINE,
    TIME_SENT,
    HeaderDict,
)
from local_aws.released_transport.plugins.metrics_wire import (
    MetricEntry,
    TagRegistry,
    write_tagged_values,
)
from local_aws.released_transport.plugins.service_platform import (
    JSON_CONTENT_TYPE,
    SendAttempt,
    dispatch_plugin_message,
    new_plugin_message,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

DEFAULT_METRICS_TIME_TO_BE_RECEIVED: Final = timedelta(days=7)
MAX_FLUSH_SIZE: Final = 2048
"""The reporters' ``maxFlushSize``: entries per message."""
TAGGED_VALUE_CONTENT_TYPE: Final = "TaggedLongValueWriterOccurrence"
ENDPOINT_METADATA_REPORT_TYPE: Final = "NServiceBus.Metrics.EndpointMetadataReport"
PLUGIN_VERSION: Final = 3
QUEUE_LENGTH: Final = "QueueLength"
CRITICAL_TIME: Final = "CriticalTime"
PROCESSING_TIME: Final = "ProcessingTime"
RETRIES: Final = "Retries"
METRIC_TYPES: Final = (QUEUE_LENGTH, CRITICAL_TIME, PROCESSING_TIME, RETRIES)
"""The reporters in the order they are created (queue length at set-up, the probes at start)."""
_TICKS_PER_MILLISECOND: Final = 10_000


class MetricsSettingsError(ValueError):
    """``SendMetricDataToServiceControl`` or ``SetServiceControlMetricsMessageTTBR`` refused
    its arguments."""


@dataclass(frozen=True)
class MetricsSettings:
    """``SendMetricDataToServiceControl(address, interval, instanceId)`` and
    ``SetServiceControlMetricsMessageTTBR(timeToBeReceived)`` (default 7 days)."""

    service_control_metrics_address: str
    interval: timedelta
    instance_id: str | None = None
    time_to_be_received: timedelta = DEFAULT_METRICS_TIME_TO_BE_RECEIVED

    def __post_init__(self) -> None:
        if is_null_or_whitespace(self.service_control_metrics_address):
            raise MetricsSettingsError(
                "MetricsSettings.service_control_metrics_address must not be empty or white"
                " space; give the monitoring instance's queue, e.g. 'Particular.Monitoring'"
            )
        for name, value in (
            ("interval", self.interval),
            ("time_to_be_received", self.time_to_be_received),
        ):
            if value <= timedelta(0):
                raise MetricsSettingsError(f"MetricsSettings.{name} must be positive")


def duration_milliseconds(duration: timedelta) -> int:
    """``(long)span.TotalMilliseconds``: whole milliseconds, truncated toward zero."""
    ticks = ticks_of(duration)
    whole = abs(ticks) // _TICKS_PER_MILLISECOND
    return -whole if ticks < 0 else whole


def endpoint_metadata_body(local_address: str) -> bytes:
    """``EndpointMetadata.ToJson()``."""
    return utf8_bytes(write_json({"PluginVersion": PLUGIN_VERSION, "LocalAddress": local_address}))


def _message_type(headers: Mapping[str, str | None]) -> str:
    """``TryGetMessageType`` then ``e.MessageType ?? ""``."""
    return headers.get(ENCLOSED_MESSAGE_TYPES) or ""


class MetricsReporter:
    """The probes and reporters of one endpoint, stepped by hand."""

    def __init__(
        self,
        dispatcher: MessageDispatcher,
        host: HostInformation,
        receive_address: str,
        settings: MetricsSettings,
        clock: Clock,
    ) -> None:
        self._dispatcher = dispatcher
        self._receive_address = receive_address
        self.settings = settings
        self._clock = clock
        self._metadata_headers = self._base_headers(host)
        self._metadata_headers[ENCLOSED_MESSAGE_TYPES] = ENDPOINT_METADATA_REPORT_TYPE
        self._metadata_headers[CONTENT_TYPE] = JSON_CONTENT_TYPE
        self._buffers: dict[str, list[MetricEntry]] = {name: [] for name in METRIC_TYPES}
        self._tags = {name: TagRegistry() for name in METRIC_TYPES}
        self._reporter_headers: dict[str, HeaderDict] = {}
        for name in METRIC_TYPES:
            headers = self._base_headers(host)
            headers[CONTENT_TYPE] = TAGGED_VALUE_CONTENT_TYPE
            headers[METRIC_TYPE] = name
            self._reporter_headers[name] = headers
        self.attempts: list[SendAttempt] = []
        """Every report handed to the dispatcher, in order, with its failure if it failed."""

    def _base_headers(self, host: HostInformation) -> HeaderDict:
        """``BuildBaseHeaders``."""
        headers: HeaderDict = {
            ORIGINATING_ENDPOINT: host.endpoint_name,
            ORIGINATING_MACHINE: host.machine_name,
            ORIGINATING_HOST_ID: host.host_id,
            HOST_DISPLAY_NAME: host.display_name,
        }
        if self.settings.instance_id:
            headers[METRIC_INSTANCE_ID] = self.settings.instance_id
        return headers

    def mutate_outgoing(self, headers: HeaderDict) -> None:
        """``MetricsIdAttachingMutator``: the instance id on a message the endpoint sends."""
        if self.settings.instance_id:
            headers[METRIC_INSTANCE_ID] = self.settings.instance_id

    def _write(self, metric_type: str, value: int, message_type: str) -> None:
        tag = self._tags[metric_type].tag_id(message_type)
        self._buffers[metric_type].append(MetricEntry(to_ticks(self._clock()), value, tag))

    def record_completed(
        self, headers: Mapping[str, str | None], started_at: datetime, completed_at: datetime
    ) -> None:
        """``ReceivePipelineCompleted``: critical time (when the message says when it was sent
        or due), then processing time."""
        message_type = _message_type(headers)
        sent = headers.get(DELIVER_AT) if DELIVER_AT in headers else headers.get(TIME_SENT)
        if sent is not None:
            critical = completed_at - from_wire_format(sent)
            self._write(CRITICAL_TIME, duration_milliseconds(critical), message_type)
        processing = duration_milliseconds(completed_at - started_at)
        self._write(PROCESSING_TIME, processing, message_type)

    def signal_retry(self, headers: Mapping[str, str | None]) -> None:
        """``OnMessageBeingRetried`` (immediate or delayed)."""
        self._write(RETRIES, 1, _message_type(headers))

    def report(self) -> list[SendAttempt]:
        """One flush of every reporter with entries: at most 2048 of them per message."""
        attempts: list[SendAttempt] = []
        for metric_type in METRIC_TYPES:
            buffer = self._buffers[metric_type]
            if not buffer:
                continue
            chunk = buffer[:MAX_FLUSH_SIZE]
            del buffer[:MAX_FLUSH_SIZE]
            body = write_tagged_values(chunk, self._tags[metric_type])
            attempts.append(self._send(self._reporter_headers[metric_type], body))
        return attempts

    def report_endpoint_metadata(self) -> SendAttempt:
        """``NServiceBusMetadataReport.RunReportAsync``."""
        return self._send(self._metadata_headers, endpoint_metadata_body(self._receive_address))

    def _send(self, headers: HeaderDict, body: bytes) -> SendAttempt:
        attempt = dispatch_plugin_message(
            self._dispatcher,
            new_plugin_message(headers, body),
            self.settings.service_control_metrics_address,
            TimeSpan.of(self.settings.time_to_be_received),
        )
        self.attempts.append(attempt)
        return attempt
