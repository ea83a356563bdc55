"""Core's auditing on a released endpoint (NServiceBus 10.2.5 ``src/NServiceBus.Core/Audit/``,
``Hosting/AuditHostInformationBehavior.cs``, ``Performance/Statistics/``,
``ServicePlatform/Retries/MarkAsAcknowledgedBehavior.cs``,
``Pipeline/Outgoing/RoutingToDispatchConnector.cs``,
``Pipeline/Incoming/TransportReceiveToPhysicalMessageConnector.cs``) with the SQS dispatcher
(NServiceBus.AmazonSQS 9.1.1 ``Sending/MessageDispatcher.cs``), on the test doubles: what the
audit copy carries, that it travels in the handler's batch, and which messages are audited."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local_aws.released_transport.core.audit import AuditSettings, AuditSettingsError
from local_aws.released_transport.core.recoverability import ImmediateRetry
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import (
    EndpointSettings,
    MessageDrivenPubSubCompatibility,
)
from local_aws.released_transport.transport.receiving.input_pump import MessageFate
from tests.local_aws.released_transport.fake_sqs import FakeSqs
from tests.local_aws.released_transport.fake_wire import (
    as_received,
    attribute,
    envelope,
    sent_to,
)

START = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
ORDER = "Sales.PlaceOrder, Sales, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"


class Clock:
    """A clock the handler moves."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def _billing(sqs: FakeSqs, clock: Clock | None = None, **settings: Any) -> ReleasedEndpoint:
    options: dict[str, Any] = {
        "queue_name_prefix": "DEV-",
        "disable_unrestricted_delayed_delivery": True,
        "machine_name": "MACHINE",
        "audit": AuditSettings("audit"),
        "clock": clock or Clock(),
        **settings,
    }
    billing = ReleasedEndpoint("Billing", sqs, EndpointSettings(**options))
    billing.start()
    return billing


def _from_sales(sqs: FakeSqs, **settings: Any) -> dict[str, Any]:
    """A message Sales sent to Billing, as Billing receives it."""
    sales = ReleasedEndpoint(
        "Sales", sqs, EndpointSettings(queue_name_prefix="DEV-", clock=lambda: START, **settings)
    )
    sales.send("Billing", ORDER, b'{"OrderId":1}', headers={"custom": "1"})
    return as_received(sent_to(sqs, "DEV-Billing")[-1])


def test_the_audit_copy_is_the_incoming_message_with_the_audit_metadata() -> None:
    sqs = FakeSqs()
    clock = Clock()
    billing = _billing(sqs, clock, audit=AuditSettings("audit", timedelta(days=2)))
    received = _from_sales(sqs)
    sqs.received.append([received])

    def handle(_context: MessageHandlerContext) -> None:
        clock.now += timedelta(seconds=1)

    (outcome,) = billing.process(handle)

    assert outcome.message is not None
    (audited,) = sent_to(sqs, "DEV-audit")
    wrapped = envelope(audited)
    headers = wrapped["Headers"]
    assert attribute(audited, "NServiceBus.MessageId") == outcome.message.message_id
    assert headers["NServiceBus.MessageId"] == outcome.message.message_id
    assert base64.b64decode(wrapped["Body"]) == b'{"OrderId":1}'
    assert headers.items() >= outcome.message.headers.items()
    assert headers["custom"] == "1"
    assert headers["NServiceBus.ProcessingEndpoint"] == "Billing"
    assert headers["NServiceBus.ProcessingMachine"] == "MACHINE"
    assert headers["$.diagnostics.hostid"] == billing.host.host_id
    assert headers["$.diagnostics.hostdisplayname"] == "MACHINE"
    assert headers["NServiceBus.ProcessingStarted"] == "2024-05-06 07:08:09:000000 Z"
    assert headers["NServiceBus.ProcessingEnded"] == "2024-05-06 07:08:10:000000 Z"
    assert headers["NServiceBus.TimeSent"] == "2024-05-06 07:08:09:000000 Z"
    assert headers["NServiceBus.AmazonSQS.TimeToBeReceived"] == "2.00:00:00"
    assert "ServiceControl.Retry.AcknowledgementSent" not in headers


def test_the_audit_copy_travels_in_the_same_batched_dispatch_as_the_handlers_sends() -> None:
    """Both are prepared — their queues resolved — before either batch goes out."""
    sqs = FakeSqs()
    billing = _billing(sqs)
    sqs.received.append([_from_sales(sqs)])

    billing.process(lambda context: context.send("Shipping", ORDER, b"{}"))

    queue_lookups = [call["QueueName"] for call in sqs.calls("get_queue_url")]
    batches = [call["QueueUrl"] for call in sqs.calls("send_message_batch")]
    assert queue_lookups[-2:] == ["DEV-Shipping", "DEV-audit"]
    assert batches[-2:] == ["DEV-Shipping", "DEV-audit"]


def test_an_audit_queue_that_does_not_resolve_fails_the_message_and_its_sends() -> None:
    """The issue's first finding: in an account without an ``audit`` queue every message runs
    into recoverability, and the handler's messages are never sent."""
    sqs = FakeSqs()
    sqs.missing_queues.add("DEV-audit")
    billing = _billing(sqs)
    sqs.received.append([_from_sales(sqs)])

    (outcome,) = billing.process(lambda context: context.send("Shipping", ORDER, b"{}"))

    assert outcome.pump.fate is MessageFate.RETRY_REQUIRED
    assert outcome.action == ImmediateRetry()
    assert "Queue `audit` doesn't exist" in str(outcome.pump.error)
    assert sent_to(sqs, "DEV-Shipping") == []


