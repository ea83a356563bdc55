"""CrossAccountRelay: the function, its event sources and a role that reaches only its queues."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Stack
from aws_cdk.assertions import Template

from constructs_lib import EndpointQueue, RelayTiming
from constructs_lib.cross_account_relay import (
    CrossAccountRelay,
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
    RelayRoute,
)
from cross_account_runtime.relay import config as relay_config

SALES = "111111111111"
INGRESS = "arn:aws:sqs:us-east-1:222222222222:Billing-ingress"


def source(
    stack: Stack, construct_id: str, name: str, batch_size: int = 10, **props: Any
) -> EndpointQueue:
    """A queue a relay reading batches of ``batch_size`` may read: it hides a received message
    as long as such a relay needs."""
    return EndpointQueue(
        stack,
        construct_id,
        endpoint_name=name,
        visibility_timeout=RelayTiming.for_batch(batch_size).visibility_timeout,
        **props,
    )


@pytest.fixture(scope="module")
def outbound() -> Template:
    stack = Stack(App(), "Sales", env=Environment(account=SALES, region="us-east-1"))
    shadow = source(stack, "ShadowBilling", "Billing")
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(shadow, INGRESS)],
        local_endpoints=["Sales"],
        role_name="messaging-relay-outbound-Sales",
    )
    return Template.from_stack(stack)


def one(template: Template, kind: str) -> dict[str, Any]:
    (resource,) = template.find_resources(kind).values()
    return dict(resource)


def test_the_construct_takes_the_runtimes_relay_direction_so_both_read_one_value() -> None:
    """What the construct writes into RELAY_DIRECTION is what the relay reads back."""
    assert RelayDirection is relay_config.RelayDirection


def test_the_function_runs_the_relay_with_its_configuration(outbound: Template) -> None:
    function = one(outbound, "AWS::Lambda::Function")["Properties"]
    assert function["Handler"] == "cross_account_runtime.relay.lambda_handler.handler"
    assert function["Architectures"] == ["arm64"]
    env = function["Environment"]["Variables"]
    assert env["RELAY_DIRECTION"] == "outbound"
    assert json.loads(env["RELAY_LOCAL_ENDPOINTS"]) == ["Sales"]
    routes = json.dumps(env["RELAY_ROUTES"])
    assert INGRESS in routes
    assert "ShadowBillingDeadLetterQueue" in routes


def test_the_event_source_reports_batch_item_failures(outbound: Template) -> None:
    mapping = one(outbound, "AWS::Lambda::EventSourceMapping")["Properties"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 10


def test_a_standard_source_takes_large_batches_with_a_window_and_a_fifo_one_stays_at_ten() -> None:
    stack = Stack(App(), "S")
    standard = source(stack, "Shadow", "Billing", batch_size=1000)
    fifo = source(stack, "FifoShadow", "Orders.fifo", batch_size=1000, fifo=True)
    CrossAccountRelay(
        stack,
        "Relay",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(standard, INGRESS),
            RelayRoute(fifo, "arn:aws:sqs:us-east-1:222222222222:Orders-ingress.fifo"),
        ],
        local_endpoints=["Sales"],
        batch_size=1000,
        max_batching_window=Duration.seconds(2),
    )
    sources = {
        str(m["Properties"]["BatchSize"]): m["Properties"].get("MaximumBatchingWindowInSeconds")
        for m in Template.from_stack(stack)
        .find_resources("AWS::Lambda::EventSourceMapping")
        .values()
    }
    assert sources == {"1000": 2, "10": None}


def test_the_role_has_a_fixed_name_other_accounts_can_admit(outbound: Template) -> None:
    role = one(outbound, "AWS::IAM::Role")["Properties"]
    assert role["RoleName"] == "messaging-relay-outbound-Sales"
    assert "ManagedPolicyArns" not in role


def statements(template: Template) -> list[dict[str, Any]]:
    policy = one(template, "AWS::IAM::Policy")
    return list(policy["Properties"]["PolicyDocument"]["Statement"])


def test_the_role_sends_only_to_the_destination_and_its_own_dlq(outbound: Template) -> None:
    sends = [s for s in statements(outbound) if "sqs:SendMessage" in s["Action"]]
    resources = sorted(json.dumps(s["Resource"]) for s in sends)
    assert json.dumps(INGRESS) in resources
    assert any("ShadowBillingDeadLetterQueue" in r for r in resources)
    assert len(resources) == 2


def test_the_role_receives_only_from_its_own_queue(outbound: Template) -> None:
    receives = [s for s in statements(outbound) if "sqs:ReceiveMessage" in s["Action"]]
    (receive,) = receives
    assert "ShadowBillingQueue" in json.dumps(receive["Resource"])


def key_grants(template: Template) -> list[dict[str, Any]]:
    return [s for s in statements(template) if "kms:GenerateDataKey" in s["Action"]]


def test_destination_keys_only_for_the_destinations_and_through_sqs(outbound: Template) -> None:
    """Whichever key encrypts the destination (a key of its own or its account's shared key,
    before and after a change), the grant is for that queue's encryption alone."""
    (statement,) = [
        s for s in key_grants(outbound) if ":222222222222:key/*" in json.dumps(s["Resource"])
    ]
    assert sorted(statement["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey"]
    assert statement["Condition"] == {
        "StringEquals": {"kms:EncryptionContext:aws:sqs:arn": [INGRESS]},
        "StringLike": {"kms:ViaService": "sqs.*.amazonaws.com*"},
    }


def test_own_keys_only_for_its_own_queues_and_through_sqs(outbound: Template) -> None:
    (statement,) = [
        s for s in key_grants(outbound) if f":{SALES}:key/*" in json.dumps(s["Resource"])
    ]
    assert "sqs.us-east-1." in json.dumps(statement["Condition"]["StringEquals"])
    queues = statement["Condition"]["StringLike"]["kms:EncryptionContext:aws:sqs:arn"]
    assert json.dumps(queues).endswith(f':sqs:us-east-1:{SALES}:*"]]}}')


def test_ingress_queues_admit_the_relay_roles_only() -> None:
    stack = Stack(App(), "Billing", env=Environment(account="222222222222", region="us-east-1"))
    ingress = EndpointQueue(
        stack, "Ingress", endpoint_name="Billing-ingress", delayed_delivery=False
    )
    ingress.add_sender_roles(f"arn:aws:iam::{SALES}:role/messaging-relay-outbound-Sales*")
    template = Template.from_stack(stack)
    (allow,) = [
        s
        for p in template.find_resources("AWS::SQS::QueuePolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow"
    ]
    assert allow["Principal"] == {"AWS": "*"}
    assert allow["Condition"] == {
        "ArnLike": {
            "aws:PrincipalArn": [f"arn:aws:iam::{SALES}:role/messaging-relay-outbound-Sales*"]
        }
    }
    key = one(template, "AWS::KMS::Key")["Properties"]["KeyPolicy"]["Statement"]
    (key_grant,) = [s for s in key if s.get("Sid") == "AllowSendersRoles"]
    assert key_grant["Condition"]["ArnLike"] == allow["Condition"]["ArnLike"]
    alias = one(template, "AWS::KMS::Alias")["Properties"]
    assert alias["AliasName"] == "alias/messaging/Billing-ingress"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"routes": []}, "routes: a relay needs at least one queue"),
        ({"local_endpoints": None}, "local_endpoints: an outbound relay stamps"),
        ({"batch_size": 10_001}, "batch_size: must be from 1 to 10000"),
        ({"batch_size": 11}, "max_batching_window: Lambda takes more than 10 messages"),
        (
            {"batch_size": 100, "max_batching_window": Duration.minutes(6)},
            "max_batching_window: must be from 1 to 300 seconds, got 360",
        ),
    ],
)
def test_bad_props_fail_naming_the_prop(props: dict[str, Any], message: str) -> None:
    stack = Stack(App(), "S")
    shadow = source(stack, "Shadow", "Billing")
    arguments: dict[str, Any] = {
        "direction": RelayDirection.OUTBOUND,
        "routes": [RelayRoute(shadow, INGRESS)],
        "local_endpoints": ["Sales"],
        **props,
    }
    with pytest.raises(ValueError, match=message):
        CrossAccountRelay(stack, "Relay", **arguments)


