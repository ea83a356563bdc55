"""The account bridge end to end in moto: Sales (111111111111) and Billing (222222222222).

Each relay runs in-process on what moto returns: a batch is received from the relay's queue
with boto3, turned into the event Lambda would build, handed to the handler, and the messages
not reported failed are deleted (see ``poll`` in the conftest). The relays send with their own
boto3 clients; moto's per-account state is reached through the ``x-moto-account-id`` header
that the ``moto_aws`` fixture sets from each call's queue URL, because moto does not route
cross-account calls by itself.

Queues, per test (``<id>`` keeps names unique)::

    Sales account                              Billing account
    Sales-<id>          endpoint queue         Billing-<id>          endpoint queue
    Billing-<id>        shadow of Billing  ->  Billing-<id>-ingress  -> Billing-<id>
    Sales-<id>-ingress  -> Sales-<id>      <-  Sales-<id>            shadow of Sales

Every shadow and ingress queue has a dead-letter queue ``<name>-dlq`` in its redrive policy.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, decode
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE
from cross_account_runtime.relay import lambda_handler
from cross_account_runtime.relay.processor import Relay
from cross_account_runtime.relay.send_requests import MAX_MESSAGE_BYTES, REJECTION_ATTRIBUTE
from tests.runtime.relay.conftest import (
    BILLING_ACCOUNT,
    SALES_ACCOUNT,
    Queue,
    body_headers,
    create_queue,
    lambda_event,
    message_lines,
    poll,
    receive,
    relay_config,
    relay_environment,
    request_headers,
    route,
    send_to,
    to_released,
    with_dead_letter,
    wrapped_body,
)

pytestmark = [pytest.mark.moto, pytest.mark.usefixtures("moto_aws")]


@dataclass
class Bridge:
    """Both accounts' queues and relays for one request/reply conversation."""

    sales: Queue
    billing: Queue
    billing_shadow: Queue
    billing_shadow_dlq: Queue
    billing_ingress: Queue
    sales_shadow: Queue
    sales_ingress: Queue
    sales_outbound: Relay
    billing_inbound: Relay
    billing_outbound: Relay
    sales_inbound: Relay

    @property
    def sales_address(self) -> str:
        return self.sales.name

    @property
    def billing_address(self) -> str:
        return self.billing.name


@pytest.fixture
def bridge() -> Bridge:
    suffix = uuid.uuid4().hex[:8]
    sales_name, billing_name = f"Sales-{suffix}", f"Billing-{suffix}"
    sales = create_queue(SALES_ACCOUNT, sales_name)
    billing = create_queue(BILLING_ACCOUNT, billing_name)
    billing_shadow, billing_shadow_dlq = with_dead_letter(SALES_ACCOUNT, billing_name)
    sales_ingress, sales_ingress_dlq = with_dead_letter(SALES_ACCOUNT, f"{sales_name}-ingress")
    sales_shadow, sales_shadow_dlq = with_dead_letter(BILLING_ACCOUNT, sales_name)
    billing_ingress, billing_ingress_dlq = with_dead_letter(
        BILLING_ACCOUNT, f"{billing_name}-ingress"
    )
    return Bridge(
        sales=sales,
        billing=billing,
        billing_shadow=billing_shadow,
        billing_shadow_dlq=billing_shadow_dlq,
        billing_ingress=billing_ingress,
        sales_shadow=sales_shadow,
        sales_ingress=sales_ingress,
        sales_outbound=Relay(
            relay_config(
                "outbound",
                {billing_shadow.arn: route(billing_ingress, billing_shadow_dlq)},
                [sales_name],
            )
        ),
        billing_inbound=Relay(
            relay_config(
                "inbound",
                {billing_ingress.arn: to_released(billing, billing_ingress_dlq)},
                # Sales through its shadow in Billing's account, of the same name.
                reachable=(sales, billing),
            )
        ),
        billing_outbound=Relay(
            relay_config(
                "outbound",
                {sales_shadow.arn: route(sales_ingress, sales_shadow_dlq)},
                [billing_name],
            )
        ),
        sales_inbound=Relay(
            relay_config(
                "inbound",
                # Sales does not wrap (DoNotWrapOutgoingMessages), as Billing's reply.
                {sales_ingress.arn: to_released(sales, sales_ingress_dlq, form="attribute")},
                reachable=(sales, billing),
            )
        ),
    )


