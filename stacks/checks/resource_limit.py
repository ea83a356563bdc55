"""Fail synth, with the quota gate's one line, when a stack would exceed CloudFormation's
resource limit.

CloudFormation refuses a template with more than 500 resources only at deploy time, in one
account, after the others may already have been updated; checking at synth stops the whole
run before anything is written. The number is the quota table's
(:data:`stacks.checks.quotas.table.CLOUDFORMATION_RESOURCES`), and the refusal is the line the
quota gate writes for the same template, which :func:`stacks.checks.gates.synth` passes on
without the jsii trace.
"""

from __future__ import annotations

import jsii
from aws_cdk import CfnResource, Stack
from constructs import IValidation

from stacks.checks.quotas.measures import Measurement
from stacks.checks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES

CLOUDFORMATION_RESOURCE_LIMIT = CLOUDFORMATION_RESOURCES.fixed
"""Resources CloudFormation takes in one template: what an account's stacks are split by."""
CLOUDFORMATION_OUTPUT_LIMIT = CLOUDFORMATION_OUTPUTS.fixed
"""Outputs CloudFormation takes in one template: each queue adds its own, so they bound a
stack's queues as well as its resources do."""


def count_resources(stack: Stack) -> int:
    """The number of CloudFormation resources the stack will synthesize."""
    return sum(
        1
        for node in stack.node.find_all()
        if CfnResource.is_cfn_resource(node) and Stack.of(node) is stack
    )


@jsii.implements(IValidation)
class ResourceLimit:
    """A construct validation that counts the stack's resources against the limit."""

    def __init__(self, stack: Stack, limit: int = CLOUDFORMATION_RESOURCE_LIMIT) -> None:
        self._stack = stack
        self._limit = limit

    def validate(self) -> list[str]:
        """Return the error CDK reports at synth, or nothing."""
        found = Measurement(
            CLOUDFORMATION_RESOURCES,
            self._stack.template_file,
            self._stack.stack_name,
            count_resources(self._stack),
            self._limit,
        )
        return [found.problem()] if found.crosses else []
