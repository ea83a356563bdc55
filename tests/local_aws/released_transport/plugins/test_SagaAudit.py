# ruff: noqa: N802, N999 -- module and test names are the upstream tests', for traceability
"""NServiceBus.SagaAudit 6.0.1 ``src/NServiceBus.SagaAudit.Tests/``: ``MessageSerialization.cs``
(the approval file, byte for byte), ``When_a_message_triggers_multiple_saga_invocations.cs``,
``When_a_message_with_proper_headers_arrive.cs`` and ``When_a_message_with_no_headers_arrive.cs``;
then what the plugin does around a handler that ran as a saga (``CaptureSagaStateBehavior.cs``,
``CaptureSagaResultingMessagesBehavior.cs``, ``AuditInvokedSagaBehavior.cs``,
``ServiceControlBackend.cs``), on the test doubles."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from local_aws.released_transport.core.audit import AuditSettings
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.headers import HeaderDict
from local_aws.released_transport.plugins.saga_audit import (
    SagaAuditSettings,
    SagaAuditStartupError,
    SagaChangeOutput,
    SagaInvocation,
    add_invoked_saga,
    saga_change_initiator,
    saga_updated_body,
)
from local_aws.released_transport.transport.receiving.input_pump import MessageFate
from tests.local_aws.released_transport.fake_sns import FakeSns
from tests.local_aws.released_transport.fake_sqs import FakeSqs
from tests.local_aws.released_transport.fake_wire import as_received, envelope, sent_to

APPROVALS = Path(__file__).parent / "approvals"
EMPTY_GUID = "00000000-0000-0000-0000-000000000000"
WHEN = datetime(2017, 10, 30, 9, 22, 17, tzinfo=UTC)
SAGA_ID = "51b5ad68-8ac4-46ee-a39c-a79900ca4ea8"
START = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
ORDER = "Sales.PlaceOrder, Sales, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"


def test_SagaUpdated_serializes_correctly() -> None:
    body = saga_updated_body(
        SagaInvocation("SagaType", EMPTY_GUID, "SagaState", is_new=True, is_completed=True),
        {
            "InitiatingMessageId": "InitiatingMessageId",
            "MessageType": "MessageType",
            "IsSagaTimeoutMessage": True,
            "TimeSent": "2017-10-30T09:22:17Z",
            "OriginatingMachine": "OriginatingMachine",
            "OriginatingEndpoint": "OriginatingEndpoint",
            "Intent": "intent",
        },
        [
            SagaChangeOutput(
                "MessageType",
                WHEN,
                timedelta(seconds=4000),
                "Destination",
                "ResultingMessageId",
                "Intent",
            )
        ],
        endpoint="Endpoint",
        start_time=WHEN,
        finish_time=WHEN,
    )

    approved = APPROVALS / "MessageSerialization.SagaUpdated_serializes_correctly.approved.txt"
    expected = json.loads(approved.read_text())
    # The approval's DeliveryAt comes from DoNotDeliverBefore, which the model's sends never set.
    expected["ResultingMessages"][0]["DeliveryAt"] = None
    assert json.loads(body) == expected
    assert body.replace(b'"DeliveryAt":null', b'"DeliveryAt":"2017-10-30T09:22:17Z"') == (
        approved.read_bytes()
    )


def test_It_should_store_all_ids_in_the_header() -> None:
    headers: HeaderDict = {}
    saga_type = (
        "NServiceBus.SagaAudit.Tests.When_a_message_triggers_multiple_saga_invocations+MySaga"
    )

    add_invoked_saga(headers, saga_type, EMPTY_GUID)
    add_invoked_saga(headers, saga_type, EMPTY_GUID)

    assert (
        headers["NServiceBus.InvokedSagas"] == f"{saga_type}:{EMPTY_GUID};{saga_type}:{EMPTY_GUID}"
    )


def test_Saga_state_change_message_can_be_created_from_proper_headers() -> None:
    headers = {
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.TimeSent": "2015-01-27 18:13:08:723699 Z",
        "NServiceBus.OriginatingMachine": "MACHINE",
        "NServiceBus.OriginatingEndpoint": "NServiceBus.SagaAudit.Sample",
        "NServiceBus.IsSagaTimeoutMessage": "true",
    }

    initiator = saga_change_initiator(headers, "id", "Message1")

    assert initiator["OriginatingEndpoint"] == "NServiceBus.SagaAudit.Sample"
    assert initiator["OriginatingMachine"] == "MACHINE"
    assert initiator["IsSagaTimeoutMessage"] is True
    assert initiator["TimeSent"] == "2015-01-27T18:13:08.723699Z"


def test_Saga_state_change_message_can_be_created_without_headers() -> None:
    initiator = saga_change_initiator({}, "id", "SomeMessage")

    assert initiator["OriginatingEndpoint"] is None
    assert initiator["OriginatingMachine"] is None
    assert initiator["IsSagaTimeoutMessage"] is False
    assert initiator["TimeSent"] == "0001-01-01T00:00:00Z"
    assert initiator["Intent"] == "Send"


def _endpoint(sqs: FakeSqs, **settings: object) -> ReleasedEndpoint:
    """Sales, auditing saga changes to ``audit``, with its ``Sales.OrderSaga`` unless
    ``settings`` say otherwise."""
    options: dict[str, object] = {"sagas": ("Sales.OrderSaga",), **settings}
    endpoint = ReleasedEndpoint(
        "Sales",
        sqs,
        EndpointSettings(
            disable_unrestricted_delayed_delivery=True,
            machine_name="MACHINE",
            saga_audit=SagaAuditSettings("audit"),
            clock=lambda: START,
            **options,  # type: ignore[arg-type]
        ),
        sns=FakeSns(),
    )
    endpoint.start()
    return endpoint


def _incoming(sqs: FakeSqs) -> dict[str, object]:
    ReleasedEndpoint("Billing", sqs, EndpointSettings(clock=lambda: START)).send(
        "Sales", ORDER, b"{}"
    )
    return as_received(sent_to(sqs, "Sales")[-1])


def test_the_start_up_check_sends_a_control_message_and_a_failure_stops_the_start() -> None:
    sqs = FakeSqs()
    _endpoint(sqs)
    (check,) = sent_to(sqs, "audit")
    assert envelope(check)["Headers"]["NServiceBus.ControlMessage"] == "True"
    assert envelope(check)["Headers"]["NServiceBus.ReplyToAddress"] == "Sales"
    assert envelope(check)["Body"] == "empty message"

    missing = FakeSqs()
    missing.missing_queues.add("audit")
    with pytest.raises(SagaAuditStartupError, match="unable to contact the ServiceControl"):
        _endpoint(missing)


def test_a_saga_handler_sends_its_update_at_once_and_marks_the_incoming_headers() -> None:
    sqs = FakeSqs()
    sales = _endpoint(sqs, audit=AuditSettings("audit"))
    sqs.received.append([_incoming(sqs)])

    def handle(context: MessageHandlerContext) -> None:
        context.handled_by_saga("Sales.OrderSaga", SAGA_ID, '{"OrderId":1}', is_new=True)
        context.send("Shipping", "Sales.ShipOrder, Sales", b"{}", delay=timedelta(minutes=5))
        context.publish("Sales.OrderAccepted, Sales", b"{}")

    (outcome,) = sales.process(handle)

    assert outcome.pump.fate is MessageFate.PROCESSED
    _check, update, audited = sent_to(sqs, "audit")
    headers = envelope(update)["Headers"]
    assert headers["NServiceBus.EnclosedMessageTypes"] == (
        "ServiceControl.EndpointPlugin.Messages.SagaState.SagaUpdatedMessage"
    )
    assert headers["NServiceBus.AmazonSQS.TimeToBeReceived"] == "10675199.02:48:05.4775807"
    assert outcome.message is not None
    assert update["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] != (
        outcome.message.message_id
    )
    body = json.loads(_body(update))
    assert body["SagaId"] == SAGA_ID
    assert body["SagaType"] == "Sales.OrderSaga"
    assert body["SagaState"] == '{"OrderId":1}'
    assert body["IsNew"] is True
    assert body["Endpoint"] == "Sales"
    assert body["Initiator"]["MessageType"] == "Sales.PlaceOrder"
    assert body["Initiator"]["OriginatingEndpoint"] == "Billing"
    shipped, published = body["ResultingMessages"]
    assert (shipped["MessageType"], shipped["Destination"], shipped["DeliveryDelay"]) == (
        "Sales.ShipOrder",
        "Shipping",
        "00:05:00",
    )
    assert (published["Intent"], published["Destination"]) == ("Publish", None)
    audited_headers = envelope(audited)["Headers"]
    assert audited_headers["NServiceBus.InvokedSagas"] == f"Sales.OrderSaga:{SAGA_ID}"
    assert audited_headers["ServiceControl.SagaStateChange"] == f"{SAGA_ID}:New"


def _body(entry: dict[str, object]) -> str:
    return base64.b64decode(envelope(entry)["Body"]).decode()


def test_the_update_is_sent_even_when_the_handlers_own_dispatch_then_fails() -> None:
    sqs = FakeSqs()
    sqs.missing_queues.add("Nowhere")
    sales = _endpoint(sqs)
    sqs.received.append([_incoming(sqs)])

    def handle(context: MessageHandlerContext) -> None:
        context.handled_by_saga("Sales.OrderSaga", SAGA_ID, "{}", is_completed=True)
        context.send("Nowhere", "Sales.ShipOrder, Sales", b"{}")

    (outcome,) = sales.process(handle)

    assert outcome.pump.fate is MessageFate.RETRY_REQUIRED
    _check, update = sent_to(sqs, "audit")
    assert json.loads(_body(update))["IsCompleted"] is True


def test_without_a_saga_nothing_is_sent_and_no_header_is_added() -> None:
    sqs = FakeSqs()
    sales = _endpoint(sqs)
    sqs.received.append([_incoming(sqs)])

    (outcome,) = sales.process(lambda _context: None)

    assert len(sent_to(sqs, "audit")) == 1
    assert outcome.message is not None
    assert "NServiceBus.InvokedSagas" not in outcome.message.headers


def test_an_endpoint_without_sagas_never_starts_saga_audit_and_sends_no_start_up_check() -> None:
    """``SagaAuditFeature`` depends on core's ``Sagas`` feature, which needs a registered saga:
    ``AuditSagaStateChanges`` alone enables nothing on an endpoint without one."""
    sqs = FakeSqs()
    sales = _endpoint(sqs, sagas=())
    assert sales.saga_audit is None
    assert sent_to(sqs, "audit") == []

    missing = FakeSqs()
    missing.missing_queues.add("audit")
    assert _endpoint(missing, sagas=()).saga_audit is None


def test_a_handler_cannot_run_as_a_saga_its_endpoint_does_not_register() -> None:
    sqs = FakeSqs()
    sales = _endpoint(sqs)
    sqs.received.append([_incoming(sqs)])

    def handle(context: MessageHandlerContext) -> None:
        context.handled_by_saga("Sales.ShippingSaga", SAGA_ID, "{}", is_new=True)

    (outcome,) = sales.process(handle)

    assert outcome.pump.fate is MessageFate.RETRY_REQUIRED
    assert len(sent_to(sqs, "audit")) == 1
