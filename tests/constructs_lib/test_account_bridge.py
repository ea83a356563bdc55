"""AccountBridge: a relayed pair wired by hand, without the topology. Sales (released) sends to
Billing (released) across accounts and Billing replies: each account's stack holds its half,
and the two agree with each other, with cdk-nag, and with what the topology builds for the same
pair (queue names, role names, who the ingress queues admit)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from aws_cdk import App, Environment, Stack, Validations
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from constructs_lib import (
    AccountBridge,
    BridgeAccount,
    BridgeIngress,
    BridgeShadow,
    CrossAccountRelay,
    EndpointQueue,
    MessagingAlarms,
    MessagingDashboard,
    RelayDirection,
    RelayTiming,
    relay_role_arn,
    relay_role_name,
)
from stacks.topology import parse_topology
from stacks.topology import relay_role_arn as topology_role_arn
from stacks.topology import relay_role_name as topology_role_name
from stacks.topology.bridge import bridge_shadows

pytestmark = pytest.mark.synth

SALES = "111111111111"
BILLING = "222222222222"
SALES_QUEUE = f"arn:aws:sqs:us-east-1:{SALES}:Sales"
BILLING_QUEUE = f"arn:aws:sqs:us-east-1:{BILLING}:Billing"
TIMING = RelayTiming.for_batch(10)
PAIR = {
    "accounts": [
        {"name": "Sales", "id": SALES, "region": "us-east-1"},
        {"name": "Billing", "id": BILLING, "region": "us-east-1"},
    ],
    "endpoints": [{"name": "Sales", "account": "Sales"}, {"name": "Billing", "account": "Billing"}],
    "errorQueue": {"name": "error", "account": "Billing"},
    "routes": [{"from": "Sales", "to": "Billing", "relay": True}],
}
"""The same pair as a topology (which also wants an error queue)."""


class Synthesized(NamedTuple):
    sales: Template
    billing: Template
    outdir: Path
    sales_bridge: AccountBridge
    billing_bridge: AccountBridge


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    outdir = tmp_path_factory.mktemp("bridge")
    app = App(outdir=str(outdir))
    sales = Stack(app, "Sales", env=Environment(account=SALES, region="us-east-1"))
    billing = Stack(app, "Billing", env=Environment(account=BILLING, region="us-east-1"))
    sales_queue = EndpointQueue(sales, "SalesQueue", endpoint_name="Sales")
    billing_queue = EndpointQueue(billing, "BillingQueue", endpoint_name="Billing")
    # Sales sends to Billing by name; Billing replies to Sales by name.
    sales_bridge = AccountBridge(
        sales,
        "Bridge",
        account_name="Sales",
        shadows=[BridgeShadow(BILLING_QUEUE)],
        local_endpoints=[sales_queue],
        ingress=[BridgeIngress(sales_queue, sender_accounts=[BridgeAccount("Billing", BILLING)])],
        alarms=MessagingAlarms(sales, "Alarms"),
        dashboard=MessagingDashboard(sales, "Dashboard", dashboard_name="Messaging-Sales"),
    )
    billing_bridge = AccountBridge(
        billing,
        "Bridge",
        account_name="Billing",
        shadows=[BridgeShadow(SALES_QUEUE)],
        local_endpoints=[billing_queue],
        ingress=[BridgeIngress(billing_queue, sender_accounts=[BridgeAccount("Sales", SALES)])],
    )
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()
    return Synthesized(
        Template.from_stack(sales),
        Template.from_stack(billing),
        outdir,
        sales_bridge,
        billing_bridge,
    )


def queue_names(template: Template) -> set[str]:
    return {
        q["Properties"]["QueueName"] for q in template.find_resources("AWS::SQS::Queue").values()
    }


def queue(template: Template, name: str) -> tuple[str, dict[str, Any]]:
    ((logical_id, found),) = [
        (key, q)
        for key, q in template.find_resources("AWS::SQS::Queue").items()
        if q["Properties"]["QueueName"] == name
    ]
    return str(logical_id), dict(found)


def role_names(template: Template) -> set[str]:
    roles = template.find_resources("AWS::IAM::Role").values()
    return {r["Properties"]["RoleName"] for r in roles if "RoleName" in r["Properties"]}


def relay_configuration(relay: CrossAccountRelay | None) -> dict[str, Any]:
    """The configuration file the relay's code asset carries."""
    assert relay is not None
    configuration: dict[str, Any] = json.loads(relay.configuration)
    return configuration


def test_cdk_nag_accepts_both_halves(synthesized: Synthesized) -> None:
    report = json.loads((synthesized.outdir / "validation-report.json").read_text())
    assert [r for r in report["pluginReports"] if r.get("violations")] == []


