"""What a deployed stack holds: the units its template records, or, for a stack deployed before
stacks recorded them, the units whose queue, topic or bucket it holds; the names CloudFormation
reports physical ids by."""

from __future__ import annotations

from typing import Any

from stacks.placement.deployed import DeployedResource, DeployedStack, physical_name, units_held
from stacks.placement.placing import new_organization_plan
from stacks.placement.units import unit_resources
from stacks.topology import parse_topology


def test_queues_and_topics_are_named_by_the_end_of_their_url_and_arn() -> None:
    assert physical_name("AWS::SQS::Queue", "https://sqs.us-east-1.amazonaws.com/1/Orders") == (
        "Orders"
    )
    assert physical_name("AWS::SNS::Topic", "arn:aws:sns:us-east-1:1:Orders.fifo") == "Orders.fifo"
    assert physical_name("AWS::KMS::Alias", "alias/messaging/Orders") == "alias/messaging/Orders"


def test_a_stack_that_records_its_units_holds_those(document: dict[str, Any]) -> None:
    stack = DeployedStack("Messaging-Sales", "CREATE_COMPLETE", (), ("endpoint:Sales",))
    assert units_held(stack, {}) == ("endpoint:Sales",)


def test_a_stack_deployed_before_stacks_recorded_their_units_holds_those_of_its_resources(
    document: dict[str, Any],
) -> None:
    topology = parse_topology(document)
    sales = new_organization_plan(topology).stack("Sales", 1)
    names = unit_resources(topology, "Sales")
    unit_resources_held = [
        DeployedResource(f"Id{i}", resource_type, name, True)
        for i, (resource_type, name) in enumerate(names)
    ]
    dead_letter_queue = DeployedResource("Dlq", "AWS::SQS::Queue", "Sales-dlq", True)
    stack = DeployedStack(
        "Messaging-Sales", "UPDATE_COMPLETE", (*unit_resources_held, dead_letter_queue), None
    )
    assert units_held(stack, names) == tuple(sorted(unit.key for unit in sales.units))
