"""The package as another team installs it: a wheel, not the checkout, in a fresh virtual
environment outside the repository, with a small app of that team's that subscribes its own
handler package to a topic and bridges an existing queue with a relay.

Only ``constructs_lib`` and ``cross_account_runtime`` may be installed: top-level names such
as ``stacks`` or ``runtime`` would collide with anything else so named in a user's
environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALLED_NAMES = {"constructs_lib", "cross_account_runtime"}
NOT_PART_OF_THE_PACKAGE = (
    ".git",
    ".venv",
    "node_modules",
    "cdk.out",
    "out",
    ".cache",
    "build",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
)
pytestmark = pytest.mark.synth

TEAM_APP = """\
import json
import sys
from pathlib import Path

from aws_cdk import App, Environment, Stack

import constructs_lib
from constructs_lib import (
    CrossAccountRelay,
    DeliveryLoggedTopic,
    EndpointQueue,
    RelayDirection,
    RelayRoute,
    SnsHttpsEndpoint,
)

app = App(outdir=sys.argv[1])
stack = Stack(app, "Team", env=Environment(account="111111111111", region="eu-west-1"))
topic = DeliveryLoggedTopic(stack, "Orders", topic_name="Orders")
SnsHttpsEndpoint(
    stack,
    "Webhook",
    topic=topic,
    handler="acme_webhooks.receive:handle",
    handler_code=Path(__file__).parent / "acme_webhooks",
)
existing = EndpointQueue.from_queue_arn(
    stack,
    "Existing",
    "arn:aws:sqs:eu-west-1:111111111111:Billing",
    dead_letter_queue_arn="arn:aws:sqs:eu-west-1:111111111111:Billing-dlq",
)
CrossAccountRelay(
    stack,
    "Outbound",
    direction=RelayDirection.OUTBOUND,
    routes=[RelayRoute(existing, "arn:aws:sqs:eu-west-1:222222222222:Billing-ingress")],
    local_endpoints=["Sales"],
)
app.synth()
print(json.dumps({"constructs_lib": constructs_lib.__file__}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the package's wheel installed (dependencies pinned as
    ``requirements.txt`` pins them); returns the environment's folder."""
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_PART_OF_THE_PACKAGE))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(work / "dist"), str(source)])
    (wheel,) = (work / "dist").glob("*.whl")
    environment = work / "fresh"
    venv.EnvBuilder(with_pip=True).create(environment)
    run(
        [
            str(python_of(environment)),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--constraint",
            str(ROOT / "requirements.txt"),
            str(wheel),
        ]
    )
    return environment


def python_of(environment: Path) -> Path:
    return environment / "bin" / "python"


def run(
    command: list[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; a failure shows the end of its output."""
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    assert result.returncode == 0, (
        f"{' '.join(command[:4])} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def test_only_the_constructs_and_the_runtime_are_installed(installed: Path) -> None:
    (dist_info,) = installed.glob("lib/python*/site-packages/cross_account_messaging-*.dist-info")
    assert set((dist_info / "top_level.txt").read_text().split()) == INSTALLED_NAMES
    recorded = {
        line.split(",")[0].split("/")[0] for line in (dist_info / "RECORD").read_text().splitlines()
    }
    assert recorded - {dist_info.name} == INSTALLED_NAMES


def test_a_team_app_synthesizes_with_the_installed_package(installed: Path, tmp_path: Path) -> None:
    team = tmp_path / "team"
    (team / "acme_webhooks").mkdir(parents=True)
    (team / "acme_webhooks" / "__init__.py").write_text("")
    (team / "acme_webhooks" / "receive.py").write_text("def handle(notification):\n    pass\n")
    (team / "app.py").write_text(TEAM_APP)
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    result = run(
        [str(python_of(installed)), "app.py", str(team / "cdk.out")], cwd=team, env=environment
    )
    used = Path(json.loads(result.stdout.strip().splitlines()[-1])["constructs_lib"])
    assert used.is_relative_to(installed)

    template = json.loads((team / "cdk.out" / "Team.template.json").read_text())
    functions = {
        logical_id: resource["Properties"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function"
    }
    handlers = sorted(p["Handler"] for p in functions.values())
    assert all(h.startswith("cross_account_runtime.") for h in handlers), handlers
    webhook = next(p for p in functions.values() if "sns_endpoint" in p["Handler"])
    asset = team / "cdk.out" / f"asset.{webhook['Code']['S3Key'].removesuffix('.zip')}"
    shipped = {str(p.relative_to(asset)) for p in asset.rglob("*.py")}
    assert "acme_webhooks/receive.py" in shipped
    assert any(name.startswith("cross_account_runtime/sns_endpoint/") for name in shipped)
    assert not any(name.startswith("cross_account_runtime/delivery_report/") for name in shipped)
