"""A resource-policy grant and its twin on the resource's customer-managed key.

Whoever a queue admits as a sender, or a topic as a publisher, must also be able to encrypt
with its key, and only through that service (``kms:ViaService``) and under the same
conditions: otherwise the grant fails at run time (the key refuses) or widens access (the key
admits more than the resource). Writing both statements in one place keeps them in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms

Conditions = Mapping[str, Mapping[str, str]]
"""IAM conditions: operator to ``{key: value}``."""


def grant_with_key(
    add_to_resource_policy: Callable[[iam.PolicyStatement], object],
    key: kms.IKey | None,
    *,
    sid: str,
    key_sid: str,
    principals: Sequence[iam.IPrincipal],
    actions: Sequence[str],
    resource_arn: str,
    key_actions: Sequence[str],
    via_service: str,
    conditions: Conditions | None = None,
) -> None:
    """Allow ``principals`` ``actions`` on the resource, and ``key_actions`` on its key only
    through ``via_service`` (``sqs``, ``sns``), both under ``conditions``.

    The key statement is added only to a key this app creates (``kms.Key``): an imported key's
    policy belongs to its owner.
    """
    add_to_resource_policy(
        iam.PolicyStatement(
            sid=sid,
            principals=list(principals),
            actions=list(actions),
            resources=[resource_arn],
            conditions=dict(conditions) if conditions else None,
        )
    )
    if not isinstance(key, kms.Key):
        return
    key_conditions: dict[str, dict[str, str]] = {
        "StringEquals": {"kms:ViaService": f"{via_service}.{Aws.REGION}.{Aws.URL_SUFFIX}"},
    }
    for operator, pairs in (conditions or {}).items():
        key_conditions.setdefault(operator, {}).update(pairs)
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid=key_sid,
            principals=list(principals),
            actions=list(key_actions),
            resources=["*"],
            conditions=key_conditions,
        )
    )
