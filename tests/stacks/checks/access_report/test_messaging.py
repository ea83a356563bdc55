"""The access report of the messaging resources: who may send to, receive from and use the key
of each queue, who may publish to and subscribe to each topic, every subscription and every relay
hop, equal to the topology's intent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stacks.app_builder import topology_from_context
from stacks.checks import access_report, gates
from stacks.checks.access_report.records import AccessReport, QueueRecord
from stacks.placement.placing import new_organization_plan
from stacks.placement.plan import committed_plan
from stacks.placement.plan_file import PlanFile
from stacks.topology import parse_topology

pytestmark = pytest.mark.synth


def test_the_access_report_equals_the_topology_intent(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    plan = committed_plan(topology, PlanFile())
    assert access_report.actual_access(report) == access_report.expected_access(topology, plan)
    assert all(q["denies_insecure_transport"] for q in report["queues"])
    assert all(t["denies_insecure_transport"] for t in report["topics"])


def test_the_access_report_shows_the_relay_edges(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    assert access_report.actual_relay_edges(report) == access_report.expected_relay_edges(topology)
    roles = {r["role"] for r in report["relays"] if r["direction"] == "outbound"}
    assert roles == {
        "arn:aws:iam::111111111111:role/messaging-relay-outbound-Sales",
        "arn:aws:iam::222222222222:role/messaging-relay-outbound-Billing",
        # ServiceControl's retries leave the Ops account through its outbound relay.
        "arn:aws:iam::333333333333:role/messaging-relay-outbound-Ops",
    }
    assert "## Relays (account bridge)" in access_report.to_markdown(report)


def test_the_access_report_shows_every_path_into_servicecontrols_queues(
    example_assembly: Path,
) -> None:
    """From Sales and Billing, shadow -> outbound relay -> ingress -> inbound relay -> queue;
    Ops' own endpoints would send directly."""
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    assert access_report.actual_platform_paths(report) == access_report.expected_platform_paths(
        topology
    )
    paths = {
        (q["kind"], q["queue"].rsplit(":", 1)[1], p["account"], p["shadow"].rsplit(":", 1)[1])
        for q in report["platform_queues"]
        for p in q["paths"]
    }
    assert paths == {
        (kind, queue, account, queue)
        for kind, queue in (
            ("errorQueue", "error"),
            ("auditQueue", "audit"),
            ("serviceControlQueue", "Particular-ServiceControl"),
            ("monitoringQueue", "Particular-Monitoring"),
        )
        for account in ("111111111111", "222222222222")
    }
    audit = next(q for q in report["platform_queues"] if q["kind"] == "auditQueue")
    assert {(p["outbound_role"], p["inbound_role"]) for p in audit["paths"]} == {
        (
            f"arn:aws:iam::{account}:role/messaging-relay-outbound-{name}",
            "arn:aws:iam::333333333333:role/messaging-relay-inbound-Ops",
        )
        for account, name in (("111111111111", "Sales"), ("222222222222", "Billing"))
    }
    assert (
        "| auditQueue | `arn:aws:sqs:us-east-1:333333333333:audit` | 111111111111 | "
        "`arn:aws:sqs:us-east-1:111111111111:audit` | "
        "`arn:aws:sqs:us-east-1:333333333333:audit-ingress` |"
    ) in access_report.to_markdown(report)


def test_whoever_may_send_to_an_endpoint_queue_may_use_its_key(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    topology = topology_from_context(None)
    for endpoint in topology.all_queues:
        queue = _queue(report, topology.queue_arn(endpoint))
        assert access_report.principal_set(queue["key_users"]) == access_report.principal_set(
            queue["send"]
        ), endpoint.name


def test_the_access_report_shows_each_publisher_topic_and_subscriber_queue(
    example_assembly: Path,
) -> None:
    """Shipping, message-driven in Sales, has its queue subscribed to the anchor topic of the
    event's name in Sales, which nobody publishes to."""
    report = access_report.build_report(example_assembly)
    assert report["events"] == [
        {
            "event_type": "MyCompany.Messages.OrderBilled",
            "topic": "arn:aws:sns:us-east-1:111111111111:MyCompany-Messages-OrderBilled",
            "publishers": [],
            "subscriber_queues": ["arn:aws:sqs:us-east-1:111111111111:Shipping"],
            "message_driven_subscribers": [],
            "anchor": True,
        },
        {
            "event_type": "MyCompany.Messages.OrderBilled",
            "topic": "arn:aws:sns:us-east-1:222222222222:MyCompany-Messages-OrderBilled",
            "publishers": ["arn:aws:sqs:us-east-1:222222222222:Billing"],
            "subscriber_queues": ["arn:aws:sqs:us-east-1:111111111111:Sales"],
            "message_driven_subscribers": ["arn:aws:sqs:us-east-1:111111111111:Shipping"],
            "anchor": False,
        },
    ]
    markdown = access_report.to_markdown(report)
    assert (
        "| `MyCompany.Messages.OrderBilled` | `arn:aws:sqs:us-east-1:222222222222:Billing` | "
        "`arn:aws:sns:us-east-1:222222222222:MyCompany-Messages-OrderBilled` | "
        "`arn:aws:sqs:us-east-1:111111111111:Shipping` | message-driven (bridge) |"
    ) in markdown


def test_the_access_report_shows_topics_and_their_edges(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    anchor, topic = report["topics"]
    assert anchor["topic"] == "arn:aws:sns:us-east-1:111111111111:MyCompany-Messages-OrderBilled"
    assert (anchor["publish"], anchor["subscribe"]) == ([], [])
    assert topic["topic"] == "arn:aws:sns:us-east-1:222222222222:MyCompany-Messages-OrderBilled"
    assert topic["logged_protocols"] == ["http/s", "sqs"]
    (subscribe,) = topic["subscribe"]
    assert subscribe["principal"] == {"account": "111111111111"}
    assert subscribe["conditions"]["StringEquals"] == {"sns:Protocol": "sqs"}
    edges = {(s["protocol"], s["endpoint"], s["stack"]) for s in report["subscriptions"]}
    assert edges == {
        ("sqs", "arn:aws:sqs:us-east-1:111111111111:Sales", "Messaging-Sales"),
        ("sqs", "arn:aws:sqs:us-east-1:111111111111:Shipping", "Messaging-Sales"),
        ("https", "https://partner.example.com/sns/order-billed", "Messaging-Billing"),
    }


def _queue(report: AccessReport, arn: str) -> QueueRecord:
    return next(q for q in report["queues"] if q["queue"] == arn)


def test_the_access_report_shows_organization_grants(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    document["accounts"][0]["organizationId"] = "o-a1b2c3d4e5"
    document["routes"].append({"fromOrganization": "o-a1b2c3d4e5", "to": "Billing"})
    topology = parse_topology(document)
    gates.synth(topology, new_organization_plan(topology), tmp_path)
    report = access_report.build_report(tmp_path)
    expected = access_report.expected_access(topology, new_organization_plan(topology))
    assert access_report.actual_access(report) == expected
    billing = _queue(report, "arn:aws:sqs:us-east-1:222222222222:Billing")
    (org_grant,) = [g for g in billing["send"] if "organization" in g["principal"]]
    assert org_grant["conditions"] == {"StringEquals": {"aws:PrincipalOrgID": ["o-a1b2c3d4e5"]}}
    markdown = access_report.to_markdown(report)
    assert "organization `o-a1b2c3d4e5`" in markdown
