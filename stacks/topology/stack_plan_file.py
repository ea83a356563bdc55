"""The committed stack plan: ``<topology>.stacks.json`` beside the topology file
(``cdk.stacks.json`` for the topology in ``cdk.json``), read by every synth and written when it
changes.

Commit it with the topology, as CDK's ``cdk.context.json`` is committed: the plan a synth placed
new units by is what keeps them in place at the next synth (:mod:`stacks.topology.stack_plan`).
A synth in CI can insist on a committed, current plan with the context ``stackPlanFrozen``
(``cdk synth -c stackPlanFrozen=true``): it then refuses to place or drop anything, since a
placement nobody committed may be made differently by a later synth, moving deployed queues.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cross_account_runtime.common.json_document import (
    WHOLE_DOCUMENT,
    JsonDocumentError,
    decode_json_document,
)
from stacks.topology.model import Topology
from stacks.topology.stack_plan import (
    MAX_STACKS,
    Assignment,
    StackPlan,
    StackPlanError,
    plan_stacks,
)

PLAN_FILE_SUFFIX = ".stacks.json"
ABOUT = (
    "Which stack of its account holds each endpoint's queues, ingress queue, shadow queue, "
    "topic and body bucket: 1 is Messaging-<account>, n is Messaging-<account>-<n>. Synth keeps "
    "every entry and adds new ones where there is room: commit this file with the topology. "
    "Changing an entry's number deletes its queues (and their messages) and creates them "
    "again, empty, in the other stack."
)


def plan_file_for(topology_file: Path) -> Path:
    """``topologies/org.json`` -> ``topologies/org.stacks.json``."""
    return topology_file.with_suffix(PLAN_FILE_SUFFIX)


def read_plan_file(path: Path) -> Assignment | None:
    """The assignment recorded in ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    source = str(path)
    try:
        document: Any = decode_json_document(path.read_bytes(), "the stack plan")
    except JsonDocumentError as error:
        raise StackPlanError(source, [(error.where, error.rule)]) from error
    accounts = document.get("accounts") if isinstance(document, dict) else None
    if not isinstance(accounts, dict):
        raise StackPlanError(
            source, [("accounts", "is required: an object of accounts (the file synth writes)")]
        )
    problems: list[tuple[str, str]] = []
    recorded: dict[str, dict[str, int]] = {}
    for account, entries in accounts.items():
        if not isinstance(entries, dict):
            problems.append((f"accounts.{account}", "must be an object of unit -> stack number"))
            continue
        recorded[account] = {}
        for key, number in entries.items():
            whole = isinstance(number, int) and not isinstance(number, bool)
            if not whole or not 1 <= number <= MAX_STACKS:
                problems.append(
                    (
                        f"accounts.{account}.{key}",
                        f"must be a stack number from 1 to {MAX_STACKS}",
                    )
                )
                continue
            recorded[account][key] = number
    if problems:
        raise StackPlanError(source, problems)
    return recorded


def write_plan_file(path: Path, assignment: Mapping[str, Mapping[str, int]]) -> None:
    """Write the plan: accounts in the topology's order, entries sorted, one per line."""
    document = {"about": ABOUT, "accounts": assignment}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def planned_from_file(topology: Topology, path: Path, *, frozen: bool = False) -> StackPlan:
    """Plan ``topology``'s stacks by the plan recorded in ``path``, and write the plan back when
    it changed (refused instead when ``frozen``)."""
    recorded = read_plan_file(path)
    plan = plan_stacks(topology, recorded, source=str(path))
    changed = recorded is None or plan.placed or plan.dropped
    if changed and frozen:
        raise StackPlanError(str(path), _unrecorded(recorded, plan))
    if changed:
        write_plan_file(path, plan.assignment)
    return plan


def _unrecorded(recorded: Assignment | None, plan: StackPlan) -> list[tuple[str, str]]:
    """What a frozen plan lacks, each with the fix."""
    fix = "; synthesize without stackPlanFrozen and commit the file it writes"
    if recorded is None:
        return [(WHOLE_DOCUMENT, "does not exist" + fix)]
    return [
        (f"accounts.{account}.{key}", f"is missing: synth would place it in stack {number}{fix}")
        for account, key, number in plan.placed
    ] + [
        (f"accounts.{account}.{key}", f"is no longer in the topology: synth would drop it{fix}")
        for account, key, _ in plan.dropped
    ]
