"""Fail synth, with a clear message, when a stack would exceed CloudFormation's resource limit.

CloudFormation refuses a template with more than 500 resources only at deploy time, in one
account, after the others may already have been updated; checking at synth stops the whole
run before anything is deployed.
"""

from __future__ import annotations

import jsii
from aws_cdk import CfnResource, Stack
from constructs import IValidation

CLOUDFORMATION_RESOURCE_LIMIT = 500


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
        count = count_resources(self._stack)
        if count <= self._limit:
            return []
        return [
            f"stack {self._stack.stack_name} has {count} resources; CloudFormation allows "
            f"{self._limit}. Split the account's endpoints across stacks or share one KMS key "
            "per account (EndpointQueue's encryption_key) to cut four resources per endpoint."
        ]
