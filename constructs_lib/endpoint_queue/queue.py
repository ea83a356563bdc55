"""``EndpointQueue``, the construct: an endpoint's input queue, its dead-letter queue, its delay
queue, its key and the grants of its queue and key policies."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.attributes import Attribute
from constructs_lib._private.grants import (
    TOPIC_KEY_ACTIONS,
    Grantees,
    PolicyGrants,
    grant_with_key,
    sns_principal,
)
from constructs_lib._private.keywords import checked, checked_keywords
from constructs_lib._private.secure_queue import secure_queue
from constructs_lib._private.subscriptions import SubscribedQueue
from constructs_lib.defaults import (
    DEAD_LETTER_RETENTION,
    DELAY_QUEUE_DELAY,
    DELAY_QUEUE_MIN_RETENTION,
    IMMEDIATE_RETRIES,
    QUEUE_RETENTION,
    SQS_DEFAULT_VISIBILITY_TIMEOUT,
)
from constructs_lib.endpoint_queue.imported import _ExistingEndpointQueue, _ImportedEndpointQueue
from constructs_lib.endpoint_queue.queue_base import EndpointQueueEncryption, IEndpointQueue
from constructs_lib.endpoint_queue.validate_keywords import validate_endpoint_queue_keywords
from constructs_lib.messaging_key import MessagingKey
from constructs_lib.queue_naming import (
    dead_letter_queue_name as default_dead_letter_queue_name,
)
from constructs_lib.queue_naming import (
    delay_queue_name,
    endpoint_queue_name,
    key_alias_name,
    validate_queue_name,
)
from constructs_lib.validation import (
    require_account_ids,
    require_customer_managed_key,
    require_customer_managed_queue_key,
    require_organization_ids,
    require_other_accounts,
    require_range,
    require_role_arn,
)
from cross_account_runtime.nservicebus.redrive import MAX_RECEIVE_COUNT_RANGE

SENDER_ACTIONS = ("sqs:SendMessage", "sqs:GetQueueUrl", "sqs:GetQueueAttributes")
"""What a sender is granted: send, and resolve the queue by name (``GetQueueUrl``) and its
attributes."""
SENDER_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")
"""What a producer needs on the queue's key to send an encrypted message."""
DELAY_QUEUE_WITHOUT_DLQ = (
    "The released NServiceBus transport refuses to start while its delay queue has a redrive "
    "policy (DelayedMessagesPump.Initialize); its pump moves every message on to the input "
    "queue, whose dead-letter queue is the backstop."
)


