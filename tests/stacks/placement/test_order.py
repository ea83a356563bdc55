"""An account's stacks deploy each after the stacks holding the topics its queues subscribe to,
in its account or another; an account's stacks that would each need another first are refused."""

from __future__ import annotations

from typing import Any

import pytest

from stacks.placement.order import deployment_order, stack_dependencies
from stacks.placement.placing import new_organization_plan
from stacks.placement.plan import StackPlan, stack_plan
from stacks.placement.plan_file import AccountRecord, PlanFile, StackPlanError
from stacks.topology import parse_topology

ANCHOR = "topic:MyCompany-Messages-OrderBilled"
"""Sales' anchor topic of the event, which its Shipping endpoint subscribes to."""


def _plan(document: dict[str, Any], moved: dict[str, int]) -> StackPlan:
    """The example's plan with some of Sales' units given Sales' second stack."""
    topology = parse_topology(document)
    record = dict(new_organization_plan(topology).record)
    sales = record["Sales"]
    record["Sales"] = AccountRecord(sales.account_id, 2, {**sales.units, **moved})
    return stack_plan(topology, record, PlanFile())


def test_a_stack_holding_a_topic_deploys_before_its_accounts_stack_that_subscribes(
    document: dict[str, Any],
) -> None:
    topology = parse_topology(document)
    plan = _plan(document, {ANCHOR: 2})
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
    plan = _plan(document, {ANCHOR: 2, "endpoint:Sales": 2})
    with pytest.raises(StackPlanError) as caught:
        stack_dependencies(topology, plan)
    ((field, rule),) = caught.value.problems
    assert field == "account Sales"
    assert "['Messaging-Sales', 'Messaging-Sales-2'] hold topics of each other's" in rule
