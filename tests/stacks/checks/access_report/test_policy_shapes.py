"""The access report reads policies written by their shape (lists of accounts, relay role
patterns, topic lists, organization conditions, one key per account granted per queue) back
from real synthesized templates, and still equals the topology's intent exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.checks import access_report, gates
from stacks.placement.placing import new_organization_plan
from stacks.topology import Topology, parse_topology

pytestmark = pytest.mark.synth

ORG = "o-a1b2c3d4e5"
TEAMS = range(1, 5)
RECEIVER = "Team1.Receiver"


def account_id(team: int) -> str:
    return f"{100000000000 + team:012d}"


def relay_role(team: int, stack: int = 1) -> str:
    """The exact ARN of the outbound relay role of a team's stack."""
    suffix = f"-{stack}" if stack > 1 else ""
    return f"arn:aws:iam::{account_id(team)}:role/messaging-relay-outbound-Team{team}{suffix}"


def shaped_document() -> dict[str, Any]:
    """Four teams' accounts and Ops in one organization, with one key per account: a released
    receiver reached through the bridge from three accounts and subscribed to their three
    topics."""
    return {
        "keys": "perAccount",
        "accounts": [
            {"name": f"Team{t}", "id": account_id(t), "region": "eu-west-1", "organizationId": ORG}
            for t in TEAMS
        ]
        + [{"name": "Ops", "id": "999999999999", "region": "eu-west-1", "organizationId": ORG}],
        "endpoints": [{"name": RECEIVER, "account": "Team1"}]
        + [{"name": f"Team{t}.Sender", "account": f"Team{t}"} for t in TEAMS[1:]],
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": [{"from": f"Team{t}.Sender", "to": RECEIVER, "relay": True} for t in TEAMS[1:]],
        "topics": [
            {
                "eventType": f"Team{t}.Events.Happened",
                "account": f"Team{t}",
                "publishers": [f"Team{t}.Sender"],
                "subscriptions": [{"name": "Receiver", "protocol": "sqs", "endpoint": RECEIVER}],
            }
            for t in TEAMS[1:]
        ],
    }


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Topology, Path]:
    topology = parse_topology(shaped_document())
    outdir = tmp_path_factory.mktemp("shaped") / "cdk.out"
    return topology, gates.synth(topology, new_organization_plan(topology), outdir)


def template(assembly: Path, account: str) -> dict[str, Any]:
    return dict(json.loads((assembly / f"Messaging-{account}.template.json").read_text()))


def allows_of_queue(template: dict[str, Any], queue_name: str) -> list[dict[str, Any]]:
    (logical_id,) = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::SQS::Queue" and r["Properties"].get("QueueName") == queue_name
    ]
    return [
        s
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SQS::QueuePolicy"
        and r["Properties"]["Queues"] == [{"Ref": logical_id}]
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow"
    ]


def test_the_report_of_shaped_policies_equals_the_intent(shaped: tuple[Topology, Path]) -> None:
    topology, assembly = shaped
    report = access_report.build_report(assembly)
    assert access_report.actual_access(report) == access_report.expected_access(
        topology, new_organization_plan(topology)
    )
    assert access_report.actual_relay_edges(report) == access_report.expected_relay_edges(topology)


def test_the_shared_key_admits_each_grantee_for_its_own_queues_alone(
    shaped: tuple[Topology, Path],
) -> None:
    """Every queue of an account uses one key, yet whoever may use it for a queue is exactly
    whoever may send to that queue: no grant of one queue reaches another."""
    _, assembly = shaped
    report = access_report.build_report(assembly)
    for queue in report["queues"]:
        assert access_report.principal_set(queue["key_users"]) == access_report.principal_set(
            queue["send"]
        ), queue["queue"]
    for team in TEAMS:
        keys = [
            r
            for r in template(assembly, f"Team{team}")["Resources"].values()
            if r["Type"] == "AWS::KMS::Alias"
        ]
        assert [k["Properties"]["AliasName"] for k in keys] == ["alias/messaging/queues"]


def test_an_ingress_queue_admits_every_sending_accounts_relays_in_one_statement(
    shaped: tuple[Topology, Path],
) -> None:
    _, assembly = shaped
    (grant,) = allows_of_queue(template(assembly, "Team1"), "Team1-Receiver-ingress")
    assert grant["Principal"] == {"AWS": "*"}
    # The senders' accounts, and Ops, whence ServiceControl retries failed messages.
    ops = "arn:aws:iam::999999999999:role/messaging-relay-outbound-Ops"
    assert grant["Condition"] == {
        "ArnEquals": {"aws:PrincipalArn": [relay_role(t) for t in TEAMS[1:]] + [ops]},
        "StringEquals": {"aws:PrincipalOrgID": ORG},
    }
    (error,) = allows_of_queue(template(assembly, "Ops"), "error-ingress")
    assert error["Condition"]["ArnEquals"]["aws:PrincipalArn"] == [relay_role(t) for t in TEAMS]


def test_a_queue_subscribed_to_many_topics_admits_them_in_one_statement(
    shaped: tuple[Topology, Path],
) -> None:
    _, assembly = shaped
    (grant,) = allows_of_queue(template(assembly, "Team1"), "Team1-Receiver")
    assert grant["Principal"] == {"Service": "sns.amazonaws.com"}
    assert grant["Condition"] == {
        "ArnEquals": {
            "aws:SourceArn": [
                f"arn:aws:sns:eu-west-1:{account_id(t)}:Team{t}-Events-Happened" for t in TEAMS[1:]
            ]
        }
    }


