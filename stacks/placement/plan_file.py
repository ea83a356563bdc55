"""The committed stack plan, ``<topology>.stacks`` beside the topology file (``cdk.stacks`` for
the topology in ``cdk.json``): which stack of its account holds each unit.

Every synth reads it and nothing but the placement commands writes it
(:mod:`stacks.placement.__main__`). It is a line per fact, so that git merges two branches'
additions without a conflict (``.gitattributes`` gives it git's ``union`` merge, which keeps
the lines of both sides where they touch)::

    account Billing 222222222222     the topology's account Billing is AWS account 2222...
    stack Billing 2                  Billing's stack 2 (Messaging-Billing-2) exists
    unit Billing 2 endpoint:E61      ... and holds the unit endpoint:E61

Whatever a merge or a hand edit leaves is read strictly: a line that is not one of those three,
a conflict marker, a unit in a stack the account does not have, stacks numbered with a gap, or
one unit in two stacks is refused, naming the line. Lines may come in any order and twice; the
commands write them sorted, an account after another.

An earlier release kept the plan as JSON, ``<topology>.stacks.json`` (per account, per unit,
the stack number); :func:`read_earlier_plan` reads it for ``place`` to convert.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from constructs_lib.validation import ACCOUNT_ID
from cross_account_runtime.common.json_document import JsonDocumentError, decode_json_document
from stacks.placement.units import UnitKind
from stacks.topology import TopologyError
from stacks.topology.parsing import ACCOUNT_NAME, CDK_JSON
from stacks.topology.stack_ids import stack_name

PLAN_FILE_SUFFIX = ".stacks"
EARLIER_PLAN_SUFFIX = ".stacks.json"
MAX_STACKS = 999
"""An account's stacks are numbered 1 to 999, as its relay roles are (``relay_role_name``)."""
PLACEMENT_COMMAND = "python -m stacks.placement"

ABOUT = f"""\
The stack plan: which stack of its account holds each endpoint's queues, ingress queue,
shadow queue, topic and body bucket. Stack 1 is Messaging-<account>, stack n is
Messaging-<account>-<n>. Every synth reads it as it is. `{PLACEMENT_COMMAND} place`
records new units (where there is room, or in a new stack) and drops those gone: commit it
with the topology.

A unit given another stack here is NOT moved by CloudFormation: its queues are Retain, so
the stack that gives them up leaves them in the account with their messages but without
their policy, alarms or relay (other accounts' relays are refused, nothing drains them),
and the stack that takes them fails on their existing names. `{PLACEMENT_COMMAND} check`
refuses such a deploy; `{PLACEMENT_COMMAND} recover` rebuilds a lost plan from the
deployed stacks.

Lines: "account <name> <id>", "stack <account> <n>", "unit <account> <n> <unit>"."""

_CONFLICT_MARKER = re.compile(r"^(<{7}|={7}|>{7}|\|{7})( |$)")
_UNIT_KEY = re.compile(
    rf"^(?:{'|'.join(k.value for k in UnitKind if k is not UnitKind.BODIES)}):\S+$"
)


class StackPlanError(TopologyError):
    """The plan cannot be read or does not place the topology: every problem names the line,
    the account or the unit, and the fix, one line each (``<plan file>: <where>: <problem>``),
    without the topology's heading: the topology itself is valid."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        super().__init__(source, problems)
        self.args = ("\n".join(f"{source}: {where}: {rule}" for where, rule in problems),)


@dataclass(frozen=True)
class AccountRecord:
    """What the plan records of one account: its AWS account id, how many stacks it has
    (numbered from 1, without gaps) and which stack holds each of its units."""

    account_id: str
    stacks: int
    units: Mapping[str, int] = field(default_factory=dict)

    def holding(self, number: int) -> tuple[str, ...]:
        """The keys of the units recorded in stack ``number``, sorted."""
        return tuple(sorted(key for key, n in self.units.items() if n == number))


PlanRecord = Mapping[str, AccountRecord]
"""The recorded plan: per account name, its record."""


@dataclass(frozen=True)
class PlanFile:
    """Where a topology's plan lives, and the placement commands as its refusals spell them."""

    topology_file: Path = CDK_JSON

    @property
    def path(self) -> Path:
        """``topologies/org.json`` -> ``topologies/org.stacks``; ``cdk.json`` -> ``cdk.stacks``."""
        return self.topology_file.with_suffix(PLAN_FILE_SUFFIX)

    @property
    def earlier_path(self) -> Path:
        """Where an earlier release kept the plan, as JSON."""
        return self.topology_file.with_suffix(EARLIER_PLAN_SUFFIX)

    def command(self, verb: str, *arguments: str) -> str:
        """``python -m stacks.placement <verb> [--topology <file>] <arguments>``, the topology
        named unless it is the project's ``cdk.json``."""
        default = self.topology_file.resolve() == CDK_JSON.resolve()
        topology = () if default else ("--topology", str(self.topology_file))
        return " ".join([PLACEMENT_COMMAND, verb, *topology, *arguments])


