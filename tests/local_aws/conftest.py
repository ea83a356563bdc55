"""The example deployed once to the run's local AWS, accounts of their own for a test, and a
module's own ``topology`` deployed with its peers playing the endpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.conversation import Handlers
from local_aws.deployment import deploy_all
from local_aws.lambda_poller import LambdaPoller
from local_aws.peers import Peers
from stacks.app_builder import topology_from_context
from stacks.checks import gates
from stacks.placement.placing import new_organization_plan
from stacks.topology import Topology
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


@pytest.fixture(scope="module")
def module_deployment(
    topology: Topology, tmp_path_factory: pytest.TempPathFactory, moto_endpoint: str
) -> dict[str, AccountCredentials]:
    """The module's ``topology`` fixture, placed as a new organization's, synthesized through
    the gates and deployed (in accounts no other module uses: a stack deployed twice under one
    name hits moto's change-set bugs), credentials per account name."""
    outdir = tmp_path_factory.mktemp("deployment") / "cdk.out"
    assembly = gates.synth(topology, new_organization_plan(topology), outdir)
    return deploy_all(topology, assembly, moto_endpoint)


@pytest.fixture(scope="module")
def handlers() -> Handlers:
    """The demo's handlers for the module's peers, recording every delivery."""
    return Handlers()


@pytest.fixture(scope="module")
def peers(
    topology: Topology,
    module_deployment: dict[str, AccountCredentials],
    moto_endpoint: str,
    handlers: Handlers,
) -> Peers:
    """The module's endpoints and ServiceControl, played by the transport model, with the
    relays through the Lambda poller."""
    poller = LambdaPoller(list(module_deployment.values()), moto_endpoint)
    return Peers(topology, module_deployment, poller, handlers)
