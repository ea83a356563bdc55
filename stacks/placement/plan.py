"""Which stack of its account each unit (:mod:`stacks.placement.units`) lives in, as the committed
plan records it.

CloudFormation takes at most 500 resources and 200 outputs per stack, and an account of the
organization needs more: its shadows alone (one per endpoint elsewhere that ServiceControl
retries to, about 9 resources each) fill Ops' stack at some fifty endpoints. So an account gets
as many stacks as its units need: ``Messaging-<account>``, ``Messaging-<account>-2``, ...

**Nothing that exists moves.** A queue given to another stack is not moved by CloudFormation:
queues and keys are ``Retain``, so the stack that gives one up leaves it in the account with
its messages but without its policy, alarms or relay mapping (other accounts' relays are
refused, nothing drains it), and the stack that takes it fails creating it under its existing
name. A rule computed from the topology alone cannot promise that: filling stacks in
declaration order shifts every unit after an insertion into the next stack; hashing names into
a fixed number of stacks overflows one of them sooner or later. So the assignment is
*recorded* in a committed file (:mod:`stacks.placement.plan_file`) and every synth reads it as
it is: :func:`stack_plan` builds exactly the stacks it records, and refuses, naming the fix,
whatever it does not record or records of what is gone. Only the placement commands change it
(:mod:`stacks.placement.placing`); each deployed stack records in its template the units it
holds (:data:`UNITS_METADATA`), from which a lost plan is rebuilt.

A recorded unit may grow where it is (an endpoint subscribed to one more topic, a shadow that
gains its delay queue's shadow, a relay that needs another function), so new units fill a stack
only to :data:`RESOURCE_BUDGET`, 50 under CloudFormation's limit. When growth still takes a
stack over the limit, synth refuses, naming the stack, its count and the fix; nothing ever
moves a unit on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stacks.placement.plan_file import (
    MAX_STACKS,
    AccountRecord,
    PlanFile,
    PlanRecord,
    StackPlanError,
    describe_stack,
    read_plan,
)
from stacks.placement.units import (
    DASHBOARD,
    KEY,
    RELAY,
    StackUnit,
    UnitKind,
    account_units,
    unit_key,
)
from stacks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES
from stacks.topology.model import Account, Endpoint, KeyGranularity, Topology
from stacks.topology.stack_ids import stack_name
from stacks.topology.topics import Topic

RESOURCE_HEADROOM = 50
"""Resources each stack keeps free when new units are placed, for its units to grow in place
without moving: some twelve more subscriptions, delay queues' shadows or relay functions."""
RESOURCE_BUDGET = CLOUDFORMATION_RESOURCES.fixed - RESOURCE_HEADROOM
"""How far new units fill a stack."""
OUTPUT_BUDGET = CLOUDFORMATION_OUTPUTS.fixed
"""How far new units fill a stack's outputs: a unit's outputs never grow, so no headroom."""
UNITS_METADATA = "MessagingStackPlan"
"""The template's metadata entry in which each messaging stack records its account, number and
the units it holds (:attr:`AccountStack.metadata`): what ``recover`` rebuilds a lost plan from
and ``check`` compares an assembly with. CloudFormation stores a template's metadata only with a
change to its resources (CloudFormation User Guide, "Metadata syntax"): a stack's units never
change without one, but a stack deployed before stacks recorded their units keeps none until
its resources next change, and is read from its resources meanwhile
(:func:`~stacks.placement.deployed.units_held`)."""


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
        return stack_name(self.account.name, self.number)

    @property
    def resources(self) -> int:
        """The resources its template will hold: its units', a relay per direction that
        reads queues here, and its dashboard."""
        relays = {unit.relay for unit in self.units} - {None}
        key = KEY if self.shared_key and any(unit.queues for unit in self.units) else 0
        dashboard = DASHBOARD if self.units else 0
        return sum(unit.resources for unit in self.units) + RELAY * len(relays) + key + dashboard

    @property
    def outputs(self) -> int:
        return sum(unit.outputs for unit in self.units)

    @property
    def metadata(self) -> dict[str, Any]:
        """What its template records under :data:`UNITS_METADATA`."""
        return {
            "Account": self.account.name,
            "AccountId": self.account.id,
            "Stack": self.number,
            "Units": sorted(unit.key for unit in self.units),
        }

    def holds(self, kind: UnitKind) -> tuple[str, ...]:
        """The names of the units of ``kind`` it holds, in the topology's order."""
        return tuple(unit.name for unit in self.units if unit.kind is kind)

    def with_unit(self, unit: StackUnit) -> AccountStack:
        return AccountStack(self.account, self.number, (*self.units, unit), self.shared_key)


