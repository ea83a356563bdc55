"""The relay's ``SendMessageBatch`` calls against moto in server mode: one call per ten
messages and per destination, a call that fails as a whole, interleaved FIFO groups, and
messages whose sizes add up past 1 MiB.

Each test relays one invocation of up to a hundred messages from a shadow queue in Sales'
account to Billing's ingress queue (and poison ones to the shadow's dead-letter queue); the
calls are counted with a ``provide-client-params`` hook on the session the relay's clients come from.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER
from cross_account_runtime.relay.processor import Relay
from tests.runtime.relay.conftest import (
    BILLING_ACCOUNT,
    SALES_ACCOUNT,
    Queue,
    account_sqs,
    body_headers,
    lambda_event,
    receive,
    relay_config,
    request_headers,
    route,
    send_to,
    with_dead_letter,
    wrapped_body,
)

pytestmark = [pytest.mark.moto, pytest.mark.usefixtures("moto_aws")]


class Calls:
    """``SendMessageBatch`` calls made through the default session, by queue URL."""

    def __init__(self) -> None:
        self.made: list[tuple[str, int]] = []

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        self.made.append((params["QueueUrl"], len(params["Entries"])))


@pytest.fixture
def calls() -> Iterator[Calls]:
    counter = Calls()
    session = boto3.DEFAULT_SESSION
    assert session is not None
    session.events.register("provide-client-params.sqs.SendMessageBatch", counter)
    yield counter
    session.events.unregister("provide-client-params.sqs.SendMessageBatch", counter)


def shadow_and_ingress(fifo: bool = False) -> tuple[Queue, Queue, Queue, Relay]:
    """A shadow of Billing in Sales' account, its DLQ, Billing's ingress queue, the relay."""
    suffix = ".fifo" if fifo else ""
    name = f"Billing-{uuid.uuid4().hex[:8]}"
    shadow, dead_letter = with_dead_letter(SALES_ACCOUNT, name + suffix)
    ingress, _ = with_dead_letter(BILLING_ACCOUNT, f"{name}-ingress{suffix}")
    relay = Relay(relay_config("outbound", {shadow.arn: route(ingress, dead_letter)}, ["Sales"]))
    return shadow, dead_letter, ingress, relay


def receive_all(queue: Queue, expected: int) -> list[dict[str, Any]]:
    """Receive (and delete) until ``expected`` messages came, or the queue ran dry."""
    found: list[dict[str, Any]] = []
    client = account_sqs(queue.arn.split(":")[4])
    while len(found) < expected and (batch := receive(queue)):
        found += batch
        for message in batch:
            client.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    return found


def invoke(relay: Relay, shadow: Queue, count: int) -> tuple[list[str], list[str]]:
    """Receive ``count`` messages from ``shadow`` into one event (as a batching window would)
    and invoke the relay: (received ids, ids reported failed)."""
    messages = receive_all(shadow, count)
    assert len(messages) == count
    response = relay(lambda_event(messages, shadow), None)
    return (
        [m["MessageId"] for m in messages],
        [item["itemIdentifier"] for item in response["batchItemFailures"]],
    )


def nservicebus_id(body: str) -> str:
    return body_headers(body)["NServiceBus.MessageId"]


@pytest.mark.parametrize(("count", "expected_calls"), [(10, 1), (100, 10), (25, 3)])
def test_messages_to_one_queue_go_ten_to_a_call(
    calls: Calls, count: int, expected_calls: int
) -> None:
    shadow, _, ingress, relay = shadow_and_ingress()
    for _ in range(count):
        send_to(shadow, wrapped_body(request_headers()))

    _, failed = invoke(relay, shadow, count)

    assert failed == []
    assert len(calls.made) == expected_calls
    assert len(receive_all(ingress, count)) == count


def test_a_batch_with_poison_messages_makes_one_call_to_each_destination(calls: Calls) -> None:
    shadow, dead_letter, ingress, relay = shadow_and_ingress()
    for n in range(10):
        headers = request_headers(**({ARN_HEADER: "a===b"} if n % 5 == 4 else {}))
        send_to(shadow, wrapped_body(headers))

    _, failed = invoke(relay, shadow, 10)

    assert failed == []
    assert sorted(n for _, n in calls.made) == [2, 8]
    assert len(receive_all(ingress, 8)) == 8
    assert len(receive_all(dead_letter, 2)) == 2


def test_a_call_that_fails_as_a_whole_fails_exactly_its_messages(calls: Calls) -> None:
    """Billing's ingress queue is gone: the forwards fail, the dead-letter send does not."""
    shadow, dead_letter, ingress, relay = shadow_and_ingress()
    sent = [
        send_to(shadow, wrapped_body(request_headers(**({ARN_HEADER: "a===b"} if n == 0 else {}))))
        for n in range(4)
    ]
    account_sqs(BILLING_ACCOUNT).delete_queue(QueueUrl=ingress.url)

    received, failed = invoke(relay, shadow, 4)

    assert sorted(failed) == sorted(sent[1:])
    assert set(received) == set(sent)
    assert len(receive_all(dead_letter, 1)) == 1


def test_interleaved_fifo_groups_arrive_in_order_at_one_call_per_two_messages(
    calls: Calls,
) -> None:
    shadow, _, ingress, relay = shadow_and_ingress(fifo=True)
    order: dict[str, list[str]] = {"A": [], "B": []}
    for n in range(10):
        group = "AB"[n % 2]
        headers = request_headers()
        order[group].append(headers["NServiceBus.MessageId"])
        send_to(
            shadow,
            wrapped_body(headers),
            MessageGroupId=group,
            MessageDeduplicationId=f"m{n}",
        )

    _, failed = invoke(relay, shadow, 10)

    assert failed == []
    assert [n for _, n in calls.made] == [2, 2, 2, 2, 2]
    arrived = receive_all(ingress, 10)
    for group, expected in order.items():
        assert [
            nservicebus_id(m["Body"]) for m in arrived if m["Attributes"]["MessageGroupId"] == group
        ] == expected


def test_messages_adding_up_past_1_mib_are_split_over_calls(calls: Calls) -> None:
    """Three messages of 400 KB each: two fit a call (SQS counts bodies and attributes)."""
    shadow, _, ingress, relay = shadow_and_ingress()
    payload = "x" * 300_000  # base64 in the wrapped body: 400,000 bytes
    for _ in range(3):
        send_to(shadow, wrapped_body(request_headers(), payload))

    _, failed = invoke(relay, shadow, 3)

    assert failed == []
    assert [n for _, n in calls.made] == [2, 1]
    assert len(receive_all(ingress, 3)) == 3
