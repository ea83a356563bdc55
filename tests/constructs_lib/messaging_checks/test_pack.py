"""MessagingChecks as a team runs it: a cdk-nag 3 validation plugin whose findings fail the
synth and can be acknowledged; the package's own constructs pass it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from aws_cdk import Acknowledgment, App, Environment, Stack, Validations
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs

import constructs_lib
from constructs_lib import (
    CrossAccountQueueSubscription,
    DeliveryLoggedTopic,
    EndpointQueue,
    MessagingChecks,
)
from constructs_lib.messaging_checks import PACK_NAME, RULES
from tests.constructs_lib.messaging_checks.conftest import TEAM, Findings, synth_findings

pytestmark = pytest.mark.synth
Run = Callable[..., Findings]


def test_the_pack_is_exported_and_names_its_rules() -> None:
    assert "MessagingChecks" in constructs_lib.__all__
    assert constructs_lib.MessagingChecks is MessagingChecks
    assert len({rule.rule_id for rule in RULES}) == len(RULES) == 10
    assert all(rule.rule_id.startswith(f"{PACK_NAME}-") for rule in RULES)


def test_the_docs_describe_every_rule() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "messaging_checks.md").read_text()
    assert all(f"`{rule.rule_id}`" in doc for rule in RULES)


def _unlogged_topic(stack: Stack) -> sns.Topic:
    return sns.Topic(stack, "Topic")


def test_an_acknowledged_finding_is_not_reported(findings: Run) -> None:
    def build(stack: Stack) -> None:
        topic = _unlogged_topic(stack)
        Validations.of(topic).acknowledge(
            Acknowledgment(
                id="Messaging-TopicDeliveryLogging", reason="Its subscribers log deliveries."
            )
        )

    assert findings(build) == set()
    assert findings(_unlogged_topic) == {("Team/Topic/Resource", "Messaging-TopicDeliveryLogging")}


def test_run_before_synth_it_says_how_to_run_it() -> None:
    app = App()
    _unlogged_topic(Stack(app, "Team"))
    with pytest.raises(RuntimeError, match=r"Validations\.of\(app\)\.add_plugins"):
        MessagingChecks().validate_scope(app)


def test_the_packages_own_constructs_pass(tmp_path: Path) -> None:
    """An endpoint's queue subscribed to a topic of its account and to one of another, as the
    constructs make them: keys, policies, dead-letter queues and logging all admit SNS."""
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "Team", env=Environment(account=TEAM, region="eu-west-1"))
    orders = EndpointQueue(stack, "Orders", endpoint_name="Orders")
    topic = DeliveryLoggedTopic(stack, "OrderPlaced", topic_name="OrderPlaced")
    topic.add_queue_subscription("Orders", orders.queue)
    audit = sqs.Queue(stack, "Audit", enforce_ssl=True)
    CrossAccountQueueSubscription(
        stack,
        "Invoices",
        topic_arn="arn:aws:sns:eu-west-1:222222222222:InvoiceSent",
        subscription_name="Audit",
        queue=audit,
    )
    Validations.of(app).add_plugins(MessagingChecks(app, verbose=True))
    assert synth_findings(app, tmp_path) == set()
