"""``DeliveryLoggedTopic``, the construct: an SNS topic, its key, its delivery-status log groups
and feedback role, and the grants of its topic and key policies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Aws, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.attributes import Attribute
from constructs_lib._private.grants import Grantees, PolicyGrants, grant_with_key
from constructs_lib._private.keywords import checked, checked_keywords
from constructs_lib._private.subscriptions import (
    QueueSubscription,
    admit_topic_to_dead_letter_queue,
    allow_sns_for_topic,
    set_filter_policy,
)
from constructs_lib.defaults import LOG_RETENTION, SUCCESS_SAMPLE_RATE
from constructs_lib.delivery_logged_topic.imported import _ExistingTopic, _ImportedTopic
from constructs_lib.delivery_logged_topic.topic_base import (
    DeliveryProtocol,
    IDeliveryLoggedTopic,
    _TopicBase,
)
from constructs_lib.delivery_logged_topic.validate_keywords import (
    require_deliverable,
    validate_topic_keywords,
)
from constructs_lib.endpoint_queue import IEndpointQueue
from constructs_lib.endpoint_queue.queue import subscribed_queue
from constructs_lib.filter_policy import FilterPolicyScope
from constructs_lib.validation import (
    require_account_ids,
    require_customer_managed_key,
    require_local,
    require_organization_ids,
    require_other_accounts,
)

LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents")
PUBLISH_KEY_ACTIONS = ("kms:GenerateDataKey*", "kms:Decrypt")
"""What a publisher needs on the topic's key."""


def delivery_log_group_names(topic_name: str, region: str, account: str) -> tuple[str, str]:
    """The success and failure log group names SNS writes to for a topic."""
    success = f"sns/{region}/{account}/{topic_name}"
    return success, f"{success}/Failure"


