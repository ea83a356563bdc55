#!/usr/bin/env python3
"""CDK entry point: every account's stacks from the topology in ``cdk.json`` (or ``-c topology=<file>``),
placed as the stack plan committed beside it says."""

from __future__ import annotations

import sys

from aws_cdk import App

from stacks.app_builder import (
    STACK_PLAN_FROZEN_CONTEXT_KEY,
    TOPOLOGY_CONTEXT_KEY,
    build_app,
    stack_plan_from_context,
    topology_from_context,
)
from stacks.checks.quotas import QuotaError
from stacks.topology import TopologyError


def main() -> int:
    """Validate the topology and place its units before any synth; a bad topology, or units
    that fit no stack, exit 2 with every problem named, as does a template over an AWS quota."""
    probe = App()
    value = probe.node.try_get_context(TOPOLOGY_CONTEXT_KEY)
    try:
        topology = topology_from_context(value)
        plan = stack_plan_from_context(
            topology, value, probe.node.try_get_context(STACK_PLAN_FROZEN_CONTEXT_KEY)
        )
        build_app(topology, stack_plan=plan).synth()
    except (TopologyError, QuotaError) as error:
        print(error, file=sys.stderr)
        return 2
    if plan.placed or plan.dropped:
        print(
            f"{plan.source}: {len(plan.placed)} units placed, {len(plan.dropped)} dropped; "
            "commit it with the topology",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
