"""NServiceBus.SagaAudit 6.0.1: ``AuditSagaStateChanges(serviceControlQueue)``.

The feature depends on core's ``Sagas`` feature: on an endpoint that registers no saga it never
starts (the wiring decides, :mod:`~local_aws.released_transport.endpoint.plugin_wiring`). At start
the plugin checks the queue by sending it a control message
(``NServiceBus.ControlMessage`` ``True``, ``NServiceBus.MessageIntent`` ``Send``,
``NServiceBus.ReplyToAddress``, empty body, no time to be received); if that dispatch fails the
endpoint does not start (:class:`SagaAuditStartupError`, the plugin's message, the dispatcher's
error as its cause).

Around each handler invocation: every message the handler sends, replies or publishes is noted
(``SagaChangeOutput``: its id, when, its type's ``FullName``, the delay, the single unicast
destination or none, the intent). When the handler ran as a saga whose data exists (the model's
:meth:`~local_aws.released_transport.endpoint.handler_context.MessageHandlerContext.handled_by_saga`)
and returned:

1. ``NServiceBus.InvokedSagas`` on the *incoming* message's headers gets
   ``<saga type FullName>:<saga id>`` (appended after ``;`` when present);
2. ``ServiceControl.SagaStateChange`` gets ``<saga id>:New|Updated|Completed`` (``Completed`` wins
   over ``New``; appended after ``;``) — both headers therefore travel on the audit copy;
3. a ``SagaUpdatedMessage`` is dispatched at once — not with the handler's batched operations —
   through the transport's dispatcher with the *incoming* transport transaction (its new id
   never matches the incoming one, so no native attribute is copied) and a time to be received
   of ``TimeSpan.MaxValue``; a failure is logged and swallowed. It is sent even when the
   handler's own dispatch fails afterwards, once for every attempt.

Body (``JsonSerializer`` defaults): ``SagaState`` (the saga data serialized by its serializer, as
text), ``SagaId``, ``Initiator`` (``InitiatingMessageId``, ``MessageType`` — the handled message
type's ``FullName``, ``IsSagaTimeoutMessage`` — ``NServiceBus.IsSagaTimeoutMessage`` equal to
``true`` ignoring case, ``TimeSent`` — ``NServiceBus.TimeSent`` else ``0001-01-01T00:00:00Z``,
``OriginatingMachine``, ``OriginatingEndpoint``, ``Intent`` — the header, else ``Send``),
``ResultingMessages``, ``Endpoint`` (the endpoint name), ``IsNew``, ``IsCompleted``,
``StartTime`` / ``FinishTime`` (when the saga instance was loaded / last modified: the model
takes the times before and after the handler), ``SagaType``. Headers (a fresh dictionary):
``NServiceBus.EnclosedMessageTypes``
``ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage``,
``NServiceBus.ContentType`` ``application/json``, ``NServiceBus.ReplyToAddress``,
``NServiceBus.MessageIntent`` ``Send``.

ServiceControl 6.19.2 stores saga audit from the *audit* queue; the main instance forwards what
reaches ``Particular.ServiceControl`` to the audit queue and reports the endpoint as
misconfigured (:mod:`~local_aws.released_transport.service_control.instance_queue`).

The model has no sagas: a handler declares the saga it ran as; a custom saga state serializer is
the caller's (``state`` is the text it wrote).

Facts: NServiceBus.SagaAudit 6.0.1 ``src/NServiceBus.SagaAudit/SagaAuditConfigurationExtensions.cs``,
``SagaAuditFeature.cs``, ``CaptureSagaStateBehavior.cs``, ``CaptureSagaResultingMessagesBehavior.cs``,
``AuditInvokedSagaBehavior.cs``, ``ServiceControlBackend.cs``, ``SagaAuditHeaders.cs``,
``Messages/SagaUpdatedMessage.cs``, ``Messages/SagaChangeInitiator.cs``,
``Messages/SagaChangeOutput.cs``; vectors in ``src/NServiceBus.SagaAudit.Tests/MessageSerialization.cs``
and its approval file, ``When_a_message_triggers_multiple_saga_invocations.cs``,
``When_a_message_with_proper_headers_arrive.cs``, ``When_a_message_with_no_headers_arrive.cs``;
NServiceBus 10.2.5 ``src/NServiceBus.Core/Unicast/Transport/ControlMessageFactory.cs``,
``Sagas/ActiveSagaInstance.cs``, ``Pipeline/Incoming/InvokeHandlerContext.cs`` (the handler's
headers are the incoming message's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from local_aws.released_transport.core.outgoing import (
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.core.pipeline_headers import new_message_id
from local_aws.released_transport.dotnet.system_text_json import write_json
from local_aws.released_transport.dotnet.text import utf8_bytes
from local_aws.released_transport.dotnet.time_formats import (
    DOTNET_EPOCH,
    TIMESPAN_MAX,
    TimeSpan,
    from_wire_format,
    to_json_datetime,
)
from local_aws.released_transport.headers import (
    CONTENT_TYPE,
    CONTROL_MESSAGE,
    ENCLOSED_MESSAGE_TYPES,
    INVOKED_SAGAS,
    IS_SAGA_TIMEOUT_MESSAGE,
    MESSAGE_INTENT,
    ORIGINATING_ENDPOINT,
    ORIGINATING_MACHINE,
    REPLY_TO_ADDRESS,
    SAGA_STATE_CHANGE,
    TIME_SENT,
    TRUE_STRING,
    HeaderDict,
)
from local_aws.released_transport.plugins.service_platform import (
    JSON_CONTENT_TYPE,
    SEND_INTENT,
    SendAttempt,
    dispatch_plugin_message,
    new_plugin_message,
)
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher

SAGA_UPDATED_MESSAGE_TYPE: Final = (
    "ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage"
)
STARTUP_CHECK_FAILED: Final = (
    "You have enabled saga state change auditing in your endpoint, however, this endpoint is"
    " unable to contact the ServiceControl to report endpoint information.\nPlease ensure that"
    " the specified queue is correct."
)
"""The plugin's verbatim string, with the line break the repository stores (LF)."""
NEW: Final = "New"
UPDATED: Final = "Updated"
COMPLETED: Final = "Completed"


