"""Policy grants that scale by their shape, not by a statement per grant.

Written as a statement per grant, the policies of a queue reached from thirty accounts, of an
endpoint subscribed to twenty-five topics or of an ingress queue admitting the relays of fifty
accounts cross SQS's quotas (20 statements, 8,192 bytes, 50 principals), and a key shared by
an account's queues would cross KMS's 32 KiB. So every grant of a resource is recorded here and
written at synth as one statement per kind of grantee, listing them all:

* accounts: any principal of the listed accounts (``Principal: *`` narrowed by
  ``aws:PrincipalAccount``, a condition, so SQS's 50 principals do not bound the list);
* organizations: any principal of the listed organizations (``aws:PrincipalOrgID``);
* roles: the listed roles, each by its exact ARN (``ArnEquals`` on ``aws:PrincipalArn``: a
  pattern would admit every role another team of the account names alike);
* topics: SNS delivering for the listed topics (``ArnEquals`` on ``aws:SourceArn``).

Accounts and roles may also be required to belong to an organization the topology declares
(``aws:PrincipalOrgID``): an account that leaves it loses access.

Whoever a resource admits must also be able to use its key, and only through that service
(``kms:ViaService``) under the same conditions, or the grant fails at run time (the key
refuses) or widens access (the key admits more than the resource): :func:`grant_with_key`
writes both. A key that encrypts queues admits each grantee only for the queues it writes to
(``kms:EncryptionContext:aws:sqs:arn``, the queue's ARN, which SQS passes to KMS with every
data key), so one key may serve every queue of an account without admitting any grantee to
another queue; queues whose grantees are alike share one statement.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsii
from aws_cdk import Arn, ArnFormat, Aspects, Aws, IAspect, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.region_info import RegionInfo
from constructs import Construct, IConstruct

SNS_PRINCIPAL = "sns.amazonaws.com"
QUEUE_ENCRYPTION_CONTEXT = "kms:EncryptionContext:aws:sqs:arn"
"""The encryption context SQS passes to KMS for a queue's data keys: the queue's ARN."""
BUCKET_ENCRYPTION_CONTEXT = "kms:EncryptionContext:aws:s3:arn"
"""The encryption context S3 passes to KMS for a bucket with S3 Bucket Keys on: the bucket's
ARN (an object's without them)."""
TOPIC_KEY_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")
"""What SNS needs of a subscribed queue's key (and its subscription dead-letter queue's) to
deliver, as aws-cdk-lib's ``SqsSubscription`` grants it."""


class GranteeKind(enum.Enum):
    """How a statement names its grantees; the value ends the statement's ``Sid``."""

    ACCOUNTS = "Accounts"
    ORGANIZATIONS = "Organizations"
    ROLES = "Roles"
    TOPICS = "Topics"


@dataclass(frozen=True)
class Grantees:
    """Who one grant is for: values of one kind, for the accounts and roles kinds within an
    ``organization`` when given, for topics through the SNS principal ``service``."""

    kind: GranteeKind
    values: tuple[str, ...]
    organization: str | None = None
    service: str = SNS_PRINCIPAL

    @classmethod
    def accounts(cls, account_ids: Iterable[str], organization: str | None = None) -> Grantees:
        return cls(GranteeKind.ACCOUNTS, tuple(account_ids), organization)

    @classmethod
    def organizations(cls, organization_ids: Iterable[str]) -> Grantees:
        return cls(GranteeKind.ORGANIZATIONS, tuple(organization_ids))

    @classmethod
    def roles(cls, role_arns: Iterable[str], organization: str | None = None) -> Grantees:
        return cls(GranteeKind.ROLES, tuple(role_arns), organization)

    @classmethod
    def topics(cls, topic_arns: Iterable[str], service: str = SNS_PRINCIPAL) -> Grantees:
        return cls(GranteeKind.TOPICS, tuple(topic_arns), service=service)


def sns_principal(topic_arn: str, subscriber: IConstruct) -> str:
    """The SNS principal that delivers ``topic_arn``'s messages to a queue of ``subscriber``'s
    stack: ``sns.amazonaws.com``, or the regional name where the two regions differ and one
    of them is opt-in (as aws-cdk-lib's ``SqsSubscription`` names it)."""
    queue_region = Stack.of(subscriber).region
    if Token.is_unresolved(topic_arn) or Token.is_unresolved(queue_region):
        return SNS_PRINCIPAL
    topic_region = Arn.split(topic_arn, ArnFormat.SLASH_RESOURCE_NAME).region
    if not topic_region or topic_region == queue_region:
        return SNS_PRINCIPAL
    for region in (queue_region, topic_region):
        if RegionInfo.get(region).is_opt_in_region:
            return f"sns.{region}.amazonaws.com"
    return SNS_PRINCIPAL


@dataclass(frozen=True, order=True)
class _Slot:
    """One statement's place: its ``Sid`` stem, grantee kind and actions; each grant of the
    same slot adds its grantees to the statement."""

    sid: str
    kind: str
    actions: tuple[str, ...]
    organization: str
    service: str
    via_service: str
    context: tuple[str, ...] = ()
    """A fixed encryption context the grant requires: ``(condition key, value)``, or none."""


def _slot(
    sid: str,
    grantees: Grantees,
    actions: Sequence[str],
    via_service: str | None,
    context: tuple[str, str] | None = None,
) -> _Slot:
    return _Slot(
        sid,
        grantees.kind.value,
        tuple(sorted(set(actions))),
        grantees.organization or "",
        grantees.service if grantees.kind is GranteeKind.TOPICS else "",
        via_service or "",
        context or (),
    )


def _statement(
    slot: _Slot,
    values: Iterable[str],
    *,
    resources: Sequence[str],
    extra: Mapping[str, Mapping[str, Any]] | None = None,
) -> iam.PolicyStatement:
    """The statement of a slot naming ``values`` (sorted), with ``extra`` conditions."""
    listed = sorted(set(values))
    conditions: dict[str, dict[str, Any]] = {}

    def add(operator: str, key: str, value: Any) -> None:
        conditions.setdefault(operator, {})[key] = value

    kind = GranteeKind(slot.kind)
    principal: iam.IPrincipal = iam.AnyPrincipal()
    if kind is GranteeKind.ACCOUNTS:
        add("StringEquals", "aws:PrincipalAccount", listed)
    elif kind is GranteeKind.ORGANIZATIONS:
        add("StringEquals", "aws:PrincipalOrgID", listed)
    elif kind is GranteeKind.ROLES:
        add("ArnEquals", "aws:PrincipalArn", listed)
    else:
        principal = iam.ServicePrincipal(slot.service)
        add("ArnEquals", "aws:SourceArn", listed)
    if slot.organization:
        add("StringEquals", "aws:PrincipalOrgID", slot.organization)
    if slot.via_service:
        add("StringEquals", "kms:ViaService", f"{slot.via_service}.{Aws.REGION}.{Aws.URL_SUFFIX}")
    if slot.context:
        context_key, context_value = slot.context
        add("StringEquals", context_key, context_value)
    for operator, pairs in (extra or {}).items():
        for key, value in pairs.items():
            add(operator, key, value)
    return iam.PolicyStatement(
        sid=slot.sid + slot.kind,
        principals=[principal],
        actions=list(slot.actions),
        resources=list(resources),
        conditions=conditions,
    )


@jsii.implements(IAspect)
class _RenderOnce:
    """Writes a grants holder's statements once, when synth visits it: only then are all of
    its grants known."""

    def __init__(self, render: Callable[[], None]) -> None:
        self._render: Callable[[], None] | None = render

    def visit(self, node: IConstruct) -> None:  # noqa: ARG002 (added to the holder alone)
        if self._render is not None:
            render, self._render = self._render, None
            render()


def _unique_sids(statements: list[iam.PolicyStatement]) -> list[iam.PolicyStatement]:
    """Number the statements whose ``Sid`` an earlier one has: SQS wants them unique."""
    seen: dict[str, int] = {}
    for statement in statements:
        sid = statement.sid or ""
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:
            statement.sid = f"{sid}{seen[sid]}"
    return statements


class PolicyGrants(Construct):
    """The grants of one resource policy (a queue's, a topic's, a bucket's): one statement per
    slot, listing every grantee granted there."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        add_to_resource_policy: Callable[[iam.PolicyStatement], object],
        resources: Sequence[str],
    ) -> None:
        super().__init__(scope, construct_id)
        self._add = add_to_resource_policy
        self._resources = tuple(resources)
        self._grants: dict[_Slot, set[str]] = {}
        Aspects.of(self).add(_RenderOnce(self._render))

    def grant(self, sid: str, grantees: Grantees, actions: Sequence[str]) -> None:
        """Allow ``grantees`` ``actions`` on the resource."""
        self._grants.setdefault(_slot(sid, grantees, actions, None), set()).update(grantees.values)

    def _render(self) -> None:
        statements = [
            _statement(slot, values, resources=self._resources)
            for slot, values in sorted(self._grants.items())
            if values
        ]
        for statement in _unique_sids(statements):
            self._add(statement)


class KeyGrants(Construct):
    """The grants of one customer-managed key, each through a service and, on a key that
    encrypts queues, for the queues its grantees write to: one statement per slot and set of
    grantees, listing the queues they may encrypt for. Get a key's with :meth:`of`."""

    ID = "MessagingGrants"

    def __init__(self, key: kms.Key) -> None:
        super().__init__(key, self.ID)
        self._key = key
        self._grants: dict[_Slot, dict[str, set[str]]] = {}
        Aspects.of(self).add(_RenderOnce(self._render))

    @classmethod
    def of(cls, key: kms.Key) -> KeyGrants:
        """The key's grants (created with the first)."""
        found = key.node.try_find_child(cls.ID)
        return found if isinstance(found, KeyGrants) else cls(key)

    def grant(
        self,
        sid: str,
        grantees: Grantees,
        actions: Sequence[str],
        *,
        via_service: str | None,
        queue_arns: Sequence[str] = (),
        context: tuple[str, str] | None = None,
    ) -> None:
        """Allow ``grantees`` ``actions`` on the key through ``via_service`` (none for a
        service principal, which calls KMS itself), for ``queue_arns``' encryption only when
        given (every use of the key otherwise), and only with the encryption ``context``
        ``(condition key, value)`` when given (a bucket's)."""
        slot = _slot(sid, grantees, actions, via_service, context)
        by_queue = self._grants.setdefault(slot, {})
        for queue in queue_arns or ("",):
            by_queue.setdefault(queue, set()).update(grantees.values)

    def _render(self) -> None:
        statements = []
        for slot, by_queue in sorted(self._grants.items()):
            queues_of: dict[frozenset[str], list[str]] = {}
            for queue, values in by_queue.items():
                if values:
                    queues_of.setdefault(frozenset(values), []).append(queue)
            for grantees, queues in sorted(queues_of.items(), key=lambda g: sorted(g[1])):
                listed = sorted(q for q in queues if q)
                statements.append(
                    _statement(
                        slot,
                        grantees,
                        resources=["*"],
                        extra={"StringEquals": {QUEUE_ENCRYPTION_CONTEXT: listed}}
                        if listed and len(listed) == len(queues)
                        else None,
                    )
                )
        for statement in _unique_sids(statements):
            self._key.add_to_resource_policy(statement)


def grant_with_key(
    policy: PolicyGrants,
    key: kms.IKey | None,
    *,
    sid: str,
    key_sid: str,
    grantees: Grantees,
    actions: Sequence[str],
    key_actions: Sequence[str],
    via_service: str,
    queue_arns: Sequence[str] = (),
    context: tuple[str, str] | None = None,
) -> None:
    """Allow ``grantees`` ``actions`` on the resource of ``policy``, and ``key_actions`` on its
    key through ``via_service`` (SNS, a service principal, calls KMS itself) for the
    encryption of ``queue_arns`` (when the key encrypts queues), or with the encryption
    ``context`` ``(condition key, value)`` (when it encrypts a bucket).

    The key's statement is written only into a key this app creates (``kms.Key``): an
    imported key's policy belongs to its owner.
    """
    policy.grant(sid, grantees, actions)
    if isinstance(key, kms.Key):
        KeyGrants.of(key).grant(
            key_sid,
            grantees,
            key_actions,
            via_service=None if grantees.kind is GranteeKind.TOPICS else via_service,
            queue_arns=queue_arns,
            context=context,
        )
