"""The topology is validated before any synth, with one message naming file, field and rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.topology import (
    KeyGranularity,
    PlatformQueueKind,
    TopologyError,
    load_topology,
    parse_topology,
)
from tests.stacks.topology.problems import problems_of


def test_the_example_describes_the_seed_scenario(example_document: dict[str, Any]) -> None:
    topology = parse_topology(example_document)
    assert [a.id for a in topology.accounts] == ["111111111111", "222222222222", "333333333333"]
    sales, billing = topology.endpoint("Sales"), topology.endpoint("Billing")
    assert sales.arn_aware
    assert not billing.arn_aware
    # Sales sends through the bridge (whose relay copies large bodies across), and Billing, a
    # released endpoint, answers through it: no grant on either queue.
    assert topology.cross_account_senders(billing) == ()
    assert topology.cross_account_senders(sales) == ()
    assert topology.body_bucket("Billing") == "messaging-bodies-222222222222-us-east-1"
    assert topology.error_queue.queue_name == "error"
    # Sales' ARN-aware endpoint sends to the error queue's ARN; Billing's released one by name.
    assert topology.cross_account_senders(topology.error_queue) == ("111111111111",)
    assert topology.queue_arn(billing) == "arn:aws:sqs:us-east-1:222222222222:Billing"


def test_queue_names_follow_the_nservicebus_rule(document: dict[str, Any]) -> None:
    document["endpoints"][0].update(name="Samples.Sales", queueNamePrefix="prod-")
    document["endpoints"][1].update(name="prod-Billing", queueNamePrefix="prod-")
    document["routes"] = []
    document["topics"] = []
    topology = parse_topology(document)
    assert topology.endpoint("Samples.Sales").queue_name == "prod-Samples-Sales"
    assert topology.endpoint("prod-Billing").queue_name == "prod-Billing"
    assert topology.endpoint("prod-Billing").dead_letter_queue_name == "prod-Billing-dlq"


def test_fifo_endpoints_get_fifo_queue_and_dlq_names(document: dict[str, Any]) -> None:
    document["endpoints"][1]["fifo"] = True
    document["routes"] = []
    document["topics"] = []
    billing = parse_topology(document).endpoint("Billing")
    assert (billing.queue_name, billing.dead_letter_queue_name) == (
        "Billing.fifo",
        "Billing-dlq.fifo",
    )


@pytest.mark.parametrize(
    ("change", "path", "rule"),
    [
        (
            lambda d: d["accounts"][0].update(id="11111111111"),
            "topology.accounts[0].id",
            "exactly 12 digits",
        ),
        (
            lambda d: d["accounts"][0].update(id="11111111111a"),
            "topology.accounts[0].id",
            "exactly 12 digits",
        ),
        (
            lambda d: d["accounts"][1].update(region="us-east"),
            "topology.accounts[1].region",
            "malformed region",
        ),
        (
            lambda d: d["accounts"][1].update(region="US-EAST-1"),
            "topology.accounts[1].region",
            "malformed region",
        ),
        (
            lambda d: d["accounts"][2].update(name="Sales"),
            "topology.accounts[2].name",
            "duplicate account name",
        ),
        (
            lambda d: d["accounts"][2].update(id="111111111111"),
            "topology.accounts[2].id",
            "duplicate account id",
        ),
        (
            lambda d: d["accounts"][0].update(organizationId="org-1"),
            "topology.accounts[0].organizationId",
            "malformed organization id",
        ),
        (
            lambda d: d["endpoints"][0].update(account="Marketing"),
            "topology.endpoints[0].account",
            "unknown account 'Marketing'",
        ),
        (
            lambda d: d["endpoints"][1].update(name="Sales"),
            "topology.endpoints[1].name",
            "duplicate endpoint name",
        ),
        (
            lambda d: d["endpoints"][0].update(name="S" * 64, queueNamePrefix="p" * 17),
            "topology.endpoints[0].name",
            "at most 80",
        ),
        (
            lambda d: d["endpoints"][0].update(queueNamePrefix="DEV."),
            "topology.endpoints[0].queueNamePrefix",
            "'DEV-Sales' names the queue 'DEV-DEV-Sales'",
        ),
        (
            lambda d: d["endpoints"][0].update(queueNamePrefix="Dév-"),
            "topology.endpoints[0].name",
            "SQS queue names hold only ASCII letters",
        ),
        (
            lambda d: d["endpoints"][0].update(queueName="sales queue"),
            "topology.endpoints[0].queueName",
            "SQS queue names hold only",
        ),
        (
            lambda d: d["endpoints"][0].update(queueName="s" * 81),
            "topology.endpoints[0].queueName",
            "at most 80",
        ),
        (
            lambda d: d["endpoints"][0].update(fifo=True, deadLetterQueue={"fifo": False}),
            "topology.endpoints[0].deadLetterQueue.fifo",
            "dead-letter queue is a standard queue but its source",
        ),
        (
            lambda d: d["endpoints"][0].update(deadLetterQueue={"fifo": True}),
            "topology.endpoints[0].deadLetterQueue.fifo",
            "dead-letter queue is a FIFO queue but its source",
        ),
        (
            lambda d: d["endpoints"][0].update(maxReceiveCount=0),
            "topology.endpoints[0].maxReceiveCount",
            "from 1 to 1000",
        ),
        (
            lambda d: d["endpoints"][0].update(fifo="yes"),
            "topology.endpoints[0].fifo",
            "true or false",
        ),
        (
            lambda d: d["endpoints"][0].update(colour="red"),
            "topology.endpoints[0].colour",
            "unknown field",
        ),
        (
            lambda d: d["routes"].append({"from": "Sales", "to": "Receiving"}),
            "topology.routes[3].to",
            "unknown endpoint 'Receiving'",
        ),
        (
            lambda d: d["routes"].append({"from": "Ghost", "to": "Billing"}),
            "topology.routes[3].from",
            "unknown endpoint 'Ghost'",
        ),
        (
            lambda d: d["routes"].append({"from": "Sales", "to": "Billing"}),
            "topology.routes[3]",
            "duplicate route",
        ),
        (
            lambda d: d["routes"].append({"to": "Billing"}),
            "topology.routes[3]",
            "exactly one of 'from'",
        ),
        (
            lambda d: d["routes"].append({"fromOrganization": "o-abcdefghij", "to": "Billing"}),
            "topology.routes[3].fromOrganization",
            "not the organizationId of any declared account",
        ),
        (
            lambda d: d["errorQueue"].update(account="Nowhere"),
            "topology.errorQueue.account",
            "unknown account",
        ),
        (
            lambda d: d["errorQueue"].update(name="Sales"),
            "topology.errorQueue.name",
            "duplicate name",
        ),
        (lambda d: d.pop("errorQueue"), "topology.errorQueue", "is required"),
        (
            lambda d: d.update(alarms={"maxMessageAgeSeconds": 5}),
            "topology.alarms.maxMessageAgeSeconds",
            "from 60 to 1209600",
        ),
        (
            lambda d: d.update(alarms={"topicName": "bad name"}),
            "topology.alarms.topicName",
            "SNS topic names",
        ),
        (
            lambda d: d["topics"][0].update(account="Nowhere"),
            "topology.topics[0].account",
            "unknown account",
        ),
        (
            lambda d: d["topics"][0].update(name="Order Billed"),
            "topology.topics[0].name",
            "SNS topic names",
        ),
        (
            lambda d: d["topics"][0].update(successSampleRate=101),
            "topology.topics[0].successSampleRate",
            "from 0 to 100",
        ),
        (
            lambda d: d["topics"][0].update(publishers=["Ghost"]),
            "topology.topics[0].publishers[0]",
            "unknown endpoint 'Ghost'",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"][0].update(endpoint="Ghost"),
            "topology.topics[0].subscriptions[0].endpoint",
            "unknown endpoint 'Ghost'",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"][0].update(protocol="email"),
            "topology.topics[0].subscriptions[0].protocol",
            "unsupported protocol 'email'",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"][1].update(url="http://partner.example.com/x"),
            "topology.topics[0].subscriptions[1].url",
            "must be an https:// URL",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"][1].update(name="Sales"),
            "topology.topics[0].subscriptions[1].name",
            "duplicate subscription name",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"][1]["deliveryPolicy"][
                "healthyRetryPolicy"
            ].update(numRetries=101),
            "topology.topics[0].subscriptions[1].deliveryPolicy",
            "numRetries",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"][0].update(filterPolicy={}),
            "topology.topics[0].subscriptions[0].filterPolicy",
            "is an empty object, which SNS refuses",
        ),
        (
            lambda d: (
                d["topics"][0].update(
                    fifo=True, name="OrderBilled", eventType=None, messageDrivenSubscribers=[]
                )
                or d["topics"][0].pop("eventType")
            ),
            "topology.topics[0].subscriptions[0].endpoint",
            "a FIFO topic needs a FIFO queue",
        ),
        (
            lambda d: d["topics"][0]["subscriptions"].append(
                {
                    "name": "Fn",
                    "protocol": "lambda",
                    "functionArn": "arn:aws:lambda:us-east-1:111111111111:function:f",
                }
            ),
            "topology.topics[0].subscriptions[2].functionArn",
            "must be in the topic's account",
        ),
        (lambda d: d.pop("accounts"), "topology.accounts", "is required"),
    ],
)
def test_bad_topology_names_the_field_and_the_rule(
    document: dict[str, Any], change: Any, path: str, rule: str
) -> None:
    change(document)
    with pytest.raises(TopologyError) as caught:
        parse_topology(document, "topo.json")
    message = str(caught.value)
    assert f"topo.json: {path}: " in message
    assert rule in message


def test_every_problem_is_reported_at_once(document: dict[str, Any]) -> None:
    document["accounts"][0]["id"] = "1"
    document["accounts"][1]["region"] = "moon"
    paths = [path for path, _ in problems_of(document)]
    assert "topology.accounts[0].id" in paths
    assert "topology.accounts[1].region" in paths


def test_two_queues_with_one_name_in_one_account_are_refused(document: dict[str, Any]) -> None:
    document["endpoints"].append(
        {"name": "Receiving", "account": "Billing", "queueName": "Billing"}
    )
    assert any("also used by" in rule for _, rule in problems_of(document))


def test_a_file_is_read_whole_or_from_cdk_json_context(
    tmp_path: Path, example_document: dict[str, Any]
) -> None:
    plain = tmp_path / "topology.json"
    plain.write_text(json.dumps(example_document))
    wrapped = tmp_path / "cdk.json"
    wrapped.write_text(json.dumps({"app": "x", "context": {"topology": example_document}}))
    assert load_topology(plain).accounts == load_topology(wrapped).accounts


def test_unreadable_or_malformed_files_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"accounts": [')
    with pytest.raises(
        TopologyError, match=r"broken\.json: <line 1, column 15>: is not valid JSON"
    ):
        load_topology(broken)
    with pytest.raises(TopologyError, match=r"missing\.json: <file>: cannot be read"):
        load_topology(tmp_path / "missing.json")


def test_alarm_settings_default_to_fifteen_minutes_and_no_topic(
    example_document: dict[str, Any],
) -> None:
    alarms = parse_topology(example_document).alarms
    assert (alarms.topic_name, alarms.max_message_age_seconds) == (None, 900)


@pytest.mark.parametrize(
    ("route", "path", "rule"),
    [
        (
            {"from": "Sales", "to": "Shipping", "relay": True},
            "topology.routes[3].relay",
            "a relay only crosses accounts",
        ),
        (
            {"fromOrganization": "o-a1b2c3d4e5", "to": "Billing", "relay": True},
            "topology.routes[3].relay",
            "relays forward from an endpoint",
        ),
        (
            {"from": "Billing", "to": "Sales", "relay": "yes"},
            "topology.routes[3].relay",
            "true or false",
        ),
    ],
)
def test_bad_relay_routes_are_refused(
    document: dict[str, Any], route: dict[str, Any], path: str, rule: str
) -> None:
    document["accounts"][0]["organizationId"] = "o-a1b2c3d4e5"
    document["routes"].append(route)
    assert any(p == path and rule in r for p, r in problems_of(document))


def test_a_relay_queue_may_not_take_an_existing_queue_name(document: dict[str, Any]) -> None:
    document["endpoints"].append({"name": "Billing2", "account": "Sales", "queueName": "Billing"})
    problems = problems_of(document)
    assert any(
        "the bridge's shadow queue for the route from Sales would be named 'Billing' in "
        "account 'Sales', but that name is also used by endpoint 'Billing2''s queue" in rule
        for _, rule in problems
    )


def test_a_nested_filter_policy_on_the_message_body_is_accepted_with_its_scope(
    document: dict[str, Any],
) -> None:
    subscription = document["topics"][0]["subscriptions"][0]
    subscription["filterPolicy"] = {
        "order": {"total": [{"numeric": [">=", 100, "<", 500]}], "$or": [{"a": ["x"]}, {"b": [1]}]}
    }
    subscription["filterPolicyScope"] = "MessageBody"
    (parsed, *_) = parse_topology(document).topics[0].subscriptions
    assert parsed.filter_policy_scope == "MessageBody"
    assert parsed.filter_policy == subscription["filterPolicy"]


def test_servicecontrols_queues_are_declared_like_the_error_queue(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    assert [(q.platform, q.name, q.queue_name, q.account) for q in topology.platform_queues] == [
        (PlatformQueueKind.ERROR, "error", "error", "Ops"),
        (PlatformQueueKind.AUDIT, "audit", "audit", "Ops"),
        # Named as the transport's queue-name generator names them.
        (
            PlatformQueueKind.SERVICE_CONTROL,
            "Particular.ServiceControl",
            "Particular-ServiceControl",
            "Ops",
        ),
        (PlatformQueueKind.MONITORING, "Particular.Monitoring", "Particular-Monitoring", "Ops"),
    ]
    assert topology.error_queue is topology.platform_queue(PlatformQueueKind.ERROR)
    for queue in topology.platform_queues:
        # ARN-aware endpoints send there directly, released ones through their shadows.
        assert topology.sender_endpoints(queue) == (topology.endpoint("Sales"),)
        assert topology.cross_account_senders(queue) == ("111111111111",)
        assert queue.wrap_outgoing_messages  # ServiceControl wraps


def test_an_endpoint_wraps_its_messages_unless_it_says_otherwise(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    assert {e.name: e.wrap_outgoing_messages for e in topology.endpoints} == {
        "Sales": True,
        "Billing": True,
        "Shipping": False,
    }


def test_queues_have_a_key_each_unless_the_topology_shares_one_per_account(
    document: dict[str, Any],
) -> None:
    assert parse_topology(document).keys is KeyGranularity.PER_QUEUE
    document["keys"] = "perAccount"
    assert parse_topology(document).keys is KeyGranularity.PER_ACCOUNT