def test_a_bad_role_arn_is_refused() -> None:
    stack = Stack(App(), "S")
    queue = EndpointQueue(stack, "Q", endpoint_name="Q")
    with pytest.raises(
        ValueError, match="role_arns: 'arn:aws:iam::1:user/x' is not an IAM role ARN"
    ):
        queue.add_sender_roles("arn:aws:iam::1:user/x")


BILLING = "222222222222"


def released_inbound(
    stack: Stack, names: list[str], reachable: tuple[str, ...]
) -> CrossAccountRelay:
    """Billing's inbound relay delivering to released endpoints ``names``."""
    routes = [
        RelayRoute(
            source(stack, f"Ingress{name}", f"{name}-ingress"),
            f"arn:aws:sqs:us-east-1:{BILLING}:{name}",
            receiver=ReceiverAddressing.NAME,
            reachable_queues=reachable,
            form=MessageForm.WRAPPED,
        )
        for name in names
    ]
    return CrossAccountRelay(stack, "Inbound", direction=RelayDirection.INBOUND, routes=routes)


def billing_stack() -> Stack:
    return Stack(App(), "Billing", env=Environment(account=BILLING, region="us-east-1"))


def test_released_receivers_reaching_the_same_queues_share_one_address_book() -> None:
    stack = billing_stack()
    reachable = (
        f"arn:aws:sqs:us-east-1:{SALES}:Sales",
        f"arn:aws:sqs:us-east-1:{BILLING}:Billing",
        f"arn:aws:sqs:us-east-1:{SALES}:Shipping",
    )
    released_inbound(stack, ["Billing", "Audit"], reachable)
    env = one(Template.from_stack(stack), "AWS::Lambda::Function")["Properties"]["Environment"][
        "Variables"
    ]
    assert json.loads(env["RELAY_ADDRESS_BOOKS"]) == {
        "1": {
            f"arn:aws:sqs:us-east-1:{BILLING}": ["Billing"],
            f"arn:aws:sqs:us-east-1:{SALES}": ["Sales", "Shipping"],
        }
    }
    assert json.dumps(env["RELAY_ROUTES"]).count('\\"addressBook\\":\\"1\\"') == 2


