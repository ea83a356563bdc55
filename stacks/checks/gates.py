"""The synth gates: cdk-nag (AwsSolutions) at synth, cfn-lint on every template after.

Both the test suite and the main job call these, so a template that would fail review never
reaches a deployment.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stacks.app_builder import build_app
from stacks.topology import Topology

ROOT = Path(__file__).resolve().parents[2]
CFN_LINT_CONFIG = ROOT / ".cfnlintrc.yaml"


class GateError(RuntimeError):
    """A gate found problems; the message lists them."""


def synth(topology: Topology, outdir: Path) -> Path:
    """Synthesize every account's stack with cdk-nag attached; raise on any finding."""
    try:
        build_app(topology, outdir=str(outdir)).synth()
    except RuntimeError as error:
        report = outdir / "validation-report.json"
        details = report.read_text(encoding="utf-8") if report.exists() else str(error)
        raise GateError(f"synth failed: {error}\n{details}") from error
    return outdir


def templates(assembly_dir: Path) -> list[Path]:
    """The CloudFormation templates of a cloud assembly."""
    return sorted(assembly_dir.glob("*.template.json"))


def cfn_lint(assembly_dir: Path) -> list[dict[str, object]]:
    """cfn-lint findings (errors, warnings and informational) for every template."""
    files = templates(assembly_dir)
    if not files:
        raise GateError(f"{assembly_dir}: no templates to lint")
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("cfn-lint")),
            "--config-file",
            str(CFN_LINT_CONFIG),
            "--format",
            "json",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if result.returncode != 0 and not result.stdout.strip():
        raise GateError(f"cfn-lint could not run: {result.stderr.strip()}")
    findings: list[dict[str, object]] = json.loads(result.stdout or "[]")
    return findings


def require_clean_cfn_lint(assembly_dir: Path) -> None:
    """Raise :class:`GateError` listing every cfn-lint finding, if there is any."""
    findings = cfn_lint(assembly_dir)
    if findings:
        lines = [
            f"{f['Filename']}: {f['Rule']['Id']} {f['Message']}"  # type: ignore[index]
            for f in findings
        ]
        raise GateError("cfn-lint findings:\n" + "\n".join(lines))
