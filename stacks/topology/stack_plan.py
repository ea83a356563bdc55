"""Which stack of its account each unit (:mod:`stacks.topology.stack_units`) lives in.

CloudFormation takes at most 500 resources and 200 outputs per stack, and an account of the
organization needs more: its shadows alone (one per endpoint elsewhere that ServiceControl
retries to, about 9 resources each) fill Ops' stack at some fifty endpoints. So an account gets
as many stacks as its units need: ``Messaging-<account>``, ``Messaging-<account>-2``, ...

**Nothing that exists moves.** A named queue moved to another stack is deleted with its
messages by the one and created empty by the other. A rule computed from the topology alone
cannot promise that: filling stacks in declaration order shifts every unit after an insertion
into the next stack; hashing names into a fixed number of stacks overflows one of them sooner
or later, and changing the number rehashes everything. So the assignment is *recorded*, as
CDK records lookups in ``cdk.context.json``: a committed file
(:mod:`stacks.topology.stack_plan_file`) that synth reads every time and writes when units
appear or go away. A recorded unit keeps its stack whatever is added or removed around it; a
new unit goes to the lowest-numbered stack with room (freed room included), or to a new stack
after the last; a removed unit's entry is dropped.

A recorded unit may grow where it is (an endpoint subscribed to one more topic, a shadow that
gains its delay queue's shadow, a relay that needs another function), so new units fill a stack
only to :data:`RESOURCE_BUDGET`, 50 under CloudFormation's limit. When growth still takes a
stack over the limit, synth refuses, naming the stack, its count and the fix; it never moves a
unit on its own.

An account the recorded plan has no entry for (a first synth, or an account deployed before
stacks were split) keeps all its units in its first stack when they fit CloudFormation's limits
there, as its one stack always held them: a deployed account sees no change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from stacks.checks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES
from stacks.topology.model import Account, Endpoint, KeyGranularity, Topology, TopologyError
from stacks.topology.stack_ids import stack_name
from stacks.topology.stack_units import KEY, RELAY, StackUnit, UnitKind, account_units
from stacks.topology.topics import Topic

RESOURCE_HEADROOM = 50
"""Resources each stack keeps free when new units are placed, for its units to grow in place
without moving: some twelve more subscriptions, delay queues' shadows or relay functions."""
RESOURCE_BUDGET = CLOUDFORMATION_RESOURCES.fixed - RESOURCE_HEADROOM
"""How far new units fill a stack."""
OUTPUT_BUDGET = CLOUDFORMATION_OUTPUTS.fixed
"""How far new units fill a stack's outputs: a unit's outputs never grow, so no headroom."""
MAX_STACKS = 999
"""An account's stacks are numbered 1 to 999, as its relay roles are (``relay_role_name``)."""

Assignment = Mapping[str, Mapping[str, int]]
"""Per account name, per unit key, the number of the account's stack that holds the unit."""


class StackPlanError(TopologyError):
    """The units cannot be placed: every problem names the account or entry and the fix, one
    line each (``<plan file>: <field>: <problem>``), without the topology's heading: the
    topology itself is valid."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        super().__init__(source, problems)
        self.args = ("\n".join(f"{source}: {path}: {rule}" for path, rule in problems),)


@dataclass(frozen=True)
class AccountStack:
    """One stack of an account: its number and the units it holds."""

    account: Account
    number: int
    units: tuple[StackUnit, ...]
    shared_key: bool = False
    """Whether its queues share one key of the stack (``"keys": "perAccount"``), which it
    holds once it holds a queue."""

    @property
    def name(self) -> str:
        """``Messaging-<account>`` or ``Messaging-<account>-<n>``."""
        return stack_name(self.account, self.number)

    @property
    def resources(self) -> int:
        """The resources its template will hold: its units', and a relay per direction that
        reads queues here."""
        relays = {unit.relay for unit in self.units} - {None}
        key = KEY if self.shared_key and any(unit.queues for unit in self.units) else 0
        return sum(unit.resources for unit in self.units) + RELAY * len(relays) + key

    @property
    def outputs(self) -> int:
        return sum(unit.outputs for unit in self.units)

    def holds(self, kind: UnitKind) -> tuple[str, ...]:
        """The names of the units of ``kind`` it holds, in the topology's order."""
        return tuple(unit.name for unit in self.units if unit.kind is kind)

    def with_unit(self, unit: StackUnit) -> AccountStack:
        return AccountStack(self.account, self.number, (*self.units, unit), self.shared_key)


@dataclass(frozen=True)
class StackPlan:
    """Every account's stacks, and what this synth changed in the recorded plan."""

    stacks: tuple[AccountStack, ...]
    """The accounts' stacks, in the topology's order of accounts, each account's by number."""
    placed: tuple[tuple[str, str, int], ...] = ()
    """``(account, unit key, stack number)`` of each unit the recorded plan did not hold."""
    dropped: tuple[tuple[str, str, int], ...] = ()
    """``(account, unit key, stack number)`` of each recorded entry no longer in the topology."""
    source: str = "<stack plan>"

    @property
    def assignment(self) -> dict[str, dict[str, int]]:
        """What the plan file records: per account, per unit key, the stack number."""
        recorded: dict[str, dict[str, int]] = {}
        for stack in self.stacks:
            entries = recorded.setdefault(stack.account.name, {})
            entries.update((unit.key, stack.number) for unit in stack.units)
        return {account: dict(sorted(entries.items())) for account, entries in recorded.items()}

    def stacks_of(self, account: str) -> tuple[AccountStack, ...]:
        return tuple(s for s in self.stacks if s.account.name == account)

    def stack(self, account: str, number: int) -> AccountStack:
        return next(s for s in self.stacks_of(account) if s.number == number)

    def stack_of(self, account: str, key: str) -> AccountStack:
        """The stack that holds the unit ``key`` of ``account``."""
        return next(s for s in self.stacks_of(account) if any(u.key == key for u in s.units))

    def topic_stack(self, topic: Topic) -> AccountStack:
        return self.stack_of(topic.account, f"{UnitKind.TOPIC}:{topic.name}")

    def endpoint_stack(self, endpoint: Endpoint) -> AccountStack:
        return self.stack_of(endpoint.account, f"{UnitKind.ENDPOINT}:{endpoint.name}")