@checked
class DeliveryLoggedTopic(_TopicBase):
    """An SNS topic with delivery-status logging, subscription DLQs and least-privilege policies.

    Example:

    ```python
    from aws_cdk import App, Stack

    from constructs_lib import DeliveryLoggedTopic

    app = App()
    stack = Stack(app, "Billing")
    DeliveryLoggedTopic(
        stack,
        "OrderBilled",
        topic_name="MyCompany-Messages-OrderBilled",
        subscriber_accounts=["111111111111"],
    )
    app.synth()
    ```
    """

    topic = Attribute[sns.Topic]("The SNS topic.")
    topic_name = Attribute[str]("The topic's name (``.fifo`` included for a FIFO topic).")
    topic_arn = Attribute[str](
        "The topic's ARN, computed from its name (to give other accounts as text)."
    )
    fifo = Attribute[bool]("Whether the topic is FIFO (it delivers to SQS queues alone).")
    organization_id = Attribute[str | None](
        "The organization every admitted account must belong to, if any."
    )
    success_sample_rate = Attribute[int]("Percentage of successful deliveries logged.")
    encryption_key = Attribute[kms.IKey](
        "The key of the topic and of its subscriptions' dead-letter queues."
    )
    success_log_group = Attribute[logs.LogGroup | None](
        "The log group of successful deliveries; None while the topic logs nothing."
    )
    failure_log_group = Attribute[logs.LogGroup | None](
        "The log group of failed deliveries; None while the topic logs nothing."
    )
    feedback_role = Attribute[iam.Role | None](
        "The role SNS writes delivery logs with; None while the topic logs nothing."
    )

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        topic_name: str,
        fifo: bool = False,
        content_based_deduplication: bool = False,
        display_name: str | None = None,
        encryption_key: kms.IKey | None = None,
        publisher_accounts: Sequence[str] = (),
        publisher_organization_ids: Sequence[str] = (),
        subscriber_accounts: Sequence[str] = (),
        subscriber_organization_ids: Sequence[str] = (),
        organization_id: str | None = None,
        logged_protocols: Sequence[DeliveryProtocol] = (),
        success_sample_rate: int = SUCCESS_SAMPLE_RATE,
        log_retention: logs.RetentionDays = LOG_RETENTION,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the topic, its key, its log groups and its feedback role.

        :param topic_name: the topic's name (``.fifo`` is added for FIFO topics if missing).
        :param fifo: a FIFO topic: it delivers to SQS queues only, FIFO ones in order and
            once (a standard topic delivers to standard queues only). Default: False.
        :param content_based_deduplication: FIFO only: deduplicate on the message's hash.
            Default: False.
        :param display_name: shown in SMS and email deliveries. Default: none.
        :param encryption_key: the key for the topic and its subscription DLQs; never an
            AWS-managed key (``alias/aws/sns``), which publishers in other accounts and SNS
            delivering into the DLQs cannot use. Default: a new customer-managed key with
            rotation.
        :param publisher_accounts: other accounts whose principals may ``sns:Publish``; never
            the topic's own, whose principals are granted with IAM (:meth:`grant_publish`).
            Default: none.
        :param publisher_organization_ids: organizations whose principals may publish.
            Default: none.
        :param subscriber_accounts: other accounts that may subscribe their own SQS queues;
            never the topic's own (subscribe its queues with :meth:`add_queue_subscription`).
            Default: none.
        :param subscriber_organization_ids: organizations whose accounts may subscribe SQS
            queues (``aws:PrincipalOrgID``). Default: none.
        :param organization_id: the organization of every publisher and subscriber account:
            their grants then also require it (``aws:PrincipalOrgID``), so an account that
            leaves the organization loses access. Default: none (the grants name accounts).
        :param logged_protocols: protocols to log even without a subscriber yet (pass
            ``DeliveryProtocol.delivered_by(fifo)`` to log every protocol the topic can deliver
            to; a FIFO topic delivers to SQS alone). The topic logs by itself every protocol
            it is known to deliver to: that of each subscription added through this construct,
            and SQS for ``subscriber_accounts`` and ``subscriber_organization_ids`` (their
            subscriptions are made in their own stacks). It creates its log groups and
            feedback role once it logs a protocol. Default: none beyond those.
        :param success_sample_rate: percentage of successful deliveries logged (0-100);
            failures are always logged. Default:
            :data:`~constructs_lib.defaults.SUCCESS_SAMPLE_RATE` (100).
        :param log_retention: retention of both log groups. Default:
            :data:`~constructs_lib.defaults.LOG_RETENTION` (three months).
        :param removal_policy: of the topic's key and log groups; RETAIN keeps the delivery
            history beyond the stack. Default: ``RemovalPolicy.RETAIN``.
        """
        super().__init__(scope, construct_id)
        topic_name = validate_topic_keywords(
            topic_name=topic_name,
            fifo=fifo,
            content_based_deduplication=content_based_deduplication,
            encryption_key=encryption_key,
            publisher_accounts=publisher_accounts,
            publisher_organization_ids=publisher_organization_ids,
            subscriber_accounts=subscriber_accounts,
            subscriber_organization_ids=subscriber_organization_ids,
            organization_id=organization_id,
            logged_protocols=logged_protocols,
            success_sample_rate=success_sample_rate,
        )

        stack = Stack.of(self)
        self.topic_name = topic_name
        self.fifo = fifo
        self.organization_id = organization_id
        self.success_sample_rate = success_sample_rate
        # The topic's ARN is computed from its name: the feedback role's trust policy needs it
        # and the topic needs the role, so a reference would be a cycle.
        self.topic_arn = stack.format_arn(service="sns", resource=topic_name)
        self.encryption_key = encryption_key or kms.Key(
            self,
            "Key",
            description=f"Encrypts the {topic_name} topic and its subscription dead-letter queues",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        self._log_retention = log_retention
        self._removal_policy = removal_policy
        self._log_destinations: list[str] = []
        self.success_log_group = None
        self.failure_log_group = None
        self.feedback_role = None
        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=topic_name,
            display_name=display_name,
            fifo=fifo or None,
            content_based_deduplication=content_based_deduplication or None,
            master_key=self.encryption_key,
        )
        # Every action, not only sns:Publish as aws-cdk-lib's enforce_ssl denies: a subscribe,
        # or a read of its attributes, over plain HTTP too.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="DenyInsecureTransport",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=["sns:*"],
                resources=[self.topic.topic_arn],
                conditions={"Bool": {"aws:SecureTransport": "false"}},
            )
        )
        self._logged: list[DeliveryProtocol] = []
        for protocol in logged_protocols:
            self._log(protocol)
        allow_sns_for_topic(self.encryption_key, self.topic_arn)
        self._policy = PolicyGrants(
            self,
            "TopicGrants",
            add_to_resource_policy=self.topic.add_to_resource_policy,
            resources=[self.topic.topic_arn],
        )
        self._publishers: list[str] = []
        self._publisher_organizations: list[str] = []
        self._subscribers: list[str] = []
        self._add_publisher_accounts("publisher_accounts", publisher_accounts)
        for organization in publisher_organization_ids:
            self.add_publisher_organization(organization)
        self._add_subscriber_accounts("subscriber_accounts", subscriber_accounts)
        for organization in subscriber_organization_ids:
            self.add_subscriber_organization(organization)

    @checked_keywords
    @classmethod
    def from_topic_arn(
        cls,
        scope: Construct,
        construct_id: str,
        topic_arn: str,
        *,
        encryption_key_arn: str | None = None,
    ) -> IDeliveryLoggedTopic:
        """A topic a team already owns, for :class:`~constructs_lib.SnsHttpsEndpoint`.

        Its owner keeps its policies and its delivery-status logging (log the ``http/s``
        protocol there); subscriptions added here are created in this stack, each with its own
        DLQ.

        :param topic_arn: the topic's ARN (a string, not a token: it says whether the topic
            is FIFO).
        :param encryption_key_arn: the key to encrypt subscription DLQs with (SNS must be
            allowed to use it for this topic); never an AWS-managed key. Default: none
            (SSE-SQS).
        """
        require_customer_managed_key("encryption_key_arn", encryption_key_arn)
        return _ImportedTopic(scope, construct_id, topic_arn, encryption_key_arn)

    @checked_keywords
    @classmethod
    def from_topic(
        cls,
        scope: Construct,
        construct_id: str,
        topic: sns.ITopic,
        *,
        encryption_key: kms.IKey | None = None,
    ) -> IDeliveryLoggedTopic:
        """An aws-cdk-lib topic (``sns.Topic`` of this app, or one imported with
        ``sns.Topic.from_topic_arn``), for :class:`~constructs_lib.SnsHttpsEndpoint`. Nothing is
        created or changed but the grant below.

        Its delivery-status logging is its owner's to turn on (log the ``http/s`` protocol).
        Subscriptions added here are created in this stack, each with its own DLQ named after
        the topic (so its name must be known at synth) and encrypted with its key, on which
        SNS is admitted for this topic alone (``aws:SourceArn``) when the key is one of this
        app.

        :param topic: the topic (an ``sns.ITopic``).
        :param encryption_key: the key to encrypt subscription DLQs with; never an
            AWS-managed key. Default: the topic's own (``master_key``), else none (SSE-SQS).
        """
        return _ExistingTopic(scope, construct_id, topic, encryption_key)

    @property
    def logged_protocols(self) -> tuple[DeliveryProtocol, ...]:
        """The protocols whose deliveries are logged."""
        return tuple(self._logged)

    def _subscribed(self, protocol: DeliveryProtocol) -> None:
        """A protocol with a subscriber is always logged."""
        self.log_deliveries(protocol)

    @checked_keywords
    def log_deliveries(self, protocol: DeliveryProtocol) -> None:
        """Turn on delivery-status logging for a protocol (once), creating the log groups and
        the feedback role with the first. A FIFO topic delivers to SQS queues alone, so it
        logs no other protocol."""
        require_deliverable("protocol", protocol, fifo=self.fifo)
        self._log(protocol)

    def _log(self, protocol: DeliveryProtocol) -> None:
        if protocol in self._logged:
            return
        role = self.feedback_role or self._start_logging()
        self._logged.append(protocol)
        self.topic.add_logging_config(
            protocol=protocol.logging_protocol,
            success_feedback_role=role,
            failure_feedback_role=role,
            success_feedback_sample_rate=self.success_sample_rate,
        )

    def _start_logging(self) -> iam.Role:
        """The log groups SNS writes to, created with a retention (SNS would create them with
        none), and the role SNS writes with, for this topic alone; and the subscription
        filters of the destinations the logs stream to. Created once the topic logs a
        protocol: a topic that logs nothing gets none of them."""
        stack = Stack.of(self)
        success_name, failure_name = delivery_log_group_names(
            self.topic_name, Aws.REGION, Aws.ACCOUNT_ID
        )
        self.success_log_group, self.failure_log_group = (
            logs.LogGroup(
                self,
                construct_name,
                log_group_name=group_name,
                retention=self._log_retention,
                removal_policy=self._removal_policy,
            )
            for construct_name, group_name in (
                ("SuccessLogs", success_name),
                ("FailureLogs", failure_name),
            )
        )
        role = iam.Role(
            self,
            "DeliveryStatusRole",
            description=f"Lets SNS write delivery-status logs of {self.topic_name}, and only those",
            assumed_by=iam.ServicePrincipal(
                "sns.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {"aws:SourceArn": self.topic_arn},
                },
            ),
        )
        self.feedback_role = role
        groups = (self.success_log_group, self.failure_log_group)
        role.add_to_policy(
            iam.PolicyStatement(
                actions=list(LOG_ACTIONS),
                resources=[group.log_group_arn for group in groups],
            )
        )
        for group in groups:
            logical_id = stack.get_logical_id(group.node.default_child)  # type: ignore[arg-type]
            acknowledge(
                role,
                f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>]",
                "The wildcard covers the log streams SNS names at delivery time inside this "
                "topic's own delivery log group; no other group is reachable.",
            )
        for destination_arn in self._log_destinations:
            self._subscription_filters(destination_arn)
        return role

    @checked_keywords
    def stream_logs_to(self, destination_arn: str) -> tuple[logs.CfnSubscriptionFilter, ...]:
        """Send both delivery log groups, every event, to a CloudWatch Logs destination
        (typically another account's, see :class:`DeliveryLogStream`); returns the two
        subscription filters, or none while the topic logs nothing (they are created with its
        log groups, when it logs a first protocol).

        The destination's owner must admit this account in its destination policy first, or
        the subscription filter fails to create.
        """
        self._log_destinations.append(destination_arn)
        if self.feedback_role is None:
            return ()
        return self._subscription_filters(destination_arn)

    def _subscription_filters(self, destination_arn: str) -> tuple[logs.CfnSubscriptionFilter, ...]:
        filters = []
        for group in (self.success_log_group, self.failure_log_group):
            assert group is not None  # created with the feedback role
            subscription_filter = logs.CfnSubscriptionFilter(
                group,
                "StreamToAnalytics",
                log_group_name=group.log_group_name,
                destination_arn=destination_arn,
                filter_pattern="",
            )
            filters.append(subscription_filter)
        return tuple(filters)

    @checked_keywords
    def add_publisher_accounts(self, *account_ids: str) -> None:
        """Let principals of other accounts publish (their IAM policies must allow it too):
        one statement lists every publisher account (``aws:PrincipalAccount``). The topic's
        own account is refused: its principals are granted with IAM (:meth:`grant_publish`)."""
        self._add_publisher_accounts("account_ids", account_ids)

    def _add_publisher_accounts(self, keyword: str, account_ids: Sequence[str]) -> None:
        """Admit other accounts' publishers, refusals naming ``keyword``."""
        require_account_ids(keyword, account_ids)
        require_other_accounts(keyword, account_ids, self, "DeliveryLoggedTopic.grant_publish")
        new = [a for a in dict.fromkeys(account_ids) if a not in self._publishers]
        if new:
            self._publishers.extend(new)
            self._grant_publish(Grantees.accounts(new, self.organization_id))

    @checked_keywords
    def add_publisher_organization(self, organization_id: str) -> None:
        """Let every principal of an organization publish (``aws:PrincipalOrgID``)."""
        require_organization_ids("organization_id", [organization_id])
        if organization_id not in self._publisher_organizations:
            self._publisher_organizations.append(organization_id)
            self._grant_publish(Grantees.organizations([organization_id]))

    def _grant_publish(self, grantees: Grantees) -> None:
        grant_with_key(
            self._policy,
            self.encryption_key,
            sid="AllowPublish",
            key_sid="AllowPublishersThroughSns",
            grantees=grantees,
            actions=["sns:Publish"],
            key_actions=PUBLISH_KEY_ACTIONS,
            via_service="sns",
        )

    @checked_keywords
    def add_subscriber_accounts(self, *account_ids: str) -> None:
        """Let other accounts subscribe their own SQS queues, and nothing else.

        A statement per account: only one of its own tells the queues an account may
        subscribe (``sns:Endpoint``) apart from another's, and one account subscribing another
        account's queue would duplicate that queue's deliveries. At about 300 bytes each,
        SNS's 30 KiB topic policy holds some 95 subscriber accounts. The topic's own account
        is refused: its queues are subscribed with :meth:`add_queue_subscription`, its
        principals granted with IAM.
        """
        self._add_subscriber_accounts("account_ids", account_ids)

    def _add_subscriber_accounts(self, keyword: str, account_ids: Sequence[str]) -> None:
        """Admit other accounts' subscriptions, refusals naming ``keyword``."""
        require_account_ids(keyword, account_ids)
        require_other_accounts(
            keyword,
            account_ids,
            self,
            "subscribe its queues with DeliveryLoggedTopic.add_queue_subscription",
        )
        if account_ids:
            # Their subscriptions are made in their own stacks, but delivered (and logged) here.
            self._log(DeliveryProtocol.SQS)
        for account in dict.fromkeys(account_ids):
            if account in self._subscribers:
                continue
            self._subscribers.append(account)
            equal: dict[str, str] = {"sns:Protocol": "sqs"}
            if self.organization_id is not None:
                equal["aws:PrincipalOrgID"] = self.organization_id
            self.topic.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"AllowSubscribeQueuesOf{account}",
                    principals=[iam.AccountPrincipal(account)],
                    actions=["sns:Subscribe"],
                    resources=[self.topic.topic_arn],
                    conditions={
                        "StringEquals": equal,
                        "StringLike": {"sns:Endpoint": f"arn:{Aws.PARTITION}:sqs:*:{account}:*"},
                    },
                )
            )

    @checked_keywords
    def add_subscriber_organization(self, organization_id: str) -> None:
        """Let the accounts of an organization subscribe SQS queues, and nothing else; their
        deliveries are logged."""
        require_organization_ids("organization_id", [organization_id])
        self._log(DeliveryProtocol.SQS)
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"AllowSubscribeQueuesOf{organization_id.replace('-', '')}",
                principals=[iam.AnyPrincipal()],
                actions=["sns:Subscribe"],
                resources=[self.topic.topic_arn],
                conditions={
                    "StringEquals": {
                        "sns:Protocol": "sqs",
                        "aws:PrincipalOrgID": organization_id,
                    }
                },
            )
        )

    @property
    def publisher_accounts(self) -> tuple[str, ...]:
        """Other accounts granted publish."""
        return tuple(self._publishers)

    @property
    def subscriber_accounts(self) -> tuple[str, ...]:
        """Other accounts granted subscribe (SQS only)."""
        return tuple(self._subscribers)

    @checked_keywords
    def add_queue_subscription(
        self,
        subscription_id: str,
        queue: IEndpointQueue | sqs.IQueue,
        *,
        raw_message_delivery: bool = True,
        filter_policy: Mapping[str, Any] | None = None,
        filter_policy_scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> sqs.IQueue:
        """Subscribe a queue of this account; returns the subscription's DLQ.

        The queue's policy admits SNS for this topic only (``aws:SourceArn``; an
        :class:`~constructs_lib.EndpointQueue` lists every topic it admits in one statement) and
        its key lets SNS encrypt for this topic only, each grant written by the construct
        itself whatever feature flags the app sets. For a queue in another account use
        :class:`CrossAccountQueueSubscription` in that account's stack.

        :param queue: an :class:`~constructs_lib.EndpointQueue`, an imported endpoint queue, or
            an aws-cdk-lib queue (``sqs.Queue`` of this app, or imported: its policies are its
            owner's). A FIFO queue needs a FIFO topic.
        :param raw_message_delivery: deliver the message as published, without SNS's JSON
            envelope (what NServiceBus endpoints read). Default: True.
        :param filter_policy: an SNS filter policy, as SNS's JSON syntax writes it.
            Default: none (every message).
        :param filter_policy_scope: what ``filter_policy`` looks at: the message attributes,
            or (nested policies) the body. Default: ``FilterPolicyScope.MESSAGE_ATTRIBUTES``.
        :param dead_letter_queue: the subscription's DLQ, of the topic's kind (FIFO or not); a
            key of this app encrypting it admits SNS for this topic. Default: a new one,
            ``<topic>-<subscription_id>-dlq``, encrypted with the topic's key.
        """
        subscribed = subscribed_queue("queue", queue)
        require_local(
            "queue",
            subscribed.queue,
            self,
            "a queue",
            "SNS subscribes a queue from the queue's own account: create "
            "CrossAccountQueueSubscription(topic_arn=<this topic's ARN as text>, ...) in a "
            "stack of that account, and admit it here with subscriber_accounts",
        )
        dlq = dead_letter_queue or self._dead_letter_queue(subscription_id)
        subscription = QueueSubscription(
            subscribed,
            raw_message_delivery=raw_message_delivery,
            dead_letter_queue=dlq,
        ).subscribe(self.topic)
        set_filter_policy(subscription, filter_policy, filter_policy_scope)
        self.log_deliveries(DeliveryProtocol.SQS)
        return dlq

    @checked_keywords
    def add_lambda_subscription(
        self,
        subscription_id: str,
        function: lambda_.IFunction,
        *,
        filter_policy: Mapping[str, Any] | None = None,
        filter_policy_scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> sqs.IQueue:
        """Subscribe a Lambda function; returns the subscription's DLQ.

        :param filter_policy: an SNS filter policy, as SNS's JSON syntax writes it.
            Default: none (every message).
        :param filter_policy_scope: what ``filter_policy`` looks at: the message attributes,
            or (nested policies) the body. Default: ``FilterPolicyScope.MESSAGE_ATTRIBUTES``.
        :param dead_letter_queue: the subscription's DLQ; a key of this app encrypting it
            admits SNS for this topic. Default: a new one, ``<topic>-<subscription_id>-dlq``,
            encrypted with the topic's key.
        """
        if self.fifo:
            raise ValueError(
                "function: FIFO topics deliver only to SQS queues; subscribe a queue that "
                "triggers the function"
            )
        dlq = dead_letter_queue or self._dead_letter_queue(subscription_id)
        admit_topic_to_dead_letter_queue(self.topic, dlq)
        subscription = self.topic.add_subscription(
            subscriptions.LambdaSubscription(function, dead_letter_queue=dlq)
        )
        set_filter_policy(subscription, filter_policy, filter_policy_scope)
        self.log_deliveries(DeliveryProtocol.LAMBDA)
        return dlq

    @checked_keywords
    def grant_publish(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity of this account permission to publish (and to use the key)."""
        return self.topic.grant_publish(grantee)
