"""The headers NServiceBus core 10.2.5 puts on sends, replies and retry acknowledgements
(``src/NServiceBus.Core/Correlation/AttachCorrelationIdBehavior.cs``,
``Causation/AttachCausationHeadersBehavior.cs``, ``Hosting/AddHostInfoHeadersBehavior.cs``,
``Pipeline/Outgoing/AttachSenderRelatedInfoOnMessageBehavior.cs``,
``ServicePlatform/Retries/RetryAcknowledgementBehavior.cs``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.pipeline_headers import (
    ConversationConflictError,
    MessageIntent,
    apply_routing_headers,
    logical_message_headers,
    retry_acknowledgement_headers,
)

HOST = HostInformation("Sales", "MACHINE", "a" * 32, "MACHINE")
NOW = datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)


def _headers(
    intent: MessageIntent, incoming: dict[str, str | None] | None = None, **extra: str
) -> dict[str, str | None]:
    return logical_message_headers(
        intent=intent,
        message_id="new",
        message_type="Ns.Msg, Asm",
        reply_to_address="DEV-Sales",
        host=HOST,
        headers=extra or None,
        incoming=incoming,
    )


def test_a_send_from_the_session() -> None:
    headers = _headers(MessageIntent.SEND)
    conversation_id = headers.pop("NServiceBus.ConversationId")

    assert conversation_id
    assert headers == {
        "NServiceBus.MessageId": "new",
        "NServiceBus.OpenTelemetry.StartNewTrace": "False",
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ReplyToAddress": "DEV-Sales",
        "NServiceBus.CorrelationId": "new",
        "NServiceBus.OriginatingMachine": "MACHINE",
        "NServiceBus.OriginatingEndpoint": "Sales",
        "$.diagnostics.originating.hostid": "a" * 32,
        "NServiceBus.ContentType": "application/json",
        "NServiceBus.EnclosedMessageTypes": "Ns.Msg, Asm",
    }


def test_a_reply_follows_the_incoming_conversation_and_correlation() -> None:
    incoming: dict[str, str | None] = {
        "NServiceBus.MessageId": "in",
        "NServiceBus.ConversationId": "conv",
        "NServiceBus.CorrelationId": "corr",
    }

    headers = _headers(MessageIntent.REPLY, incoming)

    assert headers["NServiceBus.MessageIntent"] == "Reply"
    assert "NServiceBus.OpenTelemetry.StartNewTrace" not in headers
    assert headers["NServiceBus.CorrelationId"] == "corr"
    assert headers["NServiceBus.ConversationId"] == "conv"
    assert headers["NServiceBus.RelatedTo"] == "in"


def test_without_an_incoming_correlation_the_incoming_message_id_correlates() -> None:
    headers = _headers(MessageIntent.SEND, {"NServiceBus.MessageId": "in"})

    assert headers["NServiceBus.CorrelationId"] == "in"


def test_a_callers_conversation_id_cannot_override_the_incoming_one() -> None:
    with pytest.raises(ConversationConflictError, match="cannot override the incoming header"):
        _headers(
            MessageIntent.SEND,
            {"NServiceBus.ConversationId": "conv"},
            **{"NServiceBus.ConversationId": "mine"},
        )


def test_routing_headers_are_added_only_where_missing() -> None:
    headers: dict[str, str | None] = {"NServiceBus.TimeSent": "earlier"}

    apply_routing_headers(headers, NOW, timedelta(seconds=10))

    assert headers == {
        "NServiceBus.TimeSent": "earlier",
        "NServiceBus.Version": "10.2.5",
        "NServiceBus.DeliverAt": "2024-01-02 03:04:15:000006 Z",
    }


def test_the_retry_acknowledgement_is_a_control_message() -> None:
    assert retry_acknowledgement_headers("unique", NOW) == {
        "ServiceControl.Retry.Successful": "2024-01-02 03:04:05:000006 Z",
        "ServiceControl.Retry.UniqueMessageId": "unique",
        "NServiceBus.ControlMessage": "True",
    }
