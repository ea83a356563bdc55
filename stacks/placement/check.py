"""The pre-deploy check: the assembly about to be deployed, compared with what one account has
deployed, so that no deploy moves a queue, whatever happened to the plan it was synthesized
from (lost, merged, edited by hand).

CloudFormation does not move a named resource between stacks: the stack that gives a queue up
leaves it (``Retain``) in the account with its messages but without its policy, alarms or relay
mapping, and the stack that takes it fails creating it under its existing name. Nor does it
keep one whose logical id changed: it creates it again under the new id, which fails the same
way. So a named resource (queue, topic, bucket, key alias, log group, role, function, stream)
held by one deployed stack and declared by another stack of the assembly, or under another
logical id, is refused, naming both; so is a deployed messaging stack of the account the
assembly no longer has (its relays would keep running, unseen by any deploy). What the assembly
adds, and the queues it lets go (kept by ``Retain``), are reported.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import boto3

from stacks.placement.deployed import DeployedStack, read_deployed
from stacks.placement.plan import UNITS_METADATA
from stacks.placement.plan_file import PLACEMENT_COMMAND
from stacks.placement.units import NamedResource
from stacks.quotas.assembly import (
    NAME_PROPERTIES,
    QuotaGateError,
    StackTemplate,
    read_templates,
)
from stacks.topology.stack_ids import stack_number

COMPARED_TYPES: Mapping[str, str] = {
    "AWS::SQS::Queue": "queue",
    "AWS::SNS::Topic": "topic",
    "AWS::S3::Bucket": "bucket",
    "AWS::KMS::Alias": "key alias",
    "AWS::Logs::LogGroup": "log group",
    "AWS::Logs::Destination": "log destination",
    "AWS::IAM::Role": "role",
    "AWS::Lambda::Function": "function",
    "AWS::KinesisFirehose::DeliveryStream": "delivery stream",
}
"""The named resource types compared, with what messages call them: every type the stacks name
that CloudFormation refuses to create twice under one name."""


@dataclass(frozen=True)
class Declared:
    """A named resource of the assembly: its stack and logical id."""

    stack: str
    logical_id: str


@dataclass(frozen=True)
class AssemblyStack:
    """A stack of the assembly, as the check reads it: its named resources and, for a
    messaging stack, the account it belongs to."""

    name: str
    account_id: str
    region: str
    named: Mapping[NamedResource, str]
    """``(type, name)`` -> logical id."""
    account_name: str | None


@dataclass(frozen=True)
class CheckResult:
    """The comparison for one account and region."""

    account_id: str
    region: str
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    kept: int
    """Named resources the assembly keeps where they are deployed."""

    @property
    def passed(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        head = (
            f"account {self.account_id} ({self.region}): "
            + (f"{len(self.problems)} refused" if self.problems else "nothing moves")
            + f"; {self.kept} named resources stay in their stacks"
        )
        return [head, *(f"  refused: {p}" for p in self.problems), *(f"  {n}" for n in self.notes)]


class AssemblyError(ValueError):
    """The folder is not a cloud assembly the check can read."""


def read_assembly(assembly_dir: str | Path) -> tuple[AssemblyStack, ...]:
    """Every stack of the assembly with its named resources; raises :class:`AssemblyError`."""
    try:
        templates = read_templates(assembly_dir)
    except QuotaGateError as error:
        raise AssemblyError(str(error)) from error
    return tuple(_assembly_stack(template) for template in templates)


def _assembly_stack(template: StackTemplate) -> AssemblyStack:
    named: dict[NamedResource, str] = {}
    for logical_id, resource in template.resources.items():
        resource_type = resource.get("Type", "")
        name_property = NAME_PROPERTIES.get(resource_type, ("", 0))[0]
        given = resource.get("Properties", {}).get(name_property) if name_property else None
        if resource_type in COMPARED_TYPES and given is not None:
            named[(resource_type, template.text(given))] = logical_id
    recorded = template.template.get("Metadata", {}).get(UNITS_METADATA, {})
    account = recorded.get("Account") if isinstance(recorded, Mapping) else None
    return AssemblyStack(
        template.name,
        template.account,
        template.region,
        named,
        account if isinstance(account, str) else None,
    )


def messaging_stack_names(assembly: Iterable[AssemblyStack], account_id: str) -> set[str]:
    """The account names whose messaging stacks the assembly holds for ``account_id``."""
    return {s.account_name for s in assembly if s.account_id == account_id and s.account_name}


def is_compared(assembly: Sequence[AssemblyStack], account_id: str, region: str, name: str) -> bool:
    """Whether a deployed stack called ``name`` takes part in the check: a stack of the
    assembly, or a messaging stack of an account the assembly deploys there."""
    ours = [s for s in assembly if s.account_id == account_id and s.region == region]
    return any(s.name == name for s in ours) or any(
        stack_number(account, name) is not None
        for account in messaging_stack_names(ours, account_id)
    )


def check_account(
    assembly: Sequence[AssemblyStack],
    deployed: Sequence[DeployedStack],
    account_id: str,
    region: str,
) -> CheckResult:
    """Compare the assembly's stacks of ``account_id`` in ``region`` with ``deployed``, the
    stacks :func:`is_compared` selects there."""
    ours = [s for s in assembly if s.account_id == account_id and s.region == region]
    declared: dict[NamedResource, Declared] = {
        key: Declared(stack.name, logical_id)
        for stack in ours
        for key, logical_id in stack.named.items()
    }
    problems: list[str] = []
    notes: list[str] = []
    kept = 0
    names = {s.name for s in ours}
    accounts = messaging_stack_names(ours, account_id)
    for stack in deployed:
        held = stack.named()
        for key, resource in sorted(held.items()):
            if key[0] not in COMPARED_TYPES:
                continue
            what = f"{COMPARED_TYPES[key[0]]} {key[1]!r}"
            there = declared.get(key)
            if there is None:
                if stack.name in names and key[0] == "AWS::SQS::Queue":
                    notes.append(_let_go(what, stack.name, resource.retained))
            elif there.stack != stack.name:
                problems.append(_moved(what, stack.name, there.stack, key[0]))
            elif there.logical_id != resource.logical_id:
                problems.append(
                    f"{what} of stack {stack.name} is {resource.logical_id} deployed and "
                    f"{there.logical_id} in the assembly: CloudFormation would create it again "
                    "under the new logical id, which fails on its name (and lets the deployed "
                    "one go). Keep its construct id"
                )
            else:
                kept += 1
        if stack.name not in names:
            queues = sum(1 for key in held if key[0] == "AWS::SQS::Queue")
            owner = next((a for a in sorted(accounts) if stack_number(a, stack.name)), "<account>")
            problems.append(
                f"deployed stack {stack.name} ({queues} queues) is not in the assembly: no "
                "deploy would reach it again while its relays keep running. Keep it in the "
                f"plan (`{PLACEMENT_COMMAND} recover --profile <profile> --account {owner}` "
                "restores a lost stack), or retire it on purpose: drain its queues, delete it "
                f"(`aws cloudformation delete-stack --stack-name {stack.name}`), then "
                f"`{PLACEMENT_COMMAND} retire --account {owner}`"
            )
    deployed_names = {s.name for s in deployed}
    notes += [
        f"stack {name} is new: CloudFormation creates it" for name in sorted(names - deployed_names)
    ]
    return CheckResult(account_id, region, tuple(problems), tuple(notes), kept)


def check_deployed(
    assembly: Sequence[AssemblyStack],
    session: boto3.session.Session,
    account_id: str,
    *,
    endpoint_url: str | None = None,
) -> list[CheckResult]:
    """:func:`check_account` for each region the assembly deploys ``account_id`` in, against
    what the session (of that account) reads there."""
    results = []
    for region in sorted({s.region for s in assembly if s.account_id == account_id}):
        deployed = read_deployed(
            session,
            region,
            functools.partial(is_compared, assembly, account_id, region),
            endpoint_url=endpoint_url,
        )
        results.append(check_account(assembly, deployed, account_id, region))
    return results


def _moved(what: str, deployed_in: str, assembly_in: str, resource_type: str) -> str:
    left = (
        "its messages stay there, no policy, alarm or relay left to deliver or drain them"
        if resource_type == "AWS::SQS::Queue"
        else "left behind, unmanaged"
    )
    return (
        f"{what} is held by deployed stack {deployed_in} and the assembly puts it in "
        f"{assembly_in}: deploying {deployed_in} would let it go ({left}) and {assembly_in} "
        "would fail creating it under its existing name. Keep it where it is: "
        f"`{PLACEMENT_COMMAND} recover --profile <profile>` rebuilds the plan from the "
        "deployed stacks; to move it on purpose, see the README's 'Moving a queue'"
    )


def _let_go(what: str, stack: str, retained: bool) -> str:
    if retained:
        return (
            f"{what} leaves stack {stack}: Retain keeps it, with its messages, outside any "
            "stack; drain and delete it when its endpoint is gone"
        )
    return f"{what} leaves stack {stack} and is deleted with its messages"
