"""ServiceControl 6.19.2's monitoring instance (``Particular.Monitoring``) on SQS.

An NServiceBus endpoint named after the instance (queue ``Particular-Monitoring``) on the released
SQS transport — its own client, prefix and wrapping, no unrestricted delayed delivery — with 3
immediate retries, no delayed retries and failed messages to the configured error queue (``error``
by default: the main instance's, so a report it cannot take becomes a failed message there). Run
here as a :class:`~local_aws.released_transport.endpoint.released_endpoint.ReleasedEndpoint`, so
poison and expired reports meet the released input pump. Its handlers:

* a message whose ``NServiceBus.ContentType`` is ``TaggedLongValueWriterOccurrence`` is read by
  the binary deserializer
  (:func:`~local_aws.released_transport.plugins.metrics_wire.read_tagged_values`; a body it cannot
  read fails without retries) into one occurrence per message type; each is stored for the instance
  ``(NServiceBus.OriginatingEndpoint, NServiceBus.Metric.InstanceId`` else
  ``$.diagnostics.originating.hostid``) under its ``NServiceBus.Metric.Type`` — ``ProcessingTime``,
  ``CriticalTime`` or ``Retries``, other types ignored; a report without
  ``NServiceBus.OriginatingEndpoint`` or ``NServiceBus.Metric.Type`` (or, without an instance id,
  without the host id or ``$.diagnostics.hostdisplayname``) fails and is retried;
* an ``NServiceBus.Metrics.EndpointMetadataReport`` (JSON) records the endpoint's input queue
  (``LocalAddress``) for queue-length monitoring, by its ``NServiceBus.OriginatingEndpoint``.

Queue lengths are not reported by endpoints on SQS: the instance polls them itself — every 200 ms
upstream, a step here (:meth:`ServiceControlMonitoring.poll_queue_lengths`) — with
``GetQueueUrl`` (of the queue name through its own prefix, in *its own* account, the URL cached
once found) and ``GetQueueAttributes(ApproximateNumberOfMessages)``; a failure is logged and the
last length (0 at first) stays.

Facts: ServiceControl 6.19.2 ``src/ServiceControl.Monitoring/HostApplicationBuilderExtensions.cs``,
``Settings.cs`` (``InstanceName``, ``ErrorQueue``), ``Messaging/``
(``TaggedLongValueWriterOccurrenceSerializerDefinition.cs``, ``EndpointMetadataReport.cs``),
``Timings/TaggedLongValueOccurrenceHandler.cs``, ``Retries/TaggedLongValueOccurrenceHandler.cs``,
``QueueLength/EndpointMetadataReportHandler.cs``, ``Infrastructure/EndpointInstanceId.cs``,
``Infrastructure/MetricHeaders.cs``; ``src/ServiceControl.Transports.SQS/QueueLengthProvider.cs``,
``QueueAttributesRequestCache.cs``, ``QueueNameHelper.cs``, ``SQSTransportCustomization.cs``;
NServiceBus 10.2.5 ``src/NServiceBus.Core/Serializers/MessageDeserializerResolver.cs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from local_aws.released_transport.core.recoverability import (
    MessageDeserializationError,
    RecoverabilitySettings,
)
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
)
from local_aws.released_transport.headers import (
    CONTENT_TYPE,
    ENCLOSED_MESSAGE_TYPES,
    HOST_DISPLAY_NAME,
    METRIC_INSTANCE_ID,
    METRIC_TYPE,
    ORIGINATING_ENDPOINT,
    ORIGINATING_HOST_ID,
    HeaderDict,
)
from local_aws.released_transport.plugins.metrics import (
    CRITICAL_TIME,
    ENDPOINT_METADATA_REPORT_TYPE,
    PROCESSING_TIME,
    RETRIES,
    TAGGED_VALUE_CONTENT_TYPE,
)
from local_aws.released_transport.plugins.metrics_wire import (
    MetricReportFormatError,
    read_tagged_values,
)
from local_aws.released_transport.service_control.instance_transport import (
    InstanceEndpoint,
    InstanceTransportSettings,
)
from local_aws.released_transport.service_control.messages import (
    ContractError,
    read_endpoint_metadata_report,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import full_name

DEFAULT_MONITORING_INSTANCE_NAME: Final = "Particular.Monitoring"
DEFAULT_MONITORING_ERROR_QUEUE: Final = "error"
MONITORING_IMMEDIATE_RETRIES: Final = 3
STORED_METRICS: Final = (PROCESSING_TIME, CRITICAL_TIME, RETRIES)


@dataclass(frozen=True, kw_only=True)
class MonitoringSettings(InstanceTransportSettings):
    """The monitoring instance's settings beside its transport's (``InstanceName``, its error
    queue)."""

    instance_name: str = DEFAULT_MONITORING_INSTANCE_NAME
    error_queue: str = DEFAULT_MONITORING_ERROR_QUEUE


@dataclass(frozen=True)
class MonitoredInstance:
    """``EndpointInstanceId`` of the monitoring instance: the endpoint name and the instance id
    (the metric instance id, else the host id), with the name it is shown under."""

    endpoint_name: str | None
    instance_id: str | None
    instance_name: str | None


@dataclass(frozen=True)
class MetricValue:
    """One stored entry: the message type it was tagged with, when (``DateTime.Ticks``), the
    value."""

    message_type: str
    ticks: int
    value: int


@dataclass
class MonitoringState:
    """What the monitoring instance took from its queue."""

    metrics: dict[tuple[MonitoredInstance, str], list[MetricValue]] = field(default_factory=dict)
    """Values per instance and metric type."""
    input_queues: dict[str | None, str | None] = field(default_factory=dict)
    """Each endpoint's input queue, from its metadata reports."""
    queue_lengths: dict[str, int] = field(default_factory=dict)
    """The last length polled per queue name."""
    queue_length_errors: dict[str, str] = field(default_factory=dict)
    """The last failure of a queue's length poll."""


