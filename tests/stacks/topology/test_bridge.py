"""The account bridge the example needs, and what the topology refuses because no endpoint
could use it.

The example: Sales (ARN-aware) and Shipping (released) in account Sales, Billing (released)
in account Billing, ServiceControl's queues (error, audit, Particular.ServiceControl and
Particular.Monitoring) in account Ops; Sales, Shipping and Billing send to each other through
the bridge.
"""

from __future__ import annotations

from typing import Any

import pytest

from stacks.topology import PlatformQueueKind, TopologyError, parse_topology
from stacks.topology.bridge import bridge_shadows, ingress_endpoints, reachable_queues
from tests.stacks.topology.problems import problems_of

SALES, BILLING, OPS = "111111111111", "222222222222", "333333333333"


def arn(account: str, name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{account}:{name}"


def shadows(document: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per account, each shadow queue's name and the endpoint it leads to."""
    bridge = bridge_shadows(parse_topology(document))
    found: dict[str, dict[str, str]] = {}
    for shadow in bridge.shadows:
        found.setdefault(shadow.account, {})[shadow.queue_name] = shadow.remote.name
    return found


def test_each_account_gets_a_shadow_for_every_remote_queue_its_endpoints_reach_by_name(
    example_document: dict[str, Any],
) -> None:
    platform = {
        # Every endpoint sends failed messages to "error", audit copies to "audit", heartbeats,
        # custom checks and saga audit to "Particular.ServiceControl" and metrics to
        # "Particular.Monitoring", each resolved by the transport's queue-name generator.
        "error": "error",
        "audit": "audit",
        "Particular-ServiceControl": "Particular.ServiceControl",
        "Particular-Monitoring": "Particular.Monitoring",
    }
    assert shadows(example_document) == {
        # Sales and Shipping route to Billing.
        "Sales": {"Billing": "Billing", **platform},
        # Billing replies to Shipping and to Sales by name.
        "Billing": {"Shipping": "Shipping", "Sales": "Sales", **platform},
        # ServiceControl sends retries to each failed message's FailedQ, by name; nothing else
        # of the platform answers.
        "Ops": {"Sales": "Sales", "Shipping": "Shipping", "Billing": "Billing"},
    }


def test_a_shadow_whose_messages_may_be_delayed_has_a_delay_queue_shadow(
    example_document: dict[str, Any],
) -> None:
    bridge = bridge_shadows(parse_topology(example_document))
    assert {(s.account, s.queue_name, s.delay_queue_name) for s in bridge.shadows} == {
        # Sends and replies may be delayed beyond 15 minutes.
        ("Sales", "Billing", "Billing-delay.fifo"),
        ("Billing", "Shipping", "Shipping-delay.fifo"),
        ("Billing", "Sales", "Sales-delay.fifo"),
        # What goes to ServiceControl, and its retries, never are.
        *(
            (account, name, None)
            for account in ("Sales", "Billing")
            for name in ("error", "audit", "Particular-ServiceControl", "Particular-Monitoring")
        ),
        ("Ops", "Sales", None),
        ("Ops", "Shipping", None),
        ("Ops", "Billing", None),
    }


def test_a_shadow_needed_for_delays_by_any_of_its_reasons_gets_its_delay_queue(
    document: dict[str, Any],
) -> None:
    document["endpoints"].append({"name": "Audit", "account": "Ops"})
    document["routes"].append({"from": "Audit", "to": "Billing", "relay": True})
    bridge = bridge_shadows(parse_topology(document))
    (billing_in_ops,) = [
        s for s in bridge.shadows if (s.account, s.queue_name) == ("Ops", "Billing")
    ]
    assert billing_in_ops.delay_queue_name == "Billing-delay.fifo"


def test_the_queues_shadows_lead_to_get_ingress_queues_admitting_those_accounts_relays(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    bridge = bridge_shadows(topology)
    assert [q.name for q in ingress_endpoints(topology, "Sales")] == ["Sales", "Shipping"]
    assert [q.name for q in ingress_endpoints(topology, "Billing")] == ["Billing"]
    assert [q.name for q in ingress_endpoints(topology, "Ops")] == [
        "error",
        "audit",
        "Particular.ServiceControl",
        "Particular.Monitoring",
    ]
    assert bridge.relay_sender_accounts(topology.endpoint("Shipping")) == ("Billing", "Ops")
    for queue in topology.platform_queues:
        assert bridge.relay_sender_accounts(queue) == ("Sales", "Billing")


def test_a_released_receiver_is_told_the_queues_it_reaches_by_name_from_its_account(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    everything = (
        arn(SALES, "Sales"),
        arn(BILLING, "Billing"),
        arn(SALES, "Shipping"),
        arn(OPS, "error"),
        arn(OPS, "audit"),
        arn(OPS, "Particular-ServiceControl"),
        arn(OPS, "Particular-Monitoring"),
    )
    assert reachable_queues(topology, topology.endpoint("Billing")) == everything
    assert reachable_queues(topology, topology.error_queue) == everything


def test_a_receiver_that_never_replies_gets_no_way_back(document: dict[str, Any]) -> None:
    document["routes"] = [
        {"from": "Shipping", "to": "Billing", "relay": True, "replies": False},
    ]
    del document["topics"][0]["messageDrivenSubscribers"]
    assert "Shipping" not in shadows(document)["Billing"]


def test_an_arn_aware_receiver_answers_the_senders_queue_directly(
    document: dict[str, Any],
) -> None:
    for endpoint in document["endpoints"]:
        if endpoint["name"] == "Billing":
            endpoint["arnAware"] = True
    document["routes"] = [{"from": "Shipping", "to": "Billing", "relay": True}]
    topology = parse_topology(document)
    assert "Shipping" not in shadows(document)["Billing"]
    assert topology.cross_account_senders(topology.endpoint("Shipping")) == (BILLING,)


def test_prefixed_endpoints_get_shadows_with_the_names_their_transport_resolves(
    document: dict[str, Any],
) -> None:
    for endpoint in document["endpoints"]:
        if endpoint["name"] == "Shipping":
            endpoint["queueNamePrefix"] = "DEV-"
    document["routes"] = [{"from": "Shipping", "to": "Billing", "relay": True}]
    topology = parse_topology(document)
    assert topology.endpoint("Shipping").queue_name == "DEV-Shipping"
    found = shadows(document)
    # Shipping resolves "Billing" with its prefix; Billing answers the address "DEV-Shipping".
    assert found["Sales"]["DEV-Billing"] == "Billing"
    assert found["Billing"]["DEV-Shipping"] == "Shipping"
    assert arn(SALES, "DEV-Shipping") in reachable_queues(topology, topology.endpoint("Billing"))


def test_a_direct_route_from_a_released_endpoint_to_another_account_is_refused(
    document: dict[str, Any],
) -> None:
    document["routes"].append({"from": "Billing", "to": "Sales"})
    del document["largeMessages"]
    assert (
        "topology.routes[3]",
        "Billing is not ARN-aware: its transport resolves 'Sales' by name in account "
        "'Billing', where it finds no such queue. Set \"relay\": true to send through the "
        'account bridge, or "arnAware": true on the endpoint if it runs an ARN-aware transport',
    ) in problems_of(document)


def test_a_fifo_error_queue_is_refused_as_no_endpoint_could_reach_it(
    document: dict[str, Any],
) -> None:
    document["errorQueue"]["fifo"] = True
    assert any(
        path == "topology.errorQueue.fifo" and "a FIFO queue refuses" in rule
        for path, rule in problems_of(document)
    )


def test_a_shadow_may_not_take_the_name_of_a_queue_of_its_account(
    document: dict[str, Any],
) -> None:
    document["endpoints"].append({"name": "Ledger", "account": "Billing", "queueName": "Shipping"})
    assert any(
        "the bridge's shadow queue for Billing's replies would be named 'Shipping' in account "
        "'Billing', but that name is also used by endpoint 'Ledger''s queue" in rule
        for _, rule in problems_of(document)
    )


def test_two_remote_endpoints_resolved_to_one_name_in_an_account_are_refused(
    document: dict[str, Any],
) -> None:
    document["accounts"].append({"name": "Audit", "id": "444444444444", "region": "us-east-1"})
    document["endpoints"].append({"name": "Billing2", "account": "Audit", "queueName": "Billing"})
    document["routes"].append({"from": "Billing2", "to": "Shipping", "relay": True})
    problems = problems_of(document)
    assert any("shadow queue 'Billing' in account 'Ops'" in rule for _, rule in problems)


@pytest.mark.parametrize(
    ("change", "path", "rule"),
    [
        ({"maxReceiveCount": 5}, "maxReceiveCount", "5 receives end before the endpoint's 5"),
        ({"immediateRetries": 2, "maxReceiveCount": 2}, "maxReceiveCount", "at least 3"),
        ({"immediateRetries": -1}, "immediateRetries", "whole number from 0 to 999"),
        ({"arnAware": "yes"}, "arnAware", "true or false"),
    ],
)
def test_recoverability_settings_leave_room_for_the_immediate_retries(
    document: dict[str, Any], change: dict[str, Any], path: str, rule: str
) -> None:
    document["endpoints"][1].update(change)
    assert any(p == f"topology.endpoints[1].{path}" and rule in r for p, r in problems_of(document))


def test_the_dead_letter_redrive_waits_for_the_immediate_retries_by_default(
    document: dict[str, Any],
) -> None:
    document["endpoints"][1]["immediateRetries"] = 8
    billing = parse_topology(document).endpoint("Billing")
    assert (billing.immediate_retries, billing.max_receive_count) == (8, 13)


def test_the_error_queue_is_servicecontrols_and_takes_no_endpoint_settings(
    document: dict[str, Any],
) -> None:
    document["errorQueue"]["arnAware"] = True
    with pytest.raises(TopologyError, match=r"topology\.errorQueue\.arnAware: unknown field"):
        parse_topology(document)


def test_the_endpoints_of_a_platform_queues_account_reach_it_directly(
    document: dict[str, Any],
) -> None:
    document["endpoints"].append({"name": "Reports", "account": "Ops"})
    found = shadows(document)
    # Reports resolves "audit" and the others to the queues of its own account: no shadows.
    assert found["Ops"] == {"Sales": "Sales", "Shipping": "Shipping", "Billing": "Billing"}
    topology = parse_topology(document)
    audit = topology.endpoint("audit")
    assert bridge_shadows(topology).relay_sender_accounts(audit) == ("Sales", "Billing")
    # Its sends are authorized by IAM in Ops; of the other accounts, only Sales, whose ARN-aware
    # endpoint sends to the queue's ARN, gets the queue's grant: Billing's go through the bridge.
    assert topology.cross_account_senders(audit) == (SALES,)


def test_prefixed_endpoints_reach_the_platform_queues_by_the_names_their_transport_resolves(
    document: dict[str, Any],
) -> None:
    for endpoint in document["endpoints"]:
        if endpoint["name"] == "Shipping":
            endpoint["queueNamePrefix"] = "DEV-"
    sales = shadows(document)["Sales"]
    assert sales["DEV-Particular-ServiceControl"] == "Particular.ServiceControl"
    assert sales["DEV-Particular-Monitoring"] == "Particular.Monitoring"
    assert sales["DEV-audit"] == "audit"
    assert sales["DEV-error"] == "error"
    # ServiceControl retries to Shipping's own address, which carries its prefix.
    assert shadows(document)["Ops"]["DEV-Shipping"] == "Shipping"


def test_a_platform_queue_the_topology_leaves_out_gets_no_shadow(
    document: dict[str, Any],
) -> None:
    del document["monitoringQueue"]
    topology = parse_topology(document)
    assert topology.platform_queue(PlatformQueueKind.MONITORING) is None
    assert all("Monitoring" not in names for names in shadows(document).values())
