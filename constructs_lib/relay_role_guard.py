"""``RelayRoleGuard``: the service control policy that reserves the account bridge's relay role
names to the role that deploys the stacks.

Ingress queues, body buckets and their keys admit other accounts' relays by the exact ARNs of
their roles (:func:`~constructs_lib.relay_role_arn`), before the roles exist and whatever else
the accounts hold: a role another team names alike (``...-SalesEvil``), or creates under a path,
is not admitted. What an ARN cannot tell apart is a role of *that very name* made by someone
else: before the bridge creates it (a stack not yet deployed), after it is deleted, or the
bridge's own role given another trust policy, another policy, or passed to another function.
This policy, attached in AWS Organizations to the accounts (or their OU) of the bridge, denies
all of that to every principal but the deploying role (CloudFormation's execution role of CDK's
bootstrap, by default), which then alone creates, changes and passes the relay roles.

Without it, an administrator of a sending account, or anyone there allowed ``iam:CreateRole``
on any name, could create a relay's role before the bridge does and send into every account
that admits it. Deploy it from the organization's management account (or a delegated
administrator of SCPs); SCPs never apply to the management account itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_organizations as organizations
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked
from constructs_lib.defaults import RELAY_ROLE_GUARD_NAME
from constructs_lib.relay_roles import RELAY_ROLE_PREFIX
from constructs_lib.validation import ACCOUNT_ID

CDK_EXECUTION_ROLE = "cdk-*-cfn-exec-role-*"
"""The name of the role CloudFormation deploys CDK's stacks with (``cdk bootstrap``'s
``cdk-<qualifier>-cfn-exec-role-<account>-<region>``), whatever the qualifier."""
GUARDED_ACTIONS = (
    "iam:AttachRolePolicy",
    "iam:CreateRole",
    "iam:DeleteRole",
    "iam:DeleteRolePermissionsBoundary",
    "iam:DeleteRolePolicy",
    "iam:DetachRolePolicy",
    "iam:PassRole",
    "iam:PutRolePermissionsBoundary",
    "iam:PutRolePolicy",
    "iam:TagRole",
    "iam:UntagRole",
    "iam:UpdateAssumeRolePolicy",
    "iam:UpdateRole",
    "iam:UpdateRoleDescription",
)
"""Everything that makes, unmakes, empowers or hands over a role: what the deploying role does
to the relay roles and nobody else may."""
SCP_CONTENT_MAX = 5_120
"""AWS Organizations' limit on a service control policy's size (characters, whitespace
included as written)."""
_TARGET = re.compile(r"^(r-[0-9a-z]{4,32}|ou-[0-9a-z]{4,32}-[a-z0-9]{8,32}|\d{12})$")


@checked
class RelayRoleGuard(Construct):
    """The service control policy (``policy``) reserving the relay roles' names.

    Example:

    ```python
    from aws_cdk import App, Environment, Stack

    from constructs_lib import RelayRoleGuard

    app = App()
    stack = Stack(app, "Organization", env=Environment(account="444444444444", region="us-east-1"))
    RelayRoleGuard(stack, "RelayRoles", target_ids=["ou-ab12-cd34ef56"])
    app.synth()
    ```
    """

    content = Attribute[dict[str, Any]]("The service control policy's document.")
    policy = Attribute[organizations.CfnPolicy]("The service control policy.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        target_ids: Sequence[str],
        deployer_role_names: Sequence[str] = (CDK_EXECUTION_ROLE,),
        policy_name: str = RELAY_ROLE_GUARD_NAME,
    ) -> None:
        """Create the policy and attach it.

        :param target_ids: the organization's root (``r-...``), OUs (``ou-...``) or accounts
            (12 digits) it applies to: every account of the bridge, below them.
        :param deployer_role_names: the names (``*`` and ``?`` allowed) of the roles that
            create the relay roles. Default: CloudFormation's execution role of CDK's bootstrap
            (:data:`CDK_EXECUTION_ROLE`), whatever its qualifier.
        :param policy_name: the policy's name in AWS Organizations. Default:
            :data:`~constructs_lib.defaults.RELAY_ROLE_GUARD_NAME` (``messaging-relay-roles``).

        The policy names the roles in the partition of this construct's stack (that of the
        organization's management account, and so of its accounts).
        """
        super().__init__(scope, construct_id)
        if not target_ids:
            raise ValueError("target_ids: name the root, OUs or accounts the policy applies to")
        for target in target_ids:
            if not _TARGET.match(target):
                raise ValueError(
                    f"target_ids: {target!r} is no root (r-...), OU (ou-...-...) or account id "
                    "(12 digits)"
                )
        if not deployer_role_names:
            raise ValueError("deployer_role_names: name the role that deploys the relay roles")
        for name in deployer_role_names:
            if not isinstance(name, str) or "/" in name or not name or ACCOUNT_ID.match(name):
                raise ValueError(
                    f"deployer_role_names: {name!r} is not a role name (no path, no ARN)"
                )
        self.content = guard_policy(deployer_role_names, Stack.of(self).partition)
        text = json.dumps(self.content, separators=(",", ":"))
        if len(text) > SCP_CONTENT_MAX:
            raise ValueError(
                f"deployer_role_names: the policy would be {len(text)} characters, over AWS "
                f"Organizations' {SCP_CONTENT_MAX}; name fewer roles"
            )
        self.policy = organizations.CfnPolicy(
            self,
            "Policy",
            name=policy_name,
            type="SERVICE_CONTROL_POLICY",
            description="Only the deploying role may create, change or pass the account "
            "bridge's relay roles, which other accounts admit by name",
            content=self.content,
            target_ids=list(target_ids),
        )


def guard_policy(deployer_role_names: Sequence[str], partition: str = "aws") -> dict[str, Any]:
    """The policy's document: deny :data:`GUARDED_ACTIONS` on the relay roles to every principal
    but the deploying roles."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReserveRelayRoles",
                "Effect": "Deny",
                "Action": list(GUARDED_ACTIONS),
                "Resource": f"arn:{partition}:iam::*:role/{RELAY_ROLE_PREFIX}*",
                "Condition": {
                    "ArnNotLike": {
                        "aws:PrincipalArn": [
                            f"arn:{partition}:iam::*:role/{name}" for name in deployer_role_names
                        ]
                    }
                },
            }
        ],
    }