class SagaAuditStartupError(Exception):
    """The start-up check could not reach the saga audit queue: the endpoint does not start."""


@dataclass(frozen=True)
class SagaAuditSettings:
    """``AuditSagaStateChanges(serviceControlQueue)`` (no custom saga serializer: the handler
    gives the state as text)."""

    service_control_queue: str


@dataclass(frozen=True)
class SagaInvocation:
    """What a handler declares of the saga it ran as: the saga class's ``FullName``, the saga
    data's id (a GUID in the ``D`` form), the data as its serializer wrote it, and whether the
    instance was created or completed by this message."""

    saga_type: str
    saga_id: str
    state: str
    is_new: bool = False
    is_completed: bool = False


@dataclass(frozen=True)
class SagaChangeOutput:
    """``SagaChangeOutput``: one message the saga's handler sent, replied or published."""

    message_type: str
    time_sent: datetime
    delivery_delay: timedelta | None
    destination: str | None
    resulting_message_id: str
    intent: str | None


def add_invoked_saga(headers: HeaderDict, saga_type: str, saga_id: str) -> None:
    """``AuditInvokedSagaBehavior.AddOrUpdateInvokedSagasHeader``."""
    invoked = f"{saga_type}:{saga_id}"
    existing = headers.get(INVOKED_SAGAS)
    headers[INVOKED_SAGAS] = invoked if INVOKED_SAGAS not in headers else f"{existing};{invoked}"


def state_change(invocation: SagaInvocation) -> str:
    """``New``, ``Updated`` or ``Completed`` (completed wins)."""
    if invocation.is_completed:
        return COMPLETED
    return NEW if invocation.is_new else UPDATED


def add_saga_state_change(headers: HeaderDict, invocation: SagaInvocation) -> None:
    """``AssignSagaStateChangeCausedByMessage``."""
    previous = headers.get(SAGA_STATE_CHANGE) or ""
    change = f"{invocation.saga_id}:{state_change(invocation)}"
    headers[SAGA_STATE_CHANGE] = f"{previous};{change}" if previous else change


