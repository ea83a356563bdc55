"""Hand-made cloud assemblies for the quota gate's tests: a manifest and a template per stack,
as the CDK writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ACCOUNT = "111111111111"
OTHER_ACCOUNT = "222222222222"
REGION = "us-east-1"


def write_assembly(
    directory: Path, templates: dict[str, dict[str, Any]], accounts: dict[str, str] | None = None
) -> Path:
    """An assembly in ``directory`` with a stack per template, each in ``ACCOUNT`` unless
    ``accounts`` names another for it."""
    directory.mkdir(parents=True, exist_ok=True)
    artifacts: dict[str, Any] = {}
    for name, template in templates.items():
        (directory / f"{name}.template.json").write_text(json.dumps(template, indent=1))
        account = (accounts or {}).get(name, ACCOUNT)
        artifacts[name] = {
            "type": "aws:cloudformation:stack",
            "environment": f"aws://{account}/{REGION}",
            "properties": {"templateFile": f"{name}.template.json"},
        }
    (directory / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    return directory


def resources(**found: dict[str, Any]) -> dict[str, Any]:
    """A template holding ``found`` as its resources."""
    return {"Resources": found}


def resource(resource_type: str, **properties: Any) -> dict[str, Any]:
    return {"Type": resource_type, "Properties": properties}


def policy(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def statement(**elements: Any) -> dict[str, Any]:
    """An Allow statement for one account, with ``elements`` added or replacing."""
    return {"Effect": "Allow", "Principal": {"AWS": ACCOUNT}, "Action": "sqs:SendMessage"} | (
        elements
    )


def compact_size(value: Any) -> int:
    """UTF-8 bytes of ``value`` as compact JSON."""
    return len(json.dumps(value, separators=(",", ":")).encode())
