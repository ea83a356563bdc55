"""``DeliveryReportJob``: the delivery-report Spark job on EMR Serverless, run daily.

An EMR Serverless Spark application that starts on demand and stops when idle (nothing is paid
between runs), the job's entry script and its ``runtime`` package uploaded as assets, a job
role that reads the logs and writes reports in the log bucket and nothing else, and an
EventBridge Scheduler schedule that starts a run over the previous UTC day's prefix. The
schedule passes its own scheduled time (``<aws.scheduler.scheduled-time>``); the job derives
the day from it, so a delayed or retried run still analyses the right day.
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Duration, RemovalPolicy, Stack, TimeZone, Token
from aws_cdk import aws_emrserverless as emrserverless
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from constructs import Construct

from constructs_lib._private.acknowledgments import acknowledge
from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked
from constructs_lib._private.spark_assets import ENTRY_SCRIPT, spark_job_package
from constructs_lib.defaults import (
    LOG_RETENTION,
    REPORT_APPLICATION_NAME,
    REPORT_IDLE_TIMEOUT,
    REPORT_IDLE_TIMEOUT_RANGE_MINUTES,
    REPORT_MAX_VCPUS,
    REPORT_MAX_VCPUS_RANGE,
    REPORT_RELEASE_LABEL,
    REPORT_SCHEDULE,
)
from constructs_lib.delivery_log_bucket import DeliveryLogBucket
from constructs_lib.validation import require_range


def _log_groups_arn(stack: Stack) -> str:
    """``arn:<partition>:logs:<region>:<account>:log-group:*``: every log group of the stack's
    account and region, as CloudWatch Logs writes a log group's ARN (a colon before the name).

    EMR Serverless calls ``DescribeLogGroups`` with the job role before a run to find the log
    group the application names (its CloudWatch logging permissions:
    https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/logging.html#jobs-log-storage-cw),
    and IAM authorizes that call against log-group ARNs of this form: a ``log-group/*``
    resource matches none, so the call would be denied.
    """
    return stack.format_arn(
        service="logs",
        resource="log-group",
        resource_name="*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


@checked
class DeliveryReportJob(Construct):
    """The application (``application``), job role (``job_role``) and schedule (``schedule``).

    Example:

    ```python
    from aws_cdk import App, Duration, Environment, Stack

    from constructs_lib import DeliveryLogBucket, DeliveryReportJob

    app = App()
    stack = Stack(app, "Analytics", env=Environment(account="333333333333", region="eu-west-1"))
    logs = DeliveryLogBucket(stack, "Logs")
    DeliveryReportJob(stack, "Report", log_bucket=logs, idle_timeout=Duration.minutes(5))
    app.synth()
    ```
    """

    log_group = Attribute[logs.LogGroup]("The job's log group.")
    application = Attribute[emrserverless.CfnApplication](
        "The EMR Serverless application the job runs on."
    )
    entry_script = Attribute[s3_assets.Asset]("The Spark entry script's asset.")
    package = Attribute[s3_assets.Asset]("The report package's asset.")
    job_role = Attribute[iam.Role]("The role the job runs with.")
    schedule = Attribute[scheduler.Schedule]("The daily schedule starting the job.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        log_bucket: DeliveryLogBucket,
        schedule_expression: str = REPORT_SCHEDULE,
        application_name: str = REPORT_APPLICATION_NAME,
        release_label: str = REPORT_RELEASE_LABEL,
        max_vcpus: int = REPORT_MAX_VCPUS,
        idle_timeout: Duration = REPORT_IDLE_TIMEOUT,
        log_retention: logs.RetentionDays = LOG_RETENTION,
    ) -> None:
        """Create the application, the job role, the job's log group and the schedule.

        :param log_bucket: the bucket whose log prefixes the job reads and whose report prefix
            it writes.
        :param schedule_expression: when EventBridge Scheduler starts a run, in UTC. Default:
            :data:`~constructs_lib.defaults.REPORT_SCHEDULE` (half past midnight).
        :param application_name: the EMR Serverless application's name. Default:
            :data:`~constructs_lib.defaults.REPORT_APPLICATION_NAME`.
        :param release_label: the EMR release, with Spark 4. Default:
            :data:`~constructs_lib.defaults.REPORT_RELEASE_LABEL`.
        :param max_vcpus: the application's cap (4-400 vCPU, 4 GB of memory each). Default:
            :data:`~constructs_lib.defaults.REPORT_MAX_VCPUS` (16).
        :param idle_timeout: how long the application stays warm after a run (1-1440
            minutes). Default: :data:`~constructs_lib.defaults.REPORT_IDLE_TIMEOUT` (15
            minutes).
        :param log_retention: of the job's log group. Default:
            :data:`~constructs_lib.defaults.LOG_RETENTION` (three months).
        """
        super().__init__(scope, construct_id)
        require_range("max_vcpus", max_vcpus, *REPORT_MAX_VCPUS_RANGE)
        require_range(
            "idle_timeout (minutes)",
            int(idle_timeout.to_minutes()),
            *REPORT_IDLE_TIMEOUT_RANGE_MINUTES,
        )
        stack = Stack.of(self)
        self.log_group = logs.LogGroup(
            self, "JobLogs", retention=log_retention, removal_policy=RemovalPolicy.RETAIN
        )
        self.application = emrserverless.CfnApplication(
            self,
            "Application",
            name=application_name,
            release_label=release_label,
            type="SPARK",
            architecture="ARM64",
            auto_start_configuration=emrserverless.CfnApplication.AutoStartConfigurationProperty(
                enabled=True
            ),
            auto_stop_configuration=emrserverless.CfnApplication.AutoStopConfigurationProperty(
                enabled=True, idle_timeout_minutes=int(idle_timeout.to_minutes())
            ),
            maximum_capacity=emrserverless.CfnApplication.MaximumAllowedResourcesProperty(
                cpu=f"{max_vcpus} vCPU", memory=f"{4 * max_vcpus} GB"
            ),
            monitoring_configuration=emrserverless.CfnApplication.MonitoringConfigurationProperty(
                cloud_watch_logging_configuration=emrserverless.CfnApplication.CloudWatchLoggingConfigurationProperty(
                    enabled=True, log_group_name=self.log_group.log_group_name
                )
            ),
        )
        self.entry_script = s3_assets.Asset(self, "EntryScript", path=str(ENTRY_SCRIPT))
        self.package = s3_assets.Asset(
            self,
            "Package",
            path=str(spark_job_package()),
        )
        self.job_role = iam.Role(
            self,
            "JobRole",
            description="The delivery-report Spark job: reads delivery logs, writes reports",
            assumed_by=iam.ServicePrincipal(
                "emr-serverless.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {"aws:SourceArn": self.application.attr_arn},
                },
            ),
        )
        log_bucket.grant_read_logs_write_reports(self.job_role)
        # Its two objects of the asset bucket alone: an asset's grant_read covers the whole
        # bootstrap bucket, every other stack's code and templates among them.
        self.job_role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[
                    f"arn:{stack.partition}:s3:::{asset.s3_bucket_name}/{asset.s3_object_key}"
                    for asset in (self.entry_script, self.package)
                ],
            )
        )
        self.job_role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:DescribeLogGroups"], resources=[_log_groups_arn(stack)]
            )
        )
        self.job_role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],
            )
        )
        self.schedule = scheduler.Schedule(
            self,
            "Daily",
            description="Daily delivery report over the previous UTC day's delivery logs",
            schedule=scheduler.ScheduleExpression.expression(schedule_expression, TimeZone.ETC_UTC),
            target=scheduler_targets.Universal(
                service="emrserverless",
                action="startJobRun",
                input=scheduler.ScheduleTargetInput.from_object(self._start_job_run(log_bucket)),
                policy_statements=[
                    iam.PolicyStatement(
                        actions=["emr-serverless:StartJobRun"],
                        resources=[self.application.attr_arn],
                    ),
                    iam.PolicyStatement(
                        actions=["iam:PassRole"],
                        resources=[self.job_role.role_arn],
                        conditions={
                            "StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}
                        },
                    ),
                ],
                retry_attempts=3,
                max_event_age=Duration.hours(6),
            ),
        )
        self._acknowledge_wildcards()

    def _start_job_run(self, log_bucket: DeliveryLogBucket) -> dict[str, object]:
        """StartJobRun's request: the job reads ``s3://<bucket>`` for the day before the
        scheduled time and writes the report next to the logs (``reports/<day>/``)."""
        scheduled_time = scheduler.ContextAttribute.scheduled_time
        execution_id = scheduler.ContextAttribute.execution_id
        return {
            "ApplicationId": self.application.attr_application_id,
            "ExecutionRoleArn": self.job_role.role_arn,
            "ClientToken": execution_id,
            "Name": f"delivery-report-{scheduled_time}",
            "JobDriver": {
                "SparkSubmit": {
                    "EntryPoint": self.entry_script.s3_object_url,
                    "EntryPointArguments": [
                        "--bucket",
                        f"s3://{log_bucket.bucket.bucket_name}",
                        "--scheduled-time",
                        scheduled_time,
                        "--s3-scheme",
                        "s3",
                    ],
                    "SparkSubmitParameters": f"--py-files {self.package.s3_object_url}",
                }
            },
        }

    def _acknowledge_wildcards(self) -> None:
        stack = Stack.of(self)
        # cdk-nag names a pseudo parameter as <AWS::Region>; an env-agnostic stack has those.
        region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
        account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
        acknowledge(
            self.job_role,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:*]",
            "EMR Serverless looks the job's log group up by name (DescribeLogGroups takes no "
            "single-group resource); writing is granted on the job's log group only.",
        )
