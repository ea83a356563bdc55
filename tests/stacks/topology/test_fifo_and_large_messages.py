"""What the transport's source says of FIFO queues and S3 bodies, refused before any synth."""

from __future__ import annotations

from typing import Any

from stacks.topology import parse_topology
from tests.stacks.topology.problems import problems_of


def test_no_endpoint_sends_to_a_fifo_queue(document: dict[str, Any]) -> None:
    document["endpoints"][1]["fifo"] = True
    document["topics"] = []
    problems = dict(problems_of(document))
    assert "Billing's FIFO queue refuses" in problems["topology.routes[0]"]
    assert "make Billing a standard queue" in problems["topology.routes[1]"]


def test_a_fifo_endpoint_is_not_answered(document: dict[str, Any]) -> None:
    document["endpoints"][2]["fifo"] = True
    document["routes"] = [{"from": "Shipping", "to": "Billing", "relay": True}]
    del document["topics"][0]["messageDrivenSubscribers"]
    [(path, rule)] = problems_of(document)
    assert path == "topology.routes[0].replies"
    assert 'set "replies": false' in rule
    document["routes"][0]["replies"] = False
    assert parse_topology(document).endpoint("Shipping").fifo


def test_a_fifo_endpoint_serves_native_producers(document: dict[str, Any]) -> None:
    document["accounts"][0]["organizationId"] = "o-abcdefghij"
    document["endpoints"][1]["fifo"] = True
    document["topics"] = []
    document["routes"] = [{"fromOrganization": "o-abcdefghij", "to": "Billing"}]
    assert parse_topology(document).endpoint("Billing").queue_name == "Billing.fifo"


def test_large_messages_give_each_account_with_queues_a_body_bucket(
    document: dict[str, Any],
) -> None:
    document["largeMessages"] = {"expirationDays": 5}
    document["routes"][0]["relay"] = True
    topology = parse_topology(document)
    assert topology.large_messages is not None
    assert topology.large_messages.expiration_days == 5
    assert topology.body_bucket("Sales") == "messaging-bodies-111111111111-us-east-1"
    assert topology.body_bucket("Ops") == "messaging-bodies-333333333333-us-east-1"


def test_without_the_section_no_account_has_a_body_bucket(document: dict[str, Any]) -> None:
    document["largeMessages"] = None
    del document["largeMessages"]
    assert parse_topology(document).body_bucket("Sales") is None


def test_a_direct_route_between_accounts_cannot_carry_bodies(document: dict[str, Any]) -> None:
    document["largeMessages"] = {}
    document["routes"][0]["relay"] = False
    [(path, rule)] = problems_of(document)
    assert path == "topology.routes[0]"
    assert 'set "relay": true' in rule


def test_body_expiration_stays_within_sqs_retention(document: dict[str, Any]) -> None:
    document["largeMessages"] = {"expirationDays": 15, "keyPrefix": "x"}
    document["routes"][0]["relay"] = True
    problems = dict(problems_of(document))
    assert "from 1 to 14" in problems["topology.largeMessages.expirationDays"]
    assert "unknown field" in problems["topology.largeMessages.keyPrefix"]
