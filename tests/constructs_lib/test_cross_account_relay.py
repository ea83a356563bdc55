"""CrossAccountRelay: the function with its configuration file, its event sources and a role
that reaches only its queues."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template

from constructs_lib import EndpointQueue, MessageBodyBucket, RelayTiming
from constructs_lib.cross_account_relay import (
    CrossAccountRelay,
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
    RelayRoute,
)
from constructs_lib.cross_account_relay.configuration_file import CONFIGURATION_FILE
from constructs_lib.queue_naming import dead_letter_queue_name, ingress_queue_name
from cross_account_runtime.relay import config as relay_config
from cross_account_runtime.relay import config_format
from stacks.quotas import quota_problems
from stacks.topology import Topology, parse_topology
from stacks.topology.bridge import bridge_shadows

SALES = "111111111111"
INGRESS = "arn:aws:sqs:us-east-1:222222222222:Billing-ingress"
OWN_BODIES = "messaging-bodies-222222222222-us-east-1"


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


@dataclass(frozen=True)
class Synthesized:
    """A stack's template and the assembly it was written into (with the assets)."""

    template: Template
    outdir: Path

    @classmethod
    def of(cls, stack: Stack) -> Synthesized:
        template = Template.from_stack(stack)
        outdir = stack.node.root.outdir  # type: ignore[attr-defined]
        return cls(template, Path(outdir))

    def code_folder(self, function: Mapping[str, Any] | None = None) -> Path:
        """Where the assembly holds the function's code asset (the folder the CDK CLI zips and
        uploads as ``<hash>.zip``)."""
        function = function or one(self.template, "AWS::Lambda::Function")
        key = function["Properties"]["Code"]["S3Key"]
        folder = self.outdir / f"asset.{key.removesuffix('.zip')}"
        assert folder.is_dir(), folder
        return folder

    def configuration_file(self, function: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The configuration file in the function's code asset, as synthesized."""
        text = (self.code_folder(function) / CONFIGURATION_FILE).read_text(encoding="utf-8")
        document: dict[str, Any] = json.loads(text)
        return document


@pytest.fixture(scope="module")
def outbound_synth() -> Synthesized:
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
    return Synthesized.of(stack)


@pytest.fixture(scope="module")
def outbound(outbound_synth: Synthesized) -> Template:
    return outbound_synth.template


def one(template: Template, kind: str) -> dict[str, Any]:
    (resource,) = template.find_resources(kind).values()
    return dict(resource)


def test_the_construct_takes_the_runtimes_relay_direction_so_both_read_one_value() -> None:
    """What the construct writes into RELAY_DIRECTION is what the relay reads back."""
    assert RelayDirection is config_format.RelayDirection


def test_the_function_runs_the_relay_named_its_configuration_file_and_home(
    outbound: Template,
) -> None:
    function = one(outbound, "AWS::Lambda::Function")["Properties"]
    assert function["Handler"] == "cross_account_runtime.relay.lambda_handler.handler"
    assert function["Architectures"] == ["arm64"]
    assert function["Environment"]["Variables"] == {
        "RELAY_CONFIGURATION": "relay-config.json",
        # What CloudFormation fills in stays here: the file is written at synth.
        "RELAY_HOME": {
            "Fn::Join": [
                "",
                ["arn:", {"Ref": "AWS::Partition"}, f":sqs:us-east-1:{SALES}"],
            ]
        },
        # Its role's name: the metrics' Service, by which its alarms find this relay's.
        "POWERTOOLS_SERVICE_NAME": "messaging-relay-outbound-Sales",
    }


def test_the_configuration_file_names_the_stacks_queues_by_name(
    outbound_synth: Synthesized,
) -> None:
    """The source queues' ARNs are CloudFormation's to fill in; their names are not."""
    assert outbound_synth.configuration_file() == {
        "direction": "outbound",
        "routes": {
            "Billing": {
                "destination": INGRESS,
                "deadLetterQueue": "Billing-dlq",
                "maxReceiveCount": 10,
            }
        },
        "localEndpoints": ["Sales"],
    }


def test_the_runtime_reads_the_file_from_the_code_asset_as_lambda_unpacks_it(
    outbound_synth: Synthesized,
) -> None:
    config = relay_config.RelayConfig.from_environment(
        deployed_environment(outbound_synth, account=SALES)
    )
    route = config.routes[f"arn:aws:sqs:us-east-1:{SALES}:Billing"]
    assert str(route.dead_letter_queue) == f"arn:aws:sqs:us-east-1:{SALES}:Billing-dlq"
    assert str(route.destination) == INGRESS
    assert config.local_endpoints == {"Sales": f"arn:aws:sqs:us-east-1:{SALES}:Sales"}


def test_the_event_source_reports_batch_item_failures(outbound: Template) -> None:
    mapping = one(outbound, "AWS::Lambda::EventSourceMapping")["Properties"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 10


def test_a_flood_into_one_queue_runs_at_most_ten_invocations_at_once(outbound: Template) -> None:
    """Not the account's whole Lambda concurrency, which every other function shares."""
    mapping = one(outbound, "AWS::Lambda::EventSourceMapping")["Properties"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 10}


@pytest.mark.parametrize("value", [1, 1001])
def test_a_maximum_concurrency_lambda_would_refuse_is_refused(value: int) -> None:
    stack = Stack(App(), "S")
    with pytest.raises(ValueError, match="max_concurrency: must be a whole number from 2 to 1000"):
        CrossAccountRelay(
            stack,
            "Outbound",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(source(stack, "Shadow", "Billing"), INGRESS)],
            local_endpoints=["Sales"],
            max_concurrency=value,
        )


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
    """Each of its own queues by ARN, the sources and their DLQs: not every queue of the
    account, whose other keys and queues are no business of the relay."""
    (statement,) = [
        s for s in key_grants(outbound) if f":{SALES}:key/*" in json.dumps(s["Resource"])
    ]
    condition = statement["Condition"]["StringEquals"]
    assert "sqs.us-east-1." in json.dumps(condition["kms:ViaService"])
    queues = json.dumps(condition["kms:EncryptionContext:aws:sqs:arn"])
    names = {"Billing", "Billing-dlq"}
    assert {name for name in names if f':sqs:us-east-1:{SALES}:{name}"' in queues} == names
    assert "*" not in queues
    assert "StringLike" not in statement["Condition"]


def test_ingress_queues_admit_the_relay_roles_only() -> None:
    stack = Stack(App(), "Billing", env=Environment(account="222222222222", region="us-east-1"))
    ingress = EndpointQueue(
        stack, "Ingress", endpoint_name="Billing-ingress", delayed_delivery=False
    )
    ingress.add_sender_roles(f"arn:aws:iam::{SALES}:role/messaging-relay-outbound-Sales")
    template = Template.from_stack(stack)
    (allow,) = [
        s
        for p in template.find_resources("AWS::SQS::QueuePolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow"
    ]
    assert allow["Principal"] == {"AWS": "*"}
    assert allow["Condition"] == {
        "ArnEquals": {
            "aws:PrincipalArn": [f"arn:aws:iam::{SALES}:role/messaging-relay-outbound-Sales"]
        }
    }
    key = one(template, "AWS::KMS::Key")["Properties"]["KeyPolicy"]["Statement"]
    (key_grant,) = [s for s in key if s.get("Sid") == "AllowSendersRoles"]
    assert key_grant["Condition"]["ArnEquals"] == allow["Condition"]["ArnEquals"]
    alias = one(template, "AWS::KMS::Alias")["Properties"]
    assert alias["AliasName"] == "alias/messaging/Billing-ingress"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"routes": []}, "routes: a relay needs at least one queue"),
        ({"local_endpoints": []}, "local_endpoints: an outbound relay stamps"),
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
    document = Synthesized.of(stack).configuration_file()
    assert document["addressBooks"] == {
        "1": {
            f"arn:aws:sqs:us-east-1:{BILLING}": ["Billing"],
            f"arn:aws:sqs:us-east-1:{SALES}": ["Sales", "Shipping"],
        }
    }
    assert [route["addressBook"] for route in document["routes"].values()] == ["1", "1"]


