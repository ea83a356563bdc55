"""The layering of docs/architecture.md is enforced: an upward import fails the test command.

The contracts themselves run in ``scripts/test.sh``; here they are run on a copy of the code
with an upward import planted, to show that each kind of breach is caught and named."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = {
    "constructs_lib": ROOT / "constructs_lib",
    "stacks": ROOT / "stacks",
    "local_aws": ROOT / "local_aws",
    "runtime/cross_account_runtime": ROOT / "runtime" / "cross_account_runtime",
}


def _lint_copy(tmp_path: Path, planted: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's contracts on a copy of the code in which each
    ``planted`` module (a path under the copy) holds the given import."""
    for target, source in PACKAGES.items():
        shutil.copytree(source, tmp_path / target, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for path, line in planted.items():
        module = tmp_path / path
        module.write_text(module.read_text() + f"\n{line}\n")
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{tmp_path / 'runtime'}"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_code_as_it_is_keeps_every_contract(tmp_path: Path) -> None:
    result = _lint_copy(tmp_path, {})

    assert result.returncode == 0, result.stdout
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "upward_import", "contract"),
    [
        (
            "runtime/cross_account_runtime/common/json_log.py",
            "import constructs_lib.defaults",
            "Floors",
        ),
        (
            "constructs_lib/validation.py",
            "import constructs_lib.endpoint_queue",
            "constructs_lib: compositions over constructs",
        ),
        (
            "stacks/quotas/table.py",
            "import stacks.placement.plan",
            "stacks: checks over the app",
        ),
        (
            "stacks/topology/model.py",
            "import stacks.topology.parsing",
            "stacks.topology: parsing over the model",
        ),
        (
            "local_aws/released_transport/transport/queues/naming.py",
            "import cross_account_runtime.nservicebus.queue_arn",
            "The released software's model knows nothing of the product it judges",
        ),
        (
            "local_aws/moto/fifo_delay.py",
            "import local_aws.moto.time_travel",
            "local_aws.moto: each teaching stands alone",
        ),
    ],
)
def test_an_upward_import_breaks_its_contract(
    tmp_path: Path, module: str, upward_import: str, contract: str
) -> None:
    result = _lint_copy(tmp_path, {module: upward_import})

    assert result.returncode == 1
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken
