"""The rule on SQS queues: a redrive that takes a failing message away from NServiceBus before
its immediate retries are done (the rule itself is
:func:`~constructs_lib.defaults.max_receive_count_problem`, shared with the constructs and the
topology)."""

from __future__ import annotations

from cdk_nag import NagRuleCompliance

from constructs_lib.defaults import max_receive_count_problem
from constructs_lib.messaging_checks._rule import NOT_APPLICABLE, MessagingRule, Subject, verdict
from constructs_lib.messaging_checks._template import QUEUE, json_property


def redrive_receives(subject: Subject) -> NagRuleCompliance:
    """A queue a Lambda function of the stack reads is no NServiceBus endpoint's (Lambda
    retries by receives of its own): not applicable."""
    redrive = json_property(subject.properties.get("RedrivePolicy"))
    if redrive is None or subject.logical_id in subject.template.lambda_sources():
        return NOT_APPLICABLE
    text = subject.template.render(redrive.get("maxReceiveCount"))
    if text is None or not text.isdigit():
        return NOT_APPLICABLE
    return verdict(max_receive_count_problem(int(text), subject.immediate_retries) is not None)


RULES = (
    MessagingRule(
        "RedriveReceives",
        QUEUE,
        "The queue's redrive (maxReceiveCount) moves a message to the dead-letter queue before "
        "NServiceBus's immediate retries are done. Allow at least immediate retries + 1 "
        "receives (6 for NServiceBus's default 5; MessagingChecks(immediate_retries=...) for "
        "endpoints configured otherwise).",
        "The released SQS transport retries a failing message by receiving it again; moved to "
        "the dead-letter queue early, it never reaches NServiceBus's error queue, where "
        "ServiceControl would show it.",
        redrive_receives,
    ),
)
