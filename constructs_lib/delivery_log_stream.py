"""``DeliveryLogStream``: a CloudWatch Logs destination that lands delivery logs in S3.

Member accounts subscribe their topic delivery log groups to the destination (see
:meth:`DeliveryLoggedTopic.stream_logs_to`); CloudWatch Logs hands the batches to Firehose,
which writes them under a day prefix (:mod:`cross_account_runtime.delivery_report.bucket_paths`). The
destination's policy admits exactly the declared accounts, and the role CloudWatch Logs assumes
to reach Firehose may be used only on behalf of those accounts' log groups (``aws:SourceArn``).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence

from aws_cdk import Duration, RemovalPolicy, Size, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kinesisfirehose as firehose
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked
from constructs_lib.defaults import (
    FIREHOSE_BUFFERING_INTERVAL,
    FIREHOSE_BUFFERING_INTERVAL_RANGE_SECONDS,
    FIREHOSE_BUFFERING_SIZE,
    FIREHOSE_BUFFERING_SIZE_RANGE_MIB,
    LOG_DESTINATION_NAME,
    LOG_RETENTION,
)
from constructs_lib.delivery_log_bucket import DeliveryLogBucket
from constructs_lib.validation import require_account_ids
from cross_account_runtime.delivery_report.bucket_paths import (
    FIREHOSE_ERROR_PREFIX,
    FIREHOSE_PREFIX,
)

DESTINATION_NAME_LENGTH = 512
FIREHOSE_LOG_STREAM = "S3Delivery"


class LogFormat(enum.StrEnum):
    """What Firehose writes to S3; the Spark job reads both.

    ``ENVELOPES`` keeps CloudWatch Logs' envelopes as they arrive (one gzip member per batch):
    the log group travels with every event, which SMS and platform-application records need
    because they carry no ``topicArn``, and ``CONTROL_MESSAGE`` envelopes stay visible.
    ``MESSAGES`` has Firehose decompress the batches and extract the log messages into gzip
    JSON lines: smaller objects, but the log group is gone.
    """

    ENVELOPES = "envelopes"
    MESSAGES = "messages"


def destination_arn(partition: str, region: str, account: str, name: str) -> str:
    """The destination's ARN, computed, so member accounts' stacks need no cross-stack export."""
    return f"arn:{partition}:logs:{region}:{account}:destination:{name}"


@checked
class DeliveryLogStream(Construct):
    """The Firehose stream (``delivery_stream``), its role and error log, and the destination
    (``destination``) with the role CloudWatch Logs assumes to put records into the stream.

    Example:

    ```python
    from aws_cdk import App, Environment, Stack

    from constructs_lib import DeliveryLogBucket, DeliveryLogStream

    app = App()
    stack = Stack(app, "Analytics", env=Environment(account="333333333333", region="eu-west-1"))
    logs = DeliveryLogBucket(stack, "Logs")
    DeliveryLogStream(stack, "Stream", log_bucket=logs, source_accounts=["111111111111"])
    app.synth()
    ```
    """

    source_accounts = Attribute[tuple[str, ...]](
        "The accounts whose log groups may subscribe, this one included."
    )
    log_format = Attribute[LogFormat]("What Firehose writes to S3.")
    firehose_role = Attribute[iam.Role]("The role Firehose writes into the log bucket with.")
    delivery_stream = Attribute[firehose.CfnDeliveryStream](
        "The Firehose stream into the log bucket."
    )
    delivery_stream_arn = Attribute[str]("The Firehose stream's ARN.")
    destination_name = Attribute[str]("The CloudWatch Logs destination's name.")
    destination_arn = Attribute[str](
        "The destination's ARN, computed (for other accounts, as text)."
    )
    role = Attribute[iam.Role]("The role CloudWatch Logs puts records into the stream with.")
    destination = Attribute[logs.CfnDestination](
        "The CloudWatch Logs destination member accounts stream to."
    )

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        log_bucket: DeliveryLogBucket,
        source_accounts: Sequence[str],
        destination_name: str = LOG_DESTINATION_NAME,
        log_format: LogFormat = LogFormat.ENVELOPES,
        buffering_interval: Duration = FIREHOSE_BUFFERING_INTERVAL,
        buffering_size: Size = FIREHOSE_BUFFERING_SIZE,
    ) -> None:
        """Create the stream, the destination and their roles.

        :param log_bucket: where Firehose writes, under the bucket's log prefixes.
        :param source_accounts: accounts whose log groups may subscribe to the destination;
            this stack's account always may.
        :param destination_name: the CloudWatch Logs destination's name (1-512 characters,
            no ``:`` or ``*``). Default:
            :data:`~constructs_lib.defaults.LOG_DESTINATION_NAME`.
        :param log_format: what Firehose writes (see :class:`LogFormat`). Default:
            ``LogFormat.ENVELOPES``.
        :param buffering_interval: the longest Firehose waits before writing an object
            (whole seconds, 0 to 900). Default:
            :data:`~constructs_lib.defaults.FIREHOSE_BUFFERING_INTERVAL` (5 minutes).
        :param buffering_size: the largest object Firehose buffers (whole MiB, 1 to 128).
            Default: :data:`~constructs_lib.defaults.FIREHOSE_BUFFERING_SIZE` (64 MiB).
        """
        super().__init__(scope, construct_id)
        require_account_ids("source_accounts", source_accounts)
        for keyword, given, (low, high), unit in (
            (
                "buffering_interval",
                float(buffering_interval.to_seconds()),
                FIREHOSE_BUFFERING_INTERVAL_RANGE_SECONDS,
                "seconds",
            ),
            (
                "buffering_size",
                float(buffering_size.to_kibibytes()) / 1024,
                FIREHOSE_BUFFERING_SIZE_RANGE_MIB,
                "MiB",
            ),
        ):
            if not (given.is_integer() and low <= given <= high):
                raise ValueError(
                    f"{keyword}: Firehose takes whole {unit} from {low} to {high}, got {given:g}"
                )
        if (
            not destination_name
            or len(destination_name) > DESTINATION_NAME_LENGTH
            or ":" in destination_name
            or "*" in destination_name
        ):
            raise ValueError(
                f"destination_name: 1-{DESTINATION_NAME_LENGTH} characters without ':' or '*', "
                f"got {destination_name!r}"
            )
        stack = Stack.of(self)
        self.source_accounts = tuple(sorted({*source_accounts, stack.account}))
        self.log_format = log_format
        firehose_logs = logs.LogGroup(
            self,
            "FirehoseErrors",
            retention=LOG_RETENTION,
            removal_policy=RemovalPolicy.RETAIN,
        )
        extracting = log_format is LogFormat.MESSAGES
        self.firehose_role = iam.Role(
            self,
            "FirehoseRole",
            description="Firehose writes delivery logs under the log bucket's log prefixes",
            assumed_by=iam.ServicePrincipal(
                "firehose.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
            ),
        )
        log_bucket.grant_write_logs(self.firehose_role)
        self.firehose_role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"],
                resources=[log_bucket.bucket.bucket_arn],
            )
        )
        self.firehose_role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:PutLogEvents"], resources=[firehose_logs.log_group_arn]
            )
        )
        processors = [
            firehose.CfnDeliveryStream.ProcessorProperty(
                type="Decompression",
                parameters=[
                    firehose.CfnDeliveryStream.ProcessorParameterProperty(
                        parameter_name="CompressionFormat", parameter_value="GZIP"
                    )
                ],
            ),
            firehose.CfnDeliveryStream.ProcessorProperty(
                type="CloudWatchLogProcessing",
                parameters=[
                    firehose.CfnDeliveryStream.ProcessorParameterProperty(
                        parameter_name="DataMessageExtraction", parameter_value="true"
                    )
                ],
            ),
        ]
        self.delivery_stream = firehose.CfnDeliveryStream(
            self,
            "Stream",
            delivery_stream_type="DirectPut",
            delivery_stream_encryption_configuration_input=firehose.CfnDeliveryStream.DeliveryStreamEncryptionConfigurationInputProperty(
                key_type="AWS_OWNED_CMK"
            ),
            extended_s3_destination_configuration=firehose.CfnDeliveryStream.ExtendedS3DestinationConfigurationProperty(
                bucket_arn=log_bucket.bucket.bucket_arn,
                role_arn=self.firehose_role.role_arn,
                prefix=FIREHOSE_PREFIX,
                error_output_prefix=FIREHOSE_ERROR_PREFIX,
                buffering_hints=firehose.CfnDeliveryStream.BufferingHintsProperty(
                    interval_in_seconds=int(buffering_interval.to_seconds()),
                    size_in_m_bs=int(buffering_size.to_mebibytes()),
                ),
                # Envelopes arrive gzip-compressed already: compressing again would nest gzip.
                compression_format="GZIP" if extracting else "UNCOMPRESSED",
                file_extension=".jsonl.gz" if extracting else ".gz",
                encryption_configuration=firehose.CfnDeliveryStream.EncryptionConfigurationProperty(
                    kms_encryption_config=firehose.CfnDeliveryStream.KMSEncryptionConfigProperty(
                        awskms_key_arn=log_bucket.key.key_arn
                    )
                ),
                processing_configuration=firehose.CfnDeliveryStream.ProcessingConfigurationProperty(
                    enabled=True, processors=processors
                )
                if extracting
                else None,
                cloud_watch_logging_options=firehose.CfnDeliveryStream.CloudWatchLoggingOptionsProperty(
                    enabled=True,
                    log_group_name=firehose_logs.log_group_name,
                    log_stream_name=FIREHOSE_LOG_STREAM,
                ),
            ),
        )
        # Firehose checks its role's permissions when the stream is created.
        self.delivery_stream.node.add_dependency(self.firehose_role)
        logs.LogStream(
            firehose_logs,
            "S3Delivery",
            log_group=firehose_logs,
            log_stream_name=FIREHOSE_LOG_STREAM,
        )
        self.delivery_stream_arn = self.delivery_stream.attr_arn
        self.destination_name = destination_name
        self.destination_arn = destination_arn(
            stack.partition, stack.region, stack.account, destination_name
        )
        self.role = iam.Role(
            self,
            "DestinationRole",
            description="CloudWatch Logs puts the member accounts' delivery logs into Firehose",
            assumed_by=iam.ServicePrincipal(
                "logs.amazonaws.com",
                conditions={
                    "StringLike": {
                        "aws:SourceArn": [
                            f"arn:{stack.partition}:logs:{stack.region}:{account}:*"
                            for account in self.source_accounts
                        ]
                    }
                },
            ),
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["firehose:PutRecord", "firehose:PutRecordBatch"],
                resources=[self.delivery_stream_arn],
            )
        )
        self.destination = logs.CfnDestination(
            self,
            "Destination",
            destination_name=destination_name,
            role_arn=self.role.role_arn,
            target_arn=self.delivery_stream_arn,
            destination_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "MemberAccountsSubscribe",
                            "Effect": "Allow",
                            "Principal": {"AWS": list(self.source_accounts)},
                            "Action": "logs:PutSubscriptionFilter",
                            "Resource": self.destination_arn,
                        }
                    ],
                },
                sort_keys=True,
            ),
        )
        # CloudWatch Logs checks at creation that it can assume the role and reach the stream.
        self.destination.node.add_dependency(self.role)
