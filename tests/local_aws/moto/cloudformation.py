"""Small templates deployed straight through the local AWS's CloudFormation API, as one account."""

from __future__ import annotations

import json
from typing import Any

from local_aws.accounts import AccountCredentials
from tests.local_aws.accounts import client


def deploy(
    account: AccountCredentials, endpoint_url: str, name: str, template: dict[str, Any]
) -> dict[str, str]:
    """Create stack ``name`` from ``template`` as ``account``; returns its outputs by key."""
    cloudformation = client(account, "cloudformation", endpoint_url)
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    return outputs(account, endpoint_url, name)


def update(
    account: AccountCredentials, endpoint_url: str, name: str, template: dict[str, Any]
) -> dict[str, str]:
    """Update stack ``name`` to ``template`` (without a change set); returns its outputs."""
    cloudformation = client(account, "cloudformation", endpoint_url)
    cloudformation.update_stack(StackName=name, TemplateBody=json.dumps(template))
    return outputs(account, endpoint_url, name)


def delete(account: AccountCredentials, endpoint_url: str, name: str) -> None:
    """Delete stack ``name``."""
    cloudformation = client(account, "cloudformation", endpoint_url)
    cloudformation.delete_stack(StackName=name)


def outputs(account: AccountCredentials, endpoint_url: str, name: str) -> dict[str, str]:
    """The stack's outputs by key, once it is complete (moto creates resources at once)."""
    cloudformation = client(account, "cloudformation", endpoint_url)
    (stack,) = cloudformation.describe_stacks(StackName=name)["Stacks"]
    assert stack["StackStatus"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE"), stack
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
