"""Deploy every stack of a gated cloud assembly to the local AWS, each account's with its own
credentials, in an order its stack dependencies allow, after the pre-deploy check
(:mod:`stacks.placement.check`) found that no deploy moves a queue."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from local_aws import cdk_cli
from local_aws.accounts import AccountCredentials, create_account_credentials
from stacks.placement.check import CheckResult, check_deployed, read_assembly
from stacks.topology import Topology


class PreDeployCheckError(RuntimeError):
    """The pre-deploy check refused the assembly: deploying it would move a deployed queue."""


@dataclass(frozen=True)
class AssemblyStack:
    """A stack of the cloud assembly: its name, its account and the stacks it needs first."""

    name: str
    account_id: str
    needs: tuple[str, ...]


def assembly_stacks(assembly_dir: Path) -> tuple[AssemblyStack, ...]:
    """The assembly's stacks, each after the stacks it depends on (the analytics stack before
    the stacks whose log subscriptions need its destination, a topic's stack before the stacks
    subscribing to it, in any account), otherwise in the assembly's order."""
    manifest = json.loads((assembly_dir / "manifest.json").read_text(encoding="utf-8"))
    stacks = [
        AssemblyStack(
            name,
            artifact["environment"].removeprefix("aws://").split("/")[0],
            tuple(d for d in artifact.get("dependencies", ()) if d in manifest["artifacts"]),
        )
        for name, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    ]
    names = {stack.name for stack in stacks}
    ordered: list[AssemblyStack] = []
    deployed: set[str] = set()
    while len(ordered) < len(stacks):
        ready = next(
            s
            for s in stacks
            if s.name not in deployed and all(n in deployed or n not in names for n in s.needs)
        )
        ordered.append(ready)
        deployed.add(ready.name)
    return tuple(ordered)


def deploy_all(
    topology: Topology,
    assembly_dir: Path,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> dict[str, AccountCredentials]:
    """Bootstrap each account that has a stack (all at once), run the pre-deploy check in each
    (echoing its result; raising :class:`PreDeployCheckError` when it refuses) and deploy every
    stack of the assembly with the CDK CLI, one at a time in :func:`assembly_stacks`' order (an
    account's stacks may need stacks of other accounts, which the CLI, holding one account's
    credentials, cannot deploy). Returns the credentials created per account name, for reading
    the result back."""
    stacks = assembly_stacks(assembly_dir)
    owners = {stack.account_id for stack in stacks}
    deployed = {
        account.name: create_account_credentials(endpoint_url, account.id, account.region)
        for account in topology.accounts
        if account.id in owners
    }
    by_id = {credentials.account_id: credentials for credentials in deployed.values()}
    # The accounts' bootstraps are independent, and each spends most of its time in the CLI
    # waiting for CloudFormation's events: run side by side, they take as long as one.
    with ThreadPoolExecutor(max_workers=max(len(deployed), 1)) as pool:
        for _ in pool.map(
            lambda credentials: cdk_cli.bootstrap(credentials, endpoint_url, echo=echo),
            deployed.values(),
        ):
            pass
    results = pre_deploy_check(assembly_dir, deployed.values(), endpoint_url)
    for result in results:
        for line in result.lines():
            (echo or (lambda _: None))(f"pre-deploy check: {line}")
    refused = [problem for result in results for problem in result.problems]
    if refused:
        raise PreDeployCheckError(
            "the pre-deploy check refused the assembly:\n" + "\n".join(refused)
        )
    for stack in stacks:
        cdk_cli.deploy(stack.name, assembly_dir, by_id[stack.account_id], endpoint_url, echo=echo)
    return deployed


def pre_deploy_check(
    assembly_dir: Path, accounts: Iterable[AccountCredentials], endpoint_url: str
) -> list[CheckResult]:
    """The pre-deploy check of every account: the assembly against what each has deployed."""
    assembly = read_assembly(assembly_dir)
    return [
        result
        for credentials in accounts
        for result in check_deployed(
            assembly, credentials.session(), credentials.account_id, endpoint_url=endpoint_url
        )
    ]
