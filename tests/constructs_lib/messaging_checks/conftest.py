"""What the pack's tests share: a team's stack made with plain aws-cdk-lib, synthesized in
this process with MessagingChecks as cdk-nag 3 runs a pack, and the findings it reported."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs

from constructs_lib import MessagingChecks

TEAM = "111111111111"
OTHER = "222222222222"
REGION = "eu-west-1"

Findings = set[tuple[str, str]]
"""``(construct path, rule id)`` of each finding."""


def synth_findings(app: App, outdir: Path) -> Findings:
    """Synthesize ``app`` (whose outdir is ``outdir``) and return what cdk-nag reported: a
    finding fails the synth, as AwsSolutions' do, and is listed in the validation report."""
    try:
        app.synth()
    except RuntimeError:
        if not (outdir / "validation-report.json").is_file():
            raise
    report = json.loads((outdir / "validation-report.json").read_text(encoding="utf-8"))
    return {
        (construct["constructPath"], violation["ruleName"])
        for plugin in report["pluginReports"]
        for violation in plugin.get("violations", [])
        for construct in violation.get("violatingConstructs", [])
    }


@pytest.fixture
def findings(tmp_path: Path) -> Callable[..., Findings]:
    """Builds a team's stack ``Team`` (account 111111111111) with ``build`` in a new App and
    returns MessagingChecks' findings; keywords go to the pack."""

    def run(build: Callable[[Stack], object], **keywords: Any) -> Findings:
        outdir = tmp_path / f"app{len(list(tmp_path.iterdir()))}"
        app = App(outdir=str(outdir))
        build(Stack(app, "Team", env=Environment(account=TEAM, region=REGION)))
        Validations.of(app).add_plugins(MessagingChecks(app, **keywords))
        return synth_findings(app, outdir)

    return run


def logged_topic(stack: Stack, name: str = "Topic", *, fifo: bool = False) -> sns.Topic:
    """A topic that logs SQS delivery failures (and successes) through a role of its own."""
    role = iam.Role(stack, f"{name}Logging", assumed_by=iam.ServicePrincipal("sns.amazonaws.com"))
    return sns.Topic(
        stack,
        name,
        fifo=fifo or None,
        logging_configs=[
            sns.LoggingConfig(
                protocol=sns.LoggingProtocol.SQS,
                failure_feedback_role=role,
                success_feedback_role=role,
            )
        ],
    )


def sound_subscription(
    stack: Stack, *, fifo: bool = False, key: kms.IKey | None = None
) -> tuple[sns.Topic, sqs.Queue, sqs.Queue]:
    """What every SNS rule passes: a logged topic, a queue (encrypted with ``key`` if given)
    subscribed by aws-cdk-lib's SqsSubscription, which writes the queue's policy and the key's
    grant, and a dead-letter queue of the topic's kind, whose policy the subscription writes."""
    topic = logged_topic(stack, fifo=fifo)
    queue = sqs.Queue(stack, "Queue", fifo=fifo or None, encryption_master_key=key)
    dead_letters = sqs.Queue(stack, "DeadLetters", fifo=fifo or None)
    topic.add_subscription(subscriptions.SqsSubscription(queue, dead_letter_queue=dead_letters))
    return topic, queue, dead_letters
