"""The order in which the messaging stacks deploy: each after the stacks holding the topics its
queues subscribe to, in any account (:func:`~stacks.topology.stack_order.stack_order` orders the
accounts). ``cdk deploy`` learns it from the stack dependencies the app adds
(:func:`stack_dependencies`), the local deployment from the assembly's; an account's stacks
that would each need another first are refused.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from stacks.placement.plan import AccountStack, StackPlan
from stacks.placement.plan_file import StackPlanError
from stacks.placement.units import UnitKind
from stacks.topology.model import Topology
from stacks.topology.stack_order import stack_order


def stack_dependencies(
    topology: Topology, plan: StackPlan
) -> dict[AccountStack, tuple[AccountStack, ...]]:
    """Per messaging stack, the other messaging stacks that must deploy first: those holding
    the topics its queues subscribe to, in any account. Raises :class:`StackPlanError` for an
    account whose stacks would each need another first."""
    needs: dict[AccountStack, dict[AccountStack, None]] = {s: {} for s in plan.stacks}
    for stack in plan.stacks:
        for name in stack.holds(UnitKind.ENDPOINT):
            for topic, _ in topology.queue_subscriptions(topology.endpoint(name)):
                holder = plan.topic_stack(topic)
                if holder != stack:
                    needs[stack][holder] = None
    for account in topology.accounts:
        stacks = plan.stacks_of(account.name)
        if _ordered(stacks, needs) is None:
            raise StackPlanError(
                plan.source,
                [
                    (
                        f"account {account.name}",
                        f"the stacks {[s.name for s in stacks]} hold topics of each other's "
                        "subscribers, so none can deploy first (a subscription needs its topic); "
                        "give one of those topics the stack of its subscribers in the plan, or "
                        "make one of the subscriptions message-driven",
                    )
                ],
            )
    return {stack: tuple(needed) for stack, needed in needs.items()}


def deployment_order(topology: Topology, plan: StackPlan) -> tuple[AccountStack, ...]:
    """Every messaging stack in an order that deploys each after the stacks it needs: the
    accounts in :func:`~stacks.topology.stack_order.stack_order` (then those that own nothing
    but stacks still to retire), each account's stacks by number except that a stack comes after
    those of the account holding topics it subscribes to."""
    needs = stack_dependencies(topology, plan)
    ordered: list[AccountStack] = []
    accounts = [a.name for a in stack_order(topology)]
    # Accounts whose stacks hold nothing any more keep them until retired.
    accounts += [a.name for a in topology.accounts if a.name not in accounts]
    for account in accounts:
        ordered += _ordered(plan.stacks_of(account), needs) or ()
    return tuple(ordered)


def _ordered(
    stacks: Sequence[AccountStack], needs: Mapping[AccountStack, Collection[AccountStack]]
) -> list[AccountStack] | None:
    """``stacks`` (one account's) each after those of them it needs, lowest number first;
    ``None`` when some need each other."""
    ordered: list[AccountStack] = []
    while len(ordered) < len(stacks):
        ready = [
            s
            for s in stacks
            if s not in ordered and all(n in ordered or n not in stacks for n in needs[s])
        ]
        if not ready:
            return None
        ordered.append(ready[0])
    return ordered
