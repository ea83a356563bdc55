"""CloudFormation's limits on a stack's resources and outputs, checked on the synthesized
templates before anything else reads them.

CloudFormation refuses a template over either limit only at deploy time, in one account, after
other accounts may already have been updated. The stack plan keeps every messaging stack within
them before anything is built (:mod:`stacks.topology.stack_plan`); this check reads what synth
wrote, so that a stack over a limit all the same (a recorded unit that grew in place beyond its
stack's headroom) stops synth with one line per stack, before anything deploys. The numbers and
the line are the quota gate's (:mod:`stacks.checks.quotas`): this is its first two rows, run by
every synth, the app's included.
"""

from __future__ import annotations

from pathlib import Path

from stacks.checks.quotas import measure_assembly
from stacks.checks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES

CLOUDFORMATION_RESOURCE_LIMIT = CLOUDFORMATION_RESOURCES.fixed
"""Resources CloudFormation takes in one template: what an account's stacks are split by."""
CLOUDFORMATION_OUTPUT_LIMIT = CLOUDFORMATION_OUTPUTS.fixed
"""Outputs CloudFormation takes in one template: each queue adds its own, so they bound a
stack's queues as well as its resources do."""


class ResourceLimitError(RuntimeError):
    """Synthesized stacks over a limit; the message has one line per stack."""


def limit_problems(assembly_dir: Path) -> list[str]:
    """One line for each template of the cloud assembly over a limit: the stack, its count,
    the limit and the fix."""
    return [
        measurement.problem()
        for measurement in measure_assembly(assembly_dir)
        if measurement.quota in (CLOUDFORMATION_RESOURCES, CLOUDFORMATION_OUTPUTS)
        and measurement.crosses
    ]


def check_limits(assembly_dir: Path) -> None:
    """Raise :class:`ResourceLimitError` if a template of the assembly is over a limit."""
    problems = limit_problems(assembly_dir)
    if problems:
        raise ResourceLimitError("\n".join(problems))
