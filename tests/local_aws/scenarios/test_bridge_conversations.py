"""Every pairing of released ("Old") and ARN-aware ("New") endpoints across accounts, deployed
to the local AWS and played by the model of the released transport: sends and replies each way,
a forward that leaves ARNs in the headers, failures through ServiceControl in a third account,
and delays beyond 15 minutes.

Accounts A and B hold an Old and a New endpoint each; the error queue and ServiceControl are in
C. Old senders reach the other account over relay routes; New ones send to queue ARNs directly.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from local_aws.scenarios.conversation import (
    Handlers,
    deliver_later,
    exchange,
    recover,
    reply_to_originator,
)
from local_aws.scenarios.peers import Peers
from stacks.topology import Topology, parse_topology

pytestmark = [pytest.mark.moto, pytest.mark.synth]

A, B, C = "444444444444", "555555555555", "666666666666"

TOPOLOGY: dict[str, Any] = {
    "accounts": [
        {"name": "A", "id": A, "region": "us-east-1"},
        {"name": "B", "id": B, "region": "us-east-1"},
        {"name": "C", "id": C, "region": "us-east-1"},
    ],
    "endpoints": [
        {"name": "OldA", "account": "A"},
        {"name": "NewA", "account": "A", "arnAware": True},
        {"name": "OldB", "account": "B"},
        {"name": "NewB", "account": "B", "arnAware": True},
    ],
    "errorQueue": {"name": "error", "account": "C"},
    "routes": [
        {"from": "OldA", "to": "OldB", "relay": True},
        {"from": "OldA", "to": "NewB", "relay": True},
        {"from": "NewA", "to": "OldB"},
        {"from": "NewA", "to": "NewB"},
        {"from": "NewB", "to": "OldA", "relay": True},
    ],
}


def arn(account: str, name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{account}:{name}"


@pytest.fixture(scope="module")
def topology() -> Topology:
    return parse_topology(TOPOLOGY)


def test_old_to_old_both_see_names_that_lead_back(peers: Peers, handlers: Handlers) -> None:
    done = exchange(peers, handlers, "OldA", "OldB")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == "OldA"
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == "OldB"


def test_old_to_new_the_new_receiver_reads_the_arn_and_replies_to_the_queue_directly(
    peers: Peers, handlers: Handlers
) -> None:
    done = exchange(peers, handlers, "OldA", "NewB")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == arn(A, "OldA")
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == "NewB"
    # Request: shadow -> outbound -> ingress -> inbound; the reply goes straight to OldA.
    assert len(done.relays) == 2


def test_new_to_old_the_old_receiver_replies_by_name_through_the_bridge(
    peers: Peers, handlers: Handlers
) -> None:
    done = exchange(peers, handlers, "NewA", "OldB")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == "NewA"
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == arn(B, "OldB")
    assert len(done.relays) == 2


def test_new_to_new_neither_needs_the_bridge(peers: Peers, handlers: Handlers) -> None:
    done = exchange(peers, handlers, "NewA", "NewB")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == arn(A, "NewA")
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == arn(B, "NewB")
    assert done.relays == ()


def test_an_arn_a_new_endpoint_forwards_is_translated_for_the_old_receiver(
    peers: Peers, handlers: Handlers
) -> None:
    """NewB received NewA's request with its reply address as NewA's queue ARN and forwards it
    as it is; OldA, released, gets the name that leads to NewA from its account."""
    done = exchange(peers, handlers, "NewA", "OldA", forwarder="NewB")
    assert done.request.headers["NServiceBus.ReplyToAddress"] == "NewA"
    # OldA answers NewA within account A, by name: no bridge, nothing stamped.
    assert done.reply.headers["NServiceBus.ReplyToAddress"] == "OldA"


@pytest.mark.parametrize(("sender", "receiver"), [("OldA", "OldB"), ("NewA", "NewB")])
def test_a_failure_reaches_service_control_in_a_third_account_and_its_retry_is_acknowledged(
    peers: Peers, handlers: Handlers, sender: str, receiver: str
) -> None:
    recovery = recover(peers, handlers, sender, receiver)
    assert recovery.attempts == 24
    assert recovery.failed_queue == receiver
    assert recovery.resolved


@pytest.mark.parametrize(("sender", "receiver"), [("OldA", "OldB"), ("NewA", "OldB")])
def test_a_delay_beyond_15_minutes_crosses_the_accounts(
    peers: Peers, handlers: Handlers, sender: str, receiver: str
) -> None:
    later = deliver_later(peers, handlers, sender, receiver, timedelta(minutes=40))
    assert 2400 <= later.arrived_after_seconds < 2700


@pytest.mark.parametrize(
    ("sender", "receiver", "originator"),
    [("OldA", "OldB", "OldA"), ("NewA", "OldB", "NewA"), ("OldA", "NewB", arn(A, "OldA"))],
)
def test_a_saga_answers_the_originator_it_stored_when_its_timeout_fires(
    peers: Peers, handlers: Handlers, sender: str, receiver: str, originator: str
) -> None:
    """The stored value is what the receiver can resolve: a name that leads back for an Old
    saga, the queue ARN for a New one; 20 minutes later it still leads to the sender."""
    saga = reply_to_originator(peers, handlers, sender, receiver)
    assert saga.originator == originator
    assert 1200 <= saga.answered_after_seconds < 1500
