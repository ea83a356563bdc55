"""CloudFormation's limits on a stack's resources and outputs, and the synthesized templates
checked against them.

CloudFormation refuses a template over either limit only at deploy time, in one account, after
other accounts may already have been updated. The stack plan keeps every messaging stack within
them before anything is built (:mod:`stacks.topology.stack_plan`); this check reads what synth
wrote, so that a stack over a limit all the same (a relay that needed more functions than its
stack's headroom holds) stops synth with one line per stack, before anything deploys.
"""

from __future__ import annotations

import json
from pathlib import Path

CLOUDFORMATION_RESOURCE_LIMIT = 500
"""Resources per stack (CloudFormation quotas: "Resources", per template)."""
CLOUDFORMATION_OUTPUT_LIMIT = 200
"""Outputs per stack (CloudFormation quotas: "Outputs", per template)."""
QUOTAS_URL = (
    "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html"
)


class ResourceLimitError(RuntimeError):
    """Synthesized stacks over a limit; the message has one line per stack."""


def limit_problems(assembly_dir: Path) -> list[str]:
    """One line for each template of the cloud assembly over a limit: the stack, its count,
    the limit and the fix."""
    problems = []
    for template_file in sorted(assembly_dir.glob("*.template.json")):
        template = json.loads(template_file.read_text(encoding="utf-8"))
        stack = template_file.name.removesuffix(".template.json")
        for what, limit in (
            ("Resources", CLOUDFORMATION_RESOURCE_LIMIT),
            ("Outputs", CLOUDFORMATION_OUTPUT_LIMIT),
        ):
            count = len(template.get(what, {}))
            if count > limit:
                problems.append(
                    f"stack {stack} has {count} {what.lower()}; CloudFormation allows {limit} "
                    f"({QUOTAS_URL}): give some of its units another stack number in the stack "
                    "plan (they are created again there, their queues empty), or remove some"
                )
    return problems


def check_limits(assembly_dir: Path) -> None:
    """Raise :class:`ResourceLimitError` if a template of the assembly is over a limit."""
    problems = limit_problems(assembly_dir)
    if problems:
        raise ResourceLimitError("\n".join(problems))
