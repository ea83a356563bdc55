"""A stack over CloudFormation's resource limit fails at synth, before any account deploys, with
the quota gate's one line per stack and no jsii trace."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from stacks.checks import gates
from stacks.checks.resource_limit import CLOUDFORMATION_RESOURCE_LIMIT
from stacks.topology import parse_topology

pytestmark = pytest.mark.synth

RESOURCES_PER_ENDPOINT = 15
"""Fewer than an endpoint adds to its account's stack (its queue, dead-letter and delay queues,
their keys, aliases, policies and alarms, and its outputs' resources)."""


def test_a_stack_over_the_resource_limit_is_refused_in_one_line(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    count = CLOUDFORMATION_RESOURCE_LIMIT // RESOURCES_PER_ENDPOINT + 1
    document["endpoints"] += [{"name": f"E{i}", "account": "Billing"} for i in range(count)]
    with pytest.raises(gates.GateError) as refused:
        gates.synth(parse_topology(document), tmp_path)
    assert refused.value.__cause__ is None
    assert refused.value.__suppress_context__
    (problem,) = refused.value.problems
    assert re.fullmatch(
        r"Messaging-Billing\.template\.json: Messaging-Billing: CloudFormation resources per "
        r"stack: \d{3},?\d* > 500 resources; split the account's resources over more stacks, "
        r'or share one KMS key per account \("keys": "perAccount"\)',
        problem,
    )
    assert str(refused.value) == f"synth refused (1 problem):\n{problem}"
