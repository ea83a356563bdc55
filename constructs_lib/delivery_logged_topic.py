"""``DeliveryLoggedTopic``: an SNS topic whose every delivery failure is on record.

A misconfigured cross-account policy makes SNS drop a message silently unless delivery-status
logging is on for that protocol; so this topic logs every protocol it has subscribers on, into
log groups it creates first (SNS would create them with no retention), through a role that only
this topic can use and that may only write to those groups.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Aws, Duration, RemovalPolicy, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib.acknowledgments import acknowledge
from constructs_lib.endpoint_queue import EndpointQueue
from constructs_lib.queue_naming import subscription_dead_letter_queue_name
from constructs_lib.validation import (
    require_account_ids,
    require_organization_ids,
    require_range,
)
from cross_account_runtime.delivery_policy.policy import HttpDeliveryPolicy

LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents")
PUBLISH_KEY_ACTIONS = ("kms:GenerateDataKey*", "kms:Decrypt")
DEAD_LETTER_RETENTION = Duration.days(14)
"""Subscription DLQs keep messages as long as SQS allows, so an operator can redrive them."""
SUBSCRIPTION_DLQ_REASON = (
    "This queue is the dead-letter queue of an SNS subscription (the subscription's "
    "RedrivePolicy), which the rule does not recognise as a dead-letter queue."
)


class DeliveryProtocol(enum.Enum):
    """The protocols SNS logs delivery status for (CloudFormation ``LoggingConfig.Protocol``)."""

    HTTP = "http/s"
    SQS = "sqs"
    LAMBDA = "lambda"
    FIREHOSE = "firehose"
    APPLICATION = "application"

    @property
    def logging_protocol(self) -> sns.LoggingProtocol:
        """The aws-cdk-lib enum member for this protocol."""
        return {
            DeliveryProtocol.HTTP: sns.LoggingProtocol.HTTP,
            DeliveryProtocol.SQS: sns.LoggingProtocol.SQS,
            DeliveryProtocol.LAMBDA: sns.LoggingProtocol.LAMBDA,
            DeliveryProtocol.FIREHOSE: sns.LoggingProtocol.FIREHOSE,
            DeliveryProtocol.APPLICATION: sns.LoggingProtocol.APPLICATION,
        }[self]


def delivery_log_group_names(topic_name: str, region: str, account: str) -> tuple[str, str]:
    """The success and failure log group names SNS writes to for a topic."""
    success = f"sns/{region}/{account}/{topic_name}"
    return success, f"{success}/Failure"


def subscription_dead_letter_queue(
    scope: Construct, construct_id: str, *, queue_name: str, key: kms.IKey | None, fifo: bool
) -> sqs.Queue:
    """The DLQ of one SNS subscription: TLS-only, retained, kept as long as SQS allows,
    encrypted with ``key`` (SSE-SQS without one)."""
    queue = sqs.Queue(
        scope,
        construct_id,
        queue_name=queue_name,
        encryption=sqs.QueueEncryption.KMS if key else sqs.QueueEncryption.SQS_MANAGED,
        encryption_master_key=key,
        enforce_ssl=True,
        retention_period=DEAD_LETTER_RETENTION,
        fifo=fifo or None,
        removal_policy=RemovalPolicy.RETAIN,
    )
    acknowledge(queue, "AwsSolutions-SQS3", SUBSCRIPTION_DLQ_REASON)
    return queue


class DeliveryLoggedTopic(Construct):
    """An SNS topic with delivery-status logging, subscription DLQs and least-privilege policies."""

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
        logged_protocols: Sequence[DeliveryProtocol] = (),
        success_sample_rate: int = 100,
        log_retention: logs.RetentionDays = logs.RetentionDays.THREE_MONTHS,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the topic, its key, its log groups and its feedback role.

        :param topic_name: the topic's name (``.fifo`` is added for FIFO topics if missing).
        :param fifo: a FIFO topic (only FIFO SQS queues may subscribe).
        :param content_based_deduplication: FIFO only.
        :param display_name: shown in SMS and email deliveries.
        :param encryption_key: the key for the topic and its subscription DLQs; default a new
            customer-managed key with rotation (the AWS-managed ``alias/aws/sns`` key cannot be
            used by publishers in other accounts).
        :param publisher_accounts: other accounts whose principals may ``sns:Publish``.
        :param publisher_organization_ids: organizations whose principals may publish.
        :param subscriber_accounts: other accounts that may subscribe their own SQS queues.
        :param subscriber_organization_ids: organizations whose accounts may subscribe SQS
            queues (``aws:PrincipalOrgID``).
        :param logged_protocols: protocols to log even without a subscriber yet (pass all
            five of :class:`DeliveryProtocol` to log everything); protocols of subscriptions
            added through this construct are logged automatically.
        :param success_sample_rate: percentage of successful deliveries logged (0-100);
            failures are always logged.
        :param log_retention: retention of both log groups (default three months).
        :param removal_policy: for the topic's key and log groups; default RETAIN, so the
            delivery history outlives the stack.
        """
        super().__init__(scope, construct_id)
        require_range("success_sample_rate", success_sample_rate, 0, 100)
        require_account_ids("publisher_accounts", publisher_accounts)
        require_organization_ids("publisher_organization_ids", publisher_organization_ids)
        require_account_ids("subscriber_accounts", subscriber_accounts)
        require_organization_ids("subscriber_organization_ids", subscriber_organization_ids)
        if content_based_deduplication and not fifo:
            raise ValueError(
                "content_based_deduplication: only FIFO topics deduplicate; set fifo=True"
            )
        if fifo and not topic_name.endswith(".fifo"):
            topic_name += ".fifo"
        if not fifo and topic_name.endswith(".fifo"):
            raise ValueError(
                f"topic_name: {topic_name!r} ends with '.fifo' but fifo is False; set fifo=True"
            )

        stack = Stack.of(self)
        self.topic_name = topic_name
        self.fifo = fifo
        self.success_sample_rate = success_sample_rate
        # The topic's ARN is computed from its name: the feedback role's trust policy needs it
        # and the topic needs the role, so a reference would be a cycle.
        self.topic_arn = stack.format_arn(service="sns", resource=topic_name)
        self.encryption_key: kms.IKey = encryption_key or kms.Key(
            self,
            "Key",
            description=f"Encrypts the {topic_name} topic and its subscription dead-letter queues",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        success_name, failure_name = delivery_log_group_names(
            topic_name, Aws.REGION, Aws.ACCOUNT_ID
        )
        self.success_log_group, self.failure_log_group = (
            logs.LogGroup(
                self,
                construct_name,
                log_group_name=group_name,
                retention=log_retention,
                removal_policy=removal_policy,
            )
            for construct_name, group_name in (
                ("SuccessLogs", success_name),
                ("FailureLogs", failure_name),
            )
        )
        self.feedback_role = iam.Role(
            self,
            "DeliveryStatusRole",
            description=f"Lets SNS write delivery-status logs of {topic_name}, and only those",
            assumed_by=iam.ServicePrincipal(
                "sns.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {"aws:SourceArn": self.topic_arn},
                },
            ),
        )
        self.feedback_role.add_to_policy(
            iam.PolicyStatement(
                actions=list(LOG_ACTIONS),
                resources=[
                    self.success_log_group.log_group_arn,
                    self.failure_log_group.log_group_arn,
                ],
            )
        )
        for group in (self.success_log_group, self.failure_log_group):
            logical_id = stack.get_logical_id(group.node.default_child)  # type: ignore[arg-type]
            acknowledge(
                self.feedback_role,
                f"AwsSolutions-IAM5[Resource::<{logical_id}.Arn>]",
                "The wildcard covers the log streams SNS names at delivery time inside this "
                "topic's own delivery log group; no other group is reachable.",
            )
        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=topic_name,
            display_name=display_name,
            fifo=fifo or None,
            content_based_deduplication=content_based_deduplication or None,
            master_key=self.encryption_key,
            enforce_ssl=True,
        )
        self._logged: list[DeliveryProtocol] = []
        for protocol in logged_protocols:
            self.log_deliveries(protocol)
        self._allow_sns_to_use_key()
        self._publishers: list[str] = []
        self._publisher_organizations: list[str] = []
        self._subscribers: list[str] = []
        self.add_publisher_accounts(*publisher_accounts)
        for organization_id in publisher_organization_ids:
            self.add_publisher_organization(organization_id)
        self.add_subscriber_accounts(*subscriber_accounts)
        for organization_id in subscriber_organization_ids:
            self.add_subscriber_organization(organization_id)

    @property
    def logged_protocols(self) -> tuple[DeliveryProtocol, ...]:
        """The protocols whose deliveries are logged."""
        return tuple(self._logged)

    def log_deliveries(self, protocol: DeliveryProtocol) -> None:
        """Turn on delivery-status logging for a protocol (once)."""
        if protocol in self._logged:
            return
        self._logged.append(protocol)
        self.topic.add_logging_config(
            protocol=protocol.logging_protocol,
            success_feedback_role=self.feedback_role,
            failure_feedback_role=self.feedback_role,
            success_feedback_sample_rate=self.success_sample_rate,
        )

    def stream_logs_to(self, destination_arn: str) -> tuple[logs.CfnSubscriptionFilter, ...]:
        """Send both delivery log groups, every event, to a CloudWatch Logs destination
        (typically another account's, see :class:`DeliveryLogStream`).

        The destination's owner must admit this account in its destination policy first, or
        the subscription filter fails to create.
        """
        filters = []
        for group in (self.success_log_group, self.failure_log_group):
            subscription_filter = logs.CfnSubscriptionFilter(
                group,
                "StreamToAnalytics",
                log_group_name=group.log_group_name,
                destination_arn=destination_arn,
                filter_pattern="",
            )
            filters.append(subscription_filter)
        return tuple(filters)

    def _allow_sns_to_use_key(self) -> None:
        """SNS encrypts into this topic's subscription DLQs with the topic's key."""
        if isinstance(self.encryption_key, kms.Key):
            self.encryption_key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid="AllowSnsForThisAccount",
                    principals=[iam.ServicePrincipal("sns.amazonaws.com")],
                    actions=list(PUBLISH_KEY_ACTIONS),
                    resources=["*"],
                    conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
                )
            )

    def add_publisher_accounts(self, *account_ids: str) -> None:
        """Let principals of other accounts publish (their IAM policies must allow it too)."""
        require_account_ids("account_ids", account_ids)
        new = [a for a in dict.fromkeys(account_ids) if a not in self._publishers]
        if not new:
            return
        self._publishers.extend(new)
        principals: list[iam.IPrincipal] = [iam.AccountPrincipal(a) for a in new]
        self._grant_publish(f"Accounts{len(self._publishers)}", principals, None)

    def add_publisher_organization(self, organization_id: str) -> None:
        """Let every principal of an organization publish (``aws:PrincipalOrgID``)."""
        require_organization_ids("organization_id", [organization_id])
        if organization_id in self._publisher_organizations:
            return
        self._publisher_organizations.append(organization_id)
        self._grant_publish(
            f"Organization{len(self._publisher_organizations)}",
            [iam.AnyPrincipal()],
            {"aws:PrincipalOrgID": organization_id},
        )

    def _grant_publish(
        self, sid: str, principals: list[iam.IPrincipal], org: dict[str, str] | None
    ) -> None:
        conditions = {"StringEquals": org} if org else None
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"AllowPublish{sid}",
                principals=principals,
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions=conditions,
            )
        )
        if isinstance(self.encryption_key, kms.Key):
            self.encryption_key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"AllowPublishersThroughSns{sid}",
                    principals=principals,
                    actions=list(PUBLISH_KEY_ACTIONS),
                    resources=["*"],
                    conditions={
                        "StringEquals": {
                            "kms:ViaService": f"sns.{Aws.REGION}.{Aws.URL_SUFFIX}",
                            **(org or {}),
                        }
                    },
                )
            )

    def add_subscriber_accounts(self, *account_ids: str) -> None:
        """Let other accounts subscribe their own SQS queues, and nothing else."""
        require_account_ids("account_ids", account_ids)
        for account in dict.fromkeys(account_ids):
            if account in self._subscribers:
                continue
            self._subscribers.append(account)
            self.topic.add_to_resource_policy(
                iam.PolicyStatement(
                    sid=f"AllowSubscribeQueuesOf{account}",
                    principals=[iam.AccountPrincipal(account)],
                    actions=["sns:Subscribe"],
                    resources=[self.topic.topic_arn],
                    conditions={
                        "StringEquals": {"sns:Protocol": "sqs"},
                        "StringLike": {"sns:Endpoint": f"arn:{Aws.PARTITION}:sqs:*:{account}:*"},
                    },
                )
            )

    def add_subscriber_organization(self, organization_id: str) -> None:
        """Let the accounts of an organization subscribe SQS queues, and nothing else."""
        require_organization_ids("organization_id", [organization_id])
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

    def _dead_letter_queue(self, subscription_id: str) -> sqs.Queue:
        """A DLQ for one subscription, encrypted with the topic's key."""
        return subscription_dead_letter_queue(
            self,
            f"{subscription_id}DeadLetterQueue",
            queue_name=subscription_dead_letter_queue_name(self.topic_name, subscription_id),
            key=self.encryption_key,
            fifo=self.fifo,
        )

    def add_queue_subscription(
        self,
        subscription_id: str,
        queue: EndpointQueue | sqs.IQueue,
        *,
        raw_message_delivery: bool = True,
        filter_policy: Mapping[str, Any] | None = None,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> sqs.IQueue:
        """Subscribe a queue of this account; returns the subscription's DLQ.

        The queue's policy admits SNS for this topic only (``aws:SourceArn``) and its key lets
        SNS encrypt. For a queue in another account use :class:`CrossAccountQueueSubscription`
        in that account's stack.
        """
        target = queue.queue if isinstance(queue, EndpointQueue) else queue
        dlq = dead_letter_queue or self._dead_letter_queue(subscription_id)
        subscription = self.topic.add_subscription(
            subscriptions.SqsSubscription(
                target, raw_message_delivery=raw_message_delivery, dead_letter_queue=dlq
            )
        )
        set_filter_policy(subscription, filter_policy)
        self.log_deliveries(DeliveryProtocol.SQS)
        return dlq

    def add_lambda_subscription(
        self,
        subscription_id: str,
        function: lambda_.IFunction,
        *,
        filter_policy: Mapping[str, Any] | None = None,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> sqs.IQueue:
        """Subscribe a Lambda function; returns the subscription's DLQ."""
        dlq = dead_letter_queue or self._dead_letter_queue(subscription_id)
        subscription = self.topic.add_subscription(
            subscriptions.LambdaSubscription(function, dead_letter_queue=dlq)
        )
        set_filter_policy(subscription, filter_policy)
        self.log_deliveries(DeliveryProtocol.LAMBDA)
        return dlq

    def add_url_subscription(
        self,
        subscription_id: str,
        url: str,
        *,
        delivery_policy: HttpDeliveryPolicy | None = None,
        raw_message_delivery: bool = False,
        filter_policy: Mapping[str, Any] | None = None,
        dead_letter_queue: sqs.IQueue | None = None,
    ) -> tuple[sns.Subscription, sqs.IQueue]:
        """Subscribe an HTTPS endpoint with a validated delivery policy; returns it and its DLQ.

        Plain ``http://`` is refused: the subscriber must see SNS's TLS certificate, and the
        message would cross the internet in clear. A token (a function URL of this app) is
        HTTPS by construction.
        """
        if not Token.is_unresolved(url) and not url.startswith("https://"):
            raise ValueError(f"url: {url!r} must be an https:// URL")
        if self.fifo:
            raise ValueError("url: FIFO topics deliver only to SQS queues")
        dlq = dead_letter_queue or self._dead_letter_queue(subscription_id)
        subscription = sns.Subscription(
            self,
            subscription_id,
            topic=self.topic,
            endpoint=url,
            protocol=sns.SubscriptionProtocol.HTTPS,
            raw_message_delivery=raw_message_delivery or None,
            dead_letter_queue=dlq,
        )
        set_filter_policy(subscription, filter_policy)
        policy = delivery_policy or HttpDeliveryPolicy()
        _cfn_subscription(subscription).delivery_policy = policy.to_subscription_json()
        self.log_deliveries(DeliveryProtocol.HTTP)
        return subscription, dlq

    def grant_publish(self, grantee: iam.IGrantable) -> iam.Grant:
        """Grant an identity of this account permission to publish (and to use the key)."""
        return self.topic.grant_publish(grantee)


class CrossAccountQueueSubscription(Construct):
    """The subscriber account's half of an SQS subscription to a topic in another account.

    The queue owner creates the subscription (so SNS confirms it at once), admits SNS for that
    topic only in the queue policy, lets SNS use the queue's key for that topic, and owns the
    subscription's DLQ. The topic's account grants ``sns:Subscribe`` to this account (see
    :meth:`DeliveryLoggedTopic.add_subscriber_accounts`).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        topic_arn: str,
        subscription_name: str,
        queue: EndpointQueue,
        raw_message_delivery: bool = True,
        filter_policy: Mapping[str, Any] | None = None,
    ) -> None:
        """Subscribe ``queue`` to the topic ``topic_arn`` (computed, never an export); the
        subscription's DLQ is named ``<topic>-<subscription_name>-dlq``."""
        super().__init__(scope, construct_id)
        if Token.is_unresolved(topic_arn):
            raise ValueError(
                "topic_arn: give the topic's ARN as a string (compute it from the topology); "
                "a token from another stack would need a CloudFormation export"
            )
        topic = sns.Topic.from_topic_arn(self, "Topic", topic_arn)
        self.dead_letter_queue = subscription_dead_letter_queue(
            self,
            "DeadLetterQueue",
            queue_name=subscription_dead_letter_queue_name(
                topic_arn.rsplit(":", 1)[1], subscription_name
            ),
            key=queue.encryption_key,
            fifo=queue.fifo,
        )
        self.subscription = topic.add_subscription(
            subscriptions.SqsSubscription(
                queue.queue,
                raw_message_delivery=raw_message_delivery,
                dead_letter_queue=self.dead_letter_queue,
            )
        )
        set_filter_policy(self.subscription, filter_policy)


def _cfn_subscription(subscription: sns.Subscription) -> sns.CfnSubscription:
    cfn = subscription.node.default_child
    assert isinstance(cfn, sns.CfnSubscription)
    return cfn


def set_filter_policy(subscription: sns.Subscription, policy: Mapping[str, Any] | None) -> None:
    """Apply an SNS filter policy document as written (the JSON operators use), not through
    aws-cdk-lib's typed builders, so a topology can carry any filter SNS accepts."""
    if policy:
        _cfn_subscription(subscription).filter_policy = dict(policy)
