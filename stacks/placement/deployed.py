"""What the organization holds: an account's deployed stacks, read from CloudFormation.

The deployed stacks are the source of truth of where each unit lives: ``recover`` rebuilds a
lost plan from them, ``check`` compares an assembly with them before a deploy. Each stack is
read with three calls a read-only role may make (``cloudformation:ListStacks``,
``GetTemplate``, ``ListStackResources``): its template's metadata gives the units it holds
(:data:`~stacks.placement.plan.UNITS_METADATA`), its resources the names it holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3

from stacks.placement.plan import UNITS_METADATA
from stacks.placement.units import NamedResource, unit_resources
from stacks.topology.model import Account, Topology
from stacks.topology.stack_ids import stack_number

GONE_STATUSES = ("DELETE_COMPLETE", "REVIEW_IN_PROGRESS")
"""Stacks that hold nothing: deleted, or created for a change set never executed."""
ROLLED_BACK_CREATION = "ROLLBACK_COMPLETE"
"""A stack whose creation failed: CloudFormation deleted what it created (and left what it
retains, outside any stack)."""
IN_PROGRESS = "_IN_PROGRESS"
GONE_RESOURCES = ("DELETE_COMPLETE", "DELETE_SKIPPED")
"""A resource no longer in its stack: deleted, or retained when its stack let it go."""


class DeployedError(RuntimeError):
    """The deployed stacks cannot be read as they are (one is being deployed, say)."""


@dataclass(frozen=True)
class DeployedResource:
    """One resource of a deployed stack: its logical id, type, physical name and whether it
    is retained when its stack lets it go."""

    logical_id: str
    type: str
    name: str
    retained: bool


@dataclass(frozen=True)
class DeployedStack:
    """One deployed stack: its name, status and resources, and the units its template records
    (``None`` when it records none: deployed before stacks recorded their units)."""

    name: str
    status: str
    resources: tuple[DeployedResource, ...]
    units: tuple[str, ...] | None

    def named(self) -> dict[NamedResource, DeployedResource]:
        """Its resources by ``(type, physical name)``."""
        return {(r.type, r.name): r for r in self.resources}


def physical_name(resource_type: str, physical_id: str) -> str:
    """The name a resource is known by from CloudFormation's physical id: a queue's URL and a
    topic's ARN end in their names; the other named types' ids are their names."""
    if resource_type == "AWS::SQS::Queue":
        return physical_id.rstrip("/").rsplit("/", 1)[-1]
    if resource_type == "AWS::SNS::Topic":
        return physical_id.rsplit(":", 1)[-1]
    return physical_id


def caller_account(session: boto3.session.Session, endpoint_url: str | None = None) -> str:
    """The AWS account the session's credentials belong to."""
    identity = session.client("sts", endpoint_url=endpoint_url).get_caller_identity()
    account: str = identity["Account"]
    return account


def read_deployed(
    session: boto3.session.Session,
    region: str,
    wanted: Callable[[str], bool],
    *,
    endpoint_url: str | None = None,
) -> tuple[DeployedStack, ...]:
    """The live stacks of the session's account in ``region`` whose names ``wanted`` accepts,
    by name. Raises :class:`DeployedError` when one of them is being deployed or deleted."""
    cloudformation = session.client("cloudformation", region_name=region, endpoint_url=endpoint_url)
    summaries = [
        summary
        for page in cloudformation.get_paginator("list_stacks").paginate()
        for summary in page["StackSummaries"]
        if summary["StackStatus"] not in GONE_STATUSES and wanted(summary["StackName"])
    ]
    busy = [s for s in summaries if str(s["StackStatus"]).endswith(IN_PROGRESS)]
    if busy:
        raise DeployedError(
            "; ".join(f"stack {s['StackName']} is {s['StackStatus']}" for s in busy)
            + ": wait until it is done, then run this again"
        )
    return tuple(
        _read_stack(cloudformation, summary["StackName"], summary["StackStatus"])
        for summary in sorted(summaries, key=lambda s: str(s["StackName"]))
    )


def _template(body: Any) -> Mapping[str, Any]:
    """The template as a mapping; empty for one written in YAML, which no stack of this
    package is (its metadata and deletion policies are then unknown)."""
    if isinstance(body, Mapping):
        return body
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, Mapping) else {}


def _read_stack(cloudformation: Any, name: str, status: str) -> DeployedStack:
    body = cloudformation.get_template(StackName=name, TemplateStage="Original")["TemplateBody"]
    template = _template(body)
    declared: Mapping[str, Any] = template.get("Resources", {})
    resources = tuple(
        DeployedResource(
            summary["LogicalResourceId"],
            summary["ResourceType"],
            physical_name(summary["ResourceType"], summary["PhysicalResourceId"]),
            declared.get(summary["LogicalResourceId"], {}).get("DeletionPolicy") == "Retain",
        )
        for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=name)
        for summary in page["StackResourceSummaries"]
        if summary.get("PhysicalResourceId") and summary["ResourceStatus"] not in GONE_RESOURCES
    )
    recorded = template.get("Metadata", {}).get(UNITS_METADATA)
    units = None
    if isinstance(recorded, Mapping) and isinstance(recorded.get("Units"), list):
        units = tuple(str(unit) for unit in recorded["Units"])
    if status == ROLLED_BACK_CREATION:
        # Its creation failed: it holds nothing (what it retains is outside any stack).
        return DeployedStack(name, status, (), ())
    return DeployedStack(name, status, resources, units)


def units_held(stack: DeployedStack, unit_names: Mapping[NamedResource, str]) -> tuple[str, ...]:
    """The units ``stack`` holds: those its template records, or, for a stack deployed before
    stacks recorded their units, those whose resource (``unit_names``,
    :func:`~stacks.placement.units.unit_resources`) it holds."""
    if stack.units is not None:
        return stack.units
    return tuple(sorted(unit_names[name] for name in stack.named() if name in unit_names))


def deployed_units(
    session: boto3.session.Session,
    topology: Topology,
    account: Account,
    *,
    endpoint_url: str | None = None,
) -> tuple[tuple[DeployedStack, ...], dict[int, tuple[str, ...]]]:
    """The account's deployed messaging stacks, and per stack number the units it holds."""
    stacks = read_deployed(
        session,
        account.region,
        lambda name: stack_number(account.name, name) is not None,
        endpoint_url=endpoint_url,
    )
    names = unit_resources(topology, account.name)
    units = {}
    for stack in stacks:
        number = stack_number(account.name, stack.name)
        assert number is not None  # read_deployed selected those that have one
        units[number] = units_held(stack, names)
    return stacks, units
