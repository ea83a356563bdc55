"""The conversation on the deployed example: Shipping (Sales account) asks Billing through the
account bridge and gets its reply; a publish to OrderBilled reports what moto did with it."""

from __future__ import annotations

from typing import Any

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import LambdaPoller
from local_aws.traffic import (
    SUBSCRIPTION_MISSING,
    SubscriptionOutcome,
    TrafficError,
    TrafficResult,
    request_and_reply,
    run_traffic,
)
from stacks.app_builder import topology_from_context
from stacks.topology import parse_topology

pytestmark = [pytest.mark.moto, pytest.mark.synth]

SALES = "111111111111"
BILLING = "222222222222"
SHIPPING_ARN = f"arn:aws:sqs:us-east-1:{SALES}:Shipping"
BILLING_ARN = f"arn:aws:sqs:us-east-1:{BILLING}:Billing"


@pytest.fixture(scope="module")
def traffic(example_deployment: dict[str, AccountCredentials], moto_endpoint: str) -> TrafficResult:
    return run_traffic(topology_from_context(None), example_deployment, moto_endpoint)


def test_the_request_goes_from_the_shadow_queue_to_billing_through_both_relays(
    traffic: TrafficResult,
) -> None:
    request = traffic.request
    assert (request.sent_to, request.received_on) == (
        f"arn:aws:sqs:us-east-1:{SALES}:Billing",
        BILLING_ARN,
    )
    assert [name.split("-")[:2] for name in request.relayed_by] == [
        ["Messaging", "Sales"],
        ["Messaging", "Billing"],
    ]


def test_the_request_arrives_with_the_shipping_queue_arn_in_place_of_its_address(
    traffic: TrafficResult,
) -> None:
    assert traffic.request.arn_header == {
        "NServiceBus.ReplyToAddress": SHIPPING_ARN,
        "NServiceBus.OriginatingEndpoint": SHIPPING_ARN,
    }


def test_the_reply_goes_back_to_the_shipping_queue_through_both_relays(
    traffic: TrafficResult,
) -> None:
    reply = traffic.reply
    assert (reply.sent_to, reply.received_on) == (
        f"arn:aws:sqs:us-east-1:{BILLING}:Shipping",
        SHIPPING_ARN,
    )
    assert reply.arn_header == {
        "NServiceBus.ReplyToAddress": BILLING_ARN,
        "NServiceBus.OriginatingEndpoint": BILLING_ARN,
    }


def test_publishing_order_billed_reports_that_moto_holds_neither_subscription(
    traffic: TrafficResult,
) -> None:
    publication = traffic.publication
    assert publication is not None
    assert publication.topic_arn == f"arn:aws:sns:us-east-1:{BILLING}:OrderBilled"
    assert publication.subscriptions == (
        SubscriptionOutcome(
            "Sales",
            "sqs",
            f"arn:aws:sqs:us-east-1:{SALES}:Sales",
            in_local_aws=False,
            delivered=False,
            note=SUBSCRIPTION_MISSING + "; nothing arrived in the queue",
        ),
        SubscriptionOutcome(
            "PartnerWebhook",
            "https",
            "https://partner.example.com/sns/order-billed",
            in_local_aws=False,
            delivered=None,
            note=SUBSCRIPTION_MISSING,
        ),
    )


def test_the_printed_lines_name_both_messages_and_the_publication(
    traffic: TrafficResult,
) -> None:
    text = "\n".join(traffic.lines())
    assert traffic.request.message_id in text
    assert traffic.reply.message_id in text
    assert traffic.publication is not None
    assert traffic.publication.message_id in text


def test_a_route_without_a_relayed_way_back_is_refused_naming_the_fix(
    document: dict[str, Any],
) -> None:
    document["routes"] = [r for r in document["routes"] if r.get("from") != "Billing"]
    topology = parse_topology(document)

    with pytest.raises(TrafficError) as refused:
        request_and_reply(topology, {}, LambdaPoller([], "http://127.0.0.1:1"))

    assert str(refused.value) == (
        "request: the topology has no relay route from any endpoint to any endpoint with a "
        'relayed route back; add both to routes[] with "relay": true'
    )


def test_relays_still_busy_when_the_rounds_run_out_fail_the_leg_they_carry(
    example_deployment: dict[str, AccountCredentials], moto_endpoint: str
) -> None:
    # In one round the Sales relays run before the Billing ones (mappings go in ARN order),
    # so the reply is still in Sales' ingress queue when the round ends.
    poller = LambdaPoller(list(example_deployment.values()), moto_endpoint)

    with pytest.raises(TrafficError) as stuck:
        request_and_reply(topology_from_context(None), example_deployment, poller, max_rounds=1)

    assert str(stuck.value).startswith(
        "reply: the relays did not come to rest: queues still held messages after 1 rounds: "
        f"arn:aws:sqs:us-east-1:{SALES}:"
    )
    poller.pump()
    poller.client(example_deployment["Sales"], "sqs").purge_queue(
        QueueUrl=poller.queue_url(SHIPPING_ARN)
    )
