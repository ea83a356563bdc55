"""SnsHttpsEndpoint: the function, its URL, its dedupe table and its subscription."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Stack, Validations
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from constructs_lib import DeliveryLoggedTopic, HttpDeliveryPolicy
from constructs_lib.sns_https_endpoint import CRYPTOGRAPHY_REQUIREMENT, SnsHttpsEndpoint

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.synth


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Template, Path]:
    outdir = tmp_path_factory.mktemp("endpoint")
    app = App(outdir=str(outdir))
    stack = Stack(app, "Endpoint", env=Environment(account="222222222222", region="us-east-1"))
    topic = DeliveryLoggedTopic(stack, "Topic", topic_name="OrderBilled")
    handler_package = tmp_path_factory.mktemp("user") / "partner"
    handler_package.mkdir()
    (handler_package / "__init__.py").write_text("")
    (handler_package / "handler.py").write_text("def handle(notification):\n    return None\n")
    SnsHttpsEndpoint(
        stack,
        "Partner",
        topic=topic,
        handler="partner.handler:handle",
        handler_code=handler_package,
        delivery_policy=HttpDeliveryPolicy(num_retries=5),
    )
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()
    return Template.from_stack(stack), outdir


def one(template: Template, kind: str) -> dict[str, Any]:
    (resource,) = template.find_resources(kind).values()
    return dict(resource)


def test_the_function_runs_the_endpoint_runtime_on_arm64(
    synthesized: tuple[Template, Path],
) -> None:
    function = one(synthesized[0], "AWS::Lambda::Function")["Properties"]
    assert function["Handler"] == "cross_account_runtime.sns_endpoint.lambda_handler.handler"
    assert function["Architectures"] == ["arm64"]
    assert function["Runtime"] == "python3.14"
    assert function["Timeout"] == 15
    env = function["Environment"]["Variables"]
    assert env["SNS_ENDPOINT_HANDLER"] == "partner.handler:handle"
    assert env["SNS_ENDPOINT_REPLAY_WINDOW_SECONDS"] == "3900"
    assert "Ref" in json.dumps(env["SNS_ENDPOINT_ALLOWED_TOPIC_ARNS"])
    assert "Ref" in json.dumps(env["SNS_ENDPOINT_DEDUPE_TABLE"])


def staged_asset(outdir: Path, template: Template, kind: str) -> Path:
    """The folder CDK staged for the asset of the one resource of ``kind``."""
    properties = one(template, kind)["Properties"]
    code = properties.get("Code") or properties["Content"]
    asset_hash = code["S3Key"].removesuffix(".zip")
    return outdir / f"asset.{asset_hash}"


def test_the_code_asset_holds_the_runtime_and_the_handler_only(
    synthesized: tuple[Template, Path],
) -> None:
    asset = staged_asset(synthesized[1], synthesized[0], "AWS::Lambda::Function")
    names = {str(p.relative_to(asset)) for p in asset.rglob("*") if p.is_file()}
    assert "cross_account_runtime/sns_endpoint/receiver.py" in names
    assert "partner/handler.py" in names
    assert not any(
        n.startswith(("tests/", "cross_account_runtime/delivery_report/")) for n in names
    )
    assert all(n.endswith(".py") for n in names)


def test_cryptography_is_bundled_for_the_function_platform(
    synthesized: tuple[Template, Path],
) -> None:
    layer = one(synthesized[0], "AWS::Lambda::LayerVersion")["Properties"]
    assert layer["CompatibleArchitectures"] == ["arm64"]
    assert layer["Description"] == CRYPTOGRAPHY_REQUIREMENT
    requirement = next(
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith("cryptography==")
    )
    assert requirement == CRYPTOGRAPHY_REQUIREMENT
    asset = staged_asset(synthesized[1], synthesized[0], "AWS::Lambda::LayerVersion")
    assert (asset / "python" / "cryptography").is_dir()
    binaries = list(asset.rglob("*.so"))
    assert binaries
    assert all("aarch64" in b.name or "abi3" in b.name for b in binaries)


def test_the_dedupe_table_is_on_demand_with_ttl_and_recovery(
    synthesized: tuple[Template, Path],
) -> None:
    table = one(synthesized[0], "AWS::DynamoDB::Table")["Properties"]
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["TimeToLiveSpecification"] == {"AttributeName": "ExpiresAt", "Enabled": True}
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert table["KeySchema"] == [{"AttributeName": "MessageId", "KeyType": "HASH"}]


def test_the_role_reaches_only_its_table_and_log_group(synthesized: tuple[Template, Path]) -> None:
    policies = synthesized[0].find_resources("AWS::IAM::Policy")
    (policy,) = [p for k, p in policies.items() if k.startswith("PartnerRole")]
    actions = {a for s in policy["Properties"]["PolicyDocument"]["Statement"] for a in s["Action"]}
    assert actions == {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
    }
    roles = synthesized[0].find_resources("AWS::IAM::Role")
    assert all("ManagedPolicyArns" not in r["Properties"] for r in roles.values())


def test_the_url_is_subscribed_with_the_delivery_policy_and_a_dlq(
    synthesized: tuple[Template, Path],
) -> None:
    url = one(synthesized[0], "AWS::Lambda::Url")["Properties"]
    assert url["AuthType"] == "NONE"
    subscription = one(synthesized[0], "AWS::SNS::Subscription")["Properties"]
    assert subscription["Protocol"] == "https"
    assert "FunctionUrl" in json.dumps(subscription["Endpoint"])
    assert (
        subscription["DeliveryPolicy"] == HttpDeliveryPolicy(num_retries=5).to_subscription_json()
    )
    assert "deadLetterTargetArn" in subscription["RedrivePolicy"]


def test_cdk_nag_accepts_the_endpoint(synthesized: tuple[Template, Path]) -> None:
    report = json.loads((synthesized[1] / "validation-report.json").read_text())
    assert [r for r in report["pluginReports"] if r.get("violations")] == []


def test_a_replay_window_shorter_than_the_retry_schedule_is_refused(
    partner_endpoint: Callable[..., SnsHttpsEndpoint],
) -> None:
    policy = HttpDeliveryPolicy(num_retries=50, min_delay_target=20, max_delay_target=60)
    with pytest.raises(ValueError, match=re.escape("replay_window: 600 s is shorter")):
        partner_endpoint(
            Stack(App(), "S"), delivery_policy=policy, replay_window=Duration.minutes(10)
        )


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        ("handle", "handler: 'handle' is not 'package.module:function'"),
        ("partner.handlers:handle", r"handler: module 'partner.handlers' is not in handler_code"),
        ("partner.handler:receive", "handler: .*handler.py defines no 'receive'"),
        ("other.handler:handle", "handler: module 'other.handler' would not be in the function"),
    ],
)
def test_a_handler_the_function_would_not_find_is_refused(
    partner_endpoint: Callable[..., SnsHttpsEndpoint], handler: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        partner_endpoint(Stack(App(), "S"), handler=handler)
