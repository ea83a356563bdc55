"""The rules on Lambda's SQS event sources, on plain aws-cdk-lib functions and queues."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs

from tests.constructs_lib.messaging_checks.conftest import Findings

pytestmark = pytest.mark.synth
Run = Callable[..., Findings]


def _reader(visibility_seconds: int, *, report_failures: bool) -> Callable[[Stack], None]:
    """A function with a 60 s timeout reading a queue hiding messages ``visibility_seconds``."""

    def build(stack: Stack) -> None:
        queue = sqs.Queue(stack, "Jobs", visibility_timeout=Duration.seconds(visibility_seconds))
        function = lambda_.Function(
            stack,
            "Handler",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline("def handler(event, context):\n    return {}\n"),
            timeout=Duration.seconds(60),
        )
        function.add_event_source(
            sources.SqsEventSource(queue, report_batch_item_failures=report_failures)
        )

    return build


def rules(found: Findings) -> set[str]:
    return {rule for _, rule in found}


def test_a_visibility_under_six_function_timeouts_fails_lambda_queue_visibility(
    findings: Run,
) -> None:
    assert rules(findings(_reader(300, report_failures=True))) == {
        "Messaging-LambdaQueueVisibility"
    }


def test_a_source_without_batch_item_failures_fails_lambda_batch_failures(findings: Run) -> None:
    assert rules(findings(_reader(360, report_failures=False))) == {"Messaging-LambdaBatchFailures"}


def test_six_function_timeouts_and_batch_item_failures_pass(findings: Run) -> None:
    assert findings(_reader(360, report_failures=True)) == set()


def test_an_imported_queue_is_not_applicable_for_visibility(findings: Run) -> None:
    def build(stack: Stack) -> None:
        queue = sqs.Queue.from_queue_arn(
            stack, "Imported", "arn:aws:sqs:eu-west-1:111111111111:Jobs"
        )
        function = lambda_.Function(
            stack,
            "Handler",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline("def handler(event, context):\n    return {}\n"),
            timeout=Duration.seconds(60),
        )
        function.add_event_source(sources.SqsEventSource(queue, report_batch_item_failures=True))

    assert findings(build) == set()
