"""The analytics stack: every account's delivery logs land here and are analysed daily.

It lives in the topology's analytics account, next to (not inside) that account's messaging
stack, so it can be deployed first: member accounts' subscription filters fail to create until
the destination admits them.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, Environment, Stack
from constructs import Construct

from constructs_lib import DeliveryLogBucket, DeliveryLogStream, DeliveryReportJob
from constructs_lib.defaults import LOG_DESTINATION_NAME
from constructs_lib.delivery_log_stream import destination_arn
from cross_account_runtime.delivery_report.bucket_paths import bucket_name
from stacks.topology import Account, AnalyticsSettings, Topology

STACK_NAME_PREFIX = "DeliveryLogs-"


def analytics_stack_name(account: Account) -> str:
    """``DeliveryLogs-<account name>``: what ``cdk deploy`` takes to deploy the analytics
    stack in ``account``."""
    return f"{STACK_NAME_PREFIX}{account.name}"


def log_source_accounts(topology: Topology) -> tuple[str, ...]:
    """The ids of the accounts whose topics' delivery logs stream to the analytics account."""
    return tuple(sorted({topology.account(t.account).id for t in topology.log_streaming_topics}))


def delivery_log_destination_arn(topology: Topology) -> str | None:
    """The destination's ARN, computed from the topology (no cross-account export)."""
    settings = topology.analytics
    if settings is None:
        return None
    account = topology.account(settings.account)
    return destination_arn(account.partition, account.region, account.id, LOG_DESTINATION_NAME)


class DeliveryLogStack(Stack):
    """The log bucket, the destination and Firehose stream, and the daily Spark job."""

    def __init__(
        self, scope: Construct, topology: Topology, settings: AnalyticsSettings, **kwargs: Any
    ) -> None:
        account = topology.account(settings.account)
        name = analytics_stack_name(account)
        super().__init__(
            scope,
            name,
            stack_name=name,
            env=Environment(account=account.id, region=account.region),
            description=f"Delivery logs of every messaging account, analysed daily ({account.name})",
            **kwargs,
        )
        self.log_bucket = DeliveryLogBucket(
            self,
            "LogBucket",
            bucket_name=bucket_name(account.id, account.region),
            retention=Duration.days(settings.retention_days),
            infrequent_access_after=Duration.days(settings.infrequent_access_after_days),
        )
        self.log_stream = DeliveryLogStream(
            self,
            "LogStream",
            log_bucket=self.log_bucket,
            source_accounts=log_source_accounts(topology),
            log_format=settings.log_format,
        )
        self.report_job = DeliveryReportJob(
            self,
            "ReportJob",
            log_bucket=self.log_bucket,
            schedule_expression=settings.schedule_expression,
        )
        CfnOutput(self, "LogBucketName", value=self.log_bucket.bucket.bucket_name)
        CfnOutput(self, "LogDestinationArn", value=self.log_stream.destination_arn)
        CfnOutput(
            self, "ReportApplicationId", value=self.report_job.application.attr_application_id
        )
        CfnOutput(self, "ReportJobRoleArn", value=self.report_job.job_role.role_arn)
