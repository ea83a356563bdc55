"""The toolchain ``scripts/setup.sh`` installs, as a fresh shell gets it: the CDK CLI and jsii run
on the Node pinned in package.json (an LTS jsii supports, so no end-of-life banner), whatever
Node the machine has; and the synth-only job (``scripts/synth.sh``) needs nothing that only the
main job and the tests install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import distribution, distributions, packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT_NODE = ROOT / "node_modules" / ".bin" / "node"
JSII_SUPPORTED_LTS = {22, 24}
"""The Node majors jsii supports (its runtime's release table); 20 ended on 2026-10-30."""
ONLY_IN_THE_FULL_INSTALL = {"pyspark", "moto", "duckdb"}
pytestmark = pytest.mark.synth

JSII_NODE_PROBE = """\
import os

import aws_cdk

aws_cdk.App()  # starts jsii's Node process
me = str(os.getpid())
for entry in os.listdir("/proc"):
    try:
        with open(f"/proc/{entry}/stat") as stat:
            parent = stat.read().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        continue
    if parent == me:
        print(os.path.realpath(f"/proc/{entry}/exe"))
"""
"""Prints the executable of each process the Python process started: jsii's Node."""

ONE_STACK_TOPOLOGY = {
    "accounts": [{"name": "Sales", "id": "111111111111", "region": "us-east-1"}],
    "endpoints": [{"name": "Sales", "account": "Sales"}],
    "errorQueue": {"name": "error", "account": "Sales"},
}


def pinned_node() -> str:
    version: str = json.loads((ROOT / "package.json").read_text())["devDependencies"]["node"]
    return version


def machine_environment() -> dict[str, str]:
    """The environment of a shell that has not sourced setup.sh: the machine's PATH (with its
    own Node, whichever version that is) without the project's folders, and no ``JSII_*``
    variable, so nothing picks jsii's Node or silences its warnings."""
    project = {str(ROOT / ".venv" / "bin"), str(PROJECT_NODE.parent)}
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("JSII_") and name != "VIRTUAL_ENV"
    }
    environment["PATH"] = os.pathsep.join(
        folder for folder in os.environ["PATH"].split(os.pathsep) if folder not in project
    )
    return environment


def run(command: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in the machine's environment; a failure shows the end of its output."""
    result = subprocess.run(
        command, cwd=cwd, env=machine_environment(), capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, (
        f"{' '.join(command)[:200]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def in_setup(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in bash after ``source scripts/setup.sh``."""
    return run(["bash", "-c", f"source scripts/setup.sh && {script}"])


def test_the_pinned_node_is_an_lts_jsii_supports() -> None:
    major = int(pinned_node().split(".")[0])
    assert major in JSII_SUPPORTED_LTS


def test_setup_puts_the_pinned_node_first_for_the_cli_and_jsii() -> None:
    """The CLI runs the first ``node`` on PATH (``#!/usr/bin/env node``); jsii runs $JSII_NODE,
    else the same: both must find the project's Node before the machine's."""
    lines = in_setup(
        f"command -v node && node --version && python - <<'EOF'\n{JSII_NODE_PROBE}EOF"
    ).stdout.split()
    on_path, version, *jsii_nodes = lines
    assert on_path == str(PROJECT_NODE)
    assert version == f"v{pinned_node()}"
    assert jsii_nodes == [str(PROJECT_NODE.resolve())]


def test_the_synth_only_job_synthesizes_and_gates_with_no_end_of_life_banner(
    tmp_path: Path,
) -> None:
    topology = tmp_path / "one-stack.json"
    topology.write_text(json.dumps(ONE_STACK_TOPOLOGY))
    # Synth reads the plan and never writes it: the placement command records the units first.
    placed = run(
        [".venv/bin/python", "-m", "stacks.placement", "place", "--topology", str(topology)]
    )
    assert "Sales: endpoint:Sales: placed in stack 1 (Messaging-Sales)" in placed.stdout
    out = tmp_path / "cdk.out"
    result = run(["scripts/synth.sh", "-c", f"topology={topology}", "-o", str(out)])
    assert sorted(p.name for p in out.glob("*.template.json")) == ["Messaging-Sales.template.json"]
    assert "pass cdk-nag, the quota gate and cfn-lint" in result.stderr
    # jsii frames each Node warning (end of life, deprecated, untested) in a box of '!'.
    assert "end-of-life" not in result.stderr
    assert "!!!!" not in result.stderr
    # The full install that runs the tests serves the synth-only job as it is.
    assert "setup: installing" not in result.stderr


def synth_only_distributions() -> set[str]:
    """The distributions ``requirements-synth.txt`` installs with their dependencies, the
    package itself (``uv pip install -e .``), what every virtual environment holds, and uv,
    which setup.sh installs first to install the rest."""
    wanted = [
        Requirement(line).name
        for line in (ROOT / "requirements-synth.txt").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "-"))
    ]
    found: set[str] = {"pip", "setuptools", "uv"}
    while wanted:
        name = canonicalize_name(wanted.pop())
        if name in found:
            continue
        found.add(name)
        for required in distribution(name).requires or []:
            requirement = Requirement(required)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
    return found | {canonicalize_name("cross-account-messaging")}


def only_in_the_full_install() -> set[str]:
    """Top-level modules that no distribution of the synth-only install provides."""
    synth_only = synth_only_distributions()
    installed = {canonicalize_name(d.metadata["Name"]) for d in distributions()}
    assert synth_only <= installed
    return {
        module
        for module, providers in packages_distributions().items()
        if not synth_only & {canonicalize_name(p) for p in providers}
    }


SYNTH_WITH_IMPORTS_BLOCKED = """\
import importlib.abc
import runpy
import sys
from pathlib import Path

OUTDIR = Path(sys.argv[1])
BLOCKED = set(sys.argv[2].split(","))


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not part of the synth-only install")


sys.meta_path.insert(0, Blocker())
sys.argv = ["app.py"]
try:
    runpy.run_path("app.py", run_name="__main__")
except SystemExit as exit:
    if exit.code:
        raise
from stacks.checks import gates

gates.require_clean_cfn_lint(OUTDIR)
"""


def test_synth_and_its_gates_import_nothing_only_the_full_install_brings(
    tmp_path: Path,
) -> None:
    """``cdk synth`` runs app.py (cdk-nag and the quota gate run inside its synth), then the
    job runs cfn-lint: both in one process that cannot import what the synth-only install
    leaves out."""
    blocked = only_in_the_full_install()
    assert blocked >= ONLY_IN_THE_FULL_INSTALL
    out = tmp_path / "cdk.out"
    environment = {**os.environ, "CDK_OUTDIR": str(out)}
    result = subprocess.run(
        [sys.executable, "-c", SYNTH_WITH_IMPORTS_BLOCKED, str(out), ",".join(sorted(blocked))],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(list(out.glob("*.template.json"))) == 4