def deployed_environment(
    synthesized: Synthesized, function: Mapping[str, Any] | None = None, account: str = BILLING
) -> dict[str, str]:
    """The function's environment as Lambda gives it: what CloudFormation resolves written out
    for ``account`` in us-east-1, and the folder its code is unpacked in."""
    function = function or one(synthesized.template, "AWS::Lambda::Function")
    pseudo = {"AWS::Partition": "aws", "AWS::Region": "us-east-1", "AWS::AccountId": account}
    buckets = synthesized.template.find_resources("AWS::S3::Bucket")

    def text(value: Any) -> str:
        if isinstance(value, str):
            return value
        if "Ref" in value:
            reference = value["Ref"]
            if reference in pseudo:
                return pseudo[reference]
            name: str = buckets[reference]["Properties"]["BucketName"]
            return name
        return "".join(text(part) for part in value["Fn::Join"][1])

    variables = function["Properties"]["Environment"]["Variables"]
    return {
        **{key: text(value) for key, value in variables.items()},
        "LAMBDA_TASK_ROOT": str(synthesized.code_folder(function)),
    }


def test_any_number_of_routes_is_read_by_one_function_whose_environment_stays_small() -> None:
    """Lambda's 4 KB of environment held about eight routes; the file holds them all."""
    stack = Stack(App(), "Ops", env=Environment(account=BILLING, region="us-east-1"))
    names = [f"Endpoint{n:02}" for n in range(40)]
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(
                source(stack, name, name, delayed_delivery=False),
                f"arn:aws:sqs:us-east-1:{SALES}:{name}-ingress",
                body_bucket=f"messaging-bodies-{SALES}-us-east-1",
            )
            for name in names
        ],
        local_endpoints=["error"],
        body_bucket=MessageBodyBucket(stack, "Bodies", bucket_name=OWN_BODIES),
    )
    synthesized = Synthesized.of(stack)
    (function,) = synthesized.template.find_resources("AWS::Lambda::Function").values()
    environment = deployed_environment(synthesized, function)
    assert function["Properties"]["Environment"]["Variables"].keys() == {
        "RELAY_CONFIGURATION",
        "RELAY_HOME",
        "RELAY_BODY_BUCKET",
        "POWERTOOLS_SERVICE_NAME",
    }
    mappings = synthesized.template.find_resources("AWS::Lambda::EventSourceMapping").values()
    assert len(mappings) == len(names)
    config = relay_config.RelayConfig.from_environment(environment)
    assert sorted(route.source.name for route in config.routes.values()) == names
    assert config.body_bucket == OWN_BODIES