@checked
class EndpointQueue(Construct):
    """The input queue of one messaging endpoint, ready for senders in other accounts.

    The queue's name follows the NServiceBus rule (prefix applied once), so the endpoint finds
    it by name; its ARN is the endpoint's transport address.

    Example:

    ```python
    from aws_cdk import App, Stack

    from constructs_lib import EndpointQueue

    app = App()
    stack = Stack(app, "Billing")
    billing = EndpointQueue(
        stack, "Billing", endpoint_name="Billing", sender_accounts=["111111111111"]
    )
    app.synth()
    ```
    """

    queue = Attribute[sqs.Queue]("The endpoint's input queue; grant with the grant_* methods.")
    dead_letter_queue = Attribute[sqs.Queue](
        "The queue SQS moves a message to after max_receive_count receives."
    )
    delay_queue = Attribute[sqs.Queue | None](
        "The transport's ``<queue>-delay.fifo`` for delays over 15 minutes; None without delayed_delivery."
    )
    encryption_key = Attribute[kms.IKey | None](
        "The key all three queues are encrypted with; None for SSE-SQS."
    )
    queue_name = Attribute[str]("The input queue's name (the NServiceBus rule's, or queue_name).")
    endpoint_name = Attribute[str]("The NServiceBus endpoint name the queue serves.")
    fifo = Attribute[bool]("Whether the queues are FIFO queues.")
    organization_id = Attribute[str | None](
        "The organization every admitted account must belong to, if any."
    )
    max_receive_count = Attribute[int](
        "Receives before SQS moves a message to the dead-letter queue."
    )
    visibility_timeout = Attribute[Duration]("How long a received message stays invisible.")

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
        immediate_retries: int = IMMEDIATE_RETRIES,
        max_receive_count: int | None = None,
        dead_letter_queue_name: str | None = None,
        delayed_delivery: bool = True,
        delivery_delay: Duration | None = None,
        encryption: EndpointQueueEncryption = EndpointQueueEncryption.KMS,
        encryption_key: kms.IKey | None = None,
        shared_key: MessagingKey | None = None,
        sender_accounts: Sequence[str] = (),
        sender_organization_ids: Sequence[str] = (),
        organization_id: str | None = None,
        retention_period: Duration = QUEUE_RETENTION,
        dead_letter_retention_period: Duration = DEAD_LETTER_RETENTION,
        visibility_timeout: Duration | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the queue, its dead-letter queue and (with KMS) its key.

        :param endpoint_name: the NServiceBus endpoint name; the queue name derives from it.
        :param queue_name_prefix: NServiceBus ``QueueNamePrefix``, applied once. Default: none.
        :param queue_name: an explicit queue name, checked against SQS's rules. Default: the
            name NServiceBus derives from ``endpoint_name`` and ``queue_name_prefix``.
        :param fifo: a FIFO queue (and FIFO DLQ); the name gets ``.fifo``. Default: False.
        :param content_based_deduplication: FIFO only: deduplicate on the body's hash.
            Default: False.
        :param immediate_retries: the endpoint's NServiceBus immediate retries; each is another
            receive, so ``max_receive_count`` must allow ``immediate_retries + 1``. Default:
            :data:`~constructs_lib.defaults.IMMEDIATE_RETRIES` (5, NServiceBus's).
        :param max_receive_count: receives before SQS moves a message to the DLQ
            (``immediate_retries + 1`` to 1000). Default: ``immediate_retries + 1 +``
            :data:`~constructs_lib.defaults.RECEIVE_MARGIN` (10).
        :param dead_letter_queue_name: an explicit DLQ name. Default: ``<queue>-dlq``.
        :param delayed_delivery: create ``<queue>-delay.fifo``, the queue the released transport
            checks at start and sends delays over 15 minutes to (FIFO, 900 s delivery delay,
            at least 4 days' retention, no redrive, this queue's key). Default: True.
        :param delivery_delay: how long SQS holds every message of the queue before it can be
            received. Default: none.
        :param encryption: KMS (a customer-managed key) or SQS_MANAGED (SSE-SQS).
            Default: ``EndpointQueueEncryption.KMS``.
        :param encryption_key: the KMS key to use; never ``alias/aws/sqs``, which other
            accounts and SNS cannot use. Default: ``shared_key``'s, else a new key with
            rotation and the alias ``alias/messaging/<queue>``.
        :param shared_key: the account's :class:`~constructs_lib.MessagingKey`, which every
            queue of the account shares: its policy admits this queue's senders for this
            queue's encryption alone (``kms:EncryptionContext:aws:sqs:arn``). Default: none
            (a key of the queue's own, or ``encryption_key``).
        :param sender_accounts: 12-digit ids of other accounts allowed to send; never the
            queue's own, whose principals are granted with IAM (:meth:`grant_send_messages`).
            Default: none.
        :param sender_organization_ids: organizations whose principals may send.
            Default: none.
        :param organization_id: the organization every account this queue admits belongs to
            (sender accounts and roles): each grant then also requires it
            (``aws:PrincipalOrgID``), so an account that leaves the organization loses access.
            Default: none (the grants name accounts and roles only).
        :param retention_period: how long messages are kept. Default:
            :data:`~constructs_lib.defaults.QUEUE_RETENTION` (4 days, NServiceBus's default
            time to be received).
        :param dead_letter_retention_period: how long the DLQ keeps messages; for a standard
            queue at least ``retention_period`` (SQS counts a message's age from its first
            enqueue, also in the DLQ). Default:
            :data:`~constructs_lib.defaults.DEAD_LETTER_RETENTION` (14 days, SQS's maximum).
        :param visibility_timeout: how long a received message stays invisible (a relay
            reading the queue needs at least what ``RelayTiming`` says for its batch size).
            Default: SQS's (30 seconds).
        :param removal_policy: of the queues and the key; RETAIN means deleting a stack never
            deletes messages. Default: ``RemovalPolicy.RETAIN``.
        """
        super().__init__(scope, construct_id)
        max_receive_count = validate_endpoint_queue_keywords(
            fifo=fifo,
            content_based_deduplication=content_based_deduplication,
            immediate_retries=immediate_retries,
            max_receive_count=max_receive_count,
            encryption=encryption,
            encryption_key=encryption_key,
            shared_key=shared_key,
            sender_accounts=sender_accounts,
            sender_organization_ids=sender_organization_ids,
            organization_id=organization_id,
            retention_period=retention_period,
            dead_letter_retention_period=dead_letter_retention_period,
        )

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
        self.organization_id = organization_id
        self._sender_accounts: list[str] = []
        self._sender_organizations: list[str] = []
        self._sender_roles: list[str] = []
        self._sender_topics: list[str] = []

        self.encryption_key = None
        if encryption is EndpointQueueEncryption.KMS:
            if shared_key is not None:
                encryption_key = shared_key.key
            self.encryption_key = encryption_key or kms.Key(
                self,
                "Key",
                description=f"Encrypts the {self.queue_name} queue and its dead-letter queue",
                enable_key_rotation=True,
                removal_policy=removal_policy,
                alias=key_alias_name(self.queue_name),
            )

        stack = Stack.of(self)
        # The DLQ names its source by a computed ARN, not a reference: a reference would make
        # the DLQ and the queue depend on each other.
        source_arn = stack.format_arn(service="sqs", resource=self.queue_name)
        self.dead_letter_queue = secure_queue(
            self,
            "DeadLetterQueue",
            queue_name=dlq_name,
            fifo=fifo,
            encryption_key=self.encryption_key,
            retention_period=dead_letter_retention_period,
            redrive_allow_policy=sqs.RedriveAllowPolicy(
                redrive_permission=sqs.RedrivePermission.BY_QUEUE,
                source_queues=[sqs.Queue.from_queue_arn(self, "Source", source_arn)],
            ),
            removal_policy=removal_policy,
        )
        self.queue = secure_queue(
            self,
            "Queue",
            queue_name=self.queue_name,
            fifo=fifo,
            content_based_deduplication=content_based_deduplication,
            encryption_key=self.encryption_key,
            retention_period=retention_period,
            visibility_timeout=visibility_timeout,
            delivery_delay=delivery_delay,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=max_receive_count
            ),
            removal_policy=removal_policy,
        )
        self.max_receive_count = max_receive_count
        self.visibility_timeout = visibility_timeout or SQS_DEFAULT_VISIBILITY_TIMEOUT
        self.delay_queue = None
        if delayed_delivery:
            self.delay_queue = secure_queue(
                self,
                "DelayQueue",
                queue_name=delay_queue_name(self.queue_name),
                fifo=True,
                encryption_key=self.encryption_key,
                retention_period=_at_least(retention_period, DELAY_QUEUE_MIN_RETENTION),
                delivery_delay=DELAY_QUEUE_DELAY,
                removal_policy=removal_policy,
            )
            acknowledge(self.delay_queue, "AwsSolutions-SQS3", DELAY_QUEUE_WITHOUT_DLQ)
        self._policy = PolicyGrants(
            self,
            "QueueGrants",
            add_to_resource_policy=self.queue.add_to_resource_policy,
            resources=[self.queue.queue_arn],
        )
        self._delay_policy = (
            PolicyGrants(
                self,
                "DelayQueueGrants",
                add_to_resource_policy=self.delay_queue.add_to_resource_policy,
                resources=[self.delay_queue.queue_arn],
            )
            if self.delay_queue is not None
            else None
        )
        # Keys are granted for the queues' encryption contexts, their ARNs computed from the
        # names: a key shared by the account may live in another of its stacks.
        self._encryption_context = stack.format_arn(service="sqs", resource=self.queue_name)
        self._delay_encryption_context = (
            stack.format_arn(service="sqs", resource=delay_queue_name(self.queue_name))
            if self.delay_queue is not None
            else None
        )
        self._add_sender_accounts("sender_accounts", sender_accounts)
        for organization in sender_organization_ids:
            self.add_sender_organization(organization)

    @checked_keywords
    @classmethod
    def from_queue_arn(
        cls,
        scope: Construct,
        construct_id: str,
        queue_arn: str,
        *,
        dead_letter_queue_arn: str,
        encryption_key_arn: str | None = None,
        max_receive_count: int | None = None,
        visibility_timeout: Duration | None = None,
    ) -> IEndpointQueue:
        """An endpoint queue a team already owns, for the constructs that take an
        :class:`IEndpointQueue` (subscriptions, relays); nothing is created or changed.

        :param queue_arn: the queue's ARN (a string, not a token: it names the queue's
            account, region and FIFO-ness); for a queue of this app use :meth:`from_queue`.
        :param dead_letter_queue_arn: its redrive dead-letter queue, of the same account,
            region and kind.
        :param encryption_key_arn: the customer-managed key both queues are encrypted with.
            Default: none (SSE-SQS, or a key the consumer need not use).
        :param max_receive_count: the queue's redrive ``maxReceiveCount`` (1-1000), which a
            relay reading it passes on to its runtime (so that it knows a receive is the
            last). Default: unknown (the relay's route then carries none).
        :param visibility_timeout: the queue's visibility timeout, which a relay reading it
            checks against what its batch size needs. Default: unknown (not checked).
        """
        if max_receive_count is not None:
            require_range("max_receive_count", max_receive_count, *MAX_RECEIVE_COUNT_RANGE)
        require_customer_managed_key("encryption_key_arn", encryption_key_arn)
        return _ImportedEndpointQueue(
            scope,
            construct_id,
            queue_arn=queue_arn,
            dead_letter_queue_arn=dead_letter_queue_arn,
            encryption_key_arn=encryption_key_arn,
            max_receive_count=max_receive_count,
            visibility_timeout=visibility_timeout,
        )

    @checked_keywords
    @classmethod
    def from_queue(
        cls,
        scope: Construct,
        construct_id: str,
        queue: sqs.IQueue,
        *,
        dead_letter_queue: sqs.IQueue | None = None,
        encryption_key: kms.IKey | None = None,
        max_receive_count: int | None = None,
        visibility_timeout: Duration | None = None,
    ) -> IEndpointQueue:
        """An aws-cdk-lib queue as an endpoint queue, for the constructs that take an
        :class:`IEndpointQueue` (relays, subscriptions): an ``sqs.Queue`` made in this app, or
        one imported with ``sqs.Queue.from_queue_arn`` or ``from_queue_attributes``. Nothing is
        created or changed.

        What an ``sqs.Queue`` of this app knows is read from it (its redrive dead-letter queue
        and ``maxReceiveCount``, its key, whether it is FIFO, its visibility timeout); an
        imported queue knows its ARN, FIFO-ness and the key it was imported with, so give
        what else the construct you hand it to needs. A value given that contradicts the
        queue's own is refused.

        :param queue: the queue (an ``sqs.IQueue``).
        :param dead_letter_queue: its redrive dead-letter queue, where a relay reading it puts
            the messages it refuses. Default: the queue's own (``sqs.Queue(dead_letter_queue=
            ...)``); required for an imported queue.
        :param encryption_key: the customer-managed key both queues are encrypted with.
            Default: the queue's own (``encryption_master_key``), else none.
        :param max_receive_count: the queue's redrive ``maxReceiveCount`` (1-1000).
            Default: the queue's redrive policy's, else unknown.
        :param visibility_timeout: the queue's visibility timeout. Default: an ``sqs.Queue``'s
            own (SQS's 30 seconds when it sets none); unknown for an imported queue.
        """
        return _ExistingEndpointQueue(
            scope,
            construct_id,
            queue=queue,
            dead_letter_queue=dead_letter_queue,
            encryption_key=encryption_key,
            max_receive_count=max_receive_count,
            visibility_timeout=visibility_timeout,
        )

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

    @property
    def sender_roles(self) -> tuple[str, ...]:
        """Role ARNs and patterns granted send access so far."""
        return tuple(self._sender_roles)

    @property
    def sender_topics(self) -> tuple[str, ...]:
        """Topics admitted to deliver so far."""
        return tuple(self._sender_topics)

    @checked_keywords
    def add_sender_accounts(self, *account_ids: str) -> None:
        """Let principals of these accounts send (their own IAM policies must allow it too):
        one statement lists every sender account (``aws:PrincipalAccount``). The queue's own
        account is refused: its principals are granted with IAM
        (:meth:`grant_send_messages`)."""
        self._add_sender_accounts("account_ids", account_ids)

    def _add_sender_accounts(self, keyword: str, account_ids: Sequence[str]) -> None:
        """Admit other accounts' senders, refusals naming ``keyword``."""
        require_account_ids(keyword, account_ids)
        require_other_accounts(keyword, account_ids, self, "EndpointQueue.grant_send_messages")
        new = [a for a in dict.fromkeys(account_ids) if a not in self._sender_accounts]
        if new:
            self._sender_accounts.extend(new)
            self._grant_senders(Grantees.accounts(new, self.organization_id))

    @checked_keywords
    def add_sender_roles(self, *role_arns: str) -> None:
        """Let these roles of other accounts send, and no other principal of their accounts:
        ``aws:PrincipalArn`` (``ArnEquals``) in one statement for every sender role, so a role
        need not exist when this policy is deployed. Each is one role's exact ARN
        (:func:`~constructs_lib.relay_role_arn` for a relay's), never a pattern, which would
        admit every role another team of the account names alike."""
        for role_arn in role_arns:
            require_role_arn("role_arns", role_arn)
        new = [r for r in dict.fromkeys(role_arns) if r not in self._sender_roles]
        if new:
            self._sender_roles.extend(new)
            self._grant_senders(Grantees.roles(new, self.organization_id))

    @checked_keywords
    def add_sender_organization(self, organization_id: str) -> None:
        """Let every principal of an organization send (``aws:PrincipalOrgID``)."""
        require_organization_ids("organization_id", [organization_id])
        if organization_id not in self._sender_organizations:
            self._sender_organizations.append(organization_id)
            self._grant_senders(Grantees.organizations([organization_id]))

    @checked_keywords
    def add_sender_topics(self, *topic_arns: str) -> None:
        """Let SNS deliver these topics' messages to the queue (``aws:SourceArn``), and use
        the queue's key for it: one statement lists every topic. Subscriptions made through
        :class:`~constructs_lib.DeliveryLoggedTopic` and
        :class:`~constructs_lib.CrossAccountQueueSubscription` call this."""
        new = [t for t in dict.fromkeys(topic_arns) if t not in self._sender_topics]
        self._sender_topics.extend(new)
        for topic_arn in new:
            grant_with_key(
                self._policy,
                self.encryption_key,
                sid="AllowSend",
                key_sid="AllowSenders",
                grantees=Grantees.topics([topic_arn], sns_principal(topic_arn, self)),
                actions=["sqs:SendMessage"],
                key_actions=TOPIC_KEY_ACTIONS,
                via_service="sqs",
                queue_arns=[self._encryption_context],
            )

    def _grant_senders(self, grantees: Grantees) -> None:
        """The queue (and its key) admits the senders; so does its delay queue, where an
        ARN-aware sender puts delays over 15 minutes (the key grant covers both)."""
        if self._delay_policy is not None:
            self._delay_policy.grant("AllowSend", grantees, SENDER_ACTIONS)
        grant_with_key(
            self._policy,
            self.encryption_key,
            sid="AllowSend",
            key_sid="AllowSenders",
            grantees=grantees,
            actions=SENDER_ACTIONS,
            key_actions=SENDER_KEY_ACTIONS,
            via_service="sqs",
            queue_arns=[
                arn
                for arn in (self._encryption_context, self._delay_encryption_context)
                if arn is not None
            ],
        )

    @checked_keywords
    def grant_send_messages(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity in this account permission to send (and to use the key)."""
        return self.queue.grant_send_messages(grantee)

    @checked_keywords
    def grant_consume_messages(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity in this account permission to receive and delete (and decrypt)."""
        return self.queue.grant_consume_messages(grantee)

    @checked_keywords
    def grant_purge(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity permission to purge the queue."""
        return self.queue.grant_purge(grantee)


def endpoint_queue_of(
    scope: Construct, construct_id: str, queue: IEndpointQueue | sqs.IQueue, field: str
) -> IEndpointQueue:
    """``queue`` as an endpoint queue: as it is, or an aws-cdk-lib queue read with
    :meth:`EndpointQueue.from_queue` (its refusals then name ``field`` too)."""
    if isinstance(queue, IEndpointQueue):
        return queue
    try:
        return EndpointQueue.from_queue(scope, construct_id, queue)
    except ValueError as error:
        raise ValueError(
            f"{field}: {queue.node.path}: {error}; or wrap the queue with "
            "EndpointQueue.from_queue(scope, id, queue, dead_letter_queue=...) and pass that"
        ) from None


def subscribed_queue(field: str, queue: IEndpointQueue | sqs.IQueue) -> SubscribedQueue:
    """``queue`` as an SQS subscription delivers to it, from an endpoint queue or an
    aws-cdk-lib queue: an :class:`EndpointQueue` admits the topic among every topic it admits;
    a queue SNS could not deliver to is refused, naming ``field``."""
    if isinstance(queue, EndpointQueue):
        return SubscribedQueue(queue.queue, queue.encryption_key, queue.add_sender_topics)
    if isinstance(queue, IEndpointQueue):
        return SubscribedQueue(queue.queue, queue.encryption_key)
    require_customer_managed_queue_key(field, queue)
    return SubscribedQueue(queue, queue.encryption_master_key)


def _at_least(duration: Duration, minimum: Duration) -> Duration:
    return duration if duration.to_seconds() >= minimum.to_seconds() else minimum
