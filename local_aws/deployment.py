"""Deploy every account's stack of a gated cloud assembly to the local AWS."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from local_aws import cdk_cli
from local_aws.accounts import AccountCredentials, create_account_credentials
from stacks.delivery_log_stack import analytics_stack_name
from stacks.messaging_stack import stack_name
from stacks.topology import Account, Topology


def deploy_all(
    topology: Topology,
    assembly_dir: Path,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> dict[str, AccountCredentials]:
    """Bootstrap each account that has a stack and deploy its stacks with the CDK CLI.

    The analytics stack goes first: the other accounts' subscription filters can only be
    created once its log destination admits them. The messaging stacks follow in
    :func:`deploy_order`. Returns the credentials created per account name, for reading the
    result back.
    """
    analytics = topology.account(topology.analytics.account) if topology.analytics else None
    deployed: dict[str, AccountCredentials] = {}
    for account in topology.accounts:
        if topology.owns_resources(account.name) or account == analytics:
            credentials = create_account_credentials(endpoint_url, account.id, account.region)
            cdk_cli.bootstrap(credentials, endpoint_url, echo=echo)
            deployed[account.name] = credentials
    if analytics is not None:
        cdk_cli.deploy(
            analytics_stack_name(analytics),
            assembly_dir,
            deployed[analytics.name],
            endpoint_url,
            echo=echo,
        )
    for account in deploy_order(topology):
        cdk_cli.deploy(
            stack_name(account), assembly_dir, deployed[account.name], endpoint_url, echo=echo
        )
    return deployed


def deploy_order(topology: Topology) -> list[Account]:
    """The accounts that have a messaging stack, in the topology's order except that an
    account whose queues subscribe to another account's topic comes after that account: its
    stack makes the subscription on the topic, which must exist by then (in AWS too)."""
    accounts = [a for a in topology.accounts if topology.owns_resources(a.name)]
    needs = {
        account.name: {
            topic.account
            for topic in topology.topics
            for s in topic.subscriptions
            if s.endpoint is not None and topology.endpoint(s.endpoint).account == account.name
        }
        - {account.name}
        for account in accounts
    }
    ordered: list[Account] = []
    while len(ordered) < len(accounts):
        placed = {a.name for a in ordered}
        ready = [a for a in accounts if a.name not in placed and needs[a.name] <= placed]
        if not ready:
            waiting = sorted(a.name for a in accounts if a.name not in placed)
            raise RuntimeError(
                f"deploy: the queues of accounts {waiting} subscribe to each other's topics; "
                "no account can go first, since each subscription needs its topic to exist"
            )
        ordered.append(ready[0])
    return ordered
