"""A topic's account deploys before the accounts whose queues subscribe to it, since the
subscription is made on its topic; accounts subscribing to each other's topics are refused. The
same holds between an account's stacks."""

from __future__ import annotations

from typing import Any

import pytest

from stacks.topology import parse_topology
from stacks.topology.stack_order import (
    deployment_order,
    stack_dependencies,
    stack_order,
    topic_accounts_needed,
)
from stacks.topology.stack_plan import StackPlanError, plan_stacks
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


ANCHOR = "topic:MyCompany-Messages-OrderBilled"
"""Sales' anchor topic of the event, which its Shipping endpoint subscribes to."""


def _recorded(document: dict[str, Any], moved: dict[str, int]) -> dict[str, dict[str, int]]:
    """The example's plan with some of Sales' units given another stack."""
    recorded = plan_stacks(parse_topology(document)).assignment
    recorded["Sales"].update(moved)
    return recorded


def test_a_stack_holding_a_topic_deploys_before_its_accounts_stack_that_subscribes(
    document: dict[str, Any],
) -> None:
    topology = parse_topology(document)
    plan = plan_stacks(topology, _recorded(document, {ANCHOR: 2}))
    sales = plan.stack("Sales", 1)
    assert [s.name for s in stack_dependencies(topology, plan)[sales]] == [
        "Messaging-Billing",
        "Messaging-Sales-2",
    ]
    assert [s.name for s in deployment_order(topology, plan)] == [
        "Messaging-Billing",
        "Messaging-Sales-2",
        "Messaging-Sales",
        "Messaging-Ops",
    ]


def test_an_account_s_stacks_subscribing_to_each_other_s_topics_are_refused(
    document: dict[str, Any],
) -> None:
    document["topics"].append(
        {
            "name": "Refunds",
            "account": "Sales",
            "subscriptions": [{"name": "Sales", "protocol": "sqs", "endpoint": "Sales"}],
        }
    )
    topology = parse_topology(document)
    # Shipping (stack 1) subscribes to the anchor topic (stack 2), Sales (2) to Refunds (1).
    plan = plan_stacks(topology, _recorded(document, {ANCHOR: 2, "endpoint:Sales": 2}))
    with pytest.raises(StackPlanError) as caught:
        stack_dependencies(topology, plan)
    ((field, rule),) = caught.value.problems
    assert field == "accounts.Sales"
    assert "['Messaging-Sales', 'Messaging-Sales-2'] hold topics of each other's" in rule
