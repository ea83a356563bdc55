"""What the topology derives for the stacks: who needs a policy grant, topic ARNs and their
publishers and subscribers, and the relays' shadow and ingress queues."""

from __future__ import annotations

from typing import Any

import pytest

from cross_account_runtime.relay.config_format import RelayDirection
from stacks.topology import (
    Account,
    parse_topology,
    relay_role_arn,
    relay_role_name,
)


def test_same_account_senders_need_no_policy_grant(document: dict[str, Any]) -> None:
    document["endpoints"][0]["account"] = "Billing"
    document["routes"][0]["relay"] = False
    topology = parse_topology(document)
    assert topology.cross_account_senders(topology.endpoint("Billing")) == ()


def test_organization_routes_grant_the_organization(document: dict[str, Any]) -> None:
    document["accounts"][0]["organizationId"] = "o-a1b2c3d4e5"
    document["routes"].append({"fromOrganization": "o-a1b2c3d4e5", "to": "Billing"})
    topology = parse_topology(document)
    assert topology.sender_organizations(topology.endpoint("Billing")) == ("o-a1b2c3d4e5",)


def test_topics_know_their_publishers_subscribers_and_arns(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    (topic,) = topology.topics_in("Billing")
    assert (
        topology.topic_arn(topic)
        == "arn:aws:sns:us-east-1:222222222222:MyCompany-Messages-OrderBilled"
    )
    assert topology.cross_account_publishers(topic) == ()
    assert topology.subscriber_accounts(topic) == ("111111111111",)
    partner = topic.subscriptions[1]
    assert partner.delivery_policy is not None
    assert partner.delivery_policy.total_attempts == 51
    assert topology.queue_subscriptions(topology.endpoint("Sales")) == (
        (topic, topic.subscriptions[0]),
    )


def test_an_accounts_relay_roles_are_numbered_per_stack_each_named_by_its_exact_arn() -> None:
    short = Account("Sales", "111111111111", "us-east-1")
    longest = Account("A" * 39, "222222222222", "cn-north-1")
    for account in (short, longest):
        for n in (1, 2, 10, 999):
            name = relay_role_name(account, RelayDirection.OUTBOUND, n)
            assert len(name) <= 64
            assert relay_role_arn(account, RelayDirection.OUTBOUND, n) == (
                f"arn:{account.partition}:iam::{account.id}:role/{name}"
            )
    assert relay_role_name(short, RelayDirection.OUTBOUND, 2) == "messaging-relay-outbound-Sales-2"
    assert relay_role_arn(short, RelayDirection.OUTBOUND) == (
        "arn:aws:iam::111111111111:role/messaging-relay-outbound-Sales"
    )
    assert relay_role_name(longest, RelayDirection.OUTBOUND, 12) == (
        "messaging-relay-outbound-" + "A" * 36 + "-12"
    )
    with pytest.raises(ValueError, match="numbered 1 to 999"):
        relay_role_name(short, RelayDirection.OUTBOUND, 1000)


def test_cross_account_senders_are_the_accounts_that_send_directly(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    assert topology.cross_account_senders(topology.endpoint("Shipping")) == ()