def relay_all(queue: Queue, relay: Any) -> None:
    """Poll until ``queue`` is empty, requiring every message to be acknowledged."""
    while (invocation := poll(queue, relay)).received:
        assert invocation.failed_ids == []


def only_message(queue: Queue) -> dict[str, Any]:
    messages = receive(queue, wait=True)
    assert len(messages) == 1, messages
    return messages[0]


def test_a_request_and_its_reply_cross_the_accounts_through_the_relays(bridge: Bridge) -> None:
    # Sales, a released endpoint, sends to "Billing" in its own account: the shadow queue.
    request = request_headers(
        reply_to=bridge.sales_address,
        **{"NServiceBus.OriginatingEndpoint": bridge.sales_address},
    )
    send_to(bridge.billing_shadow, wrapped_body(request, '{"OrderId":42}'))

    relay_all(bridge.billing_shadow, bridge.sales_outbound)
    relay_all(bridge.billing_ingress, bridge.billing_inbound)

    received = only_message(bridge.billing)
    headers = body_headers(received["Body"])
    assert parse_queue_arn(bridge.billing.arn).account == BILLING_ACCOUNT
    assert decode(headers[ARN_HEADER]) == {"NServiceBus.ReplyToAddress": bridge.sales.arn}
    assert headers["NServiceBus.OriginatingEndpoint"] == bridge.sales_address
    assert json.loads(received["Body"])["Body"] == json.loads(wrapped_body(request))["Body"]

    # Billing, released too, replies by name in its own account to the address it was given:
    # the shadow of Sales there.
    assert headers["NServiceBus.ReplyToAddress"] == bridge.sales_shadow.name
    assert parse_queue_arn(bridge.sales_shadow.arn).account == BILLING_ACCOUNT
    reply = {
        "NServiceBus.MessageId": str(uuid.uuid4()),
        "NServiceBus.MessageIntent": "Reply",
        "NServiceBus.CorrelationId": request["NServiceBus.MessageId"],
        "NServiceBus.ReplyToAddress": bridge.billing_address,
        "NServiceBus.OriginatingEndpoint": bridge.billing_address,
        "NServiceBus.EnclosedMessageTypes": "Billing.Messages.OrderBilled",
    }
    send_to(
        bridge.sales_shadow,
        '{"OrderId":42,"Amount":"99.50"}',
        MessageAttributes={
            HEADERS_ATTRIBUTE: {"DataType": "String", "StringValue": json.dumps(reply)},
            "Tenant": {"DataType": "String", "StringValue": "acme"},
        },
    )

    relay_all(bridge.sales_shadow, bridge.billing_outbound)
    relay_all(bridge.sales_ingress, bridge.sales_inbound)

    answer = only_message(bridge.sales)
    assert answer["Body"] == '{"OrderId":42,"Amount":"99.50"}'
    assert answer["MessageAttributes"]["Tenant"]["StringValue"] == "acme"
    reply_headers = json.loads(answer["MessageAttributes"][HEADERS_ATTRIBUTE]["StringValue"])
    assert reply_headers["NServiceBus.CorrelationId"] == request["NServiceBus.MessageId"]
    assert reply_headers["NServiceBus.ReplyToAddress"] == bridge.billing_shadow.name
    assert decode(reply_headers[ARN_HEADER])["NServiceBus.ReplyToAddress"] == bridge.billing.arn
    for queue in (bridge.billing_shadow, bridge.billing_ingress, bridge.sales_shadow):
        assert receive(queue) == []


