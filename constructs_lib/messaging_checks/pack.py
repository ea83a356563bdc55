"""``MessagingChecks``: a cdk-nag pack that finds, in any app's templates, what makes messages
undeliverable: SNS subscriptions SNS cannot deliver through, topics that log no failed
delivery, Lambda SQS sources that receive a message twice, redrives that cut NServiceBus's
retries short (docs/messaging_checks.md lists the rules, why each loses messages, and the fix).

The rules read each stack's template as synth wrote it, so that what a team made with plain
aws-cdk-lib (a queue policy added apart from its queue, a key granted by hand, a property
override) is judged as CloudFormation will deploy it. cdk-nag 3 runs a pack as a validation
plugin after synth, which is when those templates exist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import jsii
from aws_cdk import CfnResource, Stack, Stage, Token
from cdk_nag import IApplyRule, NagMessageLevel, NagPack, NagRuleCompliance
from constructs import IConstruct

from constructs_lib.defaults import IMMEDIATE_RETRIES
from constructs_lib.messaging_checks import lambda_rules, sns_rules, sqs_rules
from constructs_lib.messaging_checks._rule import PACK_NAME, MessagingRule, Subject
from constructs_lib.messaging_checks._template import StackTemplate

RULES: tuple[MessagingRule, ...] = sns_rules.RULES + sqs_rules.RULES + lambda_rules.RULES
_RULES_BY_TYPE: dict[str, list[MessagingRule]] = {}
for _rule in RULES:
    _RULES_BY_TYPE.setdefault(_rule.resource_type, []).append(_rule)


class MessagingChecks(NagPack):
    """A cdk-nag 3 pack of the mistakes that make messages undeliverable, for any app: run it
    as cdk-nag 3 runs its own packs, ``Validations.of(app).add_plugins(MessagingChecks(app))``;
    a finding fails the synth like AwsSolutions', and ``Validations.of(construct).acknowledge(
    Acknowledgment(id="Messaging-<rule>", reason=...))`` accepts one.

    :param scope: the app (cdk-nag's packs take it). Default: None.
    :param verbose: whether each finding also says why the mistake loses messages (cdk-nag's
        ``verbose``). Default: False.
    :param immediate_retries: the NServiceBus immediate retries the app's endpoints use, which
        ``Messaging-RedriveReceives`` requires a redrive to allow.
        Default: :data:`~constructs_lib.defaults.IMMEDIATE_RETRIES` (5, NServiceBus's).
    """

    def __init__(
        self,
        scope: IConstruct | None = None,
        *,
        verbose: bool = False,
        immediate_retries: int = IMMEDIATE_RETRIES,
    ) -> None:
        super().__init__(scope, verbose=verbose)
        self._pack_name = PACK_NAME
        self._immediate_retries = immediate_retries
        self._templates: dict[Path, tuple[int, StackTemplate]] = {}

    @property
    def name(self) -> str:
        """The plugin's name in the validation report."""
        return "MessagingChecks"

    def _check_resource(self, node: CfnResource) -> None:
        """Apply the rules of ``node``'s type (cdk-nag calls this for each CfnResource); the
        rules of other types are not even asked, which keeps a large app's run short."""
        rules = _RULES_BY_TYPE.get(node.cfn_resource_type)
        if not rules:
            return
        stack = Stack.of(node)
        subject = Subject(
            self._template_of(stack), str(stack.resolve(node.logical_id)), self._immediate_retries
        )
        for rule in rules:
            self._apply_rule(cast(IApplyRule, _AppliedRule(rule, node, rule.check(subject))))

    def _template_of(self, stack: Stack) -> StackTemplate:
        """The template synth wrote for ``stack``, read once per synth (a file written again
        is read again)."""
        stage = Stage.of(stack)
        outdir = stage.outdir if stage is not None else None
        path = Path(outdir or ".") / stack.template_file
        if not path.is_file():
            raise RuntimeError(
                f"MessagingChecks reads the templates synth writes, and {path} is not written: "
                "add the pack with Validations.of(app).add_plugins(MessagingChecks(app)), "
                "which runs it after synth"
            )
        stamp = path.stat().st_mtime_ns
        cached = self._templates.get(path)
        if cached is None or cached[0] != stamp:
            account, region = stack.account, stack.region
            template = StackTemplate.of(
                json.loads(path.read_text(encoding="utf-8")),
                account=None if Token.is_unresolved(account) else account,
                region=None if Token.is_unresolved(region) else region,
            )
            cached = self._templates[path] = (stamp, template)
        return cached[1]


@jsii.implements(IApplyRule)
class _AppliedRule:
    """One rule's verdict on one resource, in the form cdk-nag's ``applyRule`` takes: the rule
    ran in Python already, so its callback only returns the verdict."""

    def __init__(self, rule: MessagingRule, node: CfnResource, verdict: NagRuleCompliance) -> None:
        self._rule = rule
        self._node = node
        self._verdict = verdict

    @property
    def node(self) -> CfnResource:
        return self._node

    @property
    def rule_suffix_override(self) -> str:
        return self._rule.suffix

    @property
    def info(self) -> str:
        return self._rule.info

    @property
    def explanation(self) -> str:
        return self._rule.explanation

    @property
    def level(self) -> NagMessageLevel:
        return NagMessageLevel.ERROR

    def rule(self, node: CfnResource) -> NagRuleCompliance:  # noqa: ARG002 (cdk-nag's signature)
        return self._verdict
