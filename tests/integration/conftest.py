"""The example deployed once to the run's local AWS, accounts of its own for a test, and the
run's one Spark session (shared with ``tests/spark``: starting another costs a JVM)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from local_aws.accounts import AccountCredentials, create_account_credentials
from local_aws.deployment import deploy_all
from stacks.app_builder import topology_from_context
from tests.spark import conftest as spark_conftest

REGION = "us-east-1"

spark = spark_conftest.spark


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


def fresh_account(endpoint_url: str) -> AccountCredentials:
    """An account id drawn from a range the example's accounts are not in, with a key."""
    account_id = str(random.randrange(500_000_000_000, 999_999_999_999))
    return create_account_credentials(endpoint_url, account_id, REGION)
