"""Event topics: named as the transport names them, in the publisher's account, with
message-driven subscribers routed through the bridge."""

from __future__ import annotations

from typing import Any

import pytest

from stacks.topology import parse_topology
from tests.stacks.topology.problems import problems_of

EVENT = "MyCompany.Messages.OrderBilled"


@pytest.fixture
def events(document: dict[str, Any]) -> dict[str, Any]:
    """The example with its topic declared by event type only."""
    topic = document["topics"][0]
    topic.pop("name", None)
    topic["eventType"] = EVENT
    topic.pop("messageDrivenSubscribers", None)
    return document


@pytest.fixture
def free_topic(document: dict[str, Any]) -> dict[str, Any]:
    """The example with a topic of a free name, no NServiceBus event."""
    topic = document["topics"][0]
    del topic["eventType"]
    topic.pop("messageDrivenSubscribers", None)
    topic["name"] = "OrderBilled"
    return document


def test_the_topic_is_named_as_the_transport_names_it(events: dict[str, Any]) -> None:
    topic = parse_topology(events).topics[0]
    assert (topic.name, topic.event_type) == ("MyCompany-Messages-OrderBilled", EVENT)


def test_the_topic_name_prefix_is_part_of_the_name(events: dict[str, Any]) -> None:
    events["topics"][0]["topicNamePrefix"] = "DEV."
    assert parse_topology(events).topics[0].name == "DEV-MyCompany-Messages-OrderBilled"


def test_a_name_that_differs_from_the_transports_is_refused(events: dict[str, Any]) -> None:
    events["topics"][0]["name"] = "OrderBilled"
    [(path, rule)] = problems_of(events)
    assert path == "topology.topics[0].name"
    assert "'MyCompany-Messages-OrderBilled'" in rule


def test_a_prefix_without_an_event_type_is_refused(free_topic: dict[str, Any]) -> None:
    free_topic["topics"][0]["topicNamePrefix"] = "DEV-"
    [(path, rule)] = problems_of(free_topic)
    assert (path, "add eventType" in rule) == ("topology.topics[0].topicNamePrefix", True)


@pytest.mark.parametrize(
    ("event_type", "rule"),
    [
        ("Café.Ordered", "SNS refuses"),
        ("E" * 257, "longer than 256 characters"),
        ("Envelope<OrderBilled>", "written as C# writes a generic type"),
        ("MyCompany.Messages.OrderBilled[]", "an array is never an event's type"),
        ("MyCompany.Messages.Order Billed", "no spaces"),
    ],
)
def test_event_types_the_transport_or_sns_cannot_name_are_refused(
    events: dict[str, Any], event_type: str, rule: str
) -> None:
    events["topics"][0]["eventType"] = event_type
    [(path, message)] = problems_of(events)
    assert path == "topology.topics[0].eventType"
    assert rule in message


def test_a_publisher_in_another_account_is_refused(events: dict[str, Any]) -> None:
    events["topics"][0]["publishers"] = ["Billing", "Shipping"]
    [(path, rule)] = problems_of(events)
    assert path == "topology.topics[0].publishers[1]"
    assert "declare the topic in account 'Sales'" in rule


def test_an_event_topic_is_not_fifo(events: dict[str, Any]) -> None:
    events["topics"][0]["fifo"] = True
    events["topics"][0]["subscriptions"] = []
    [(path, rule)] = problems_of(events)
    assert (path, "without a message group" in rule) == ("topology.topics[0].fifo", True)


def test_endpoints_read_raw_deliveries_only(events: dict[str, Any]) -> None:
    events["topics"][0]["subscriptions"][0]["rawMessageDelivery"] = False
    [(path, rule)] = problems_of(events)
    assert (path, "RawMessageDelivery=true" in rule) == ("topology.topics[0].subscriptions", True)


def test_a_message_driven_subscriber_gets_a_route_to_the_publisher_through_the_bridge(
    events: dict[str, Any],
) -> None:
    events["endpoints"].append({"name": "Audit", "account": "Ops"})
    events["topics"][0]["messageDrivenSubscribers"] = ["Audit"]
    topology = parse_topology(events)
    assert topology.topics[0].message_driven_subscribers == ("Audit",)
    [route] = [r for r in topology.routes if r.sender == "Audit"]
    assert (route.receiver, route.relay, route.replies) == ("Billing", True, True)
    assert route.path == "topology.topics[0].messageDrivenSubscribers[0]"


def test_a_declared_route_serves_a_message_driven_subscriber(events: dict[str, Any]) -> None:
    events["topics"][0]["messageDrivenSubscribers"] = ["Shipping"]
    topology = parse_topology(events)
    assert [r.path for r in topology.routes if r.sender == "Shipping"] == ["topology.routes[1]"]


