"""The stacks of a cloud assembly as its manifest lists them, each with its concrete account and
region: what every report that reads synthesized templates back starts from.

The checks read what synth wrote, not the app that wrote it, so that they judge the templates
CloudFormation will be given; a stack without a concrete environment cannot be judged (its
ARNs are unknown) and is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STACK_ARTIFACT = "aws:cloudformation:stack"


@dataclass(frozen=True)
class StackArtifact:
    """One stack of the assembly: its name, account, region and manifest entry."""

    name: str
    account: str
    region: str
    artifact: Mapping[str, Any]

    @property
    def template_file(self) -> str:
        """The template's file name, relative to the assembly."""
        file: str = self.artifact["properties"]["templateFile"]
        return file


@dataclass(frozen=True)
class CloudAssembly:
    """The assembly's folder, its manifest's artifacts and its stacks, by name."""

    root: Path
    artifacts: Mapping[str, Any]
    stacks: tuple[StackArtifact, ...]


def read_cloud_assembly(
    assembly_dir: str | Path, error: type[Exception], needs: str
) -> CloudAssembly:
    """The assembly in ``assembly_dir``; raise ``error`` when it has no readable manifest or a
    stack has no concrete account and region (``needs`` saying why the reader needs them)."""
    root = Path(assembly_dir)
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as failure:
        raise error(f"{root}: not a cloud assembly ({failure}); run the synth first") from failure
    artifacts: Mapping[str, Any] = manifest.get("artifacts", {})
    stacks = []
    for name, artifact in sorted(artifacts.items()):
        if artifact.get("type") != STACK_ARTIFACT:
            continue
        environment = artifact.get("environment", "")
        account, _, region = environment.removeprefix("aws://").partition("/")
        if not account.isdigit() or "unknown" in region or not region:
            raise error(f"{name}: environment {environment!r} is not concrete; {needs}")
        stacks.append(StackArtifact(name, account, region, artifact))
    return CloudAssembly(root, artifacts, tuple(stacks))
