#!/usr/bin/env python3
"""CDK entry point: one stack per account from the topology in ``cdk.json`` (or ``-c topology=<file>``)."""

from __future__ import annotations

import sys

from aws_cdk import App

from stacks.app_builder import TOPOLOGY_CONTEXT_KEY, build_app, topology_from_context
from stacks.topology import TopologyError


def main() -> int:
    """Validate the topology before any synth; a bad one exits 2 with every problem named."""
    probe = App()
    try:
        topology = topology_from_context(probe.node.try_get_context(TOPOLOGY_CONTEXT_KEY))
    except TopologyError as error:
        print(error, file=sys.stderr)
        return 2
    build_app(topology).synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
