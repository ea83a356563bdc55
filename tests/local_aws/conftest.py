"""The example deployed once to the run's local AWS, and accounts of their own for a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.deployment import deploy_all
from stacks.app_builder import topology_from_context
from tests.local_aws.accounts import fresh_account


@pytest.fixture(scope="session")
def example_deployment(example_assembly: Path, moto_endpoint: str) -> dict[str, AccountCredentials]:
    """Every account of the example deployed with the CDK CLI, credentials per account name.

    Deploying the same assembly again (as ``test_local_deploy`` does for itself) finds no
    changes, so both share one deployment whichever runs first.
    """
    return deploy_all(topology_from_context(None), example_assembly, moto_endpoint)


@pytest.fixture
def new_account(moto_endpoint: str) -> AccountCredentials:
    """Credentials of an account nothing else in the run uses."""
    return fresh_account(moto_endpoint)
