"""The rules on Lambda's SQS event sources: a queue that hands a message to a second invocation
while the first still holds it, and a batch whose one failure sends every message back."""

from __future__ import annotations

from cdk_nag import NagRuleCompliance

from constructs_lib.defaults import (
    SQS_DEFAULT_VISIBILITY_TIMEOUT,
    VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT,
)
from constructs_lib.messaging_checks._rule import (
    COMPLIANT,
    NOT_APPLICABLE,
    MessagingRule,
    Subject,
    verdict,
)
from constructs_lib.messaging_checks._template import EVENT_SOURCE_MAPPING, QUEUE, split_arn

LAMBDA_DEFAULT_TIMEOUT_SECONDS = 3
"""Lambda's timeout for a function created without one."""
SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS = int(SQS_DEFAULT_VISIBILITY_TIMEOUT.to_seconds())
REPORT_BATCH_ITEM_FAILURES = "ReportBatchItemFailures"


def _seconds(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def queue_visibility(subject: Subject) -> NagRuleCompliance:
    """Both the queue and the function are of the stack, or the rule cannot tell."""
    t = subject.template
    queue = t.target(subject.properties.get("EventSourceArn"), QUEUE)
    function = t.function_of(subject.properties.get("FunctionName"))
    if queue is None or function is None:
        return NOT_APPLICABLE
    queue_properties, function_properties = t.properties(queue), t.properties(function)
    visibility = _seconds(
        t.render(queue_properties.get("VisibilityTimeout", SQS_DEFAULT_VISIBILITY_TIMEOUT_SECONDS))
    )
    timeout = _seconds(t.render(function_properties.get("Timeout", LAMBDA_DEFAULT_TIMEOUT_SECONDS)))
    if visibility is None or timeout is None:
        return NOT_APPLICABLE
    return verdict(visibility < VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT * timeout)


def batch_item_failures(subject: Subject) -> NagRuleCompliance:
    """Of an SQS source only; a batch of one has no other message to send back."""
    t = subject.template
    properties = subject.properties
    source = properties.get("EventSourceArn")
    if t.target(source, QUEUE) is None:
        parts = split_arn(t.render(source))
        if parts is None or parts.service != "sqs":
            return NOT_APPLICABLE
    if t.render(properties.get("BatchSize")) == "1":
        return COMPLIANT
    return verdict(REPORT_BATCH_ITEM_FAILURES not in properties.get("FunctionResponseTypes", []))


RULES = (
    MessagingRule(
        "LambdaQueueVisibility",
        EVENT_SOURCE_MAPPING,
        "The source queue's visibility timeout is under six times the function's timeout. "
        "Set it to at least six times the function's timeout.",
        "Lambda's SQS poller hides a received batch only for the queue's visibility timeout: "
        "a batch still in hand, or retried after a throttle, is received again and handled "
        "twice, and each receive counts towards the dead-letter redrive.",
        queue_visibility,
    ),
    MessagingRule(
        "LambdaBatchFailures",
        EVENT_SOURCE_MAPPING,
        "The SQS event source does not report batch item failures. Add "
        "ReportBatchItemFailures to FunctionResponseTypes (aws-cdk-lib: "
        "report_batch_item_failures=True) and return the ids of the failed messages.",
        "One failing message fails its whole batch: every message is received again and "
        "handled twice, and a poison message takes good ones to the dead-letter queue with it.",
        batch_item_failures,
    ),
)
