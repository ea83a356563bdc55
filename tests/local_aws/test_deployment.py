"""The local deployment creates a topic's stack before the stacks that subscribe queues to it,
since a subscription is made on its topic (in the local AWS as in AWS)."""

from __future__ import annotations

from typing import Any

import pytest

from local_aws.deployment import deploy_order
from stacks.topology import parse_topology


def test_the_example_deploys_billing_which_owns_order_billed_before_sales_which_subscribes(
    document: dict[str, Any],
) -> None:
    assert [a.name for a in deploy_order(parse_topology(document))] == ["Billing", "Sales", "Ops"]


def test_accounts_subscribing_to_each_others_topics_are_refused_naming_them(
    document: dict[str, Any],
) -> None:
    document["topics"].append(
        {
            "name": "OrderPlaced",
            "account": "Sales",
            "publishers": ["Sales"],
            "subscriptions": [{"name": "Billing", "protocol": "sqs", "endpoint": "Billing"}],
        }
    )
    with pytest.raises(RuntimeError, match=r"accounts \['Billing', 'Sales'\] subscribe"):
        deploy_order(parse_topology(document))