def deployed_environment(
    template: Template, function: Mapping[str, Any], account: str = BILLING
) -> dict[str, str]:
    """The function's environment as Lambda would store it: every queue ARN CloudFormation
    resolves written out from the queue's name (the stack's queues are in ``account``)."""
    queues = template.find_resources("AWS::SQS::Queue")

    def text(value: Any) -> str:
        if isinstance(value, str):
            return value
        if "Fn::Join" in value:
            return "".join(text(part) for part in value["Fn::Join"][1])
        name = queues[value["Fn::GetAtt"][0]]["Properties"]["QueueName"]
        return f"arn:aws:sqs:us-east-1:{account}:{name}"

    variables = function["Properties"]["Environment"]["Variables"]
    return {key: text(value) for key, value in variables.items()}


def deployed_size(template: Template, function: Mapping[str, Any]) -> int:
    return len(json.dumps(deployed_environment(template, function)))


def test_routes_beyond_lambdas_4_kb_of_environment_spread_over_more_functions() -> None:
    stack = Stack(App(), "Ops", env=Environment(account=BILLING, region="us-east-1"))
    names = [f"Endpoint{n:02}" for n in range(30)]
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(
                source(stack, name, name, delayed_delivery=False),
                f"arn:aws:sqs:us-east-1:{SALES}:{name}-ingress",
            )
            for name in names
        ],
        local_endpoints=["error"],
    )
    template = Template.from_stack(stack)
    functions = template.find_resources("AWS::Lambda::Function")
    assert len(functions) > 1
    assert all(deployed_size(template, f) <= 4096 for f in functions.values())
    mappings = template.find_resources("AWS::Lambda::EventSourceMapping").values()
    assert len(mappings) == len(names)
    assert {m["Properties"]["FunctionName"]["Ref"] for m in mappings} == set(functions)
    assert {json.dumps(f["Properties"]["Role"]) for f in functions.values()} == {
        json.dumps(next(iter(functions.values()))["Properties"]["Role"])
    }
    assert len({json.dumps(f["Properties"]["LoggingConfig"]) for f in functions.values()}) == 1


