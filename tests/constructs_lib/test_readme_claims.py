"""The README's claims about the constructs, checked on the README's own example (a bare
``App()``, none of the topology): run in-process, its templates read back."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"

pytestmark = pytest.mark.synth


def consumer_example() -> str:
    """The first Python block of the README's section on using the constructs."""
    section = README.read_text().split("## Use the constructs in your own app", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert match is not None
    return match.group(1)


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The example's templates by stack name, synthesized as the example writes them (cdk-nag
    left to ``tests/test_installed_package.py``, which runs the block as it stands)."""
    out = tmp_path_factory.mktemp("cdk.out")
    code = consumer_example().replace(
        "Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))\n", ""
    )
    argv = sys.argv
    sys.argv = ["app.py", str(out)]
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        sys.argv = argv
    return {
        name: json.loads((out / f"{name}.template.json").read_text())
        for name in ("Billing", "Sales")
    }


def of_type(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == kind]


def test_the_topics_stack_creates_the_sqs_delivery_status_logging(
    templates: dict[str, dict[str, Any]],
) -> None:
    """ "the topic's account stack creates the topic, its key, its policy granting
    sns:Subscribe to the queue's account, and the SQS delivery-status logging"."""
    billing = templates["Billing"]
    (topic,) = of_type(billing, "AWS::SNS::Topic")
    logging = topic["Properties"]["DeliveryStatusLogging"]
    assert [c["Protocol"] for c in logging] == ["sqs"]
    assert len(of_type(billing, "AWS::Logs::LogGroup")) >= 2
    (policy,) = of_type(billing, "AWS::SNS::TopicPolicy")
    subscribe = [
        s
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "sns:Subscribe"
    ]
    assert [s["Principal"] for s in subscribe] == [
        {"AWS": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":iam::111111111111:root"]]}}
    ]


def test_every_subscription_has_its_own_dlq_and_an_alarm_watches_it(
    templates: dict[str, dict[str, Any]],
) -> None:
    """ "Every subscription gets its own DLQ ...; an alarm watches it when the stack adds one"."""
    sales = templates["Sales"]
    (subscription,) = of_type(sales, "AWS::SNS::Subscription")
    dlq_id = subscription["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    assert sales["Resources"][dlq_id]["Properties"]["QueueName"] == (
        "MyCompany-Messages-OrderBilled-Audit-dlq"
    )
    watched = [a["Properties"]["Dimensions"] for a in of_type(sales, "AWS::CloudWatch::Alarm")]
    assert [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq_id, "QueueName"]}}] in watched


def test_nothing_crosses_between_the_accounts_but_names(
    templates: dict[str, dict[str, Any]],
) -> None:
    """ "nothing crosses between them but names both sides compute": no export, no import, no
    cross-account stack output."""
    for template in templates.values():
        text = json.dumps(template)
        for crossing in ("Fn::ImportValue", "Fn::GetStackOutput", "Export"):
            assert crossing not in text