def test_an_address_book_of_five_hundred_queues_is_read_by_the_relay() -> None:
    """The error queue's ingress in a ring of ten accounts of fifty endpoints: 501 queues,
    some 5.9 KB of address book, refused while it had to fit Lambda's environment."""
    reachable = (
        *(
            f"arn:aws:sqs:us-east-1:{account:012}:Endpoint{n:02}"
            for account in range(1, 11)
            for n in range(50)
        ),
        f"arn:aws:sqs:us-east-1:{BILLING}:error",
    )
    stack = billing_stack()
    released_inbound(stack, ["error"], reachable)
    synthesized = Synthesized.of(stack)
    config = relay_config.RelayConfig.from_environment(deployed_environment(synthesized))
    (route,) = config.routes.values()
    assert len(route.addresses) == 501
    assert route.addresses[f"arn:aws:sqs:us-east-1:{BILLING}:error"] == "error"


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
def inbound_synth() -> Synthesized:
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
    return Synthesized.of(stack)


@pytest.fixture(scope="module")
def inbound(inbound_synth: Synthesized) -> Template:
    return inbound_synth.template


def test_inbound_routes_carry_form_receive_count_body_bucket_as_the_runtime_reads_them(
    inbound_synth: Synthesized,
) -> None:
    environment = deployed_environment(inbound_synth)
    assert "RELAY_BODY_BUCKET" not in environment
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


