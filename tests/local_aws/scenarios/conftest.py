"""A module's own ``topology`` deployed to the run's local AWS, with its peers playing the
endpoints."""

from __future__ import annotations

import pytest

from local_aws.accounts import AccountCredentials
from local_aws.deployment import deploy_all
from local_aws.lambda_poller import LambdaPoller
from local_aws.scenarios.conversation import SAGA_TYPE, Handlers
from local_aws.scenarios.peers import Peers
from stacks.checks import gates
from stacks.placement.placing import new_organization_plan
from stacks.topology import Topology


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
def sagas(topology: Topology) -> dict[str, tuple[str, ...]]:
    """The saga types each endpoint registers: the demo's saga on every endpoint, so that any
    may receive a conversation's saga (a module overrides this to say otherwise)."""
    return {endpoint.name: (SAGA_TYPE,) for endpoint in topology.endpoints}


@pytest.fixture(scope="module")
def peers(
    topology: Topology,
    module_deployment: dict[str, AccountCredentials],
    moto_endpoint: str,
    handlers: Handlers,
    sagas: dict[str, tuple[str, ...]],
) -> Peers:
    """The module's endpoints and ServiceControl, played by the transport model, with the
    relays through the Lambda poller."""
    poller = LambdaPoller(list(module_deployment.values()), moto_endpoint)
    return Peers(topology, module_deployment, poller, handlers, sagas)