def test_a_failed_message_is_not_audited() -> None:
    sqs = FakeSqs()
    billing = _billing(sqs)
    sqs.received.append([_from_sales(sqs)])

    def fail(_context: MessageHandlerContext) -> None:
        raise RuntimeError("no")

    billing.process(fail)

    assert sent_to(sqs, "DEV-audit") == []


def _control_message(headers: dict[str, str]) -> dict[str, Any]:
    return {
        "MessageId": "native",
        "ReceiptHandle": "receipt",
        "Body": json.dumps({"Body": "empty message", "S3BodyKey": None, "Headers": headers}),
        "MessageAttributes": {"NServiceBus.MessageId": {"DataType": "String", "StringValue": "c"}},
        "Attributes": {"SentTimestamp": "1", "ApproximateReceiveCount": "1"},
    }


@pytest.mark.parametrize(
    "headers",
    [
        {"NServiceBus.MessageId": "c", "NServiceBus.ControlMessage": "True"},
        {
            "NServiceBus.MessageId": "c",
            "NServiceBus.ControlMessage": "True",
            "NServiceBus.MessageIntent": "Subscribe",
            "SubscriptionMessageType": ORDER,
            "NServiceBus.ReplyToAddress": "DEV-Sales",
        },
    ],
)
def test_control_and_subscription_messages_are_audited_too(headers: dict[str, str]) -> None:
    """The audit fork wraps the whole physical stage, the subscription storage included, and
    a control message passes that stage without a handler."""
    sqs = FakeSqs()
    billing = _billing(sqs, message_driven_pub_sub=MessageDrivenPubSubCompatibility())
    sqs.received.append([_control_message(headers)])

    (outcome,) = billing.process(lambda _context: pytest.fail("no handler"))

    assert outcome.pump.fate is MessageFate.PROCESSED
    (audited,) = sent_to(sqs, "DEV-audit")
    audited_headers = envelope(audited)["Headers"]
    assert audited_headers["NServiceBus.ControlMessage"] == "True"
    assert audited_headers["NServiceBus.ProcessingEndpoint"] == "Billing"
    assert audited_headers["NServiceBus.TimeSent"] == "2024-05-06 07:08:09:000000 Z"
    assert envelope(audited)["Body"] == "empty message"


def test_a_retry_the_endpoint_acknowledges_is_marked_on_the_audit_copy() -> None:
    sqs = FakeSqs()
    billing = _billing(sqs)
    received = _from_sales(sqs)
    wrapped = envelope({"MessageBody": received["Body"]})
    wrapped["Headers"]["ServiceControl.Retry.UniqueMessageId"] = "u"
    wrapped["Headers"]["ServiceControl.Retry.AcknowledgementQueue"] = "error"
    received["Body"] = json.dumps(wrapped)
    sqs.received.append([received])

    billing.process(lambda _context: None)

    (audited,) = sent_to(sqs, "DEV-audit")
    assert envelope(audited)["Headers"]["ServiceControl.Retry.AcknowledgementSent"] == "true"
    (acknowledgement,) = sent_to(sqs, "DEV-error")
    assert envelope(acknowledgement)["Headers"]["ServiceControl.Retry.UniqueMessageId"] == "u"


def test_an_unwrapped_message_audited_by_a_wrapping_endpoint_keeps_its_stale_headers_attribute() -> (
    None
):
    """The audit copy keeps the incoming id, so the dispatcher copies the received attributes —
    the sender's ``NServiceBus.AmazonSQS.Headers`` among them — onto the wrapped copy. The audit
    instance reads that attribute first: the copy it sees has none of the audit metadata."""
    sqs = FakeSqs()
    billing = _billing(sqs)
    sqs.received.append([_from_sales(sqs, wrap_outgoing_messages=False)])

    billing.process(lambda _context: None)

    (audited,) = sent_to(sqs, "DEV-audit")
    stale = json.loads(str(attribute(audited, "NServiceBus.AmazonSQS.Headers")))
    assert "NServiceBus.ProcessingEndpoint" not in stale
    assert envelope(audited)["Headers"]["NServiceBus.ProcessingEndpoint"] == "Billing"


def test_a_time_sent_core_cannot_read_fails_the_message() -> None:
    """``ProcessingStatisticsBehavior`` parses ``NServiceBus.TimeSent`` before anything else."""
    sqs = FakeSqs()
    billing = _billing(sqs)
    received = _from_sales(sqs)
    wrapped = envelope({"MessageBody": received["Body"]})
    wrapped["Headers"]["NServiceBus.TimeSent"] = "yesterday"
    received["Body"] = json.dumps(wrapped)
    sqs.received.append([received])

    (outcome,) = billing.process(lambda _context: pytest.fail("not reached"))

    assert outcome.pump.fate is MessageFate.RETRY_REQUIRED
    assert "not recognized as a valid DateTime" in str(outcome.pump.error)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [((" ",), "address"), (("audit", timedelta(seconds=-1)), "time_to_be_received")],
)
def test_the_settings_refuse_what_core_refuses(arguments: tuple[Any, ...], field: str) -> None:
    with pytest.raises(AuditSettingsError, match=f"AuditSettings.{field}"):
        AuditSettings(*arguments)
