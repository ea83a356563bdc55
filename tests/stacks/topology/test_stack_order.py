"""A topic's account deploys before the accounts whose queues subscribe to it, since the
subscription is made on its topic; accounts subscribing to each other's topics are refused."""

from __future__ import annotations

from typing import Any

import pytest

from stacks.topology import parse_topology
from stacks.topology.stack_order import stack_order, topic_accounts_needed
from tests.stacks.topology.problems import problems_of


@pytest.fixture
def mutual(document: dict[str, Any]) -> dict[str, Any]:
    """The example plus a topic in Sales that Billing's queue subscribes to."""
    document["topics"].append(
        {
            "name": "OrderPlaced",
            "account": "Sales",
            "publishers": ["Sales"],
            "subscriptions": [{"name": "Billing", "protocol": "sqs", "endpoint": "Billing"}],
        }
    )
    return document


def test_billing_which_owns_order_billed_deploys_before_sales_which_subscribes(
    document: dict[str, Any],
) -> None:
    assert [a.name for a in stack_order(parse_topology(document))] == ["Billing", "Sales", "Ops"]


def test_sales_needs_billing_and_billing_needs_no_account(document: dict[str, Any]) -> None:
    topology = parse_topology(document)
    assert topic_accounts_needed(topology, "Sales") == ("Billing",)
    assert topic_accounts_needed(topology, "Billing") == ()


def test_a_subscription_within_one_account_orders_nothing(document: dict[str, Any]) -> None:
    document["topics"][0]["subscriptions"] = [
        {"name": "Billing", "protocol": "sqs", "endpoint": "Billing"}
    ]
    topology = parse_topology(document)
    assert topic_accounts_needed(topology, "Billing") == ()
    assert [a.name for a in stack_order(topology)] == ["Sales", "Billing", "Ops"]


def test_accounts_subscribing_to_each_others_topics_are_refused_with_the_fix(
    mutual: dict[str, Any],
) -> None:
    ((field, rule),) = problems_of(mutual)
    assert field == "topology.topics"
    assert "accounts ['Sales', 'Billing'] subscribe to each other's topics" in rule
    assert "messageDrivenSubscribers" in rule


def test_one_direction_message_driven_breaks_the_cycle(mutual: dict[str, Any]) -> None:
    placed = mutual["topics"][-1]
    del placed["subscriptions"]
    placed["messageDrivenSubscribers"] = ["Billing"]
    placed["eventType"] = "MyCompany.Messages.OrderPlaced"
    del placed["name"]
    order = [a.name for a in stack_order(parse_topology(mutual))]
    assert order.index("Billing") < order.index("Sales")