def test_an_address_book_no_function_can_hold_is_refused_with_the_fix() -> None:
    reachable = tuple(f"arn:aws:sqs:us-east-1:{n:012}:Queue{n}" for n in range(100))
    with pytest.raises(ValueError, match="over Lambda's 4096; make its endpoint ARN-aware"):
        released_inbound(billing_stack(), ["Billing"], reachable)


def test_reachable_queues_belong_to_released_receivers_only() -> None:
    stack = billing_stack()
    with pytest.raises(ValueError, match="routes: reachable_queues lists what a released"):
        CrossAccountRelay(
            stack,
            "Inbound",
            direction=RelayDirection.INBOUND,
            routes=[
                RelayRoute(
                    source(stack, "Ingress", "Billing-ingress"),
                    f"arn:aws:sqs:us-east-1:{BILLING}:Billing",
                    receiver=ReceiverAddressing.ARN,
                    reachable_queues=(f"arn:aws:sqs:us-east-1:{SALES}:Sales",),
                    form=MessageForm.WRAPPED,
                )
            ],
        )


BODIES = f"messaging-bodies-{BILLING}-us-east-1"
ERROR = f"arn:aws:sqs:us-east-1:{BILLING}:error"


@pytest.fixture(scope="module")
def inbound() -> Template:
    """Billing's inbound relay: to Billing (wrapping), to Audit (DoNotWrapOutgoingMessages)
    and to the error queue, putting bodies that no longer fit inline into its own bucket."""
    stack = billing_stack()
    routes = [
        RelayRoute(
            source(stack, f"Ingress{name}", f"{name}-ingress", delayed_delivery=False),
            f"arn:aws:sqs:us-east-1:{BILLING}:{name}",
            receiver=ReceiverAddressing.ARN,
            body_bucket=BODIES,
            form=form,
            forward_unreadable=name == "error",
        )
        for name, form in (
            ("Billing", MessageForm.WRAPPED),
            ("Audit", MessageForm.ATTRIBUTE),
            ("error", MessageForm.WRAPPED),
        )
    ]
    CrossAccountRelay(stack, "Inbound", direction=RelayDirection.INBOUND, routes=routes)
    return Template.from_stack(stack)


def test_inbound_routes_carry_form_receive_count_body_bucket_as_the_runtime_reads_them(
    inbound: Template,
) -> None:
    environment = deployed_environment(inbound, one(inbound, "AWS::Lambda::Function"))
    config = relay_config.RelayConfig.from_environment(environment)
    routes = {route.destination.name: route for route in config.routes.values()}
    assert {name: route.form for name, route in routes.items()} == {
        "Billing": MessageForm.WRAPPED,
        "Audit": MessageForm.ATTRIBUTE,
        "error": MessageForm.WRAPPED,
    }
    # Only what leads to the error queue passes on what the relay cannot read.
    assert {name: route.forward_unreadable for name, route in routes.items()} == {
        "Billing": False,
        "Audit": False,
        "error": True,
    }
    assert {route.max_receive_count for route in routes.values()} == {10}
    assert {route.body_bucket for route in routes.values()} == {BODIES}
    assert config.body_bucket is None