def plan_stacks(
    topology: Topology,
    recorded: Assignment | None = None,
    *,
    source: str = "<stack plan>",
) -> StackPlan:
    """Place every account's units: recorded ones where ``recorded`` says, new ones where there
    is room (see the module's docstring). Raises :class:`StackPlanError` listing every stack
    over a CloudFormation limit and every unit that fits nowhere."""
    problems: list[tuple[str, str]] = []
    stacks: list[AccountStack] = []
    placed: list[tuple[str, str, int]] = []
    dropped: list[tuple[str, str, int]] = []
    for account in topology.accounts:
        units = account_units(topology, account.name)
        shared_key = topology.keys is KeyGranularity.PER_ACCOUNT
        entries = dict((recorded or {}).get(account.name, {}))
        keys = {unit.key for unit in units}
        dropped += [(account.name, k, n) for k, n in sorted(entries.items()) if k not in keys]
        if not units:
            continue
        if not entries and _fits(AccountStack(account, 1, units, shared_key), limits=True):
            # Where the account's one stack has always held them.
            account_stacks = [AccountStack(account, 1, units, shared_key)]
            placed += [(account.name, unit.key, 1) for unit in units]
        else:
            account_stacks = _place(
                AccountStack(account, 0, (), shared_key), units, entries, placed
            )
        for stack in account_stacks:
            problems += _over_limits(stack, source)
        stacks += account_stacks
    if recorded is not None:
        dropped += [
            (name, key, number)
            for name, entries in sorted(recorded.items())
            if not any(a.name == name for a in topology.accounts)
            for key, number in sorted(entries.items())
        ]
    if problems:
        raise StackPlanError(source, problems)
    return StackPlan(tuple(stacks), tuple(placed), tuple(dropped), source)


def _place(
    empty: AccountStack,
    units: Sequence[StackUnit],
    entries: Mapping[str, int],
    placed: list[tuple[str, str, int]],
) -> list[AccountStack]:
    """The account's stacks, each first like ``empty``: recorded units in their stacks, then
    each new unit in the first stack it fits within the budgets (a new one after the last if
    none)."""
    account = empty.account
    stacks: dict[int, AccountStack] = {}

    def numbered(n: int) -> AccountStack:
        return stacks.get(n, replace(empty, number=n))

    for unit in units:
        number = entries.get(unit.key)
        if number is not None:
            stacks[number] = numbered(number).with_unit(unit)
    for unit in units:
        if unit.key in entries:
            continue
        last = max(stacks, default=0)
        number = next(
            (n for n in range(1, last + 1) if _fits(numbered(n).with_unit(unit))),
            last + 1,
        )
        stacks[number] = numbered(number).with_unit(unit)
        placed.append((account.name, unit.key, number))
    return [stacks[n] for n in sorted(stacks)]


def _fits(stack: AccountStack, *, limits: bool = False) -> bool:
    """Whether the stack stays within the budgets (or, with ``limits``, CloudFormation's)."""
    resources = CLOUDFORMATION_RESOURCES.fixed if limits else RESOURCE_BUDGET
    return stack.resources <= resources and stack.outputs <= OUTPUT_BUDGET


def _over_limits(stack: AccountStack, source: str) -> list[tuple[str, str]]:
    """A problem for a stack over CloudFormation's limits or numbered beyond the last."""
    path = f"accounts.{stack.account.name}"
    problems = []
    if stack.number > MAX_STACKS:
        problems.append(
            (
                path,
                f"would need stack {stack.number}, beyond the {MAX_STACKS} an account's relay "
                "roles are numbered for; split the account's endpoints over more accounts",
            )
        )
    for what, count, limit in (
        ("resources", stack.resources, CLOUDFORMATION_RESOURCES.fixed),
        ("outputs", stack.outputs, CLOUDFORMATION_OUTPUTS.fixed),
    ):
        if count <= limit:
            continue
        largest = sorted(stack.units, key=lambda u: -u.resources)[:3]
        if len(stack.units) == 1:
            fix = (
                f"{_described(stack.units[0])} alone is that large: give it fewer "
                "subscriptions or split it"
            )
        else:
            fix = (
                "its units grew in place beyond the room kept for that; give some of them "
                f"(the largest: {', '.join(u.key for u in largest)}) another stack number in "
                f"{source}, or remove some. A unit given another stack is deleted from this one "
                "and created again there, its queues empty: drain them first"
            )
        problems.append(
            (
                path,
                f"stack {stack.name} would hold {count} {what}, over CloudFormation's {limit}: "
                f"{fix}",
            )
        )
    return problems


def _described(unit: StackUnit) -> str:
    return {
        UnitKind.BODIES: "the body bucket",
        UnitKind.TOPIC: f"topic {unit.name!r}",
        UnitKind.ENDPOINT: f"the queue of {unit.name!r}",
        UnitKind.INGRESS: f"the ingress queue of {unit.name!r}",
        UnitKind.SHADOW: f"the shadow queue {unit.name!r}",
    }[unit.kind]
