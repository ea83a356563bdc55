"""Publish/subscribe and large messages across accounts, deployed to the local AWS and played
by the model of the released transport (Old) and the seed's ARN-aware endpoint (New).

Account PubA (A) holds the subscribers OldA and NewA, PubB (B) the publishers OldB and NewB,
and PubC the error queue (accounts of their own: the local AWS is shared by the run, and a
stack deployed twice under one name hits moto's change-set bugs). B's topics carry three
events: ``OrderBilled`` to A's queues natively (the platform subscribed them across
accounts), ``InvoiceReady`` to OldA and NewA message-driven (their subscribe messages to OldB
through the bridge, OldB's copies back), ``PaymentTaken`` from the New publisher NewB to OldA
message-driven. Bodies over 1 MiB go through each
account's body bucket, copied by the relay.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from local_aws.released_transport.core.subscription_storage import MessageType
from local_aws.scenarios.conversation import Handlers, LargeBody, carry_large_body
from local_aws.scenarios.peers import BODY_KEY_PREFIX, Peers, Subscription, event_type_name
from local_aws.scenarios.publication import MESSAGE_DRIVEN, publish
from stacks.topology import Topic, Topology, parse_topology

pytestmark = [pytest.mark.moto, pytest.mark.synth]

A, B, C = "777777777777", "888888888888", "999999999999"
ONE_AND_A_HALF_MIB = 3 * 512 * 1024
ORDER_BILLED, INVOICE_READY, PAYMENT_TAKEN = (
    "Billing.Events.OrderBilled",
    "Billing.Events.InvoiceReady",
    "Billing.Events.PaymentTaken",
)

TOPOLOGY: dict[str, Any] = {
    "accounts": [
        {"name": "PubA", "id": A, "region": "us-east-1"},
        {"name": "PubB", "id": B, "region": "us-east-1"},
        {"name": "PubC", "id": C, "region": "us-east-1"},
    ],
    "endpoints": [
        {"name": "OldA", "account": "PubA"},
        {"name": "NewA", "account": "PubA", "arnAware": True},
        {"name": "OldB", "account": "PubB"},
        {"name": "NewB", "account": "PubB", "arnAware": True},
    ],
    "errorQueue": {"name": "error", "account": "PubC"},
    "routes": [
        {"from": "OldA", "to": "OldB", "relay": True},
        {"from": "NewA", "to": "OldB", "relay": True},
    ],
    "topics": [
        {
            "eventType": ORDER_BILLED,
            "account": "PubB",
            "publishers": ["OldB"],
            "subscriptions": [
                {"name": "OldA", "protocol": "sqs", "endpoint": "OldA"},
                {"name": "NewA", "protocol": "sqs", "endpoint": "NewA"},
            ],
        },
        {
            "eventType": INVOICE_READY,
            "account": "PubB",
            "publishers": ["OldB"],
            "messageDrivenSubscribers": ["OldA", "NewA"],
        },
        {
            "eventType": PAYMENT_TAKEN,
            "account": "PubB",
            "publishers": ["NewB"],
            "messageDrivenSubscribers": ["OldA"],
        },
    ],
    "largeMessages": {"expirationDays": 2},
}


def queue_arn(account: str, name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{account}:{name}"


@pytest.fixture(scope="module")
def topology() -> Topology:
    return parse_topology(TOPOLOGY)


@pytest.fixture(scope="module")
def subscribed(peers: Peers) -> tuple[Subscription, ...]:
    """What the message-driven subscribers do at start-up, carried to the publishers."""
    done = peers.auto_subscribe()
    peers.settle()
    return done


def topic(topology: Topology, event_type: str) -> Topic:
    (found,) = [t for t in topology.topics if t.event_type == event_type and not t.anchor]
    return found


def stored(peers: Peers, publisher: str, event_type: str) -> list[tuple[str | None, str]]:
    """The publisher's subscription storage for the event: (endpoint, address) entries."""
    storage = peers.endpoints[publisher].subscription_storage
    assert storage is not None
    return [
        (s.endpoint, s.transport_address)
        for s in storage.subscribers([MessageType.parse(event_type_name(event_type))])
    ]


def test_a_native_publish_reaches_old_and_new_subscriber_queues_in_another_account_once(
    peers: Peers, handlers: Handlers, topology: Topology
) -> None:
    published = publish(peers, handlers, topic(topology, ORDER_BILLED))
    outcomes = {o.name: (o.protocol, o.account, o.handled) for o in published.subscriptions}
    assert outcomes == {"OldA": ("sqs", f"PubA ({A})", 1), "NewA": ("sqs", f"PubA ({A})", 1)}
    (seen, *_) = handlers.of_message(published.message_id)
    assert str(seen.headers["NServiceBus.EnclosedMessageTypes"]).startswith(ORDER_BILLED + ",")


