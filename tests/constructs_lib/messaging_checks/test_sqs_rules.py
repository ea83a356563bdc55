"""Messaging-RedriveReceives on plain aws-cdk-lib queues: a redrive under NServiceBus's
immediate retries + 1 receives fails, one that allows them passes, and a queue Lambda reads is
no endpoint's."""

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


def _endpoint_queue(max_receive_count: int) -> Callable[[Stack], sqs.Queue]:
    def build(stack: Stack) -> sqs.Queue:
        dead_letters = sqs.Queue(stack, "DeadLetters")
        return sqs.Queue(
            stack,
            "Orders",
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=dead_letters, max_receive_count=max_receive_count
            ),
        )

    return build


def test_three_receives_fail_redrive_receives(findings: Run) -> None:
    assert findings(_endpoint_queue(3)) == {("Team/Orders/Resource", "Messaging-RedriveReceives")}


def test_immediate_retries_and_one_receive_pass(findings: Run) -> None:
    assert findings(_endpoint_queue(6)) == set()


def test_endpoints_with_fewer_immediate_retries_say_so_to_the_pack(findings: Run) -> None:
    assert findings(_endpoint_queue(3), immediate_retries=2) == set()


def test_a_queue_lambda_reads_is_not_an_endpoints(findings: Run) -> None:
    def build(stack: Stack) -> None:
        queue = _endpoint_queue(3)(stack)
        function = lambda_.Function(
            stack,
            "Reader",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline("def handler(event, context):\n    return {}\n"),
            timeout=Duration.seconds(5),
        )
        function.add_event_source(sources.SqsEventSource(queue, report_batch_item_failures=True))

    assert findings(build) == set()
