"""Deploy every account's stack of a gated cloud assembly to the local AWS."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from local_aws import cdk_cli
from local_aws.accounts import AccountCredentials, create_account_credentials
from stacks.messaging_stack import stack_name
from stacks.topology import Topology


def deploy_all(
    topology: Topology,
    assembly_dir: Path,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> dict[str, AccountCredentials]:
    """Bootstrap each account that owns queues and deploy its stack with the CDK CLI.

    Returns the credentials created per account name, for reading the result back.
    """
    deployed: dict[str, AccountCredentials] = {}
    for account in topology.accounts:
        if not topology.owns_resources(account.name):
            continue
        credentials = create_account_credentials(endpoint_url, account.id, account.region)
        cdk_cli.bootstrap(credentials, endpoint_url, echo=echo)
        cdk_cli.deploy(stack_name(account), assembly_dir, credentials, endpoint_url, echo=echo)
        deployed[account.name] = credentials
    return deployed