def test_each_message_driven_subscribe_reaches_the_publisher_once_with_an_address_that_leads_back(
    peers: Peers, subscribed: tuple[Subscription, ...]
) -> None:
    """The hybrid subscribe succeeds natively on A's anchor topic, then the subscribe message
    crosses the bridge; OldB, released, stores names of its own account's shadows, and the
    New subscriber's ARN was translated to one on the way in."""
    assert {(s.subscriber, s.publisher) for s in subscribed} == {
        ("OldA", "OldB"),
        ("NewA", "OldB"),
        ("OldA", "NewB"),
    }
    assert sorted(stored(peers, "OldB", INVOICE_READY)) == [("NewA", "NewA"), ("OldA", "OldA")]


@pytest.mark.usefixtures("subscribed")
def test_a_new_publisher_stores_the_old_subscribers_queue_arn(peers: Peers) -> None:
    assert stored(peers, "NewB", PAYMENT_TAKEN) == [("OldA", queue_arn(A, "OldA"))]


@pytest.mark.usefixtures("subscribed")
@pytest.mark.parametrize(
    ("event_type", "subscribers"), [(INVOICE_READY, {"OldA", "NewA"}), (PAYMENT_TAKEN, {"OldA"})]
)
def test_message_driven_subscribers_handle_each_published_event_once(
    peers: Peers, handlers: Handlers, topology: Topology, event_type: str, subscribers: set[str]
) -> None:
    published = publish(peers, handlers, topic(topology, event_type))
    assert {o.name: (o.protocol, o.handled) for o in published.subscriptions} == dict.fromkeys(
        subscribers, (MESSAGE_DRIVEN, 1)
    )
    assert sorted(d.endpoint for d in handlers.of_message(published.message_id)) == sorted(
        subscribers
    )


@pytest.mark.usefixtures("subscribed")
def test_an_event_over_1_mib_reaches_message_driven_subscribers_in_another_account(
    peers: Peers, handlers: Handlers, topology: Topology
) -> None:
    """OldB's copies go over SQS, so its transport puts the body in B's bucket; the relay
    copies it into A's, where OldA and NewA read it."""
    body = json.dumps({"pdf": "x" * ONE_AND_A_HALF_MIB}).encode()
    published = publish(peers, handlers, topic(topology, INVOICE_READY), body)
    deliveries = handlers.of_message(published.message_id)
    assert sorted(d.endpoint for d in deliveries) == ["NewA", "OldA"]
    assert all(d.body == body for d in deliveries)


def bucket_keys(peers: Peers, account: str, bucket: str) -> set[str]:
    s3 = peers.poller.client(peers.accounts[account], "s3")
    return {o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}


@pytest.mark.parametrize("sender", ["OldA", "NewA"])
def test_a_body_over_1_mib_crosses_from_either_sender_kind_and_is_read_in_the_receivers_bucket(
    peers: Peers, handlers: Handlers, sender: str
) -> None:
    large: LargeBody = carry_large_body(peers, handlers, sender, "OldB", ONE_AND_A_HALF_MIB)
    assert len(large.delivery.body) == ONE_AND_A_HALF_MIB
    assert large.key in bucket_keys(peers, "PubA", large.sender_bucket)
    assert large.receiver_key in bucket_keys(peers, "PubB", large.receiver_bucket)
    assert large.receiver_key.startswith(f"relay/{A}/")
    assert large.receiver_bucket == f"messaging-bodies-{B}-us-east-1"


def test_a_body_gone_from_the_senders_bucket_sends_the_message_to_the_dead_letter_queue_with_the_reason(
    peers: Peers, handlers: Handlers, topology: Topology
) -> None:
    sent = peers.endpoints["OldA"].send(
        "OldB", "Tests.Attachment, Tests", b"y" * ONE_AND_A_HALF_MIB
    )
    bucket = topology.body_bucket("PubA")
    assert bucket is not None
    s3 = peers.poller.client(peers.accounts["PubA"], "s3")
    s3.delete_object(Bucket=bucket, Key=f"{BODY_KEY_PREFIX}/{sent.message_id}")
    peers.settle()
    assert handlers.delivered("OldB", sent.message_id) is None
    sqs = peers.poller.client(peers.accounts["PubA"], "sqs")
    url = sqs.get_queue_url(QueueName="OldB-dlq")["QueueUrl"]
    messages = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", [])
    rejections = [
        json.loads(m["MessageAttributes"]["Relay.Rejection"]["StringValue"]) for m in messages
    ]
    assert [r["kind"] for r in rejections] == ["body_missing"]
    assert rejections[0]["reason"].startswith(
        f"the body s3://{bucket}/{BODY_KEY_PREFIX}/{sent.message_id} does not exist"
    )