def monitored_instance(headers: HeaderDict) -> MonitoredInstance:
    """``EndpointInstanceId.From(headers)``: a missing header fails (``KeyNotFoundException``)."""
    endpoint_name = headers[ORIGINATING_ENDPOINT]
    if METRIC_INSTANCE_ID in headers:
        instance_id = headers[METRIC_INSTANCE_ID]
        return MonitoredInstance(endpoint_name, instance_id, instance_id)
    return MonitoredInstance(
        endpoint_name, headers[ORIGINATING_HOST_ID], headers[HOST_DISPLAY_NAME]
    )


class ServiceControlMonitoring(InstanceEndpoint):
    """A monitoring instance with its own SQS client (of its own account), stepped by hand."""

    def __init__(self, sqs: Any, settings: MonitoringSettings | None = None) -> None:
        self.settings = settings or MonitoringSettings()
        super().__init__(
            sqs,
            self.settings.instance_name,
            self.settings,
            error_queue=self.settings.error_queue,
            recoverability=RecoverabilitySettings(
                immediate_retries=MONITORING_IMMEDIATE_RETRIES, delayed_retries=0
            ),
        )
        self.state = MonitoringState()
        self._queue_urls: dict[str, str] = {}

    def ingest(self) -> list[ProcessingOutcome]:
        """Read one batch of reports."""
        return self.endpoint.process(self._handle)

    def _handle(self, context: MessageHandlerContext) -> None:
        message = context.message
        if not message.body:
            return
        headers = message.headers
        if headers.get(CONTENT_TYPE) == TAGGED_VALUE_CONTENT_TYPE:
            try:
                occurrences = read_tagged_values(message.body)
            except MetricReportFormatError as unreadable:
                raise MessageDeserializationError(str(unreadable)) from unreadable
            for occurrence in occurrences:
                instance = monitored_instance(headers)
                metric_type = headers[METRIC_TYPE]
                if metric_type not in STORED_METRICS:
                    continue
                stored = self.state.metrics.setdefault((instance, str(metric_type)), [])
                stored.extend(
                    MetricValue(occurrence.tag_value, ticks, value)
                    for ticks, value in occurrence.entries
                )
            return
        enclosed = headers.get(ENCLOSED_MESSAGE_TYPES) or ""
        types = [full_name(name) for name in enclosed.split(";") if name.strip()]
        if ENDPOINT_METADATA_REPORT_TYPE not in types:
            raise ContractError(
                "The System.Text.Json message serializer requires message types to be defined."
                f" (no handler for '{enclosed}' in this model of the monitoring instance)"
            )
        report = read_endpoint_metadata_report(message.body)
        self.state.input_queues[headers[ORIGINATING_ENDPOINT]] = report.local_address

    def poll_queue_lengths(self) -> dict[str, int]:
        """``QueueLengthProvider``: one round of length queries of the tracked input queues."""
        for local_address in self.state.input_queues.values():
            if local_address is None:
                continue
            queue = self.endpoint.queue_cache.physical_queue_name(local_address)
            self.state.queue_lengths.setdefault(queue, 0)
            try:
                url = self._queue_urls.get(queue) or str(
                    self._sqs.get_queue_url(QueueName=queue)["QueueUrl"]
                )
                self._queue_urls[queue] = url
                attributes = self._sqs.get_queue_attributes(
                    QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
                )["Attributes"]
                self.state.queue_lengths[queue] = int(attributes["ApproximateNumberOfMessages"])
                self.state.queue_length_errors.pop(queue, None)
            except Exception as failure:
                self.state.queue_length_errors[queue] = str(failure)
        return dict(self.state.queue_lengths)
