"""``SnsHttpsEndpoint``: a Lambda function URL that receives a topic's HTTPS deliveries safely.

The function runs the runtime's SNS endpoint (:mod:`cross_account_runtime.sns_endpoint`): it
verifies every message's signature and certificate URL, accepts only allow-listed topics,
refuses replays, confirms the subscription, and deduplicates deliveries in a DynamoDB table,
because SNS delivers at least once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aws_cdk import CfnOutput, Duration, RemovalPolicy, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.handler_module import require_handler_module
from constructs_lib._private.keywords import checked
from constructs_lib._private.lambda_assets import dependencies_layer, runtime_code
from constructs_lib._private.lambda_function import role_with_own_logs, runtime_function
from constructs_lib.defaults import (
    ALARM_EVALUATION_PERIOD,
    LAMBDA_MEMORY_RANGE_MB,
    LOG_RETENTION,
    SNS_ENDPOINT_MEMORY_MB,
    SNS_ENDPOINT_REPLAY_WINDOW,
)
from constructs_lib.delivery_logged_topic import DeliveryLoggedTopic, IDeliveryLoggedTopic
from constructs_lib.validation import require_range, require_topic_arn
from cross_account_runtime.common.emf import NAMESPACE, SERVICE_DIMENSION
from cross_account_runtime.common.json_log import ENV_SERVICE_NAME
from cross_account_runtime.delivery_policy.policy import (
    DELIVERY_TIMEOUT_SECONDS,
    HttpDeliveryPolicy,
)
from cross_account_runtime.sns_endpoint.config import (
    DEFAULT_SERVICE_NAME,
    ENV_ALLOWED_TOPIC_ARNS,
    ENV_DEDUPE_TABLE,
    ENV_HANDLER,
    ENV_REPLAY_WINDOW_SECONDS,
    HANDLER,
)
from cross_account_runtime.sns_endpoint.receiver import MAX_CLOCK_SKEW_SECONDS

CRYPTOGRAPHY_REQUIREMENT = "cryptography==50.0.2"
"""Pinned as in requirements.txt; bundled for the function's platform without Docker."""
SNS_REQUEST_TIMEOUT = Duration.seconds(DELIVERY_TIMEOUT_SECONDS)
"""SNS waits this long for an answer; a function running longer is retried anyway."""