def test_each_account_gets_the_queues_the_topology_gives_the_pair(
    synthesized: Synthesized,
) -> None:
    sales, billing = synthesized.sales, synthesized.billing
    topology = parse_topology(PAIR)
    (shadow,) = [
        s for s in bridge_shadows(topology).shadows_in("Sales") if s.remote.name == "Billing"
    ]
    assert (shadow.queue_name, shadow.delay_queue_name) == ("Billing", "Billing-delay.fifo")
    assert queue_names(sales) >= {
        "Billing",
        "Billing-dlq",
        "Billing-delay.fifo",
        "Billing-delay-dlq.fifo",
        "Sales-ingress",
        "Sales-ingress-dlq",
    }
    assert queue_names(billing) >= {"Sales", "Billing-ingress", "Billing-ingress-dlq"}


def test_the_relays_have_the_fixed_role_names_the_topology_gives_them(
    synthesized: Synthesized,
) -> None:
    sales, billing = synthesized.sales, synthesized.billing
    topology = parse_topology(PAIR)
    for template, account in ((sales, "Sales"), (billing, "Billing")):
        expected = {
            topology_role_name(topology.account(account), direction) for direction in RelayDirection
        }
        assert role_names(template) == expected
        assert expected == {relay_role_name(account, direction) for direction in RelayDirection}
    assert "messaging-relay-outbound-Sales" in role_names(sales)