def test_the_inbound_relay_may_put_bodies_into_its_own_bucket_under_its_prefix_only(
    inbound: Template,
) -> None:
    puts = [s for s in statements(inbound) if "s3:PutObject" in s["Action"]]
    assert [s["Resource"] for s in puts] == [
        {
            "Fn::Join": [
                "",
                ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{BODIES}/relay/{BILLING}/*"],
            ]
        }
    ]
    (key,) = [s for s in statements(inbound) if "kms:Encrypt" in s["Action"]]
    assert key["Condition"] == {
        "ForAnyValue:StringEquals": {"kms:ResourceAliases": ["alias/messaging/bodies"]},
        "StringLike": {"kms:ViaService": "s3.*.amazonaws.com"},
        "StringEquals": {
            "kms:EncryptionContext:aws:s3:arn": [
                {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{BODIES}"]]}
            ]
        },
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
    routes = Synthesized.of(stack).configuration_file()["routes"]
    # Imported queues are known by ARN at synth: the file names them so.
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


# What the file cannot hold: values CloudFormation fills in ------------------------------------


@dataclass(frozen=True)
class TeamQueue:
    """A team's own queue and dead-letter queue behind :class:`IEndpointQueue`."""

    queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    encryption_key: kms.IKey | None = None
    fifo: bool = False
    max_receive_count: int | None = None
    visibility_timeout: Duration | None = None

    @property
    def queue_arn(self) -> str:
        return self.queue.queue_arn


def test_a_teams_own_named_queues_are_named_in_the_file() -> None:
    stack = Stack(App(), "Team")
    team = TeamQueue(
        sqs.Queue(stack, "Orders", queue_name="Orders"),
        sqs.Queue(stack, "OrdersDlq", queue_name="Orders-dlq"),
    )
    CrossAccountRelay(
        stack,
        "Relay",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(team, INGRESS)],
        local_endpoints=["Sales"],
    )
    synthesized = Synthesized.of(stack)
    assert synthesized.configuration_file()["routes"] == {
        "Orders": {"destination": INGRESS, "deadLetterQueue": "Orders-dlq"}
    }
    # An environment-agnostic stack: CloudFormation fills in its account and region too.
    home = one(synthesized.template, "AWS::Lambda::Function")["Properties"]["Environment"][
        "Variables"
    ]["RELAY_HOME"]
    assert home == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":sqs:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
            ],
        ]
    }


@pytest.mark.parametrize(
    ("generated", "message"),
    [
        (
            "queue",
            "routes: the source queue Team/Orders has no ARN known at synth and no name there",
        ),
        (
            "dead_letter_queue",
            "routes: the dead-letter queue Team/OrdersDlq has no ARN known at synth",
        ),
    ],
)
def test_a_queue_whose_name_cloudformation_generates_is_refused_with_the_fix(
    generated: str, message: str
) -> None:
    stack = Stack(App(), "Team")
    queues = {
        role: sqs.Queue(stack, construct_id, queue_name=None if role == generated else name)
        for role, construct_id, name in (
            ("queue", "Orders", "Orders"),
            ("dead_letter_queue", "OrdersDlq", "Orders-dlq"),
        )
    }
    team = TeamQueue(queues["queue"], queues["dead_letter_queue"])
    with pytest.raises(ValueError, match=message) as raised:
        CrossAccountRelay(
            stack,
            "Relay",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(team, INGRESS)],
            local_endpoints=["Sales"],
        )
    assert "create the queue with a queue_name in the relay's stack" in str(raised.value)


def test_a_queue_of_another_account_named_but_not_imported_is_refused() -> None:
    """Its name alone would be read in the relay's own account."""
    app = App()
    other = Stack(app, "Other", env=Environment(account=BILLING, region="us-east-1"))
    stack = Stack(app, "Sales", env=Environment(account=SALES, region="us-east-1"))
    shadow = source(other, "Shadow", "Billing")
    with pytest.raises(ValueError, match="routes: the source queue Other/Shadow/Queue has no ARN"):
        CrossAccountRelay(
            stack,
            "Relay",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(shadow, INGRESS)],
            local_endpoints=["Sales"],
        )


@pytest.mark.parametrize(
    ("keyword", "message"),
    [
        ("destination_arn", "routes: destination_arn of the route reading S/Shadow/Queue is a "),
        ("reachable_queues", "routes: reachable_queues of the route reading S/Shadow/Queue is a"),
        ("body_bucket", "routes: body_bucket of the route reading S/Shadow/Queue is a "),
        ("local_endpoints", "local_endpoints is a CloudFormation token"),
    ],
)
def test_a_token_where_the_file_needs_text_is_refused_naming_the_keyword(
    keyword: str, message: str
) -> None:
    stack = Stack(App(), "S")
    token = sqs.Queue(stack, "Elsewhere", queue_name="Elsewhere")
    inbound = keyword == "reachable_queues"
    route: dict[str, Any] = {
        "destination_arn": f"arn:aws:sqs:us-east-1:{SALES}:Billing" if inbound else INGRESS,
        "receiver": ReceiverAddressing.NAME if inbound else None,
        "form": MessageForm.WRAPPED if inbound else None,
    }
    local = ["Sales"]
    if keyword == "local_endpoints":
        local = [token.queue_name]
    elif keyword == "reachable_queues":
        route[keyword] = (token.queue_arn,)
    else:
        route[keyword] = token.queue_arn if keyword == "destination_arn" else token.queue_name
    with pytest.raises(ValueError, match=message) as raised:
        CrossAccountRelay(
            stack,
            "Relay",
            direction=RelayDirection.INBOUND if inbound else RelayDirection.OUTBOUND,
            routes=[RelayRoute(source(stack, "Shadow", "Billing"), **route)],
            local_endpoints=() if inbound else local,
            body_bucket=MessageBodyBucket(stack, "Bodies") if keyword == "body_bucket" else None,
        )
    assert "the relay's configuration file, written at synth, cannot hold" in str(raised.value)


def test_a_destination_that_is_not_a_queue_arn_is_refused_naming_the_route() -> None:
    stack = Stack(App(), "S")
    with pytest.raises(
        ValueError,
        match="routes: destination_arn of the route reading S/Shadow/Queue: 'Billing-ingress' is "
        "not an SQS queue ARN",
    ):
        CrossAccountRelay(
            stack,
            "Relay",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(source(stack, "Shadow", "Billing"), "Billing-ingress")],
            local_endpoints=["Sales"],
        )


def relay_code_key(routes: list[str]) -> str:
    """The S3 key of the code asset of an outbound relay reading shadows named ``routes``."""
    stack = Stack(App(), "Sales", env=Environment(account=SALES, region="us-east-1"))
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(source(stack, name, name), f"arn:aws:sqs:us-east-1:{BILLING}:{name}-ingress")
            for name in routes
        ],
        local_endpoints=["Sales"],
    )
    key: str = one(Template.from_stack(stack), "AWS::Lambda::Function")["Properties"]["Code"][
        "S3Key"
    ]
    return key


def test_the_same_routes_give_the_same_code_asset_and_other_routes_another() -> None:
    """A synth that changes nothing must not redeploy the function; a route added must."""
    assert relay_code_key(["Billing", "Shipping"]) == relay_code_key(["Billing", "Shipping"])
    assert relay_code_key(["Billing", "Shipping"]) != relay_code_key(["Billing"])


def scale_topology(name: str) -> Topology:
    """A case of bench/scale_topologies.py, a script beside the benchmarks (not a package)."""
    path = Path(__file__).resolve().parents[2] / "bench" / "scale_topologies.py"
    spec = importlib.util.spec_from_file_location("scale_topologies", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return parse_topology(module.topology(name), name)


def test_a_ring_of_ten_by_fifty_account_is_relayed_from_a_file_far_over_lambdas_environment() -> (
    None
):
    """``ring_ten_by_fifty`` (bench/scale_topologies.py): the outbound relay of Team01 reads
    the shadows of the fifty endpoints its own send to, of the error queue and of every
    endpoint ServiceControl's retries return to, with their delay queues' shadows. Its
    configuration is some 36 KB, nine times Lambda's 4 KB of environment, which keeps three
    short variables."""
    topology = scale_topology("ring_ten_by_fifty")
    team = topology.account("Team01")
    stack = Stack(App(), "Team01", env=Environment(account=team.id, region=team.region))
    routes = []
    for shadow in bridge_shadows(topology).shadows_in(team.name):
        ingress = topology.sqs_arn(
            shadow.remote.account, ingress_queue_name(shadow.remote.queue_name)
        )
        names = [(shadow.queue_name, False)]
        if shadow.delay_queue_name is not None:
            names.append((shadow.delay_queue_name, True))
        for name, delayed in names:
            queue = EndpointQueue.from_queue_arn(
                stack,
                name,
                topology.sqs_arn(team.name, name),
                dead_letter_queue_arn=topology.sqs_arn(team.name, dead_letter_queue_name(name)),
                max_receive_count=10,
            )
            routes.append(RelayRoute(queue, ingress, delayed=delayed))
    local = [q.queue_name for q in topology.queues_in(team.name)]
    relay = CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=routes,
        local_endpoints=local,
    )
    synthesized = Synthesized.of(stack)

    assert len(relay.configuration.encode()) > 8 * 4_096
    (function,) = synthesized.template.find_resources("AWS::Lambda::Function").values()
    environment = deployed_environment(synthesized, function, account=team.id)
    variables = {k: v for k, v in environment.items() if k.startswith("RELAY_")}
    assert sum(len(k) + len(v) for k, v in variables.items()) < 100
    config = relay_config.RelayConfig.from_environment(environment)
    assert len(config.routes) == len(routes) > 200
    assert len(config.local_endpoints) == len(local) == 50


def test_a_relay_of_many_long_named_queues_keeps_every_policy_within_iams_sizes(
    tmp_path: Path,
) -> None:
    """With ``minimizePolicies`` aws-cdk-lib merges the send grants into one statement, which it
    cannot split when the role's policy overflows into managed policies; granted in parts, each
    overflow policy stays within IAM's 6,144 characters."""
    app = App(
        outdir=str(tmp_path),
        context={
            "@aws-cdk/aws-iam:minimizePolicies": True,
            "@aws-cdk/core:stackResourceLimit": 0,  # the quota gate below counts instead
        },
    )
    stack = Stack(app, "Ops", env=Environment(account=BILLING, region="us-east-1"))
    names = [f"{'Shadow' * 10}{n:03}" for n in range(45)]  # 63 characters
    CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(
                source(stack, name, name),
                f"arn:aws:sqs:us-east-1:{SALES}:{name}-ingress",
                delayed=True,  # sent back to when not due: one more queue of its own per route
            )
            for name in names
        ],
        local_endpoints=["error"],
    )
    app.synth()
    template = json.loads((tmp_path / "Ops.template.json").read_text(encoding="utf-8"))
    overflow = [r for r in template["Resources"].values() if r["Type"] == "AWS::IAM::ManagedPolicy"]
    assert len(overflow) >= 2  # the case overflows the role's inline policy
    assert quota_problems(tmp_path) == []