def saga_change_initiator(
    headers: Mapping[str, str | None], message_id: str, message_type: str
) -> dict[str, Any]:
    """``BuildSagaChangeInitiatorMessage``, as the serialized ``SagaChangeInitiator``."""
    time_sent = headers.get(TIME_SENT)
    is_timeout = headers.get(IS_SAGA_TIMEOUT_MESSAGE)
    return {
        "InitiatingMessageId": message_id,
        "MessageType": message_type,
        "IsSagaTimeoutMessage": is_timeout is not None and is_timeout.lower() == "true",
        "TimeSent": to_json_datetime(
            DOTNET_EPOCH if time_sent is None else from_wire_format(time_sent)
        ),
        "OriginatingMachine": headers.get(ORIGINATING_MACHINE),
        "OriginatingEndpoint": headers.get(ORIGINATING_ENDPOINT),
        "Intent": headers.get(MESSAGE_INTENT, SEND_INTENT),
    }


def saga_updated_body(
    invocation: SagaInvocation,
    initiator: Mapping[str, Any],
    resulting_messages: Sequence[SagaChangeOutput],
    *,
    endpoint: str,
    start_time: datetime,
    finish_time: datetime,
) -> bytes:
    """The serialized ``SagaUpdatedMessage``."""
    return utf8_bytes(
        write_json(
            {
                "SagaState": invocation.state,
                "SagaId": invocation.saga_id,
                "Initiator": dict(initiator),
                "ResultingMessages": [_output(output) for output in resulting_messages],
                "Endpoint": endpoint,
                "IsNew": invocation.is_new,
                "IsCompleted": invocation.is_completed,
                "StartTime": to_json_datetime(start_time),
                "FinishTime": to_json_datetime(finish_time),
                "SagaType": invocation.saga_type,
            }
        )
    )


def _output(output: SagaChangeOutput) -> dict[str, Any]:
    delay = output.delivery_delay
    return {
        "MessageType": output.message_type,
        "TimeSent": to_json_datetime(output.time_sent),
        "DeliveryAt": None,
        "DeliveryDelay": None if delay is None else str(TimeSpan.of(delay)),
        "Destination": output.destination,
        "ResultingMessageId": output.resulting_message_id,
        "Intent": output.intent,
    }


def saga_audit_headers(reply_to_address: str) -> HeaderDict:
    """The headers of a ``SagaUpdatedMessage``, in the plugin's order."""
    return {
        ENCLOSED_MESSAGE_TYPES: SAGA_UPDATED_MESSAGE_TYPE,
        CONTENT_TYPE: JSON_CONTENT_TYPE,
        REPLY_TO_ADDRESS: reply_to_address,
        MESSAGE_INTENT: SEND_INTENT,
    }


class SagaAuditBackend:
    """The plugin's ``ServiceControlBackend`` of one endpoint."""

    def __init__(
        self, dispatcher: MessageDispatcher, reply_to_address: str, settings: SagaAuditSettings
    ) -> None:
        self._dispatcher = dispatcher
        self._reply_to_address = reply_to_address
        self.settings = settings
        self.attempts: list[SendAttempt] = []
        """Every ``SagaUpdatedMessage`` handed to the dispatcher, with its failure if any."""

    def start(self) -> OutgoingMessage:
        """``Start``: the control message that proves the queue can be reached."""
        message = OutgoingMessage(
            new_message_id(),
            {
                CONTROL_MESSAGE: TRUE_STRING,
                MESSAGE_INTENT: SEND_INTENT,
                REPLY_TO_ADDRESS: self._reply_to_address,
            },
            b"",
        )
        try:
            self._dispatcher.dispatch(
                [TransportOperation(message, self.settings.service_control_queue)]
            )
        except Exception as failure:
            raise SagaAuditStartupError(STARTUP_CHECK_FAILED) from failure
        return message

    def send(self, body: bytes, transaction: TransportTransaction) -> SendAttempt:
        """``Send(SagaUpdatedMessage, transportTransaction)``."""
        attempt = dispatch_plugin_message(
            self._dispatcher,
            new_plugin_message(saga_audit_headers(self._reply_to_address), body),
            self.settings.service_control_queue,
            TIMESPAN_MAX,
            transaction,
        )
        self.attempts.append(attempt)
        return attempt