def test_a_relay_retry_creates_no_duplicate_on_fifo_queues() -> None:
    suffix = uuid.uuid4().hex[:8]
    shadow, shadow_dlq = with_dead_letter(SALES_ACCOUNT, f"Billing-{suffix}.fifo")
    ingress = create_queue(BILLING_ACCOUNT, f"Billing-{suffix}-ingress.fifo")
    relay = Relay(
        relay_config(
            "outbound",
            {shadow.arn: route(ingress, shadow_dlq)},
            ["Sales.fifo"],
        )
    )
    for number in range(3):
        send_to(
            shadow,
            wrapped_body(request_headers(), f'{{"Line":{number}}}'),
            MessageGroupId="order-42",
            MessageDeduplicationId=f"line-{number}",
        )
    messages = receive(shadow)
    event = lambda_event(messages, shadow)

    # The invocation is repeated, as after a crash before Lambda deleted the batch.
    assert relay(event, None) == {"batchItemFailures": []}
    assert relay(event, None) == {"batchItemFailures": []}

    forwarded = receive(ingress)
    assert [json.loads(m["Body"])["Body"] for m in forwarded] == [
        json.loads(wrapped_body({}, f'{{"Line":{number}}}'))["Body"] for number in range(3)
    ]
    assert {m["Attributes"]["MessageGroupId"] for m in forwarded} == {"order-42"}


