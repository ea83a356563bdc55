"""What the topology derives for the stacks: who needs a policy grant, topic ARNs and their
publishers and subscribers, and the relays' shadow and ingress queues."""

from __future__ import annotations

from typing import Any

from cross_account_runtime.relay.config import RelayDirection
from stacks.topology import parse_topology


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


def test_relay_roles_have_names_other_accounts_can_admit_by_arn(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    assert topology.relay_role_arn(topology.account("Sales"), RelayDirection.OUTBOUND) == (
        "arn:aws:iam::111111111111:role/messaging-relay-outbound-Sales"
    )
    assert topology.cross_account_senders(topology.endpoint("Shipping")) == ()
