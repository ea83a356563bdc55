"""The synth gates: cdk-nag (AwsSolutions, and the package's MessagingChecks) at synth, then
AWS's documented quotas and cfn-lint on every template.

Both the test suite and the main job call these, so a template that would fail review, or that
AWS would refuse where the local AWS does not, never reaches a deployment. Each refuses with one
line per problem, never with the jsii trace a failed synth raises.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from aws_cdk import App

from stacks.app_builder import build_app
from stacks.placement.plan import StackPlan
from stacks.quotas import QuotaError
from stacks.topology import Topology

ROOT = Path(__file__).resolve().parents[2]
CFN_LINT_CONFIG = ROOT / ".cfnlintrc.yaml"


VALIDATION_ERROR = re.compile(r"^\s+\[(?P<path>[^\]]+)\] (?P<message>.+)$", re.MULTILINE)
"""How aws-cdk-lib lists each construct validation's error in the error a failed synth raises
(``Validation failed with the following errors:`` then ``  [<path>] <message>`` per error)."""


class GateError(RuntimeError):
    """A gate found problems; the message lists them, one per line."""

    def __init__(self, gate: str, problems: list[str]) -> None:
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{gate} refused ({count}):\n" + "\n".join(problems))


def synth(topology: Topology, plan: StackPlan, outdir: Path) -> Path:
    """Synthesize every account's stacks as ``plan`` places their units (the committed plan,
    :func:`~stacks.placement.plan.committed_plan`, as ``cdk deploy`` builds them) with cdk-nag
    attached, then check every template against AWS's quotas (:mod:`stacks.quotas`);
    raise on any finding."""
    return synth_checked(build_app(topology, plan, outdir=str(outdir)), outdir)


def synth_checked(app: App, outdir: Path) -> Path:
    """Synthesize ``app`` (writing to ``outdir``, its outdir) with the cdk-nag packs it has
    (:func:`~stacks.app_builder.build_app` attaches AwsSolutions and MessagingChecks): a finding
    of any, or a quota the app's synth refuses, is a :class:`GateError` with a line per problem."""
    try:
        app.synth()
    except QuotaError as error:
        raise GateError("quota gate", error.problems) from None
    except RuntimeError as error:
        problems = synth_problems(str(error), outdir / "validation-report.json")
        if not problems:
            raise
        raise GateError("synth", problems) from None
    return outdir


def synth_problems(message: str, report: Path) -> list[str]:
    """One line per problem a failed synth reported: each construct validation's error (a
    quota's line as it is, others after their construct's path), then each cdk-nag finding
    of the validation report (``<construct path>: <rule>: <description>``)."""
    problems = [
        found["message"]
        if ".template.json: " in found["message"]
        else f"{found['path']}: {found['message']}"
        for found in VALIDATION_ERROR.finditer(message)
    ]
    if report.exists():
        for plugin in json.loads(report.read_text(encoding="utf-8")).get("pluginReports", []):
            for violation in plugin.get("violations", []):
                problems += [
                    f"{construct['constructPath']}: {violation['ruleName']}: "
                    f"{violation['description']}"
                    for construct in violation.get("violatingConstructs", [])
                ]
    return problems


def templates(assembly_dir: Path) -> list[Path]:
    """The CloudFormation templates of a cloud assembly."""
    return sorted(assembly_dir.glob("*.template.json"))


def cfn_lint(assembly_dir: Path) -> list[dict[str, object]]:
    """cfn-lint findings (errors, warnings and informational) for every template."""
    files = templates(assembly_dir)
    if not files:
        raise GateError("cfn-lint", [f"{assembly_dir}: no templates to lint"])
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
        raise GateError("cfn-lint", [f"could not run: {result.stderr.strip()}"])
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
        raise GateError("cfn-lint", lines)
