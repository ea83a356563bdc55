"""What changes the plan, each on purpose: ``place`` records new units and drops those gone,
``start`` begins an account's plan that nothing deployed decides, ``recover`` rebuilds an
account's entries from its deployed stacks, ``retire`` removes stacks that hold nothing.

None of them gives a recorded unit another stack, except ``recover``, which gives each unit the
stack that holds it in the deployed organization (the source of truth) and places the units
that nothing holds yet as new.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from stacks.placement.plan import (
    AccountStack,
    StackPlan,
    empty_stack,
    fill,
    fresh_stacks,
    other_account_id,
    recorded_stacks,
    stack_plan,
    unrecorded_account,
)
from stacks.placement.plan_file import (
    AccountRecord,
    PlanFile,
    PlanRecord,
    StackPlanError,
    describe_stack,
)
from stacks.placement.units import account_units
from stacks.topology.model import Account, Topology


@dataclass(frozen=True)
class Placement:
    """A new plan, and how it differs from the one before."""

    record: dict[str, AccountRecord]
    placed: tuple[tuple[str, str, int], ...] = ()
    """``(account, unit, stack)`` of each unit recorded for the first time."""
    dropped: tuple[tuple[str, str, int], ...] = ()
    """``(account, unit, stack)`` of each entry removed: its unit is no longer in the topology."""
    moved: tuple[tuple[str, str, int, int], ...] = ()
    """``(account, unit, recorded stack, deployed stack)``: ``recover`` only, each entry the
    deployed stacks contradicted."""
    stacks: tuple[tuple[str, int, int], ...] = ()
    """``(account, stacks before, stacks after)`` for each account whose number of stacks
    changed."""

    def lines(self) -> list[str]:
        """What changed, a line each, for people."""
        lines = [
            f"{account}: {key}: placed in {describe_stack(account, n)}"
            for account, key, n in self.placed
        ]
        lines += [
            f"{account}: {key}: dropped from {describe_stack(account, n)} (no longer in the "
            "topology; its queues stay when the stack is deployed, Retain: drain and delete them)"
            for account, key, n in self.dropped
        ]
        lines += [
            f"{account}: {key}: recorded in stack {before}, deployed in "
            f"{describe_stack(account, after)}: the plan now says {after}"
            for account, key, before, after in self.moved
        ]
        lines += [
            f"{account}: {before} stack{'s' if before != 1 else ''} -> {after}"
            for account, before, after in self.stacks
        ]
        return lines

    @property
    def changed(self) -> bool:
        return bool(self.placed or self.dropped or self.moved or self.stacks)


def place(
    topology: Topology,
    record: PlanRecord | None,
    plan: PlanFile,
    *,
    earlier: Mapping[str, Mapping[str, int]] | None = None,
) -> Placement:
    """Record every unit the plan lacks, each in the lowest-numbered stack of its account with
    room within the budgets (freed room and stacks that hold nothing included) or in a new
    stack after the last, and drop the entries of units no longer in the topology. Recorded
    units stay where they are.

    An account the plan has no entry for is recorded in its one stack when its units fit
    there; one that needs more stacks is refused (where its units are deployed decides:
    ``recover``, or ``start`` if nothing is). ``earlier`` is the plan in the JSON form of an
    earlier release, converted: its accounts' stacks are numbered from 1 to the highest it
    uses, so that a stack it had emptied comes back into the app (empty) instead of staying
    deployed unseen.
    """
    base, problems = _base(topology, record, earlier, plan)
    result = dict(base)
    placed: list[tuple[str, str, int]] = []
    dropped: list[tuple[str, str, int]] = []
    counts: list[tuple[str, int, int]] = []
    for account in topology.accounts:
        units = account_units(topology, account.name)
        entry = base.get(account.name)
        if entry is None:
            if not units:
                continue
            stacks = fresh_stacks(topology, account)
            if len(stacks) > 1:
                problems.append(unrecorded_account(topology, account, plan, base))
                continue
            counts.append((account.name, 0, 1))
        elif entry.account_id != account.id:
            problems.append(other_account_id(account, entry, plan))
            continue
        else:
            keys = {unit.key for unit in units}
            dropped += [
                (account.name, key, n) for key, n in sorted(entry.units.items()) if key not in keys
            ]
            stacks = recorded_stacks(topology, account, units, entry)
            new = [unit for unit in units if unit.key not in entry.units]
            if new:
                stacks = fill(stacks or [empty_stack(topology, account)], new)
            if len(stacks) != entry.stacks:
                counts.append((account.name, entry.stacks, len(stacks)))
        fresh = {unit.key for stack in stacks for unit in stack.units} - set(
            entry.units if entry else ()
        )
        placed += [
            (account.name, unit.key, stack.number)
            for stack in stacks
            for unit in stack.units
            if unit.key in fresh
        ]
        result[account.name] = _record_of(account, stacks)
    if problems:
        raise StackPlanError(str(plan.path), problems)
    _verify(topology, result, plan)
    return Placement(result, tuple(placed), tuple(dropped), stacks=tuple(counts))


def start(
    topology: Topology,
    record: PlanRecord | None,
    plan: PlanFile,
    accounts: Sequence[str] = (),
) -> Placement:
    """Begin the plan of ``accounts`` (by default every account of the topology the plan has
    no entry for: a new organization's whole plan), placing their units as if nothing were
    deployed. Refuses an account that has entries: only its deployed stacks can say where its
    units are (``recover``)."""
    base = dict(record or {})
    names = list(accounts) or [
        a.name for a in topology.accounts if a.name not in base and account_units(topology, a.name)
    ]
    problems: list[tuple[str, str]] = []
    for name in names:
        if not any(a.name == name for a in topology.accounts):
            problems.append((f"account {name}", "is not an account of the topology"))
        elif name in base:
            problems.append(
                (
                    f"account {name}",
                    "has entries in the plan: `start` only begins an account's plan. Where its "
                    "units are deployed decides: "
                    f"`{plan.command('recover', '--profile', '<profile>', '--account', name)}`",
                )
            )
    if problems:
        raise StackPlanError(str(plan.path), problems)
    result = dict(base)
    placed: list[tuple[str, str, int]] = []
    counts: list[tuple[str, int, int]] = []
    for name in names:
        account = topology.account(name)
        stacks = fresh_stacks(topology, account)
        result[name] = _record_of(account, stacks)
        placed += [(name, unit.key, stack.number) for stack in stacks for unit in stack.units]
        counts.append((name, 0, len(stacks)))
    _verify(topology, result, plan, only=names)
    return Placement(result, tuple(placed), stacks=tuple(counts))


def recover(
    topology: Topology,
    record: PlanRecord | None,
    plan: PlanFile,
    account_name: str,
    deployed: Mapping[int, Collection[str]],
    *,
    earlier: Mapping[str, Mapping[str, int]] | None = None,
) -> Placement:
    """Rebuild the entries of ``account_name`` from its deployed stacks: ``deployed`` gives, per
    stack number, the units that stack holds. Each deployed unit is recorded in its stack (the
    recorded stack, where it differs, is reported as moved) and every stack up to the highest
    deployed one is kept; units nothing deploys yet are placed as new, recorded ones included
    (they hold no queue, so nothing moves); units deployed but no longer in the topology are
    dropped. ``earlier`` is the plan in the JSON form of an earlier release, converted as
    :func:`place` converts it."""
    account = topology.account(account_name)
    base, problems = _base(topology, record, earlier, plan)
    if problems:
        raise StackPlanError(str(plan.path), problems)
    holders: dict[str, list[int]] = {}
    for number, held in sorted(deployed.items()):
        for key in held:
            holders.setdefault(key, []).append(number)
    twice = {key: numbers for key, numbers in holders.items() if len(numbers) > 1}
    if twice:
        raise StackPlanError(
            str(plan.path),
            [
                (
                    f"account {account_name}",
                    f"unit {key} is held by deployed stacks {numbers}: one of them gave it up "
                    "without its deploy finishing? Finish or roll back that deploy first",
                )
                for key, numbers in sorted(twice.items())
            ],
        )
    units = account_units(topology, account_name)
    keys = {unit.key for unit in units}
    entry = base.get(account_name)
    numbers = {key: found[0] for key, found in holders.items()}
    kept = AccountRecord(
        account.id,
        max(deployed, default=0),
        {key: n for key, n in numbers.items() if key in keys},
    )
    stacks = recorded_stacks(topology, account, units, kept)
    new = [unit for unit in units if unit.key not in kept.units]
    if new:
        stacks = fill(stacks or [empty_stack(topology, account)], new)
    result = {**base, account_name: _record_of(account, stacks)}
    recorded = dict(entry.units) if entry else {}
    now = result[account_name].units
    placed = [(account_name, k, n) for k, n in sorted(now.items()) if k not in recorded]
    moved = [
        (account_name, k, recorded[k], n)
        for k, n in sorted(now.items())
        if k in recorded and recorded[k] != n
    ]
    dropped = [(account_name, k, n) for k, n in sorted(recorded.items()) if k not in now]
    before = entry.stacks if entry else 0
    counts = [(account_name, before, len(stacks))] if before != len(stacks) else []
    _verify(topology, result, plan, only=[account_name])
    return Placement(result, tuple(placed), tuple(dropped), tuple(moved), tuple(counts))


def retire(
    topology: Topology, record: PlanRecord | None, plan: PlanFile, account_name: str
) -> Placement:
    """Remove the account's last stacks that hold no unit, or every line of an account the
    topology no longer has: once they are destroyed (the pre-deploy check refuses a deploy
    while one is still deployed and missing from the app)."""
    base = dict(record or {})
    entry = base.get(account_name)
    if entry is None:
        raise StackPlanError(
            str(plan.path), [(f"account {account_name}", "has no entries in the plan")]
        )
    if not any(a.name == account_name for a in topology.accounts):
        del base[account_name]
        dropped = tuple((account_name, k, n) for k, n in sorted(entry.units.items()))
        return Placement(base, dropped=dropped, stacks=((account_name, entry.stacks, 0),))
    held = set(entry.units.values())
    last = max(held, default=0)
    if last == entry.stacks:
        raise StackPlanError(
            str(plan.path),
            [
                (
                    f"account {account_name}",
                    f"its last stack, {describe_stack(account_name, last)}, holds "
                    f"{len(entry.holding(last))} units: only stacks after the last that holds "
                    "a unit can be retired",
                )
            ],
        )
    base[account_name] = AccountRecord(entry.account_id, last, entry.units)
    return Placement(base, stacks=((account_name, entry.stacks, last),))


def new_organization_plan(topology: Topology, plan: PlanFile | None = None) -> StackPlan:
    """The stacks of a topology nothing of which is deployed, every account placed by
    :func:`start`: for a topology made in code (tests, benches), whose plan is never read
    from a file."""
    where = plan or PlanFile()
    return stack_plan(topology, start(topology, None, where).record, where)


def _verify(
    topology: Topology,
    record: Mapping[str, AccountRecord],
    plan: PlanFile,
    *,
    only: Iterable[str] | None = None,
) -> None:
    """Refuse a result synth would refuse: a stack over a limit (units that grew in place, or
    placed by two changes at once), reported for the changed accounts only when ``only``."""
    try:
        stack_plan(topology, record, plan)
    except StackPlanError as error:
        accounts = None if only is None else {f"account {name}" for name in only}
        problems = [
            (where, rule) for where, rule in error.problems if accounts is None or where in accounts
        ]
        if problems:
            raise StackPlanError(str(plan.path), problems) from None


def _record_of(account: Account, stacks: Sequence[AccountStack]) -> AccountRecord:
    return AccountRecord(
        account.id,
        max((s.number for s in stacks), default=0),
        {unit.key: stack.number for stack in stacks for unit in stack.units},
    )


def _base(
    topology: Topology,
    record: PlanRecord | None,
    earlier: Mapping[str, Mapping[str, int]] | None,
    plan: PlanFile,
) -> tuple[dict[str, AccountRecord], list[tuple[str, str]]]:
    """The plan to change: ``record``, or the earlier JSON form converted."""
    if earlier is None:
        return dict(record or {}), []
    converted, problems = _from_earlier(topology, earlier, plan)
    return {**converted, **(record or {})}, problems


def _from_earlier(
    topology: Topology, earlier: Mapping[str, Mapping[str, int]], plan: PlanFile
) -> tuple[dict[str, AccountRecord], list[tuple[str, str]]]:
    """The earlier JSON plan's entries as records: each account's id from the topology (it
    recorded none), its stacks numbered up to the highest it used; and a problem for each
    account it records that the topology does not have."""
    converted: dict[str, AccountRecord] = {}
    problems: list[tuple[str, str]] = []
    names = {account.name: account for account in topology.accounts}
    for name, entries in earlier.items():
        if name not in names:
            problems.append(
                (
                    f"account {name}",
                    f"is in {plan.earlier_path.name} but not in the topology (the plan of "
                    "another topology?): if it was removed on purpose, delete its stacks and "
                    "its entries there first",
                )
            )
        elif entries:
            converted[name] = AccountRecord(names[name].id, max(entries.values()), dict(entries))
    return converted, problems