def copy_of(assembly: Path, tmp_path: Path) -> Path:
    """The assembly's templates copied, to be changed; its code assets as they are."""
    widened = tmp_path / "cdk.out"
    widened.mkdir()
    for path in assembly.iterdir():
        if path.is_file():
            (widened / path.name).write_bytes(path.read_bytes())
        else:  # the code assets, the relays' configuration files among them, as they are
            (widened / path.name).symlink_to(path)
    return widened


def test_a_grant_beyond_the_intent_is_seen(shaped: tuple[Topology, Path], tmp_path: Path) -> None:
    """One more relay role in the list (another stack's of a sending account) is one more
    sender in the report."""
    topology, assembly = shaped
    widened = copy_of(assembly, tmp_path)
    document = template(widened, "Team1")
    (grant,) = allows_of_queue(document, "Team1-Receiver-ingress")
    grant["Condition"]["ArnEquals"]["aws:PrincipalArn"].append(relay_role(2, stack=2))
    (widened / "Messaging-Team1.template.json").write_text(json.dumps(document))
    actual = access_report.actual_access(access_report.build_report(widened))
    expected = access_report.expected_access(topology, new_organization_plan(topology))
    ingress = topology.sqs_arn("Team1", "Team1-Receiver-ingress")
    assert actual[ingress]["send"] - expected[ingress]["send"] == {("role", relay_role(2, stack=2))}


STRANGER = "123456789012"


def policy_of(document: dict[str, Any], kind: str, name_property: str, name: str) -> list[Any]:
    """The statements of the policy resource (``AWS::SQS::QueuePolicy`` or
    ``AWS::SNS::TopicPolicy``) of the queue or topic called ``name``."""
    resource_type, targets = {
        "queue": ("AWS::SQS::Queue", ("AWS::SQS::QueuePolicy", "Queues")),
        "topic": ("AWS::SNS::Topic", ("AWS::SNS::TopicPolicy", "Topics")),
    }[kind]
    (logical_id,) = [
        k
        for k, r in document["Resources"].items()
        if r["Type"] == resource_type and r["Properties"].get(name_property) == name
    ]
    (statements,) = [
        r["Properties"]["PolicyDocument"]["Statement"]
        for r in document["Resources"].values()
        if r["Type"] == targets[0] and r["Properties"][targets[1]] == [{"Ref": logical_id}]
    ]
    found: list[Any] = statements
    return found


def stranger_added(
    shaped: tuple[Topology, Path], tmp_path: Path, kind: str, name: str, action: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's and the intent's access once another account is allowed ``action`` on
    Team1's queue or Team2's topic called ``name``."""
    topology, assembly = shaped
    widened = copy_of(assembly, tmp_path)
    account = "Team1" if kind == "queue" else "Team2"
    document = template(widened, account)
    name_property = "QueueName" if kind == "queue" else "TopicName"
    policy_of(document, kind, name_property, name).append(
        {"Effect": "Allow", "Principal": {"AWS": STRANGER}, "Action": action, "Resource": "*"}
    )
    (widened / f"Messaging-{account}.template.json").write_text(json.dumps(document))
    actual = access_report.actual_access(access_report.build_report(widened))
    expected = access_report.expected_access(topology, new_organization_plan(topology))
    return actual, expected


@pytest.mark.parametrize(
    "action",
    ["sqs:Send*", "*", "SQS:SendMessage", "sqs:sendmessage", "sqs:Send?essage", ["sqs:S*"]],
)
def test_a_strangers_send_is_seen_however_the_action_is_spelled(
    shaped: tuple[Topology, Path], tmp_path: Path, action: Any
) -> None:
    """IAM reads actions in any case and with wildcards: so does the report."""
    topology, _ = shaped
    actual, expected = stranger_added(shaped, tmp_path, "queue", "Team1-Receiver-ingress", action)
    ingress = topology.sqs_arn("Team1", "Team1-Receiver-ingress")
    assert actual[ingress]["send"] - expected[ingress]["send"] == {("account", STRANGER)}


@pytest.mark.parametrize("action", ["sns:Pub*", "SNS:Publish", "sns:*", "*"])
def test_a_strangers_publish_is_seen_however_the_action_is_spelled(
    shaped: tuple[Topology, Path], tmp_path: Path, action: str
) -> None:
    topic = "Team2-Events-Happened"
    actual, expected = stranger_added(shaped, tmp_path, "topic", topic, action)
    arn = f"arn:aws:sns:eu-west-1:{account_id(2)}:{topic}"
    assert actual[arn]["publish"] - expected[arn]["publish"] == {("account", STRANGER)}


def test_an_action_that_only_looks_alike_is_no_grant(
    shaped: tuple[Topology, Path], tmp_path: Path
) -> None:
    topology, _ = shaped
    actual, expected = stranger_added(
        shaped, tmp_path, "queue", "Team1-Receiver-ingress", "sqs:GetQueue*"
    )
    ingress = topology.sqs_arn("Team1", "Team1-Receiver-ingress")
    assert actual[ingress] == expected[ingress]
