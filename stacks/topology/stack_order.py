"""The order in which the accounts' messaging stacks deploy.

A queue's stack creates the SNS subscriptions of its queue to topics in other accounts, and to
topics in another stack of its own account (the queue owner subscribes, so SNS confirms at
once). CloudFormation fails such a subscription while its topic does not exist, so the topic's
stack deploys first: ``cdk deploy`` learns this from the stack dependencies the app adds
(:func:`stack_dependencies`), the local deployment from the assembly's. Accounts whose queues
subscribe to each other's topics have no order, nor have an account's stacks that do.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from stacks.topology.model import Account, Topology
from stacks.topology.stack_plan import AccountStack, StackPlan, StackPlanError
from stacks.topology.stack_units import UnitKind


class SubscriptionCycleError(ValueError):
    """Accounts subscribe to each other's topics; :attr:`accounts` names them."""

    def __init__(self, accounts: tuple[str, ...]) -> None:
        self.accounts = accounts
        super().__init__(
            f"the queues of accounts {list(accounts)} subscribe to each other's topics, so no "
            "account's stack can deploy first (each subscription needs its topic to exist). "
            "Make one direction message-driven (the topic's messageDrivenSubscribers instead "
            "of an sqs subscription) or move one of the topics"
        )


def topic_accounts_needed(topology: Topology, account_name: str) -> tuple[str, ...]:
    """The other accounts whose topics ``account_name``'s queues subscribe to, sorted."""
    return tuple(
        sorted(
            {
                topic.account
                for endpoint in topology.queues_in(account_name)
                for topic, _ in topology.queue_subscriptions(endpoint)
            }
            - {account_name}
        )
    )


def stack_order(topology: Topology) -> tuple[Account, ...]:
    """The accounts that own resources, in the topology's order except that each comes after
    the accounts of the topics it subscribes to. Raises :class:`SubscriptionCycleError`."""
    accounts = [a for a in topology.accounts if topology.owns_resources(a.name)]
    needs = {a.name: set(topic_accounts_needed(topology, a.name)) for a in accounts}
    ordered: list[Account] = []
    placed: set[str] = set()
    while len(ordered) < len(accounts):
        ready = [a for a in accounts if a.name not in placed and needs[a.name] <= placed]
        if not ready:
            raise SubscriptionCycleError(tuple(a.name for a in accounts if a.name not in placed))
        ordered.append(ready[0])
        placed.add(ready[0].name)
    return tuple(ordered)


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
                        f"accounts.{account.name}",
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
    accounts in :func:`stack_order`, each account's stacks by number except that a stack comes
    after those of the account holding topics it subscribes to."""
    needs = stack_dependencies(topology, plan)
    ordered: list[AccountStack] = []
    for account in stack_order(topology):
        ordered += _ordered(plan.stacks_of(account.name), needs) or ()
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
