"""The headers NServiceBus core puts on what an endpoint sends, replies, forwards and
acknowledges — before the transport sees the message.

A send (``IMessageSession.Send`` / ``context.Send``) starts from the caller's headers and the new
message id, then each pipeline stage adds its own:

* send / publish stage: ``NServiceBus.OpenTelemetry.StartNewTrace`` (``False`` for a send,
  ``True`` for a publish; OpenTelemetry is on by default in v10; replies do not get it) and
  ``NServiceBus.MessageIntent`` (``Send`` / ``Publish`` / ``Reply``);
* logical stage: ``NServiceBus.ReplyToAddress`` (the endpoint's receive address — a physical
  queue name), ``NServiceBus.CorrelationId`` (the incoming one, else the incoming message id,
  else the new message's id), ``NServiceBus.RelatedTo`` (the incoming message id, when sent from
  a handler), ``NServiceBus.ConversationId`` (the incoming one, else a new id),
  ``NServiceBus.OriginatingMachine``, ``NServiceBus.OriginatingEndpoint`` (the endpoint *name*)
  and ``$.diagnostics.originating.hostid``;
* serialization: ``NServiceBus.ContentType`` (``application/json``, the default
  ``SystemJsonSerializer``) and ``NServiceBus.EnclosedMessageTypes``;
* routing stage, for every outgoing message including forwards, recoverability and
  acknowledgements: ``NServiceBus.Version``, ``NServiceBus.TimeSent`` and, with a delay,
  ``NServiceBus.DeliverAt`` — each only where missing.

Which stage runs first among behaviours of one stage depends on core's step ordering; the model
fixes one plausible order. Readers never depend on header order, so only byte-exact comparisons
of whole envelopes of *endpoint-generated* messages would notice; the transport's own approval
vectors are byte-exact (:mod:`~local_aws.released_transport.transport.envelope`).

A subscribe or unsubscribe request of the message-driven compatibility mode is a control
message built outside the pipeline (``ControlMessageFactory``, then the terminator's headers):
``NServiceBus.ControlMessage = True``, the intent, ``SubscriptionMessageType`` (the event type's
assembly-qualified name; no ``NServiceBus.`` prefix), ``NServiceBus.ReplyToAddress`` and
``NServiceBus.SubscriberAddress`` (both the subscriber's receive address),
``NServiceBus.SubscriberEndpoint`` (its name), ``NServiceBus.TimeSent`` and
``NServiceBus.Version`` — no message id header, no conversation, no host headers. The trace
context headers core copies from a current ``Activity`` are not modelled.

New ids are random GUIDs where core uses ``CombGuid`` (time-ordered): nothing reads the order.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Unicast/MessageOperations.cs``,
``Routing/Routers/SendConnector.cs``, ``Routing/Routers/ReplyConnector.cs``,
``Routing/ApplyReplyToAddressBehavior.cs``, ``Correlation/AttachCorrelationIdBehavior.cs``,
``Causation/AttachCausationHeadersBehavior.cs``, ``Hosting/AddHostInfoHeadersBehavior.cs``,
``Pipeline/Outgoing/SerializeMessageConnector.cs``,
``Pipeline/Outgoing/AttachSenderRelatedInfoOnMessageBehavior.cs``,
``OpenTelemetry/OpenTelemetrySendBehavior.cs``, ``Unicast/IncomingMessageOperations.cs``,
``ServicePlatform/Retries/RetryAcknowledgementBehavior.cs``, ``OpenTelemetry/
OpenTelemetryPublishBehavior.cs``, ``Unicast/Transport/ControlMessageFactory.cs``,
``Routing/SubscriptionMigrationMode/MigrationSubscribeTerminator.cs``,
``MigrationUnsubscribeTerminator.cs``, ``Transports/IncomingMessageExtensions.cs``
(``GetMessageIntent``), ``MessageIntent.cs``.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Final

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.dotnet.text import is_null_or_whitespace, try_parse_integer
from local_aws.released_transport.dotnet.time_formats import to_wire_format
from local_aws.released_transport.headers import (
    CONTENT_TYPE,
    CONTROL_MESSAGE,
    CONVERSATION_ID,
    CORRELATION_ID,
    DELIVER_AT,
    ENCLOSED_MESSAGE_TYPES,
    FALSE_STRING,
    MESSAGE_ID,
    MESSAGE_INTENT,
    NSERVICEBUS_VERSION,
    ORIGINATING_ENDPOINT,
    ORIGINATING_HOST_ID,
    ORIGINATING_MACHINE,
    RELATED_TO,
    REPLY_TO_ADDRESS,
    RETRY_SUCCESSFUL,
    RETRY_UNIQUE_MESSAGE_ID,
    START_NEW_TRACE,
    SUBSCRIBER_ADDRESS,
    SUBSCRIBER_ENDPOINT,
    SUBSCRIPTION_MESSAGE_TYPE,
    TIME_SENT,
    TRUE_STRING,
    HeaderDict,
)

_NUMBER_START: Final = frozenset("+-0123456789")

CORE_VERSION: Final = "10.2.5"
"""``NServiceBus.Version``: the core NServiceBus.AmazonSQS 9.1.1 is built against."""
JSON_CONTENT_TYPE: Final = "application/json"


class MessageIntent(enum.Enum):
    """``MessageIntent`` as written in ``NServiceBus.MessageIntent`` (its number in ``number``)."""

    SEND = "Send"
    PUBLISH = "Publish"
    SUBSCRIBE = "Subscribe"
    UNSUBSCRIBE = "Unsubscribe"
    REPLY = "Reply"

    @property
    def number(self) -> int:
        """The enum's underlying value (``Send = 1`` … ``Reply = 5``)."""
        return list(MessageIntent).index(self) + 1