def test_an_ingress_queue_admits_the_sending_accounts_outbound_relays_alone(
    synthesized: Synthesized,
) -> None:
    billing = synthesized.billing
    ingress, _ = queue(billing, "Billing-ingress")
    grants = [
        s
        for p in billing.find_resources("AWS::SQS::QueuePolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow" and s["Resource"] == {"Fn::GetAtt": [ingress, "Arn"]}
    ]
    (grant,) = grants
    role = relay_role_arn("Sales", SALES, RelayDirection.OUTBOUND)
    assert grant["Condition"]["ArnEquals"] == {"aws:PrincipalArn": [role]}
    topology = parse_topology(PAIR)
    assert role == topology_role_arn(topology.account("Sales"), RelayDirection.OUTBOUND)
    assert role == f"arn:aws:iam::{SALES}:role/messaging-relay-outbound-Sales"


def test_the_relay_queues_hide_and_redrive_as_the_relays_batch_needs(
    synthesized: Synthesized,
) -> None:
    sales = synthesized.sales
    for name in ("Billing", "Billing-delay.fifo", "Sales-ingress"):
        _, found = queue(sales, name)
        assert found["Properties"]["VisibilityTimeout"] == TIMING.visibility_timeout.to_seconds()
        assert found["Properties"]["RedrivePolicy"]["maxReceiveCount"] == TIMING.max_receive_count
    _, delay = queue(sales, "Billing-delay.fifo")
    assert delay["Properties"]["DelaySeconds"] == 900


def test_the_outbound_relay_forwards_to_the_remote_ingress_queue(
    synthesized: Synthesized,
) -> None:
    configuration = relay_configuration(synthesized.sales_bridge.outbound_relay)
    assert configuration["localEndpoints"] == ["Sales"]
    ingress = f"arn:aws:sqs:us-east-1:{BILLING}:Billing-ingress"
    assert configuration["routes"]["Billing"]["destination"] == ingress
    assert configuration["routes"]["Billing-delay.fifo"]["destination"] == ingress
    assert configuration["routes"]["Billing-delay.fifo"]["delayed"] is True


def test_the_inbound_relay_delivers_to_a_released_endpoint_what_it_reaches_by_name(
    synthesized: Synthesized,
) -> None:
    configuration = relay_configuration(synthesized.billing_bridge.inbound_relay)
    route = configuration["routes"]["Billing-ingress"]
    assert (route["destination"], route["receiver"], route["form"]) == (
        BILLING_QUEUE,
        "name",
        "wrapped",
    )
    # Its own queue, and Sales through the shadow named Sales in its account.
    book = configuration["addressBooks"][route["addressBook"]]
    assert book == {
        f"arn:aws:sqs:us-east-1:{BILLING}": ["Billing"],
        f"arn:aws:sqs:us-east-1:{SALES}": ["Sales"],
    }


def test_the_alarms_watch_the_relay_queues_and_the_relays(synthesized: Synthesized) -> None:
    alarms = synthesized.sales.find_resources("AWS::CloudWatch::Alarm").values()
    assert Counter(a["Properties"]["MetricName"] for a in alarms) == {
        # The shadow's and the ingress queue's oldest message, and three DLQs.
        "ApproximateAgeOfOldestMessage": 2,
        "ApproximateNumberOfMessagesVisible": 3,
        # Each relay's function and messages.
        "Errors": 2,
        "Throttles": 2,
        "DeadLettered": 2,
        "Expired": 2,
        "Failed": 2,
    }


def test_the_dashboard_shows_each_relay_with_its_alarms_and_queues(
    synthesized: Synthesized,
) -> None:
    ((_, dashboard),) = synthesized.sales.find_resources("AWS::CloudWatch::Dashboard").items()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for text in (
        "## Outbound relay messaging-relay-outbound-Sales",
        "## Inbound relay messaging-relay-inbound-Sales",
    ):
        assert text in body
    alarm_ids = set(synthesized.sales.find_resources("AWS::CloudWatch::Alarm"))
    shown = {ref for ref in alarm_ids if f'"{ref}", "Arn"' in body}
    assert shown == alarm_ids


def stack() -> Stack:
    return Stack(App(), "Sales", env=Environment(account=SALES, region="us-east-1"))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: BridgeShadow(f"arn:aws:sqs:us-east-1:{BILLING}:Billing.fifo"),
            r"^remote_queue_arn: .*Billing\.fifo is a FIFO queue",
        ),
        (lambda: BridgeShadow("Billing"), r"^remote_queue_arn: 'Billing' is not an SQS queue ARN"),
        (
            lambda: BridgeIngress(SALES_QUEUE, sender_accounts=[]),
            r"^sender_accounts: name the accounts whose outbound relays deliver here",
        ),
        (lambda: BridgeAccount("Sales", "1111"), r"^account_id: account ids are exactly 12 digits"),
        (
            lambda: AccountBridge(
                stack(), "B", account_name="Sales", shadows=[BridgeShadow(BILLING_QUEUE)]
            ),
            r"^local_endpoints: the outbound relay stamps",
        ),
        (
            lambda: AccountBridge(stack(), "B", account_name="Sales Team"),
            r"^account_name: 'Sales Team' names the account's relay roles",
        ),
        (
            lambda: AccountBridge(
                stack(),
                "B",
                account_name="Sales",
                local_endpoints=["Sales"],
                shadows=[
                    BridgeShadow(BILLING_QUEUE, address="Billing"),
                    BridgeShadow(f"arn:aws:sqs:us-east-1:{BILLING}:Invoicing", address="Billing"),
                ],
            ),
            r"^shadows: .* would share the shadow queue 'Billing'",
        ),
        (
            lambda: AccountBridge(
                stack(),
                "B",
                account_name="Sales",
                ingress=[
                    BridgeIngress(BILLING_QUEUE, sender_accounts=[BridgeAccount("Ops", BILLING)])
                ],
            ),
            r"^ingress: .* is a queue of account 222222222222, not of this bridge's",
        ),
        (
            lambda: AccountBridge(
                stack(),
                "B",
                account_name="Sales",
                ingress=[
                    BridgeIngress(SALES_QUEUE, sender_accounts=[BridgeAccount("Billing", BILLING)]),
                    BridgeIngress(SALES_QUEUE, sender_accounts=[BridgeAccount("Ops", BILLING)]),
                ],
            ),
            r"^ingress: Sales listed more than once",
        ),
        (
            lambda: AccountBridge(stack(), "B", account_name="Sales", stack_number=1000),
            r"^stack_number: must be a whole number from 1 to 999",
        ),
    ],
)
def test_a_misuse_is_refused_naming_the_keyword(build: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_an_address_under_a_prefix_names_the_shadow_as_the_endpoints_resolve_it() -> None:
    shadow = BridgeShadow(BILLING_QUEUE, address="Billing.Api", queue_name_prefix="DEV-")
    assert (shadow.queue_name, shadow.delay_queue_name) == (
        "DEV-Billing-Api",
        "DEV-Billing-Api-delay.fifo",
    )
    assert shadow.ingress_queue_arn == f"arn:aws:sqs:us-east-1:{BILLING}:Billing-ingress"


def test_a_receiving_account_alone_reaches_its_own_endpoint_by_name() -> None:
    """Without shadows or local endpoints, the released receiver still reaches itself (its
    replies to its own queue, a saga's timeouts) by name."""
    s = stack()
    bridge = AccountBridge(
        s,
        "Bridge",
        account_name="Sales",
        ingress=[BridgeIngress(SALES_QUEUE, sender_accounts=[BridgeAccount("Billing", BILLING)])],
    )
    configuration = relay_configuration(bridge.inbound_relay)
    route = configuration["routes"]["Sales-ingress"]
    assert configuration["addressBooks"][route["addressBook"]] == {
        f"arn:aws:sqs:us-east-1:{SALES}": ["Sales"]
    }


def test_the_nth_stack_of_an_account_has_numbered_relay_roles() -> None:
    s = stack()
    queue = EndpointQueue(s, "Sales", endpoint_name="Sales")
    bridge = AccountBridge(
        s,
        "Bridge",
        account_name="Sales",
        shadows=[BridgeShadow(BILLING_QUEUE)],
        local_endpoints=[queue],
        stack_number=2,
    )
    assert bridge.outbound_relay is not None
    assert bridge.inbound_relay is None
    assert role_names(Template.from_stack(s)) == {"messaging-relay-outbound-Sales-2"}