@dataclass(frozen=True)
class StackPlan:
    """Every account's stacks, as the plan records them."""

    stacks: tuple[AccountStack, ...]
    """The accounts' stacks, in the topology's order of accounts, each account's by number;
    a stack that holds no unit is among them until it is retired."""
    source: str = "<stack plan>"

    @property
    def record(self) -> dict[str, AccountRecord]:
        """What the plan file records: per account, its id, its stacks and its units'."""
        recorded: dict[str, AccountRecord] = {}
        for stack in self.stacks:
            before = recorded.get(stack.account.name, AccountRecord(stack.account.id, 0))
            units = {**before.units, **{unit.key: stack.number for unit in stack.units}}
            recorded[stack.account.name] = AccountRecord(
                stack.account.id, max(before.stacks, stack.number), units
            )
        return recorded

    def stacks_of(self, account: str) -> tuple[AccountStack, ...]:
        return tuple(s for s in self.stacks if s.account.name == account)

    def stack(self, account: str, number: int) -> AccountStack:
        return next(s for s in self.stacks_of(account) if s.number == number)

    def stack_of(self, account: str, key: str) -> AccountStack:
        """The stack that holds the unit ``key`` of ``account``."""
        return next(s for s in self.stacks_of(account) if any(u.key == key for u in s.units))

    def topic_stack(self, topic: Topic) -> AccountStack:
        return self.stack_of(topic.account, unit_key(UnitKind.TOPIC, topic.name))

    def endpoint_stack(self, endpoint: Endpoint) -> AccountStack:
        return self.stack_of(endpoint.account, unit_key(UnitKind.ENDPOINT, endpoint.name))


def stack_plan(topology: Topology, record: PlanRecord | None, plan: PlanFile) -> StackPlan:
    """The stacks ``record`` gives the topology's units, exactly: what every synth, deploy and
    gate builds. Raises :class:`StackPlanError` naming, with its fix, every account the plan
    lacks or records under another id, every unit it lacks or records but the topology no
    longer has, every account it records that the topology lacks, and every stack over a
    CloudFormation limit."""
    source = str(plan.path)
    problems: list[tuple[str, str]] = []
    stacks: list[AccountStack] = []
    record = record or {}
    for account in topology.accounts:
        units = account_units(topology, account.name)
        entry = record.get(account.name)
        if entry is None:
            if units:
                problems.append(unrecorded_account(topology, account, plan, record))
            continue
        if entry.account_id != account.id:
            problems.append(other_account_id(account, entry, plan))
            continue
        keys = {unit.key for unit in units}
        problems += [
            (
                f"account {account.name}",
                f"unit {unit.key} is not in the plan: `{plan.command('place')}` places new "
                "units and records them; commit the plan with the topology",
            )
            for unit in units
            if unit.key not in entry.units
        ]
        problems += [
            (
                f"account {account.name}",
                f"unit {key} of {describe_stack(account.name, number)} is no longer in the "
                f"topology: `{plan.command('place')}` drops its line (its queues, Retain, stay "
                "in the account when the stack is deployed: drain and delete them)",
            )
            for key, number in sorted(entry.units.items())
            if key not in keys
        ]
        account_stacks = recorded_stacks(topology, account, units, entry)
        for stack in account_stacks:
            problems += over_limits(stack, plan)
        stacks += account_stacks
    named = {account.name for account in topology.accounts}
    problems += [
        (
            f"account {name}",
            f"is in the plan but not in the topology (is this the plan of another topology?): "
            f"its stacks ({stack_name(name)}...) would leave the app while deployed, their "
            "relays running. If the account was removed on purpose, retire them: drain the "
            f"queues, delete the stacks, then `{plan.command('retire', '--account', name)}`",
        )
        for name in sorted(set(record) - named)
    ]
    if problems:
        raise StackPlanError(source, problems)
    return StackPlan(tuple(stacks), source)


def committed_plan(topology: Topology, plan: PlanFile) -> StackPlan:
    """The stacks the plan committed beside the topology gives it, exactly as it records them:
    what ``cdk synth``, ``cdk deploy``, the gates and the main job all build. It never places
    anything itself."""
    return stack_plan(topology, read_plan(plan), plan)


def recorded_stacks(
    topology: Topology, account: Account, units: Sequence[StackUnit], entry: AccountRecord
) -> list[AccountStack]:
    """The account's stacks ``entry`` records, each with its recorded units (in the topology's
    order); units ``entry`` does not record are left out."""
    shared_key = topology.keys is KeyGranularity.PER_ACCOUNT
    return [
        AccountStack(
            account,
            number,
            tuple(unit for unit in units if entry.units.get(unit.key) == number),
            shared_key,
        )
        for number in range(1, entry.stacks + 1)
    ]


