"""``EndpointQueue``: an endpoint's input queue, its DLQ, its key and its cross-account policy.

Secure by default, in the manner of AWS Solutions Constructs: a customer-managed KMS key with
rotation (the AWS-managed ``alias/aws/sqs`` key cannot be used by other accounts or by SNS),
TLS-only queue policies, a dead-letter queue that only this queue may redrive into, and a queue
policy that grants the declared senders exactly what sending needs and nothing else.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from aws_cdk import Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib.queue_naming import (
    dead_letter_queue_name as default_dead_letter_queue_name,
)
from constructs_lib.queue_naming import (
    endpoint_queue_name,
    key_alias_name,
    validate_queue_name,
)
from constructs_lib.validation import (
    require_account_ids,
    require_organization_ids,
    require_range,
)

SEND_ACTIONS = ("sqs:SendMessage", "sqs:GetQueueUrl", "sqs:GetQueueAttributes")
"""What a sender needs: send, and resolve the queue by name (``GetQueueUrl``) and attributes."""

KEY_ACTIONS_FOR_SENDERS = ("kms:GenerateDataKey", "kms:Decrypt")
"""What a producer needs on the queue's key to send an encrypted message."""

AWS_MANAGED_SQS_KEY = "alias/aws/sqs"


class EndpointQueueEncryption(enum.Enum):
    """How the queue and its DLQ are encrypted at rest."""

    KMS = "KMS"
    """A customer-managed KMS key (created unless one is given), rotation on. The default."""

    SQS_MANAGED = "SQS_MANAGED"
    """SSE-SQS: SQS-owned keys; no key policy to manage, no KMS charges, no key to audit."""


