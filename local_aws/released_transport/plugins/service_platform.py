"""What the platform plugins share: how they hand a message to the transport.

NServiceBus.Heartbeat, NServiceBus.CustomChecks, NServiceBus.Metrics.ServiceControl and
NServiceBus.SagaAudit do not send through core's pipeline: each builds an ``OutgoingMessage``
itself (a new ``Guid`` as id, its own headers, a body it serialized) and calls the transport's
``IMessageDispatcher.Dispatch`` directly, with a ``DiscardIfNotReceivedBefore`` and a
``DispatchConsistency.Default`` operation. So none of core's routing-stage headers
(``NServiceBus.Version``, ``NServiceBus.TimeSent``), conversation or host headers are added, and
the SQS dispatcher resolves the destination by name in the endpoint's own account like any
other. A failed dispatch is logged and swallowed — the plugin carries on — except saga audit's
start-up check, which stops the endpoint.

Heartbeats, custom checks and saga audit describe themselves with the same three or four
headers: ``NServiceBus.EnclosedMessageTypes`` (the message class's ``FullName``),
``NServiceBus.ContentType`` ``application/json``, ``NServiceBus.MessageIntent`` ``Send`` and,
on an endpoint that receives, ``NServiceBus.ReplyToAddress`` (its receive address).

Facts: NServiceBus.Heartbeat 6.0.1 ``src/NServiceBus.Heartbeat/ServiceControlBackend.cs``,
``HeartbeatSender.cs``; NServiceBus.CustomChecks 6.0.1
``src/NServiceBus.CustomChecks/ServiceControlBackend.cs``; NServiceBus.SagaAudit 6.0.1
``src/NServiceBus.SagaAudit/ServiceControlBackend.cs``; NServiceBus.Metrics.ServiceControl 6.0.1
``src/NServiceBus.Metrics.ServiceControl/ReportingFeature.cs``,
``ServiceControlReporting/NServiceBusMetadataReport.cs``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Final

from local_aws.released_transport.core.outgoing import (
    DispatchProperties,
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.dotnet.time_formats import TimeSpan
from local_aws.released_transport.headers import (
    CONTENT_TYPE,
    ENCLOSED_MESSAGE_TYPES,
    MESSAGE_INTENT,
    REPLY_TO_ADDRESS,
    HeaderDict,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

JSON_CONTENT_TYPE: Final = "application/json"
"""``ContentTypes.Json``."""
SEND_INTENT: Final = "Send"
"""``MessageIntent.Send.ToString()``."""


@dataclass(frozen=True)
class SendAttempt:
    """One message a plugin handed to the dispatcher, and the failure it swallowed, if any."""

    message: OutgoingMessage
    destination: str
    failure: BaseException | None = None

    @property
    def sent(self) -> bool:
        """Whether the dispatch succeeded."""
        return self.failure is None


def plugin_headers(message_type: str, reply_to_address: str | None) -> HeaderDict:
    """The headers heartbeats and custom checks put on their messages, in their order."""
    headers: HeaderDict = {
        ENCLOSED_MESSAGE_TYPES: message_type,
        CONTENT_TYPE: JSON_CONTENT_TYPE,
        MESSAGE_INTENT: SEND_INTENT,
    }
    if reply_to_address is not None:
        headers[REPLY_TO_ADDRESS] = reply_to_address
    return headers


def new_plugin_message(headers: HeaderDict, body: bytes) -> OutgoingMessage:
    """``new OutgoingMessage(Guid.NewGuid().ToString(), headers, body)``: the dictionary is the
    caller's, so a plugin that reuses one shares it between its messages."""
    return OutgoingMessage(str(uuid.uuid4()), headers, body)


def dispatch_plugin_message(
    dispatcher: MessageDispatcher,
    message: OutgoingMessage,
    destination: str,
    time_to_be_received: TimeSpan | None,
    transaction: TransportTransaction | None = None,
) -> SendAttempt:
    """``Dispatch`` of one operation; a failure is returned (the plugin logs it), not raised."""
    operation = TransportOperation(
        message,
        destination,
        DispatchProperties(discard_if_not_received_before=time_to_be_received),
    )
    try:
        dispatcher.dispatch([operation], transaction)
    except Exception as failure:
        return SendAttempt(message, destination, failure)
    return SendAttempt(message, destination)
