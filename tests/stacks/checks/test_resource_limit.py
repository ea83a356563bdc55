"""A stack over CloudFormation's resource limit fails at synth, before any account deploys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stacks.app_builder import build_app
from stacks.checks.resource_limit import CLOUDFORMATION_RESOURCE_LIMIT
from stacks.topology import parse_topology

pytestmark = pytest.mark.synth


def test_a_stack_over_the_resource_limit_fails_at_synth(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    per_endpoint = 5
    count = CLOUDFORMATION_RESOURCE_LIMIT // per_endpoint + 1
    document["endpoints"] += [{"name": f"E{i}", "account": "Billing"} for i in range(count)]
    app = build_app(parse_topology(document), outdir=str(tmp_path), nag=False)
    with pytest.raises(
        RuntimeError, match=r"Messaging-Billing has \d+ resources; CloudFormation allows 500"
    ):
        app.synth()