@pytest.mark.usefixtures("fresh_default_relay")
def test_a_malformed_arn_header_goes_straight_to_the_dead_letter_queue_with_its_reason(
    bridge: Bridge,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Through the Lambda entry point, configured from its file and the environment."""
    environment = relay_environment(
        tmp_path,
        "outbound",
        {bridge.billing_shadow.arn: route(bridge.billing_ingress, bridge.billing_shadow_dlq)},
        [bridge.sales_address],
    )
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    body = wrapped_body(request_headers(**{ARN_HEADER: "NServiceBus.ReplyToAddress===x"}))
    message_id = send_to(bridge.billing_shadow, body)

    invocation = poll(bridge.billing_shadow, lambda_handler.handler)

    assert invocation.failed_ids == []
    assert receive(bridge.billing_shadow) == []
    assert receive(bridge.billing_ingress) == []
    dead = only_message(bridge.billing_shadow_dlq)
    assert dead["Body"] == body
    rejection = json.loads(dead["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"])
    assert rejection["kind"] == "malformed_arn_header"
    assert rejection["sourceMessageId"] == message_id
    assert rejection["sourceQueue"] == bridge.billing_shadow.arn
    [line] = message_lines(capsys.readouterr().out, message_id)
    assert line["outcome"] == "dead_lettered"
    assert line["sent_message_id"] == dead["MessageId"]
    assert line["reason"].startswith(f"{ARN_HEADER} header, position ")


def test_a_message_too_large_once_stamped_goes_to_the_dead_letter_queue(
    bridge: Bridge, capsys: pytest.CaptureFixture[str]
) -> None:
    headers = request_headers(
        reply_to=bridge.sales_address,
        **{"NServiceBus.OriginatingEndpoint": bridge.sales_address},
    )
    empty = json.dumps({"Headers": headers, "Body": "", "S3BodyKey": None})
    body = empty.replace(
        '"Body": ""', '"Body": "' + "A" * (MAX_MESSAGE_BYTES - len(empty) - 10) + '"'
    )
    assert len(body) == MAX_MESSAGE_BYTES - 10
    message_id = send_to(bridge.billing_shadow, body)

    assert poll(bridge.billing_shadow, bridge.sales_outbound).failed_ids == []

    assert receive(bridge.billing_ingress) == []
    dead = only_message(bridge.billing_shadow_dlq)
    assert dead["Body"] == body
    assert REJECTION_ATTRIBUTE not in dead.get("MessageAttributes", {}), (
        "the reason does not fit beside a body this large; it is in the log line"
    )
    [line] = message_lines(capsys.readouterr().out, message_id)
    assert line["kind"] == "oversize"
    assert f"over SQS's limit of {MAX_MESSAGE_BYTES}" in line["reason"]


@pytest.mark.parametrize("cause", ["no route for the queue", "destination queue missing"])
def test_an_undeliverable_message_reaches_the_dead_letter_queue_through_redrive(
    cause: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reported failed on every receive, never forwarded, never dropped: after
    maxReceiveCount receives SQS moves it to the queue's dead-letter queue, unchanged."""
    suffix = uuid.uuid4().hex[:8]
    shadow, shadow_dlq = with_dead_letter(SALES_ACCOUNT, f"Shipping-{suffix}", max_receive_count=2)
    missing = f"arn:aws:sqs:us-east-1:{BILLING_ACCOUNT}:Shipping-{suffix}-ingress"
    routed = (
        shadow
        if cause == "destination queue missing"
        else create_queue(SALES_ACCOUNT, f"Other-{suffix}")
    )
    relay = Relay(
        relay_config(
            "outbound",
            {routed.arn: {"destination": missing, "deadLetterQueue": shadow_dlq.arn}},
            ["Sales"],
        )
    )
    body = wrapped_body(request_headers())
    message_id = send_to(shadow, body)

    invocations = []
    while (invocation := poll(shadow, relay)).received:
        invocations.append(invocation)
        assert invocation.failed_ids == [message_id]
        assert len(invocations) <= 5, "SQS never moved the message"

    assert len(invocations) == 2
    dead = only_message(shadow_dlq)
    assert (dead["MessageId"], dead["Body"]) == (message_id, body)
    lines = message_lines(capsys.readouterr().out, message_id)
    assert [line["receive_count"] for line in lines] == ["1", "2"]
    if cause == "no route for the queue":
        assert {line["kind"] for line in lines} == {"unknown_route"}
        assert all(shadow.arn in line["reason"] for line in lines)
    else:
        assert {line["outcome"] for line in lines} == {"destination_missing"}
        assert all(
            "NonExistentQueue" in line["error"] or "QueueDoesNotExist" in line["error"]
            for line in lines
        )


def test_a_send_to_a_missing_queue_on_the_last_receive_is_dead_lettered_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With the queue's maxReceiveCount on the route, the relay does not leave the message to
    the redrive policy, which would move it without a word."""
    suffix = uuid.uuid4().hex[:8]
    shadow, shadow_dlq = with_dead_letter(SALES_ACCOUNT, f"Shipping-{suffix}", max_receive_count=2)
    missing = f"arn:aws:sqs:us-east-1:{BILLING_ACCOUNT}:Shipping-{suffix}-ingress"
    relay = Relay(
        relay_config(
            "outbound",
            {
                shadow.arn: {
                    "destination": missing,
                    "deadLetterQueue": shadow_dlq.arn,
                    "maxReceiveCount": 2,
                }
            },
            ["Sales"],
        )
    )
    body = wrapped_body(request_headers())
    message_id = send_to(shadow, body)

    first = poll(shadow, relay)
    second = poll(shadow, relay)

    assert (first.failed_ids, second.failed_ids) == ([message_id], [])
    assert receive(shadow) == []
    dead = only_message(shadow_dlq)
    assert dead["Body"] == body
    assert dead["MessageId"] != message_id, "sent by the relay, not moved by SQS"
    rejection = json.loads(dead["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"])
    assert rejection["kind"] == "destination_missing"
    assert rejection["sourceMessageId"] == message_id
    assert "failed on the message's last receive (ApproximateReceiveCount 2" in rejection["reason"]
    lines = message_lines(capsys.readouterr().out, message_id)
    assert [line["outcome"] for line in lines] == [
        "destination_missing",
        "destination_missing",
        "dead_lettered",
    ]
