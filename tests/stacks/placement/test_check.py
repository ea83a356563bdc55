"""The pre-deploy check, on stacks as CloudFormation reports them: a named resource another stack
of the assembly takes, or another logical id, is refused naming both; a deployed messaging stack
the assembly lacks is refused; what the deploy adds and lets go is said."""

from __future__ import annotations

from pathlib import Path

from stacks.placement.check import AssemblyStack, check_account, is_compared, read_assembly
from stacks.placement.deployed import DeployedResource, DeployedStack

ACCOUNT = "444444444444"
REGION = "us-east-1"
QUEUE = "AWS::SQS::Queue"


def _assembly(name: str, **queues: str) -> AssemblyStack:
    return AssemblyStack(
        name, ACCOUNT, REGION, {(QUEUE, q): logical for q, logical in queues.items()}, "Big"
    )


def _deployed(name: str, *, retained: bool = True, **queues: str) -> DeployedStack:
    resources = tuple(
        DeployedResource(logical, QUEUE, queue, retained) for queue, logical in queues.items()
    )
    return DeployedStack(name, "UPDATE_COMPLETE", resources, None)


def test_an_assembly_that_keeps_every_queue_where_it_is_passes() -> None:
    result = check_account(
        [_assembly("Messaging-Big", Orders="OrdersQueue"), _assembly("Messaging-Big-2")],
        [_deployed("Messaging-Big", Orders="OrdersQueue")],
        ACCOUNT,
        REGION,
    )
    assert result.passed
    assert result.lines() == [
        "account 444444444444 (us-east-1): nothing moves; 1 named resources stay in their stacks",
        "  stack Messaging-Big-2 is new: CloudFormation creates it",
    ]


def test_a_queue_another_stack_of_the_assembly_takes_is_refused_naming_both_stacks() -> None:
    result = check_account(
        [_assembly("Messaging-Big"), _assembly("Messaging-Big-2", Orders="OrdersQueue")],
        [_deployed("Messaging-Big", Orders="OrdersQueue"), _deployed("Messaging-Big-2")],
        ACCOUNT,
        REGION,
    )
    ((problem,),) = [result.problems]
    assert problem.startswith(
        "queue 'Orders' is held by deployed stack Messaging-Big and the assembly puts it in "
        "Messaging-Big-2: deploying Messaging-Big would let it go (its messages stay there, no "
        "policy, alarm or relay left to deliver or drain them) and Messaging-Big-2 would fail "
        "creating it under its existing name. Keep it where it is: `python -m stacks.placement "
        "recover --profile <profile>`"
    )


def test_a_queue_under_another_logical_id_is_refused() -> None:
    result = check_account(
        [_assembly("Messaging-Big", Orders="OrdersQueueRenamed")],
        [_deployed("Messaging-Big", Orders="OrdersQueue")],
        ACCOUNT,
        REGION,
    )
    assert result.problems == (
        "queue 'Orders' of stack Messaging-Big is OrdersQueue deployed and OrdersQueueRenamed "
        "in the assembly: CloudFormation would create it again under the new logical id, which "
        "fails on its name (and lets the deployed one go). Keep its construct id",
    )


def test_a_deployed_stack_the_assembly_lacks_is_refused_with_both_ways_out() -> None:
    result = check_account(
        [_assembly("Messaging-Big", Orders="OrdersQueue")],
        [
            _deployed("Messaging-Big", Orders="OrdersQueue"),
            _deployed("Messaging-Big-2", Invoices="InvoicesQueue"),
        ],
        ACCOUNT,
        REGION,
    )
    ((problem,),) = [result.problems]
    assert problem.startswith(
        "deployed stack Messaging-Big-2 (1 queues) is not in the assembly: no deploy would reach "
        "it again while its relays keep running."
    )
    assert "recover --profile <profile> --account Big" in problem
    assert "retire --account Big" in problem


def test_a_queue_the_deploy_lets_go_is_said_with_what_happens_to_its_messages() -> None:
    for retained, fate in (
        (True, "Retain keeps it, with its messages, outside any stack"),
        (False, "is deleted with its messages"),
    ):
        result = check_account(
            [_assembly("Messaging-Big")],
            [_deployed("Messaging-Big", retained=retained, Orders="OrdersQueue")],
            ACCOUNT,
            REGION,
        )
        assert result.passed
        assert fate in result.notes[0]


def test_the_check_compares_the_assembly_s_stacks_and_its_accounts_messaging_stacks() -> None:
    assembly = [_assembly("Messaging-Big"), _assembly("DeliveryLogs-Big")]
    compared = {
        name: is_compared(assembly, ACCOUNT, REGION, name)
        for name in ("Messaging-Big-7", "DeliveryLogs-Big", "Messaging-BigData", "CDKToolkit")
    }
    assert compared == {
        "Messaging-Big-7": True,
        "DeliveryLogs-Big": True,
        "Messaging-BigData": False,
        "CDKToolkit": False,
    }
    assert not is_compared(assembly, "555555555555", REGION, "Messaging-Big")


def test_the_example_s_assembly_names_its_queues_as_sqs_does(example_assembly: Path) -> None:
    stacks = {stack.name: stack for stack in read_assembly(example_assembly)}
    sales = stacks["Messaging-Sales"]
    assert sales.account_name == "Sales"
    assert (QUEUE, "Sales") in sales.named
    assert (QUEUE, "Sales-ingress") in sales.named
    assert ("AWS::IAM::Role", "messaging-relay-outbound-Sales") in sales.named
    assert stacks["DeliveryLogs-Ops"].account_name is None