@checked
class SnsHttpsEndpoint(Construct):
    """A function URL subscribed to a topic over HTTPS (a :class:`DeliveryLoggedTopic`, one
    imported with :meth:`DeliveryLoggedTopic.from_topic_arn`, or an aws-cdk-lib topic).

    Example:

    ```python
    import tempfile
    from pathlib import Path

    from aws_cdk import App, Stack

    from constructs_lib import DeliveryLoggedTopic, SnsHttpsEndpoint

    # Your handler's package: a function called once per message.
    code = Path(tempfile.mkdtemp()) / "acme_webhooks"
    code.mkdir()
    (code / "__init__.py").write_text("")
    (code / "receive.py").write_text("def handle(notification): print(notification)")

    app = App()
    stack = Stack(app, "Partner")
    topic = DeliveryLoggedTopic(stack, "OrderPlaced", topic_name="OrderPlaced")
    SnsHttpsEndpoint(
        stack, "Webhook", topic=topic, handler="acme_webhooks.receive:handle", handler_code=code
    )
    app.synth()
    ```
    """

    table = Attribute[dynamodb.Table]("The deduplication table (by MessageId).")
    role = Attribute[iam.Role]("The function's role.")
    log_group = Attribute[logs.LogGroup]("The function's own log group, with a retention.")
    function = Attribute[lambda_.Function]("The function checking and handling SNS's posts.")
    url = Attribute[lambda_.FunctionUrl]("The function URL SNS posts to.")
    subscription = Attribute[sns.Subscription]("The HTTPS subscription to the topic.")
    dead_letter_queue = Attribute[sqs.IQueue]("The subscription's own dead-letter queue.")
    service_name = Attribute[str](
        "The ``service`` of its log lines and metrics: ``sns-https-endpoint-<construct id>``."
    )

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        topic: IDeliveryLoggedTopic | sns.ITopic,
        handler: str,
        handler_code: str | Path | None = None,
        allowed_topic_arns: Sequence[str] | None = None,
        delivery_policy: HttpDeliveryPolicy | None = None,
        replay_window: Duration | None = None,
        memory_size: int = SNS_ENDPOINT_MEMORY_MB,
        log_retention: logs.RetentionDays = LOG_RETENTION,
    ) -> None:
        """Create the function, its URL, its dedupe table and the topic's subscription to it.

        :param topic: the topic to subscribe to (its subscription gets a DLQ): a
            :class:`DeliveryLoggedTopic`, an imported one, or an aws-cdk-lib topic (``sns.Topic``
            of this app, or imported), read as :meth:`DeliveryLoggedTopic.from_topic` does.
        :param handler: your function, ``package.module:function``, called once per message;
            the module must be in ``handler_code`` (or the runtime package) and define it.
        :param handler_code: the folder of your handler's package, bundled with the runtime.
            Default: none (the handler is importable from the runtime package itself).
        :param allowed_topic_arns: topics the endpoint accepts, each one exact topic ARN (no
            wildcards: the runtime would refuse its configuration and answer every delivery
            500). Default: the subscribed topic.
        :param delivery_policy: the subscription's retry policy. Default: SNS's.
        :param replay_window: how old a message may be; it must cover the delivery policy's
            whole retry schedule, or SNS's late retries would be refused. Default:
            :data:`~constructs_lib.defaults.SNS_ENDPOINT_REPLAY_WINDOW` (3,900 s).
        :param memory_size: MB (128-10,240); more memory also gives more CPU for signature
            checks.
            Default: :data:`~constructs_lib.defaults.SNS_ENDPOINT_MEMORY_MB` (512).
        :param log_retention: of the function's log group. Default:
            :data:`~constructs_lib.defaults.LOG_RETENTION` (three months).
        """
        super().__init__(scope, construct_id)
        if not isinstance(topic, IDeliveryLoggedTopic):
            topic = DeliveryLoggedTopic.from_topic(self, "Topic", topic)
        require_handler_module(handler, Path(handler_code) if handler_code is not None else None)
        require_range("memory_size", memory_size, *LAMBDA_MEMORY_RANGE_MB)
        for arn in allowed_topic_arns or ():
            if not Token.is_unresolved(arn):
                require_topic_arn("allowed_topic_arns", arn)
        policy = delivery_policy or HttpDeliveryPolicy()
        window = replay_window or SNS_ENDPOINT_REPLAY_WINDOW
        needed = policy.give_up_after_seconds + MAX_CLOCK_SKEW_SECONDS
        if window.to_seconds() < needed:
            raise ValueError(
                f"replay_window: {window.to_seconds()} s is shorter than the delivery policy's "
                f"retry schedule plus clock skew ({needed:.0f} s); SNS's last retries would be "
                "refused as replays. Lengthen replay_window or shorten the policy"
            )
        self.table = dynamodb.Table(
            self,
            "Deliveries",
            partition_key=dynamodb.Attribute(name="MessageId", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            time_to_live_attribute="ExpiresAt",
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.role, self.log_group = role_with_own_logs(
            self,
            description="Runs the SNS HTTPS endpoint: its own log group and dedupe table only",
            log_retention=log_retention,
        )
        self.table.grant(
            self.role,
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
        )
        self.service_name = f"{DEFAULT_SERVICE_NAME}-{construct_id}"
        extra = [Path(handler_code)] if handler_code is not None else []
        self.function = runtime_function(
            self,
            role=self.role,
            log_group=self.log_group,
            handler=HANDLER,
            code=runtime_code(extra),
            layers=[dependencies_layer(self, "Cryptography", [CRYPTOGRAPHY_REQUIREMENT])],
            memory_size=memory_size,
            timeout=SNS_REQUEST_TIMEOUT,
            environment={
                ENV_ALLOWED_TOPIC_ARNS: ",".join(allowed_topic_arns or [topic.topic.topic_arn]),
                ENV_DEDUPE_TABLE: self.table.table_name,
                ENV_HANDLER: handler,
                ENV_REPLAY_WINDOW_SECONDS: str(int(window.to_seconds())),
                ENV_SERVICE_NAME: self.service_name,
            },
        )
        self.url = self.function.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)
        self.subscription, self.dead_letter_queue = topic.add_url_subscription(
            construct_id, self.url.url, delivery_policy=policy
        )
        CfnOutput(self, "Url", value=self.url.url, description="The HTTPS endpoint SNS posts to")

    def metric(
        self, name: str, *, period: Duration | None = None, statistic: str = "Sum"
    ) -> cloudwatch.Metric:
        """One of the counts it writes per delivery under its service: an answer's outcome
        (``Processed``, ``Duplicate``, ``Rejected``, ``Retry``, ...) or ``SignatureRefused``;
        ``period`` defaults to the alarms' (5 minutes)."""
        return cloudwatch.Metric(
            namespace=NAMESPACE,
            metric_name=name,
            dimensions_map={SERVICE_DIMENSION: self.service_name},
            period=period or ALARM_EVALUATION_PERIOD,
            statistic=statistic,
        )

    def metric_url_5xx(
        self, *, period: Duration | None = None, statistic: str = "Sum"
    ) -> cloudwatch.Metric:
        """The function URL's answers of 500 to 599 (Lambda's ``Url5xxCount``): what SNS
        retries, then dead-letters; ``period`` defaults to the alarms' (5 minutes)."""
        return self.function.metric(
            "Url5xxCount", period=period or ALARM_EVALUATION_PERIOD, statistic=statistic
        )