def test_a_declared_route_without_replies_cannot_carry_events_back(
    events: dict[str, Any],
) -> None:
    events["routes"][1]["replies"] = False
    events["topics"][0]["messageDrivenSubscribers"] = ["Shipping"]
    [(path, rule)] = problems_of(events)
    assert path == "topology.topics[0].messageDrivenSubscribers[0]"
    assert 'remove "replies": false' in rule


def test_two_arn_aware_endpoints_subscribe_directly(events: dict[str, Any]) -> None:
    events["endpoints"][1]["arnAware"] = True
    events["routes"] = [r for r in events["routes"] if r["from"] != "Sales"]
    del events["largeMessages"]
    events["topics"][0]["messageDrivenSubscribers"] = ["Sales"]
    topology = parse_topology(events)
    [route] = [r for r in topology.routes if r.sender == "Sales"]
    assert (route.receiver, route.relay) == ("Billing", False)


@pytest.mark.parametrize(
    ("change", "path", "rule"),
    [
        (
            lambda t: t.update(messageDrivenSubscribers=["Billing"]),
            "topology.topics[0].messageDrivenSubscribers[0]",
            "its own event",
        ),
        (
            lambda t: t.update(messageDrivenSubscribers=["Shipping"], publishers=[]),
            "topology.topics[0].messageDrivenSubscribers",
            "exactly one publisher",
        ),
        (
            lambda t: t.update(messageDrivenSubscribers=["Nobody"]),
            "topology.topics[0].messageDrivenSubscribers[0]",
            "unknown endpoint 'Nobody'",
        ),
        (
            lambda t: t.update(messageDrivenSubscribers=["Shipping", "Shipping"]),
            "topology.topics[0].messageDrivenSubscribers[1]",
            "list each endpoint once",
        ),
    ],
)
def test_message_driven_subscribers_are_checked(
    events: dict[str, Any], change: Any, path: str, rule: str
) -> None:
    change(events["topics"][0])
    [(field, message)] = problems_of(events)
    assert (field, rule in message) == (path, True)


def test_message_driven_subscribers_need_an_event(free_topic: dict[str, Any]) -> None:
    free_topic["topics"][0]["messageDrivenSubscribers"] = ["Shipping"]
    [(path, rule)] = problems_of(free_topic)
    assert (path, "add eventType" in rule) == ("topology.topics[0].messageDrivenSubscribers", True)


def test_a_message_driven_subscriber_in_another_account_gets_an_anchor_topic_there(
    document: dict[str, Any],
) -> None:
    """The hybrid subscribe subscribes natively first, by name in Shipping's own account, and
    sends no subscribe message if that fails; the anchor topic, Shipping already subscribed
    raw, lets it succeed without installers."""
    topology = parse_topology(document)
    (anchor,) = (t for t in topology.topics if t.anchor)
    assert (anchor.name, anchor.account, anchor.event_type, anchor.publishers) == (
        "MyCompany-Messages-OrderBilled",
        "Sales",
        EVENT,
        (),
    )
    (subscription,) = anchor.subscriptions
    assert (subscription.name, subscription.endpoint, subscription.raw_message_delivery) == (
        "ShippingAnchor",
        "Shipping",
        True,
    )
    assert anchor.path == "topology.topics[0].messageDrivenSubscribers[0]"


def test_subscribers_in_one_account_share_its_anchor_topic(document: dict[str, Any]) -> None:
    document["endpoints"].append({"name": "MyCompany.Invoicing", "account": "Sales"})
    document["topics"][0]["messageDrivenSubscribers"].append("MyCompany.Invoicing")
    (anchor,) = (t for t in parse_topology(document).topics if t.anchor)
    assert [(s.name, s.endpoint) for s in anchor.subscriptions] == [
        ("ShippingAnchor", "Shipping"),
        ("MyCompanyInvoicingAnchor", "MyCompany.Invoicing"),
    ]


def test_anchor_topics_stream_no_logs_and_need_no_analytics_region(
    document: dict[str, Any],
) -> None:
    """Nobody publishes to an anchor, so it never logs a delivery."""
    document["accounts"][0]["region"] = "eu-west-1"
    document["topics"][0]["subscriptions"] = []
    topology = parse_topology(document)
    assert [t.account for t in topology.log_streaming_topics] == ["Billing"]


def test_no_anchor_where_the_subscriber_shares_the_publishers_account_or_a_topic_exists(
    document: dict[str, Any],
) -> None:
    document["endpoints"].append({"name": "Ledger", "account": "Billing"})
    document["topics"][0]["messageDrivenSubscribers"] = ["Ledger", "Shipping"]
    document["topics"].append({"eventType": EVENT, "account": "Sales", "publishers": ["Sales"]})
    assert not any(t.anchor for t in parse_topology(document).topics)