def read_plan(plan: PlanFile, *, leaving_out: Collection[str] = ()) -> PlanRecord | None:
    """The plan recorded beside the topology, or ``None`` when there is none; raises
    :class:`StackPlanError` for a file that is not a plan, and for a plan still in the earlier
    JSON form (which ``place`` converts).

    ``leaving_out`` reads it without the lines of those accounts, whatever they hold, and
    without conflict markers: what ``recover`` keeps of the other accounts while it rebuilds
    theirs from their deployed stacks.
    """
    path = plan.path
    if not path.exists():
        if plan.earlier_path.exists():
            raise StackPlanError(
                str(plan.earlier_path),
                [
                    (
                        "the whole file",
                        f"holds the plan in the form of an earlier release (JSON, which git "
                        f"cannot merge): `{plan.command('place')}` rewrites it as {path.name}, "
                        "a line per unit, keeping every entry; commit both changes",
                    )
                ],
            )
        return None
    if plan.earlier_path.exists():
        raise StackPlanError(
            str(plan.earlier_path),
            [
                (
                    "the whole file",
                    f"is the plan in an earlier form beside {path.name}, which replaced it: "
                    "delete it (git rm)",
                )
            ],
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StackPlanError(
            str(path),
            [
                (
                    "the whole file",
                    f"cannot be read ({error}): restore it from git, or rebuild each account's "
                    f"lines from its deployed stacks (`{plan.command('recover')}`)",
                )
            ],
        ) from error
    if leaving_out:
        # Blanked rather than removed, so that a problem left names its line as it is.
        text = "\n".join(
            "" if _CONFLICT_MARKER.match(line) or _account_of(line) in leaving_out else line
            for line in text.splitlines()
        )
    return parse_plan(text, str(path))


def parse_plan(text: str, source: str) -> PlanRecord:
    """The record the plan's lines give; raises :class:`StackPlanError` naming every line and
    account that is not a plan's."""
    problems: list[tuple[str, str]] = []
    ids: dict[str, tuple[str, int]] = {}
    stacks: dict[str, dict[int, int]] = {}
    units: dict[str, dict[str, tuple[int, int]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"line {number}"
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if _CONFLICT_MARKER.match(line):
            problems.append((where, _conflict_marker(line)))
            continue
        problem = _line_problem(fields)
        if problem:
            problems.append((where, f"{problem}, not {line.strip()!r}"))
            continue
        kind, account = fields[0], fields[1]
        if kind == "account":
            first = ids.setdefault(account, (fields[2], number))
            if first[0] != fields[2]:
                problems.append(
                    (
                        where,
                        f"account {account} is AWS account {fields[2]} here and {first[0]} on "
                        f"line {first[1]}: keep the line of the account its stacks are in",
                    )
                )
        elif kind == "stack":
            stacks.setdefault(account, {}).setdefault(int(fields[2]), number)
        else:
            key, stack = fields[3], int(fields[2])
            recorded = units.setdefault(account, {})
            first_unit = recorded.setdefault(key, (stack, number))
            if first_unit[0] != stack:
                problems.append(
                    (
                        where,
                        f"unit {key} of account {account} is in stack {stack} here and in stack "
                        f"{first_unit[0]} on line {first_unit[1]} (both sides of a merge placed "
                        "it?): keep the line of the stack that holds it; the deployed stacks "
                        f"say which (`{PLACEMENT_COMMAND} recover` rebuilds the account's lines "
                        "from them)",
                    )
                )
    for account in sorted({*stacks, *units} - set(ids)):
        problems.append(
            (
                f"account {account}",
                f"has stacks or units but no 'account {account} <12-digit id>' line: add it "
                "(the id of the AWS account its stacks are deployed in)",
            )
        )
    for account in sorted(ids):
        numbers = stacks.get(account, {})
        if not numbers and units.get(account):
            problems.append((f"account {account}", "has units but no 'stack' line"))
            continue
        highest = max(numbers, default=0)
        missing = [n for n in range(1, highest + 1) if n not in numbers]
        if missing:
            problems.append(
                (
                    f"account {account}",
                    f"stack {missing[0]} is missing: an account's stacks are numbered from 1 "
                    f"without gaps (the plan records {_numbers(numbers)}); restore the line "
                    f"'stack {account} {missing[0]}' (a stack that holds no unit stays, "
                    "empty, until retired), or rebuild the account's lines from its deployed "
                    f"stacks (`{PLACEMENT_COMMAND} recover`)",
                )
            )
        for key, (stack, line_number) in sorted(units.get(account, {}).items()):
            if stack not in numbers:
                problems.append(
                    (
                        f"line {line_number}",
                        f"puts unit {key} in stack {stack} of account {account}, which the plan "
                        f"does not have (it records {_numbers(numbers) or 'none'}): a unit "
                        "stays in the stack that holds it; new units are placed by "
                        f"`{PLACEMENT_COMMAND} place`",
                    )
                )
    if problems:
        raise StackPlanError(source, sorted(problems, key=_by_line))
    return {
        account: AccountRecord(
            account_id,
            max(stacks.get(account, {}), default=0),
            {key: stack for key, (stack, _) in units.get(account, {}).items()},
        )
        for account, (account_id, _) in sorted(ids.items())
    }


def _account_of(line: str) -> str | None:
    """The account a line is about (its second field), if it has one."""
    fields = line.split()
    return fields[1] if len(fields) > 1 else None


def _line_problem(fields: list[str]) -> str | None:
    """Why ``fields`` are not one of the plan's three lines, or ``None``."""
    kind = fields[0]
    shapes = {"account": 3, "stack": 3, "unit": 4}
    if kind not in shapes:
        return (
            "a line is 'account <name> <id>', 'stack <account> <n>' or 'unit <account> <n> <unit>'"
        )
    if len(fields) != shapes[kind]:
        return {
            "account": "an account line is 'account <name> <12-digit id>'",
            "stack": "a stack line is 'stack <account> <n>'",
            "unit": "a unit line is 'unit <account> <n> <unit>'",
        }[kind]
    if not ACCOUNT_NAME.match(fields[1]):
        return f"{fields[1]!r} is not an account name of a topology"
    if kind == "account":
        return None if ACCOUNT_ID.match(fields[2]) else "an account id is 12 digits"
    if not fields[2].isdigit() or not 1 <= int(fields[2]) <= MAX_STACKS:
        return f"a stack number is from 1 to {MAX_STACKS}"
    if kind == "unit" and not (fields[3] == UnitKind.BODIES or _UNIT_KEY.match(fields[3])):
        kinds = ", ".join(f"'{k}:<name>'" for k in UnitKind if k is not UnitKind.BODIES)
        return f"a unit is 'bodies', {kinds}"
    return None


def _conflict_marker(line: str) -> str:
    return (
        f"{line.split(maxsplit=1)[0][:7]!r} marks a merge conflict git left here: keep the lines of both "
        "sides and delete the markers (each line is one fact: the two sides' units simply add "
        "up; a unit both sides placed in different stacks is then named). The repository's "
        ".gitattributes has git do this itself (`*.stacks merge=union`)"
    )


def _numbers(numbers: Iterable[int]) -> str:
    ordered = sorted(numbers)
    return ", ".join(f"stack {n}" for n in ordered)


def _by_line(problem: tuple[str, str]) -> tuple[int, str]:
    where = problem[0]
    return (int(where.split()[1]), where) if where.startswith("line ") else (1 << 30, where)


def format_plan(record: PlanRecord) -> str:
    """The plan's text: the explanation, then each account (by name) with its stacks, each
    followed by its units, sorted."""
    lines = [f"# {line}".rstrip() for line in ABOUT.splitlines()]
    for account in sorted(record):
        entry = record[account]
        lines += ["", f"account {account} {entry.account_id}"]
        for number in range(1, entry.stacks + 1):
            lines.append(f"stack {account} {number}")
            lines += [f"unit {account} {number} {key}" for key in entry.holding(number)]
    return "\n".join(lines) + "\n"


def write_plan(plan: PlanFile, record: PlanRecord) -> None:
    """Write the plan, and delete the earlier JSON form it replaces."""
    plan.path.write_text(format_plan(record), encoding="utf-8")
    plan.earlier_path.unlink(missing_ok=True)


def read_earlier_plan(plan: PlanFile) -> dict[str, dict[str, int]] | None:
    """Per account, per unit key, the stack number the earlier JSON form records, or ``None``
    when there is no such file."""
    path = plan.earlier_path
    if not path.exists():
        return None
    source = str(path)
    raw = path.read_bytes()
    markers = [
        (f"line {n}", _conflict_marker(line))
        for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1)
        if _CONFLICT_MARKER.match(line)
    ]
    if markers:
        raise StackPlanError(source, markers)
    try:
        document: Any = decode_json_document(raw, "the stack plan")
    except JsonDocumentError as error:
        raise StackPlanError(source, [(error.where, error.rule)]) from error
    accounts = document.get("accounts") if isinstance(document, dict) else None
    if not isinstance(accounts, dict):
        raise StackPlanError(
            source, [("accounts", "is required: an object of accounts (the file synth wrote)")]
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
                    (f"accounts.{account}.{key}", f"must be a stack number from 1 to {MAX_STACKS}")
                )
                continue
            recorded[account][key] = number
    if problems:
        raise StackPlanError(source, problems)
    return recorded


def describe_stack(account: str, number: int) -> str:
    """``stack 2 (Messaging-Billing-2)``, for messages."""
    return f"stack {number} ({stack_name(account, number)})"
