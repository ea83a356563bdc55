"""Deploy every account's stack of a gated cloud assembly to the local AWS."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from local_aws import cdk_cli
from local_aws.accounts import AccountCredentials, create_account_credentials
from stacks.delivery_log_stack import analytics_stack_name
from stacks.messaging_stack import stack_name
from stacks.topology import Topology
from stacks.topology.stack_order import stack_order


def deploy_all(
    topology: Topology,
    assembly_dir: Path,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> dict[str, AccountCredentials]:
    """Bootstrap each account that has a stack (all at once) and deploy its stacks with the
    CDK CLI.

    The analytics stack goes first: the other accounts' subscription filters can only be
    created once its log destination admits them. The messaging stacks follow in
    :func:`stack_order` (topic owners before their subscribers). Returns the credentials created per account name, for reading the
    result back.
    """
    analytics = topology.account(topology.analytics.account) if topology.analytics else None
    deployed = {
        account.name: create_account_credentials(endpoint_url, account.id, account.region)
        for account in topology.accounts
        if topology.owns_resources(account.name) or account == analytics
    }
    # The accounts' bootstraps are independent, and each spends most of its time in the CLI
    # waiting for CloudFormation's events: run side by side, they take as long as one.
    with ThreadPoolExecutor(max_workers=max(len(deployed), 1)) as pool:
        for _ in pool.map(
            lambda credentials: cdk_cli.bootstrap(credentials, endpoint_url, echo=echo),
            deployed.values(),
        ):
            pass
    if analytics is not None:
        cdk_cli.deploy(
            analytics_stack_name(analytics),
            assembly_dir,
            deployed[analytics.name],
            endpoint_url,
            echo=echo,
        )
    for account in stack_order(topology):
        cdk_cli.deploy(
            stack_name(account), assembly_dir, deployed[account.name], endpoint_url, echo=echo
        )
    return deployed
