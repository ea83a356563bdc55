#!/usr/bin/env python3
"""CDK entry point: every account's stacks from the topology in ``cdk.json`` (or ``-c topology=<file>``),
placed exactly as the stack plan committed beside it records (``cdk.stacks``, ``<file>.stacks``)."""

from __future__ import annotations

import sys

from aws_cdk import App

from stacks.app_builder import (
    TOPOLOGY_CONTEXT_KEY,
    build_app,
    plan_file_from_context,
    topology_from_context,
)
from stacks.messaging_stack import RETIRED_STACK
from stacks.placement.plan import committed_plan
from stacks.quotas import QuotaError
from stacks.topology import TopologyError


def main() -> int:
    """Validate the topology and read its plan before any synth; a bad topology, a plan that
    does not place it (or is missing), or a template over an AWS quota exit 2 with every
    problem named and its fix. Synth never writes the plan: the placement commands do."""
    probe = App()
    value = probe.node.try_get_context(TOPOLOGY_CONTEXT_KEY)
    try:
        topology = topology_from_context(value)
        plan = committed_plan(topology, plan_file_from_context(value))
        build_app(topology, plan).synth()
    except (TopologyError, QuotaError) as error:
        print(error, file=sys.stderr)
        return 2
    for stack in plan.stacks:
        if not stack.units:
            print(
                f"{plan.source}: {stack.name} holds nothing any more: {RETIRED_STACK}",
                file=sys.stderr,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