def fresh_stacks(topology: Topology, account: Account) -> list[AccountStack]:
    """The account's units placed as if nothing were deployed: all in its first stack when
    they fit CloudFormation's limits there (as an account's one stack always held them), else
    each in the first stack it fits within the budgets, in the topology's order."""
    units = account_units(topology, account.name)
    empty = empty_stack(topology, account)
    whole = AccountStack(account, 1, units, empty.shared_key)
    if fits(whole, limits=True):
        return [whole]
    return fill([empty], units)


def empty_stack(topology: Topology, account: Account, number: int = 1) -> AccountStack:
    """The account's stack ``number`` holding nothing yet."""
    return AccountStack(account, number, (), topology.keys is KeyGranularity.PER_ACCOUNT)


def fill(stacks: Sequence[AccountStack], units: Sequence[StackUnit]) -> list[AccountStack]:
    """``stacks`` (an account's, numbered from 1) with ``units`` added, each to the
    lowest-numbered stack it fits within the budgets, or to a new stack after the last."""
    numbered = {stack.number: stack for stack in stacks}
    first = stacks[0]
    for unit in units:
        last = max(numbered)
        number = next(
            (n for n in range(1, last + 1) if fits(numbered[n].with_unit(unit))),
            last + 1,
        )
        empty = AccountStack(first.account, number, (), first.shared_key)
        numbered[number] = numbered.get(number, empty).with_unit(unit)
    return [numbered[n] for n in sorted(numbered)]


def fits(stack: AccountStack, *, limits: bool = False) -> bool:
    """Whether the stack stays within the budgets (or, with ``limits``, CloudFormation's)."""
    resources = CLOUDFORMATION_RESOURCES.fixed if limits else RESOURCE_BUDGET
    return stack.resources <= resources and stack.outputs <= OUTPUT_BUDGET


def over_limits(stack: AccountStack, plan: PlanFile) -> list[tuple[str, str]]:
    """A problem for a stack over CloudFormation's limits or numbered beyond the last."""
    where = f"account {stack.account.name}"
    problems = []
    if stack.number > MAX_STACKS:
        problems.append(
            (
                where,
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
        if len(stack.units) == 1:
            fix = (
                f"{_described(stack.units[0])} alone is that large: give it fewer "
                "subscriptions or split it"
            )
        else:
            largest = sorted(stack.units, key=lambda u: -u.resources)[:3]
            fix = (
                "its units grew in place beyond the room kept for that, or two changes placed "
                "new units here at once (a merge). Units already deployed here must stay: "
                f"`{plan.command('recover', '--profile', '<profile>', '--account', stack.account.name)}` "
                "keeps every deployed unit in its stack and places the others anew; or remove "
                f"units from the topology (the largest: {', '.join(u.key for u in largest)})"
            )
        problems.append(
            (
                where,
                f"stack {stack.name} would hold {count} {what}, over CloudFormation's {limit}: "
                f"{fix}",
            )
        )
    return problems


def unrecorded_account(
    topology: Topology, account: Account, plan: PlanFile, record: Mapping[str, AccountRecord]
) -> tuple[str, str]:
    """The refusal for an account with units and no entry: with its way out."""
    why = "the plan does not exist" if not record else "the plan has no entry for it"
    needed = len(fresh_stacks(topology, account))
    if needed == 1:
        return (
            f"account {account.name}",
            f"is not in the plan ({why}): `{plan.command('place')}` records its units in its "
            f"one stack, {stack_name(account.name)}",
        )
    return (
        f"account {account.name}",
        f"is not in the plan ({why}) and its units need {needed} stacks: where they are "
        "deployed decides which holds what. If it is deployed, rebuild its entries from its "
        f"stacks: `{plan.command('recover', '--profile', '<profile>', '--account', account.name)}`; "
        "if it never was, start its plan on purpose: "
        f"`{plan.command('start', '--account', account.name)}`",
    )


def other_account_id(account: Account, entry: AccountRecord, plan: PlanFile) -> tuple[str, str]:
    """The refusal for an account the plan records under another AWS account id."""
    return (
        f"account {account.name}",
        f"the plan records it as AWS account {entry.account_id}, the topology as {account.id}: "
        f"is {plan.path.name} the plan of another topology? If the account really changed, its "
        "stacks in the new one are new: delete its lines, then "
        f"`{plan.command('start', '--account', account.name)}`",
    )


def _described(unit: StackUnit) -> str:
    return {
        UnitKind.BODIES: "the body bucket",
        UnitKind.TOPIC: f"topic {unit.name!r}",
        UnitKind.ENDPOINT: f"the queue of {unit.name!r}",
        UnitKind.INGRESS: f"the ingress queue of {unit.name!r}",
        UnitKind.SHADOW: f"the shadow queue {unit.name!r}",
    }[unit.kind]