class EndpointQueue(Construct):
    """The input queue of one messaging endpoint, ready for senders in other accounts.

    The queue's name follows the NServiceBus rule (prefix applied once), so the endpoint finds
    it by name; its ARN is the endpoint's transport address.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        endpoint_name: str,
        queue_name_prefix: str = "",
        queue_name: str | None = None,
        fifo: bool = False,
        content_based_deduplication: bool = False,
        max_receive_count: int = 5,
        dead_letter_queue_name: str | None = None,
        encryption: EndpointQueueEncryption = EndpointQueueEncryption.KMS,
        encryption_key: kms.IKey | None = None,
        sender_accounts: Sequence[str] = (),
        sender_organization_ids: Sequence[str] = (),
        retention_period: Duration | None = None,
        dead_letter_retention_period: Duration | None = None,
        visibility_timeout: Duration | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the queue, its dead-letter queue and (with KMS) its key.

        :param endpoint_name: the NServiceBus endpoint name; the queue name derives from it.
        :param queue_name_prefix: NServiceBus ``QueueNamePrefix``; applied once.
        :param queue_name: an explicit queue name instead of the derived one.
        :param fifo: a FIFO queue (and FIFO DLQ); the name gets ``.fifo``.
        :param content_based_deduplication: FIFO only: deduplicate on the body's hash.
        :param max_receive_count: receives before SQS moves a message to the DLQ (1-1000).
        :param dead_letter_queue_name: explicit DLQ name; default ``<queue>-dlq``.
        :param encryption: KMS (customer-managed key, default) or SQS_MANAGED (SSE-SQS).
        :param encryption_key: the KMS key to use instead of creating one; never
            ``alias/aws/sqs``.
        :param sender_accounts: 12-digit account ids allowed to send (cross-account).
        :param sender_organization_ids: organizations whose principals may send.
        :param retention_period: how long messages are kept; default 4 days, NServiceBus's
            default time to live, written out so no reader has to know SQS's default.
        :param dead_letter_retention_period: DLQ retention; default 14 days, the maximum,
            so that an operator has time to redrive.
        :param visibility_timeout: default 30 seconds.
        :param removal_policy: default RETAIN, so deleting a stack never deletes messages.
        """
        super().__init__(scope, construct_id)
        require_range("max_receive_count", max_receive_count, 1, 1000)
        require_account_ids("sender_accounts", sender_accounts)
        require_organization_ids("sender_organization_ids", sender_organization_ids)
        if content_based_deduplication and not fifo:
            raise ValueError(
                "content_based_deduplication: only FIFO queues deduplicate; set fifo=True"
            )
        if encryption is EndpointQueueEncryption.SQS_MANAGED and encryption_key is not None:
            raise ValueError(
                "encryption_key: SSE-SQS uses SQS-owned keys; drop encryption_key or use "
                "encryption=EndpointQueueEncryption.KMS"
            )
        _refuse_aws_managed_key(encryption_key)

        self.queue_name = (
            validate_queue_name(queue_name, fifo=fifo)
            if queue_name is not None
            else endpoint_queue_name(endpoint_name, queue_name_prefix, fifo=fifo)
        )
        dlq_name = (
            validate_queue_name(dead_letter_queue_name, fifo=fifo)
            if dead_letter_queue_name is not None
            else default_dead_letter_queue_name(self.queue_name)
        )
        self.endpoint_name = endpoint_name
        self.fifo = fifo
        self._sender_accounts: list[str] = []
        self._sender_organizations: list[str] = []
        self._sender_roles: list[str] = []

        self.encryption_key: kms.IKey | None = None
        if encryption is EndpointQueueEncryption.KMS:
            self.encryption_key = encryption_key or kms.Key(
                self,
                "Key",
                description=f"Encrypts the {self.queue_name} queue and its dead-letter queue",
                enable_key_rotation=True,
                removal_policy=removal_policy,
                alias=key_alias_name(self.queue_name),
            )
        queue_encryption = (
            sqs.QueueEncryption.KMS
            if self.encryption_key is not None
            else sqs.QueueEncryption.SQS_MANAGED
        )

        stack = Stack.of(self)
        # The DLQ names its source by a computed ARN, not a reference: a reference would make
        # the DLQ and the queue depend on each other.
        source_arn = stack.format_arn(service="sqs", resource=self.queue_name)
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=dlq_name,
            fifo=fifo or None,
            encryption=queue_encryption,
            encryption_master_key=self.encryption_key,
            enforce_ssl=True,
            retention_period=dead_letter_retention_period or Duration.days(14),
            redrive_allow_policy=sqs.RedriveAllowPolicy(
                redrive_permission=sqs.RedrivePermission.BY_QUEUE,
                source_queues=[sqs.Queue.from_queue_arn(self, "Source", source_arn)],
            ),
            removal_policy=removal_policy,
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=self.queue_name,
            fifo=fifo or None,
            content_based_deduplication=content_based_deduplication or None,
            encryption=queue_encryption,
            encryption_master_key=self.encryption_key,
            enforce_ssl=True,
            retention_period=retention_period or Duration.days(4),
            visibility_timeout=visibility_timeout,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=max_receive_count
            ),
            removal_policy=removal_policy,
        )
        self.add_sender_accounts(*sender_accounts)
        for organization_id in sender_organization_ids:
            self.add_sender_organization(organization_id)

    @property
    def queue_arn(self) -> str:
        """The queue's ARN."""
        return self.queue.queue_arn

    @property
    def queue_url(self) -> str:
        """The queue's URL."""
        return self.queue.queue_url

    @property
    def transport_address(self) -> str:
        """The endpoint's canonical transport address: the queue's ARN."""
        return self.queue.queue_arn

    @property
    def sender_accounts(self) -> tuple[str, ...]:
        """Accounts granted send access so far."""
        return tuple(self._sender_accounts)

    @property
    def sender_organization_ids(self) -> tuple[str, ...]:
        """Organizations granted send access so far."""
        return tuple(self._sender_organizations)

    def add_sender_accounts(self, *account_ids: str) -> None:
        """Let principals of these accounts send (their own IAM policies must allow it too)."""
        require_account_ids("account_ids", account_ids)
        new = [a for a in dict.fromkeys(account_ids) if a not in self._sender_accounts]
        if not new:
            return
        self._sender_accounts.extend(new)
        principals: list[iam.IPrincipal] = [iam.AccountPrincipal(a) for a in new]
        self._grant_senders(f"Accounts{len(self._sender_accounts)}", principals, conditions=None)

    def add_sender_roles(self, *role_arns: str) -> None:
        """Let these roles of other accounts send, and no other principal of their accounts
        (an account principal narrowed by ``aws:PrincipalArn``, so the role need not exist
        when this policy is deployed)."""
        for role_arn in role_arns:
            parts = role_arn.split(":")
            if len(parts) != 6 or parts[2] != "iam" or not parts[5].startswith("role/"):
                raise ValueError(f"role_arns: {role_arn!r} is not an IAM role ARN")
            require_account_ids("role_arns (account)", [parts[4]])
            if role_arn in self._sender_roles:
                continue
            self._sender_roles.append(role_arn)
            self._grant_senders(
                f"Role{len(self._sender_roles)}",
                [iam.AccountPrincipal(parts[4])],
                conditions={"ArnEquals": {"aws:PrincipalArn": role_arn}},
            )

    def add_sender_organization(self, organization_id: str) -> None:
        """Let every principal of an organization send (``aws:PrincipalOrgID``)."""
        require_organization_ids("organization_id", [organization_id])
        if organization_id in self._sender_organizations:
            return
        self._sender_organizations.append(organization_id)
        self._grant_senders(
            f"Organization{len(self._sender_organizations)}",
            [iam.AnyPrincipal()],
            conditions={"StringEquals": {"aws:PrincipalOrgID": organization_id}},
        )

    def _grant_senders(
        self,
        sid_suffix: str,
        principals: list[iam.IPrincipal],
        conditions: dict[str, dict[str, str]] | None,
    ) -> None:
        self.queue.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"AllowSend{sid_suffix}",
                principals=principals,
                actions=list(SEND_ACTIONS),
                resources=[self.queue.queue_arn],
                conditions=conditions,
            )
        )
        if isinstance(self.encryption_key, kms.Key):
            key_conditions: dict[str, dict[str, str]] = {
                "StringEquals": {"kms:ViaService": f"sqs.{Aws.REGION}.{Aws.URL_SUFFIX}"},
            }
            for operator, pairs in (conditions or {}).items():
                key_conditions.setdefault(operator, {}).update(pairs)
            self.encryption_key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"AllowSendersThroughSqs{sid_suffix}",
                    principals=principals,
                    actions=list(KEY_ACTIONS_FOR_SENDERS),
                    resources=["*"],
                    conditions=key_conditions,
                )
            )

    def grant_send_messages(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity in this account permission to send (and to use the key)."""
        return self.queue.grant_send_messages(grantee)

    def grant_consume_messages(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity in this account permission to receive and delete (and decrypt)."""
        return self.queue.grant_consume_messages(grantee)

    def grant_purge(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity permission to purge the queue."""
        return self.queue.grant_purge(grantee)


def _refuse_aws_managed_key(key: kms.IKey | None) -> None:
    """``alias/aws/sqs`` cannot be shared: other accounts and SNS could not send."""
    if key is None:
        return
    alias_name = getattr(key, "alias_name", None)
    key_arn = getattr(key, "key_arn", "")
    if alias_name == AWS_MANAGED_SQS_KEY or (
        isinstance(key_arn, str) and key_arn.endswith(":" + AWS_MANAGED_SQS_KEY)
    ):
        raise ValueError(
            "encryption_key: the AWS-managed key alias/aws/sqs cannot be used by senders in "
            "other accounts or by SNS; pass a customer-managed key or omit encryption_key"
        )
