"""The shape of a messaging rule: what it checks, and what a finding says.

A rule is plain Python over the synthesized template (:mod:`._template`): the pack hands it one
resource at a time and cdk-nag reports its answer, so a rule is tested without jsii. cdk-nag
groups a rule's findings under one description, so ``info`` speaks of the mistake in general
(and its fix); the finding's construct paths say where."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdk_nag import NagRuleCompliance

from constructs_lib.messaging_checks._template import StackTemplate

PACK_NAME = "Messaging"
"""The prefix of every rule id (``Messaging-SubscriptionQueueKey``)."""
COMPLIANT = NagRuleCompliance.COMPLIANT
NON_COMPLIANT = NagRuleCompliance.NON_COMPLIANT
NOT_APPLICABLE = NagRuleCompliance.NOT_APPLICABLE


def verdict(problem: bool | None) -> NagRuleCompliance:
    """A rule's answer from whether it found its problem (``None``: cannot tell)."""
    if problem is None:
        return NOT_APPLICABLE
    return NON_COMPLIANT if problem else COMPLIANT


@dataclass(frozen=True)
class Subject:
    """The resource a rule judges, in its stack's template, with the pack's settings."""

    template: StackTemplate
    logical_id: str
    immediate_retries: int

    @property
    def properties(self) -> Mapping[str, Any]:
        return self.template.properties(self.logical_id)


@dataclass(frozen=True)
class MessagingRule:
    """One rule of :class:`~constructs_lib.MessagingChecks`, ``Messaging-<suffix>``: ``info``
    is the finding (the mistake and its fix), ``explanation`` why it loses messages (cdk-nag
    adds it to the finding when verbose)."""

    suffix: str
    resource_type: str
    info: str
    explanation: str
    check: Callable[[Subject], NagRuleCompliance]

    @property
    def rule_id(self) -> str:
        return f"{PACK_NAME}-{self.suffix}"
