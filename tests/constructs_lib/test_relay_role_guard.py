"""RelayRoleGuard: the service control policy that leaves the relay roles' names to the deploying
role, asked of an IAM policy simulator: nobody else may create, change or pass a role of those
names; every other role stays theirs to make."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import App, Environment, Stack, Validations
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from constructs_lib import RelayRoleGuard
from tests.iam_simulator.organization import Organization, Request

ACCOUNT = "111111111111"
RELAY = f"arn:aws:iam::{ACCOUNT}:role/messaging-relay-outbound-Sales-3"
DEPLOYER = f"arn:aws:iam::{ACCOUNT}:role/cdk-hnb659fds-cfn-exec-role-{ACCOUNT}-us-east-1"
TEAM = f"arn:aws:iam::{ACCOUNT}:role/team-administrator"


@pytest.fixture(scope="module")
def organization(tmp_path_factory: pytest.TempPathFactory) -> Organization:
    """The guard in the management account's stack, synthesized with cdk-nag (which fails the
    synth on a finding), read back as the policies an organization holds."""
    outdir = tmp_path_factory.mktemp("guard")
    app = App(outdir=str(outdir))
    stack = Stack(app, "Organization", env=Environment(account="123456789012", region="us-east-1"))
    RelayRoleGuard(stack, "Guard", target_ids=["ou-ab12-cd34ef56"])
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    app.synth()
    (policy,) = Template.from_stack(stack).find_resources("AWS::Organizations::Policy").values()
    assert policy["Properties"]["TargetIds"] == ["ou-ab12-cd34ef56"]
    found = Organization.of(outdir)
    assert len(found.service_control_policies) == 1
    return found


@pytest.mark.parametrize(
    ("principal", "action", "resource", "decision"),
    [
        (TEAM, "iam:CreateRole", RELAY, "ExplicitlyDenied"),
        (TEAM, "iam:PutRolePolicy", RELAY, "ExplicitlyDenied"),
        (TEAM, "iam:UpdateAssumeRolePolicy", RELAY, "ExplicitlyDenied"),
        (TEAM, "iam:PassRole", RELAY, "ExplicitlyDenied"),
        (TEAM, "iam:DeleteRole", RELAY, "ExplicitlyDenied"),
        (DEPLOYER, "iam:CreateRole", RELAY, "Allowed"),
        (DEPLOYER, "iam:PassRole", RELAY, "Allowed"),
        (TEAM, "iam:CreateRole", f"arn:aws:iam::{ACCOUNT}:role/reports-etl", "Allowed"),
    ],
)
def test_only_the_deploying_role_makes_changes_or_passes_a_relay_role(
    organization: Organization, principal: str, action: str, resource: str, decision: str
) -> None:
    assert organization.decide([Request(principal, action, resource)]) == [decision]


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"target_ids": []}, "target_ids: name the root, OUs or accounts"),
        ({"target_ids": ["ou-12"]}, "target_ids: 'ou-12' is no root"),
        (
            {"target_ids": ["r-ab12"], "deployer_role_names": ["arn:aws:iam::1:role/x"]},
            "deployer_role_names: 'arn:aws:iam::1:role/x' is not a role name",
        ),
        ({"target_ids": ["r-ab12"], "deployer_role_names": []}, "deployer_role_names: name"),
    ],
)
def test_misuse_is_refused_naming_the_keyword(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RelayRoleGuard(Stack(App(), "Organization"), "Guard", **keywords)
