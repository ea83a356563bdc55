"""The input queue's policy admitting the topics it subscribes to: ``PolicySettings``,
``PolicyStatement`` and ``PolicyExtensions.Update``.

By default (``SetupTopicPoliciesWhenSubscribing``) subscribing rewrites the queue's policy so
that the topics may send to it: one statement — effect ``Allow``, principal ``{"AWS": "*"}``,
action ``sqs:SendMessage``, the queue ARN as resource, and an ``ArnLike`` condition on
``aws:SourceArn`` listing the topic ARNs in ordinal order. Statements the new one covers (same
effect, resource, action and principal, every ``aws:SourceArn`` value among the new ones — the
per-topic statements of older versions included) are removed; so are wildcard statements (all of
whose condition values contain ``*``) once explicit ARNs are written. Already covered, the policy
is left alone.

With any wildcard condition the statement lists patterns instead of topics: ``{account}:*`` per
topic account (``AccountCondition``), ``{account}:{TopicNamePrefix}*`` (``TopicNamePrefixCondition``),
``{account}:{TopicNamePrefix}{namespace, sanitized as a topic name}*`` per namespace
(``TopicNamespaceConditions``). The account part is the topic ARN's first five ``:`` fields. A
policy is never made narrower by a subscribe: statements are only added or replaced by ones that
cover them.

Disabling the setup leaves the queue's policy alone (the user grants the topics); the setters
refuse to combine that with conditions, with the transport's messages — except that namespace
conditions can still be added to the list afterwards, which the transport does not check and then
ignores.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Configure/PolicySettings.cs``,
``Receiving/PolicyStatement.cs``, ``Extensions/PolicyExtensions.cs``; vectors in
``src/NServiceBus.Transport.SQS.Tests/PolicyExtensionsTests.cs`` and its approval files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from local_aws.released_transport.transport.pubsub.access_policy import (
    ALLOW,
    Condition,
    Policy,
    Principal,
    Statement,
    policy_from_json,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import get_sanitized_topic_name

SEND_MESSAGE_ACTION: Final = "sqs:SendMessage"
ARN_LIKE: Final = "ArnLike"
SOURCE_ARN: Final = "aws:SourceArn"
POLICY_ATTRIBUTE: Final = "Policy"
_WILDCARD: Final = "*"
_ACCOUNT_ARN_FIELDS: Final = 5


class PolicySettingsError(Exception):
    """.NET ``Exception`` from a ``PolicySettings`` setter."""


class PolicySettings:
    """``transport.Policies``: the properties refuse to contradict each other, as in .NET."""

    def __init__(self) -> None:
        self._setup = True
        self._account_condition = False
        self._topic_name_prefix_condition = False
        self.topic_namespace_conditions: list[str] = []
        """``TopicNamespaceConditions`` (a plain list: adding is never checked)."""

    @property
    def setup_topic_policies_when_subscribing(self) -> bool:
        """``SetupTopicPoliciesWhenSubscribing`` (default true)."""
        return self._setup

    @setup_topic_policies_when_subscribing.setter
    def setup_topic_policies_when_subscribing(self, value: bool) -> None:
        if (
            self._account_condition
            or self._topic_name_prefix_condition
            or self.topic_namespace_conditions
        ):
            raise PolicySettingsError(
                "Cannot disable policy setup if policy creation has been configured."
            )
        self._setup = value

    @property
    def account_condition(self) -> bool:
        """``AccountCondition``."""
        return self._account_condition

    @account_condition.setter
    def account_condition(self, value: bool) -> None:
        self._require_setup()
        self._account_condition = value

    @property
    def topic_name_prefix_condition(self) -> bool:
        """``TopicNamePrefixCondition``."""
        return self._topic_name_prefix_condition

    @topic_name_prefix_condition.setter
    def topic_name_prefix_condition(self, value: bool) -> None:
        self._require_setup()
        self._topic_name_prefix_condition = value

    def _require_setup(self) -> None:
        if not self._setup:
            raise PolicySettingsError(
                "Cannot configure policy creation if policy setup has been disabled."
            )


def _ordinal(values: Iterable[str]) -> list[str]:
    """``OrderBy(v => v, StringComparer.Ordinal)``: by UTF-16 code units."""
    return sorted(values, key=lambda value: value.encode("utf-16-be", "surrogatepass"))


def _distinct(values: Iterable[str]) -> list[str]:
    """``Distinct()``: first occurrences, in order."""
    return list(dict.fromkeys(values))


def permission_statement(queue_arn: str, topic_arn: str) -> Statement:
    """``PolicyStatement.CreatePermissionStatement``: one topic (the pre-v6 per-topic form)."""
    return Statement(
        ALLOW,
        principals=[Principal(_WILDCARD)],
        actions=[SEND_MESSAGE_ACTION],
        resources=[queue_arn],
        conditions=[Condition(ARN_LIKE, SOURCE_ARN, (topic_arn,))],
    )


def queue_matching_statement(queue_arn: str, topic_arn_patterns: Iterable[str]) -> Statement:
    """``CreatePermissionStatementForQueueMatching``: every pattern in one condition, ordinal
    order."""
    return Statement(
        ALLOW,
        principals=[Principal(_WILDCARD)],
        actions=[SEND_MESSAGE_ACTION],
        resources=[queue_arn],
        conditions=[Condition(ARN_LIKE, SOURCE_ARN, tuple(_ordinal(topic_arn_patterns)))],
    )


@dataclass(frozen=True)
class PolicyStatement:
    """``PolicyStatement``: one topic the queue subscribes to."""

    topic_name: str
    topic_arn: str
    queue_arn: str

    @property
    def account_arn(self) -> str:
        """The topic ARN's first five fields (``arn:aws:sns:region:account``), empty fields
        skipped."""
        fields = [part for part in self.topic_arn.split(":") if part]
        return ":".join(fields[:_ACCOUNT_ARN_FIELDS])


def extract_policy(queue_attributes: Mapping[str, str]) -> Policy:
    """``ExtractPolicy``: the ``Policy`` attribute, or a new policy when there is none."""
    text = queue_attributes.get(POLICY_ATTRIBUTE)
    return policy_from_json(text) if text else Policy()


def _contains_all(have: Sequence[object], wanted: Sequence[object]) -> bool:
    return all(item in have for item in wanted)


def _same_basics(statement: Statement, permission: Statement) -> bool:
    """Effect, resources, actions and principals (ordinal, provider included)."""
    return (
        statement.effect == permission.effect
        and _contains_all(statement.resources, permission.resources)
        and _contains_all(statement.actions, permission.actions)
        and _contains_all(statement.principals, permission.principals)
    )


def _contains_permission(policy: Policy, permission: Statement) -> bool:
    """``ContainsPermission``: a statement with the same conditions (values in any order)."""
    return any(
        _same_basics(statement, permission)
        and all(
            any(
                have.type == wanted.type
                and have.key == wanted.key
                and _ordinal(have.values) == _ordinal(wanted.values)
                for have in statement.conditions
            )
            for wanted in permission.conditions
        )
        for statement in policy.statements
    )


def _covered_by_permission(statement: Statement, permission: Statement) -> bool:
    """``CoveredByPermission``: some condition's values all among the permission's."""
    return _same_basics(statement, permission) and any(
        any(
            wanted.type == condition.type
            and wanted.key == condition.key
            and all(value in wanted.values for value in condition.values)
            for wanted in permission.conditions
        )
        for condition in statement.conditions
    )


def _covered_by_wildcard(statement: Statement, permission: Statement) -> bool:
    """``CoveredByWildcard``: some condition whose values all hold a ``*``."""
    return _same_basics(statement, permission) and any(
        all(_WILDCARD in value for value in condition.values) for condition in statement.conditions
    )


def _remove(policy: Policy, statements: list[Statement]) -> int:
    """Remove these very statements from the policy; how many were removed."""
    policy.statements = [s for s in policy.statements if all(s is not r for r in statements)]
    return len(statements)


def update_policy(
    policy: Policy,
    add_statements: Sequence[PolicyStatement],
    *,
    account_condition: bool,
    topic_name_prefix_condition: bool,
    namespace_conditions: Sequence[str],
    topic_name_prefix: str | None,
    queue_arn: str,
) -> bool:
    """``PolicyExtensions.Update``: whether the policy changed."""
    if not add_statements:
        return False
    prefix = topic_name_prefix or ""
    accounts = _distinct(statement.account_arn for statement in add_statements)
    wildcard_conditions: list[str] = []
    if account_condition:
        wildcard_conditions += [f"{account}:*" for account in accounts]
    if topic_name_prefix_condition:
        wildcard_conditions += [f"{account}:{prefix}*" for account in accounts]
    for namespace in namespace_conditions:
        namespace_name = prefix + get_sanitized_topic_name(namespace)
        wildcard_conditions += [f"{account}:{namespace_name}*" for account in accounts]
    wildcard = queue_matching_statement(queue_arn, wildcard_conditions)
    explicit = queue_matching_statement(queue_arn, (s.topic_arn for s in add_statements))
    modified = False
    if wildcard_conditions or not _contains_permission(policy, explicit):
        covered = [s for s in policy.statements if _covered_by_permission(s, explicit)]
        modified = _remove(policy, covered) > 0
        if not wildcard_conditions:
            policy.statements.append(explicit)
            wildcards = [s for s in policy.statements if _covered_by_wildcard(s, explicit)]
            _remove(policy, wildcards)
            modified = True
    if wildcard_conditions and not _contains_permission(policy, wildcard):
        wildcards = [s for s in policy.statements if _covered_by_wildcard(s, wildcard)]
        _remove(policy, wildcards)
        policy.statements.append(wildcard)
        modified = True
    return modified
