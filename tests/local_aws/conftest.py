"""The example deployed once to the run's local AWS, and accounts of their own for a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.deployment import deploy_all
from local_aws.inventory import AccountInventory, read_inventory
from stacks.app_builder import topology_from_context
from tests.local_aws.accounts import fresh_account

INVENTORY_AT_DEPLOY = pytest.StashKey[dict[str, AccountInventory]]()


@pytest.fixture(scope="session")
def example_deployment(
    request: pytest.FixtureRequest, example_assembly: Path, moto_endpoint: str
) -> dict[str, AccountCredentials]:
    """Every account of the example deployed with the CDK CLI, credentials per account name.

    Deploying the same assembly again (as ``test_local_deploy`` does for itself) finds no
    changes, so both share one deployment whichever runs first. Each account's inventory is
    read at once, before any scenario starts its endpoints: ServiceControl creates its own
    queues when it starts, as the released one does when installed, and those are not the
    deploy's.
    """
    credentials = deploy_all(topology_from_context(None), example_assembly, moto_endpoint)
    request.config.stash[INVENTORY_AT_DEPLOY] = {
        name: read_inventory(c, moto_endpoint) for name, c in credentials.items()
    }
    return credentials


@pytest.fixture(scope="session")
def example_inventory(
    request: pytest.FixtureRequest, example_deployment: dict[str, AccountCredentials]
) -> dict[str, AccountInventory]:
    """Each account of the example as its deploy left it (see ``example_deployment``)."""
    return request.config.stash[INVENTORY_AT_DEPLOY]


@pytest.fixture
def new_account(moto_endpoint: str) -> AccountCredentials:
    """Credentials of an account nothing else in the run uses."""
    return fresh_account(moto_endpoint)
