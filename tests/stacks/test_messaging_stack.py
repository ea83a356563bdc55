"""What the example's stacks give the relays and ServiceControl's queues, read from the
synthesized templates: every relay function's configuration as the runtime reads it (wire forms,
poison messages to the error queue, receive counts, body buckets), the platform queues with
their outputs, source queues timed for the relays' batch size, and a dashboard per stack that
shows every alarm of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from constructs_lib import MessageForm, RelayTiming
from constructs_lib.defaults import RELAY_BATCH_SIZE
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.config_format import RelayDirection
from stacks.checks.access_report import SynthesizedStack, read_assembly
from stacks.quotas import read_templates

pytestmark = pytest.mark.synth

SALES, BILLING, OPS = "111111111111", "222222222222", "333333333333"
TIMING = RelayTiming.for_batch(RELAY_BATCH_SIZE)


def relays(assembly: Path) -> list[tuple[SynthesizedStack, dict[str, Any], RelayConfig]]:
    """Every relay function of the assembly's stacks with its configuration file (in its code
    asset) and its environment resolved as CloudFormation would, read by the runtime's own
    configuration."""
    found = []
    for stack in read_assembly(assembly):
        for logical_id, resource in stack.template["Resources"].items():
            variables = resource.get("Properties", {}).get("Environment", {}).get("Variables", {})
            if resource["Type"] == "AWS::Lambda::Function" and "RELAY_CONFIGURATION" in variables:
                environment = {k: stack.resolve(v) for k, v in variables.items()}
                environment["LAMBDA_TASK_ROOT"] = str(stack.code(logical_id))
                found.append((stack, resource, RelayConfig.from_environment(environment)))
    return found


def resources(stack: SynthesizedStack, kind: str) -> list[dict[str, Any]]:
    return [r for r in stack.template["Resources"].values() if r["Type"] == kind]


def test_inbound_routes_deliver_in_the_receivers_form_with_their_own_body_bucket(
    example_assembly: Path,
) -> None:
    forms: dict[str, MessageForm | None] = {}
    for stack, _, config in relays(example_assembly):
        if config.direction is not RelayDirection.INBOUND:
            continue
        for route in config.routes.values():
            forms[route.destination.name] = route.form
            assert route.body_bucket == f"messaging-bodies-{stack.account}-us-east-1"
            assert route.max_receive_count == TIMING.max_receive_count
            # Only what the error queue gets passes on unread, as the transport moves it there.
            assert route.forward_unreadable == (route.destination.name == "error")
    assert forms == {
        "Sales": MessageForm.WRAPPED,
        "Shipping": MessageForm.ATTRIBUTE,  # "wrapOutgoingMessages": false
        "Billing": MessageForm.WRAPPED,
        # ServiceControl wraps.
        "error": MessageForm.WRAPPED,
        "audit": MessageForm.WRAPPED,
        "Particular-ServiceControl": MessageForm.WRAPPED,
        "Particular-Monitoring": MessageForm.WRAPPED,
    }


def test_outbound_routes_pass_poison_messages_on_only_toward_the_error_queue(
    example_assembly: Path,
) -> None:
    outbound = [
        (stack, route)
        for stack, _, config in relays(example_assembly)
        if config.direction is RelayDirection.OUTBOUND
        for route in config.routes.values()
    ]
    assert {
        (stack.account, route.source.name) for stack, route in outbound if route.forward_unreadable
    } == {
        (SALES, "error"),
        (BILLING, "error"),
    }
    for stack, route in outbound:
        assert route.form is None
        assert route.max_receive_count == TIMING.max_receive_count
        assert route.body_bucket == f"messaging-bodies-{route.destination.account}-us-east-1"
        assert stack.account != route.destination.account


def test_servicecontrols_queues_are_created_in_ops_with_outputs_and_no_delay_queue(
    example_assembly: Path,
) -> None:
    (ops,) = [s for s in read_assembly(example_assembly) if s.name == "Messaging-Ops"]
    names = {r["Properties"]["QueueName"] for r in resources(ops, "AWS::SQS::Queue")}
    for queue in ("error", "audit", "Particular-ServiceControl", "Particular-Monitoring"):
        assert {queue, f"{queue}-dlq", f"{queue}-ingress"} <= names
        assert f"{queue}-delay.fifo" not in names
    outputs = ops.template["Outputs"]
    for name in ("audit", "ParticularServiceControl", "ParticularMonitoring"):
        assert {
            f"{name}TransportAddress",
            f"{name}QueueUrl",
            f"{name}DeadLetterQueueArn",
        } <= set(outputs)


def test_relays_and_their_source_queues_are_timed_for_the_batch_size(
    example_assembly: Path,
) -> None:
    read = relays(example_assembly)
    assert {function["Properties"]["Timeout"] for _, function, _ in read} == {
        TIMING.function_timeout.to_seconds()
    }
    sources = {
        (stack.name, arn.split(":")[5]) for stack, _, config in read for arn in config.routes
    }
    # Sales: 6 shadows (Billing's and its delay queue's, ServiceControl's four) and 2 ingress
    # queues; Billing: 8 shadows and 1 ingress queue; Ops: 3 shadows and 4 ingress queues.
    assert len(sources) == 24
    for stack in read_assembly(example_assembly):
        for queue in resources(stack, "AWS::SQS::Queue"):
            properties = queue["Properties"]
            if (stack.name, properties["QueueName"]) in sources:
                assert properties["VisibilityTimeout"] == TIMING.visibility_timeout.to_seconds()
                assert properties["RedrivePolicy"]["maxReceiveCount"] == TIMING.max_receive_count


def test_each_messaging_stack_has_a_dashboard_named_as_it_showing_every_alarm_once(
    example_assembly: Path,
) -> None:
    for stack in read_templates(example_assembly):
        if not stack.name.startswith("Messaging-"):
            continue
        ((_, props),) = stack.of_type("AWS::CloudWatch::Dashboard")
        assert props["DashboardName"] == stack.name
        body = json.loads(stack.text(props["DashboardBody"]))
        headings = [w["properties"]["markdown"] for w in body["widgets"] if w["type"] == "text"]
        account = stack.name.removeprefix("Messaging-")
        assert headings[1:] == [
            f"## Outbound relay messaging-relay-outbound-{account}",
            f"## Inbound relay messaging-relay-inbound-{account}",
            "## Endpoint queues, topics and subscriptions",
        ]
        shown = [
            arn
            for w in body["widgets"]
            if w["type"] == "alarm"
            for arn in w["properties"]["alarms"]
        ]
        alarms = [
            stack.name_of(logical_id) for logical_id, _ in stack.of_type("AWS::CloudWatch::Alarm")
        ]
        assert sorted(arn.rsplit(":alarm:", 1)[1] for arn in shown) == sorted(alarms)