def parse_message_intent(text: str | None) -> MessageIntent | None:
    """``GetMessageIntent`` (core's and the transport's): ``Enum.TryParse(text, ignoreCase:
    true)`` — white space around, a number (any, defined or not), or names separated by commas
    whose values are or-ed — and ``None`` where that fails or gives no defined intent
    (``default(MessageIntent)`` is 0, which is none)."""
    if text is None or is_null_or_whitespace(text):
        return None
    text = text.strip()
    if text[0] in _NUMBER_START:
        value = try_parse_integer(text)
    else:
        value = 0
        for part in text.split(","):
            names = [
                intent for intent in MessageIntent if intent.value.lower() == part.strip().lower()
            ]
            if not names:
                return None
            value |= names[0].number
    return next((intent for intent in MessageIntent if intent.number == value), None)


class ConversationConflictError(Exception):
    """A caller's ``NServiceBus.ConversationId`` clashes with the incoming message's."""


def new_message_id() -> str:
    """A new message id (core: ``CombGuid.Generate()``)."""
    return str(uuid.uuid4())


def logical_message_headers(
    *,
    intent: MessageIntent,
    message_id: str,
    message_type: str,
    reply_to_address: str,
    host: HostInformation,
    headers: Mapping[str, str | None] | None = None,
    incoming: Mapping[str, str | None] | None = None,
) -> HeaderDict:
    """The headers of a send or reply up to and including serialization (routing-stage
    headers are :func:`apply_routing_headers`'). ``incoming`` is the message being handled,
    when there is one."""
    result: HeaderDict = dict(headers or {})
    result[MESSAGE_ID] = message_id
    if intent is MessageIntent.SEND:
        result[START_NEW_TRACE] = FALSE_STRING
    elif intent is MessageIntent.PUBLISH:
        result[START_NEW_TRACE] = TRUE_STRING
    result[MESSAGE_INTENT] = intent.value
    result[REPLY_TO_ADDRESS] = reply_to_address
    result[CORRELATION_ID] = _correlation_id(message_id, incoming)
    if incoming is not None:
        result[RELATED_TO] = incoming.get(MESSAGE_ID)
    _apply_conversation_id(result, incoming)
    result[ORIGINATING_MACHINE] = host.machine_name
    result[ORIGINATING_ENDPOINT] = host.endpoint_name
    result[ORIGINATING_HOST_ID] = host.host_id
    result[CONTENT_TYPE] = JSON_CONTENT_TYPE
    result[ENCLOSED_MESSAGE_TYPES] = message_type
    return result


def _correlation_id(message_id: str, incoming: Mapping[str, str | None] | None) -> str:
    """``AttachCorrelationIdBehavior``."""
    if incoming is not None:
        correlation_id = incoming.get(CORRELATION_ID) or incoming.get(MESSAGE_ID)
        if correlation_id:
            return correlation_id
    return message_id


def _apply_conversation_id(headers: HeaderDict, incoming: Mapping[str, str | None] | None) -> None:
    """``AttachCausationHeadersBehavior.SetConversationIdHeader`` (no ``StartNewConversation``)."""
    incoming_id = incoming.get(CONVERSATION_ID) if incoming is not None else None
    has_incoming = incoming is not None and CONVERSATION_ID in incoming
    if has_incoming:
        if CONVERSATION_ID in headers:
            raise ConversationConflictError(
                f"Cannot set the {CONVERSATION_ID} header to '{headers[CONVERSATION_ID]}' as it"
                f" cannot override the incoming header value ('{incoming_id}'). To start a new"
                " conversation use sendOptions.StartNewConversation()."
            )
        headers[CONVERSATION_ID] = incoming_id
        return
    if CONVERSATION_ID not in headers:
        headers[CONVERSATION_ID] = new_message_id()


def apply_routing_headers(
    headers: HeaderDict, now: datetime, delay_deliver_with: timedelta | None = None
) -> None:
    """``AttachSenderRelatedInfoOnMessageBehavior``: version, time sent and, for a delayed
    message, when it is due — none of them overwritten."""
    headers.setdefault(NSERVICEBUS_VERSION, CORE_VERSION)
    headers.setdefault(TIME_SENT, to_wire_format(now))
    if delay_deliver_with is not None:
        headers.setdefault(DELIVER_AT, to_wire_format(now + delay_deliver_with))


def retry_acknowledgement_headers(unique_message_id: str, now: datetime) -> HeaderDict:
    """The control message ``RetryAcknowledgementBehavior`` sends after a retried message from
    ServiceControl was processed (routing-stage headers still to add)."""
    return {
        RETRY_SUCCESSFUL: to_wire_format(now),
        RETRY_UNIQUE_MESSAGE_ID: unique_message_id,
        CONTROL_MESSAGE: TRUE_STRING,
    }


def subscription_control_headers(
    intent: MessageIntent,
    event_type: str,
    subscriber_address: str,
    subscriber_endpoint: str,
    now: datetime,
) -> HeaderDict:
    """The headers of a subscribe or unsubscribe request to a publisher, in core's order."""
    return {
        CONTROL_MESSAGE: TRUE_STRING,
        MESSAGE_INTENT: intent.value,
        SUBSCRIPTION_MESSAGE_TYPE: event_type,
        REPLY_TO_ADDRESS: subscriber_address,
        SUBSCRIBER_ADDRESS: subscriber_address,
        SUBSCRIBER_ENDPOINT: subscriber_endpoint,
        TIME_SENT: to_wire_format(now),
        NSERVICEBUS_VERSION: CORE_VERSION,
    }
