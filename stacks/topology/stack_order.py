"""The order in which the accounts' messaging stacks deploy.

A queue's stack creates the SNS subscriptions of its queue to topics in other accounts, and to
topics in another stack of its own account (the queue owner subscribes, so SNS confirms at
once). CloudFormation fails such a subscription while its topic does not exist, so the topic's
account deploys first. Accounts whose queues subscribe to each other's topics have no order;
the order of an account's several stacks is :mod:`stacks.placement.order`'s.
"""

from __future__ import annotations

from stacks.topology.model import Account, Topology


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