def test_the_inbound_relay_may_put_bodies_into_its_own_bucket_only(inbound: Template) -> None:
    puts = [s for s in statements(inbound) if "s3:PutObject" in s["Action"]]
    assert [s["Resource"] for s in puts] == [
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{BODIES}/*"]]}
    ]
    (key,) = [s for s in statements(inbound) if "kms:Encrypt" in s["Action"]]
    assert key["Condition"] == {
        "ForAnyValue:StringEquals": {"kms:ResourceAliases": ["alias/messaging/bodies"]},
        "StringLike": {"kms:ViaService": "s3.*.amazonaws.com"},
    }
    assert f":kms:us-east-1:{BILLING}:key/*" in json.dumps(key["Resource"])
    assert not [s for s in statements(inbound) if "s3:GetObject" in json.dumps(s["Action"])]


def test_a_route_whose_source_knows_no_receive_count_carries_none() -> None:
    stack = Stack(App(), "Sales", env=Environment(account=SALES, region="us-east-1"))
    known, unknown = (
        EndpointQueue.from_queue_arn(
            stack,
            name,
            f"arn:aws:sqs:us-east-1:{SALES}:{name}",
            dead_letter_queue_arn=f"arn:aws:sqs:us-east-1:{SALES}:{name}-dlq",
            max_receive_count=count,
        )
        for name, count in (("Billing", 12), ("error", None))
    )
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(known, INGRESS),
            RelayRoute(unknown, ERROR.replace("error", "error-ingress"), forward_unreadable=True),
        ],
        local_endpoints=["Sales"],
    )
    template = Template.from_stack(stack)
    routes = json.loads(
        deployed_environment(template, one(template, "AWS::Lambda::Function"))["RELAY_ROUTES"]
    )
    assert routes[f"arn:aws:sqs:us-east-1:{SALES}:Billing"] == {
        "destination": INGRESS,
        "deadLetterQueue": f"arn:aws:sqs:us-east-1:{SALES}:Billing-dlq",
        "maxReceiveCount": 12,
    }
    assert routes[f"arn:aws:sqs:us-east-1:{SALES}:error"] == {
        "destination": f"arn:aws:sqs:us-east-1:{BILLING}:error-ingress",
        "deadLetterQueue": f"arn:aws:sqs:us-east-1:{SALES}:error-dlq",
        "forwardUnreadable": True,
    }


def test_the_function_timeout_follows_the_batch_size(outbound: Template) -> None:
    assert one(outbound, "AWS::Lambda::Function")["Properties"]["Timeout"] == 60
    stack = Stack(App(), "S")
    CrossAccountRelay(
        stack,
        "Relay",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(source(stack, "Shadow", "Billing", batch_size=1000), INGRESS)],
        local_endpoints=["Sales"],
        batch_size=1000,
        max_batching_window=Duration.seconds(2),
    )
    template = Template.from_stack(stack)
    assert one(template, "AWS::Lambda::Function")["Properties"]["Timeout"] == 900


@pytest.mark.parametrize(
    ("made_for", "batch_size", "message"),
    [
        # SQS's default: Lambda would refuse the event source mapping at deploy time.
        (None, 10, "30 s, under the 360 s a batch of 10 needs"),
        (10, 1000, r"360 s, under the 5400 s a batch of 1000 needs \(6 x the function timeout"),
    ],
)
def test_a_source_queue_that_hides_a_message_shorter_than_its_batch_needs_is_refused(
    made_for: int | None, batch_size: int, message: str
) -> None:
    stack = Stack(App(), "S")
    shadow = (
        EndpointQueue(stack, "Shadow", endpoint_name="Billing")
        if made_for is None
        else source(stack, "Shadow", "Billing", batch_size=made_for)
    )
    with pytest.raises(
        ValueError,
        match=f"routes: the source queue S/Shadow/Queue has a visibility timeout of {message}",
    ):
        CrossAccountRelay(
            stack,
            "Relay",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(shadow, INGRESS)],
            local_endpoints=["Sales"],
            batch_size=batch_size,
            max_batching_window=Duration.seconds(1),
        )


@pytest.mark.parametrize(
    ("direction", "form", "message"),
    [
        (RelayDirection.INBOUND, None, "routes: an inbound route says the wire form"),
        (RelayDirection.OUTBOUND, MessageForm.WRAPPED, "got form=wrapped on a outbound relay"),
    ],
)
def test_the_wire_form_belongs_to_inbound_routes_only(
    direction: RelayDirection, form: MessageForm | None, message: str
) -> None:
    stack = billing_stack()
    route = RelayRoute(
        source(stack, "Queue", "Billing-ingress"),
        f"arn:aws:sqs:us-east-1:{BILLING}:Billing",
        receiver=ReceiverAddressing.ARN if direction is RelayDirection.INBOUND else None,
        form=form,
    )
    with pytest.raises(ValueError, match=message):
        CrossAccountRelay(
            stack,
            "Relay",
            direction=direction,
            routes=[route],
            local_endpoints=["Billing"] if direction is RelayDirection.OUTBOUND else (),
        )
