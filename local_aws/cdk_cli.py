"""The real CDK CLI (pinned in package.json), run against the local AWS."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from local_aws.accounts import AccountCredentials

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "node_modules" / ".bin"
"""The CLI and the project's own Node (package.json pins both; scripts/setup.sh installs them)."""
CDK_BIN = NODE_BIN / "cdk"
_INHERITED_AWS_VARIABLES = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


class CdkCliError(RuntimeError):
    """A CDK CLI command failed; the message holds the command and the end of its output."""


def cdk_environment(credentials: AccountCredentials, endpoint_url: str) -> dict[str, str]:
    """The process environment for the CLI: local endpoint, this account's key, no telemetry,
    and the project's Node first on PATH, which the CLI's ``#!/usr/bin/env node`` runs on,
    whatever Node the machine has."""
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_AWS_VARIABLES}
    env.update(credentials.environment(endpoint_url))
    env.update(
        {
            "PATH": os.pathsep.join([str(NODE_BIN), env.get("PATH", os.defpath)]),
            "CDK_DISABLE_CLI_TELEMETRY": "true",
            "NODE_NO_WARNINGS": "1",
            "CI": "true",
        }
    )
    return env


def run_cdk(
    args: Sequence[str],
    credentials: AccountCredentials,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
    cwd: Path = ROOT,
) -> str:
    """Run ``cdk <args>`` (from the project root, by default) and return its output; raise on
    failure."""
    if not CDK_BIN.exists():
        raise CdkCliError(f"{CDK_BIN} is missing: run scripts/setup.sh (npm ci) first")
    command = [str(CDK_BIN), *args, "--no-notices"]
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=cdk_environment(credentials, endpoint_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if echo is not None:
            echo(line.rstrip("\n"))
    if process.wait() != 0:
        tail = "\n".join(lines[-30:])
        raise CdkCliError(
            f"`cdk {' '.join(args)}` failed with exit code {process.returncode}:\n{tail}"
        )
    return "\n".join(lines)


def bootstrap(
    credentials: AccountCredentials,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> str:
    """``cdk bootstrap aws://<account>/<region>``, run from an empty folder.

    Run from the project root, the CLI would synthesize the whole app first (``cdk.json``'s
    ``app``), some 10 s a time, and lock the project's ``cdk.out``; the bootstrap needs nothing
    of the app (``cdk.json`` sets no bootstrap qualifier), so the environment is all it gets.
    """
    environment = f"aws://{credentials.account_id}/{credentials.region}"
    with tempfile.TemporaryDirectory(prefix="cdk-bootstrap-") as folder:
        return run_cdk(
            ["bootstrap", environment], credentials, endpoint_url, echo=echo, cwd=Path(folder)
        )


def deploy(
    stack: str,
    assembly_dir: Path,
    credentials: AccountCredentials,
    endpoint_url: str,
    *,
    echo: Callable[[str], None] | None = None,
) -> str:
    """``cdk deploy <stack>`` from an already synthesized (and gated) cloud assembly.

    ``--exclusively``: the caller orders stacks across accounts itself; the CLI must not try
    to deploy a dependency that lives in another account with this account's credentials.
    """
    args = [
        "deploy",
        stack,
        "--exclusively",
        "--app",
        str(assembly_dir),
        "--require-approval",
        "never",
    ]
    return run_cdk(args, credentials, endpoint_url, echo=echo)
