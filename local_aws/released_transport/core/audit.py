"""Core's auditing: ``AuditProcessedMessagesTo(address, timeToBeReceived)``.

After the incoming physical message has been processed — the handler, or the subscription
storage for a subscribe request, or nothing at all for a control message: every message that
reaches core's physical stage and does not fail, since ``InvokeAuditPipelineBehavior`` is
registered before every other behaviour of that stage that could stop it — core forks a copy to
the audit address:

* the message id and body of the incoming message (the body as received, before mutators) and a
  *copy* of its headers as the pipeline left them (a saga handler's
  ``NServiceBus.InvokedSagas`` / ``ServiceControl.SagaStateChange`` included);
* the audit metadata, each overwriting a header of that name: ``$.diagnostics.hostid`` (``N``
  form), ``$.diagnostics.hostdisplayname``, ``NServiceBus.ProcessingMachine``,
  ``NServiceBus.ProcessingEndpoint`` (the endpoint *name*), ``NServiceBus.ProcessingStarted`` (when
  the physical stage began) and ``NServiceBus.ProcessingEnded`` (when the audit copy is made),
  and ``ServiceControl.Retry.AcknowledgementSent`` ``true`` when the message is a ServiceControl
  retry the endpoint acknowledges itself;
* the routing stage's ``NServiceBus.Version`` and ``NServiceBus.TimeSent`` where missing (an audited
  native message gets the time of auditing as its time sent);
* the configured time to be received, when there is one, as ``DiscardIfNotReceivedBefore``.

The copy goes to the address as configured — through the queue name generator and the
endpoint's own ``GetQueueUrl``, like any destination — and it is *not* dispatched alone: the
routing connector finds the receive's pending operations and adds it to them, so it travels in
the same batched dispatch as the handler's sends and replies. The SQS dispatcher prepares (and
resolves the queue of) every operation of a batch before it sends any: an audit address that
does not resolve fails the whole dispatch, the handler's messages are never sent and the
incoming message goes through recoverability. Since the copy keeps the incoming message id, the
dispatcher also copies the received native attributes onto it
(:mod:`~local_aws.released_transport.transport.sending.dispatcher`).

Messages that fail are not audited (the exception leaves the stage before the fork). The model
does not read the ``NSERVICEBUS__AUDIT__ADDRESS`` / ``NSERVICEBUS__AUDIT__DISABLED`` environment
variables, nor add the expired-license metadata.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Audit/`` (``Audit.cs``, ``ConfigureAudit.cs``,
``AuditConfigReader.cs``, ``InvokeAuditPipelineBehavior.cs``, ``AuditContext.cs``,
``AuditToRoutingConnector.cs``, ``RouteToAudit.cs``),
``Hosting/AuditHostInformationBehavior.cs``,
``Performance/Statistics/ProcessingStatisticsBehavior.cs``,
``Performance/Statistics/AuditProcessingStatisticsBehavior.cs``,
``Performance/Statistics/ReceiveStatisticsFeature.cs``,
``ServicePlatform/Retries/MarkAsAcknowledgedBehavior.cs``,
``ServicePlatform/Retries/RetryAcknowledgementBehavior.cs``,
``Pipeline/Outgoing/AttachSenderRelatedInfoOnMessageBehavior.cs``,
``Pipeline/Outgoing/RoutingToDispatchConnector.cs``,
``Pipeline/Incoming/TransportReceiveToPhysicalMessageConnector.cs``,
``Pipeline/PipelineModelBuilder.cs`` and ``EndpointConfiguration.cs`` (the order of the
features, hence of the stage's behaviours).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.outgoing import (
    DispatchProperties,
    OutgoingMessage,
    TransportOperation,
)
from local_aws.released_transport.core.pipeline_headers import apply_routing_headers
from local_aws.released_transport.dotnet.text import is_null_or_whitespace
from local_aws.released_transport.dotnet.time_formats import TimeSpan, to_wire_format
from local_aws.released_transport.headers import (
    HOST_DISPLAY_NAME,
    HOST_ID,
    PROCESSING_ENDED,
    PROCESSING_ENDPOINT,
    PROCESSING_MACHINE,
    PROCESSING_STARTED,
    RETRY_ACKNOWLEDGEMENT_SENT,
    HeaderDict,
)


class AuditSettingsError(ValueError):
    """``AuditProcessedMessagesTo`` refused its arguments, as core's argument checks do."""


@dataclass(frozen=True)
class AuditSettings:
    """``AuditProcessedMessagesTo(auditQueue, timeToBeReceived)``: no default address (auditing
    is off unless configured), no time to be received unless given."""

    address: str
    time_to_be_received: timedelta | None = None

    def __post_init__(self) -> None:
        if is_null_or_whitespace(self.address):
            raise AuditSettingsError(
                "AuditSettings.address: the audit queue must not be empty or white space; give"
                " the audit queue's name, e.g. 'audit'"
            )
        if self.time_to_be_received is not None and self.time_to_be_received < timedelta(0):
            raise AuditSettingsError(
                "AuditSettings.time_to_be_received must not be negative; give a positive time"
                " span or None for no limit"
            )


@dataclass(frozen=True)
class ProcessingTimes:
    """``ProcessingStatisticsBehavior.State``: when the physical stage began, and when the audit
    copy was made."""

    started: datetime
    ended: datetime


def audit_metadata(
    host: HostInformation, times: ProcessingTimes, *, retry_acknowledged: bool
) -> HeaderDict:
    """The audit context's metadata, in the order the audit stage's behaviours add it."""
    metadata: HeaderDict = {
        HOST_ID: host.host_id,
        HOST_DISPLAY_NAME: host.display_name,
        PROCESSING_MACHINE: host.machine_name,
        PROCESSING_ENDPOINT: host.endpoint_name,
        PROCESSING_STARTED: to_wire_format(times.started),
        PROCESSING_ENDED: to_wire_format(times.ended),
    }
    if retry_acknowledged:
        metadata[RETRY_ACKNOWLEDGEMENT_SENT] = "true"
    return metadata


def audit_operation(
    settings: AuditSettings,
    message_id: str,
    headers: Mapping[str, str | None],
    body: bytes,
    *,
    host: HostInformation,
    times: ProcessingTimes,
    retry_acknowledged: bool,
) -> TransportOperation:
    """``RouteToAudit`` through the routing stage: the operation that joins the receive's
    pending operations."""
    audited: HeaderDict = dict(headers)
    audited.update(audit_metadata(host, times, retry_acknowledged=retry_acknowledged))
    apply_routing_headers(audited, times.ended)
    ttbr = settings.time_to_be_received
    return TransportOperation(
        OutgoingMessage(message_id, audited, body),
        settings.address,
        DispatchProperties(
            discard_if_not_received_before=None if ttbr is None else TimeSpan.of(ttbr)
        ),
    )
