"""The analytics stack: the log bucket, the destination into Firehose, the daily Spark job, and
the subscription filters in the accounts with topics."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Stack, Validations
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from constructs_lib import DeliveryLogBucket, DeliveryLogStream, DeliveryReportJob, LogFormat
from cross_account_runtime.delivery_report.bucket_paths import (
    FIREHOSE_ERROR_PREFIX,
    FIREHOSE_PREFIX,
)

pytestmark = pytest.mark.synth

OPS = "333333333333"
BILLING = "222222222222"
DESTINATION = f"arn:aws:logs:us-east-1:{OPS}:destination:messaging-delivery-logs"


def template(assembly: Path, stack: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((assembly / f"{stack}.template.json").read_text())
    return data


def of_type(tpl: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in tpl["Resources"].items() if v["Type"] == kind}


def one(tpl: dict[str, Any], kind: str) -> dict[str, Any]:
    found = list(of_type(tpl, kind).values())
    assert len(found) == 1, f"{len(found)} {kind}"
    return found[0]["Properties"]  # type: ignore[no-any-return]


def text(value: Any) -> str:
    """A template value as text, with Fn::Join flattened and other intrinsics shown as JSON."""
    if isinstance(value, str):
        return value
    if value == {"Ref": "AWS::Partition"}:
        return "aws"
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(text(p) for p in parts)
    return json.dumps(value, sort_keys=True)


def statements(tpl: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    """The statements of the inline policies attached to roles whose logical id starts so."""
    found = []
    for policy in of_type(tpl, "AWS::IAM::Policy").values():
        roles = [r["Ref"] for r in policy["Properties"]["Roles"]]
        if any(r.startswith(role_prefix) for r in roles):
            found += policy["Properties"]["PolicyDocument"]["Statement"]
    return found


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.fixture(scope="module")
def analytics(example_assembly: Path) -> dict[str, Any]:
    return template(example_assembly, "DeliveryLogs-Ops")


class TestLogBucket:
    def test_is_encrypted_with_its_own_rotating_key_and_a_bucket_key(
        self, analytics: dict[str, Any]
    ) -> None:
        buckets = of_type(analytics, "AWS::S3::Bucket")
        bucket = next(
            b["Properties"]
            for b in buckets.values()
            if b["Properties"].get("BucketName") == f"messaging-delivery-logs-{OPS}-us-east-1"
        )
        rule = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
        assert rule["BucketKeyEnabled"] is True
        assert one(analytics, "AWS::KMS::Key")["EnableKeyRotation"] is True

    def test_blocks_public_access_refuses_acls_and_logs_access(
        self, analytics: dict[str, Any]
    ) -> None:
        for bucket in of_type(analytics, "AWS::S3::Bucket").values():
            props = bucket["Properties"]
            assert props["PublicAccessBlockConfiguration"] == {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": True,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True,
            }
            assert props["OwnershipControls"]["Rules"] == [
                {"ObjectOwnership": "BucketOwnerEnforced"}
            ]
            assert "AccessControl" not in props
        logged = [
            b
            for b in of_type(analytics, "AWS::S3::Bucket").values()
            if "LoggingConfiguration" in b["Properties"]
        ]
        assert len(logged) == 1

    def test_every_bucket_denies_requests_without_tls(self, analytics: dict[str, Any]) -> None:
        policies = of_type(analytics, "AWS::S3::BucketPolicy")
        assert len(policies) == 2
        for policy in policies.values():
            denies = [
                s
                for s in policy["Properties"]["PolicyDocument"]["Statement"]
                if s["Effect"] == "Deny"
            ]
            assert [s["Condition"] for s in denies] == [{"Bool": {"aws:SecureTransport": "false"}}]

    def test_logs_move_to_infrequent_access_and_expire_reports_outlive_them(
        self, analytics: dict[str, Any]
    ) -> None:
        bucket = next(
            b["Properties"]
            for b in of_type(analytics, "AWS::S3::Bucket").values()
            if "BucketName" in b["Properties"]
        )
        rules = {r["Id"]: r for r in bucket["LifecycleConfiguration"]["Rules"]}
        logs = rules["expire-delivery-logs"]
        assert logs["Prefix"] == "delivery-logs/"
        assert logs["ExpirationInDays"] == 400
        assert logs["Transitions"] == [{"StorageClass": "STANDARD_IA", "TransitionInDays": 30}]
        assert rules["expire-delivery-logs-errors"]["ExpirationInDays"] == 400
        assert rules["expire-reports"] == {
            "Id": "expire-reports",
            "Prefix": "reports/",
            "ExpirationInDays": 800,
            "Status": "Enabled",
        }
        assert rules["abort-incomplete-uploads"]["AbortIncompleteMultipartUpload"] == {
            "DaysAfterInitiation": 7
        }

    def test_refuses_infrequent_access_sooner_than_s3_allows(self) -> None:
        stack = Stack(App(), "Test", env=Environment(account=OPS, region="us-east-1"))
        with pytest.raises(
            ValueError, match=r"^infrequent_access_after: 7 days is too soon: S3 moves objects"
        ):
            DeliveryLogBucket(stack, "Bucket", infrequent_access_after=Duration.days(7))


class TestLogStream:
    def test_firehose_writes_raw_envelopes_under_the_day_prefix_with_the_bucket_key(
        self, analytics: dict[str, Any]
    ) -> None:
        stream = one(analytics, "AWS::KinesisFirehose::DeliveryStream")
        s3 = stream["ExtendedS3DestinationConfiguration"]
        assert s3["Prefix"] == FIREHOSE_PREFIX == "delivery-logs/!{timestamp:yyyy/MM/dd}/"
        assert s3["ErrorOutputPrefix"] == FIREHOSE_ERROR_PREFIX
        assert s3["CompressionFormat"] == "UNCOMPRESSED"
        assert "ProcessingConfiguration" not in s3
        assert "KMSEncryptionConfig" in s3["EncryptionConfiguration"]
        assert s3["CloudWatchLoggingOptions"]["Enabled"] is True
        assert stream["DeliveryStreamEncryptionConfigurationInput"] == {"KeyType": "AWS_OWNED_CMK"}

    def test_firehose_may_put_objects_only_under_the_log_prefixes(
        self, analytics: dict[str, Any]
    ) -> None:
        puts = [
            text(resource)
            for s in statements(analytics, "LogStreamFirehoseRole")
            if "s3:PutObject" in as_list(s["Action"])
            for resource in as_list(s["Resource"])
        ]
        assert sorted(p.split("/", 1)[1] for p in puts) == [
            "delivery-logs-errors/*",
            "delivery-logs/*",
        ]
        actions = {
            a for s in statements(analytics, "LogStreamFirehoseRole") for a in as_list(s["Action"])
        }
        assert not any(a.startswith("s3:Delete") or a.startswith("s3:GetObject") for a in actions)

    def test_the_destination_admits_exactly_the_accounts_with_topics(
        self, analytics: dict[str, Any]
    ) -> None:
        destination = one(analytics, "AWS::Logs::Destination")
        assert destination["DestinationName"] == "messaging-delivery-logs"
        policy = json.loads(text(destination["DestinationPolicy"]))
        (statement,) = policy["Statement"]
        assert statement["Principal"] == {"AWS": [BILLING, OPS]}
        assert statement["Action"] == "logs:PutSubscriptionFilter"
        assert statement["Resource"] == DESTINATION

    def test_cloudwatch_logs_may_use_the_destination_role_only_for_those_accounts(
        self, analytics: dict[str, Any]
    ) -> None:
        roles = of_type(analytics, "AWS::IAM::Role")
        role = next(r for k, r in roles.items() if k.startswith("LogStreamDestinationRole"))
        (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Principal"] == {"Service": "logs.amazonaws.com"}
        assert list(trust["Condition"]) == ["StringLike"]
        assert [text(a) for a in trust["Condition"]["StringLike"]["aws:SourceArn"]] == [
            f"arn:aws:logs:us-east-1:{BILLING}:*",
            f"arn:aws:logs:us-east-1:{OPS}:*",
        ]
        (allowed,) = statements(analytics, "LogStreamDestinationRole")
        assert allowed["Action"] == ["firehose:PutRecord", "firehose:PutRecordBatch"]

    def test_extracting_messages_decompresses_and_gzips_json_lines(self) -> None:
        stack = Stack(App(), "Test", env=Environment(account=OPS, region="us-east-1"))
        bucket = DeliveryLogBucket(stack, "Bucket")
        DeliveryLogStream(
            stack,
            "Stream",
            log_bucket=bucket,
            source_accounts=[BILLING],
            log_format=LogFormat.MESSAGES,
        )
        (stream,) = (
            Template.from_stack(stack)
            .find_resources("AWS::KinesisFirehose::DeliveryStream")
            .values()
        )
        s3 = stream["Properties"]["ExtendedS3DestinationConfiguration"]
        assert s3["CompressionFormat"] == "GZIP"
        assert [p["Type"] for p in s3["ProcessingConfiguration"]["Processors"]] == [
            "Decompression",
            "CloudWatchLogProcessing",
        ]

    def test_refuses_a_malformed_source_account(self) -> None:
        stack = Stack(App(), "Test", env=Environment(account=OPS, region="us-east-1"))
        with pytest.raises(ValueError, match="source_accounts: account ids are exactly 12 digits"):
            DeliveryLogStream(
                stack,
                "Stream",
                log_bucket=DeliveryLogBucket(stack, "Bucket"),
                source_accounts=["2222"],
            )


class TestSubscriptionFilters:
    def test_both_log_groups_of_each_topic_stream_to_the_ops_destination(
        self, example_assembly: Path
    ) -> None:
        billing = template(example_assembly, "Messaging-Billing")
        filters = [
            f["Properties"] for f in of_type(billing, "AWS::Logs::SubscriptionFilter").values()
        ]
        groups = of_type(billing, "AWS::Logs::LogGroup")
        names = sorted(
            text(groups[f["LogGroupName"]["Ref"]]["Properties"]["LogGroupName"]) for f in filters
        )
        assert [n.split("}/", 2)[-1] for n in names] == [
            "MyCompany-Messages-OrderBilled",
            "MyCompany-Messages-OrderBilled/Failure",
        ]
        assert {f["DestinationArn"] for f in filters} == {DESTINATION}
        assert {f["FilterPattern"] for f in filters} == {""}

    def test_accounts_without_topics_have_no_filters(self, example_assembly: Path) -> None:
        for stack in ("Messaging-Sales", "Messaging-Ops"):
            assert of_type(template(example_assembly, stack), "AWS::Logs::SubscriptionFilter") == {}

    def test_stacks_with_filters_deploy_after_the_analytics_stack(
        self, example_assembly: Path
    ) -> None:
        manifest = json.loads((example_assembly / "manifest.json").read_text())
        depends = manifest["artifacts"]["Messaging-Billing"].get("dependencies", [])
        assert "DeliveryLogs-Ops" in depends
        assert "DeliveryLogs-Ops" not in manifest["artifacts"]["Messaging-Sales"].get(
            "dependencies", []
        )


class TestReportJob:
    def test_a_spark_4_application_on_arm_that_stops_when_idle(
        self, analytics: dict[str, Any]
    ) -> None:
        application = one(analytics, "AWS::EMRServerless::Application")
        assert application["Type"] == "SPARK"
        assert application["ReleaseLabel"] == "emr-spark-8.0.0"
        assert application["Architecture"] == "ARM64"
        assert application["AutoStopConfiguration"] == {"Enabled": True, "IdleTimeoutMinutes": 15}
        assert application["MaximumCapacity"] == {"Cpu": "16 vCPU", "Memory": "64 GB"}

    def test_the_job_role_is_assumed_only_by_this_application(
        self, analytics: dict[str, Any]
    ) -> None:
        roles = of_type(analytics, "AWS::IAM::Role")
        role = next(r for k, r in roles.items() if k.startswith("ReportJobJobRole"))
        (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Principal"] == {"Service": "emr-serverless.amazonaws.com"}
        assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": OPS}
        assert trust["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::GetAtt"][1] == "Arn"

    def test_the_job_reads_logs_and_writes_only_reports(self, analytics: dict[str, Any]) -> None:
        object_writes = {
            text(resource).split("/", 1)[-1]
            for s in statements(analytics, "ReportJobJobRole")
            if any(a.startswith(("s3:PutObject", "s3:DeleteObject")) for a in as_list(s["Action"]))
            for resource in as_list(s["Resource"])
            if "/" in text(resource)
        }
        assert object_writes == {"reports/*"}
        reads = {
            text(resource)
            for s in statements(analytics, "ReportJobJobRole")
            if "s3:GetObject*" in as_list(s["Action"])
            for resource in as_list(s["Resource"])
        }
        assert any(r.endswith("/delivery-logs/*") for r in reads)
        assert not any(r.endswith("/delivery-logs-errors/*") for r in reads)

    def test_the_job_may_find_log_groups_by_their_arn_and_write_only_its_own(
        self, analytics: dict[str, Any]
    ) -> None:
        """EMR Serverless looks the application's log group up with DescribeLogGroups, which
        IAM authorizes against ``arn:aws:logs:<region>:<account>:log-group:<name>``."""
        job = statements(analytics, "ReportJobJobRole")
        (describe,) = [s for s in job if s["Action"] == "logs:DescribeLogGroups"]
        found = text(describe["Resource"])
        assert found == f"arn:aws:logs:us-east-1:{OPS}:log-group:*"
        job_logs = f"arn:aws:logs:us-east-1:{OPS}:log-group:DeliveryLogs-Ops-ReportJobJobLogs"
        assert fnmatchcase(job_logs, found)
        assert not fnmatchcase(job_logs, f"arn:aws:logs:us-east-1:{OPS}:log-group/*")
        (write,) = [s for s in job if "logs:PutLogEvents" in as_list(s["Action"])]
        assert write["Resource"]["Fn::GetAtt"][0].startswith("ReportJobJobLogs")

    def test_the_schedule_runs_daily_over_the_previous_day(self, analytics: dict[str, Any]) -> None:
        schedule = one(analytics, "AWS::Scheduler::Schedule")
        assert schedule["ScheduleExpression"] == "cron(30 0 * * ? *)"
        assert schedule["ScheduleExpressionTimezone"] == "Etc/UTC"
        target = schedule["Target"]
        assert text(target["Arn"]).endswith(":scheduler:::aws-sdk:emrserverless:startJobRun")
        request = text(target["Input"])
        assert '"--scheduled-time","<aws.scheduler.scheduled-time>"' in request
        assert '"--s3-scheme","s3"' in request
        assert '"ClientToken":"<aws.scheduler.execution-id>"' in request
        assert "--py-files s3://" in request

    def test_the_scheduler_may_pass_only_the_job_role_to_emr_serverless(
        self, analytics: dict[str, Any]
    ) -> None:
        scheduler = statements(analytics, "SchedulerRoleForTarget")
        (pass_role,) = [s for s in scheduler if s["Action"] == "iam:PassRole"]
        assert pass_role["Condition"] == {
            "StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}
        }
        assert pass_role["Resource"]["Fn::GetAtt"][0].startswith("ReportJobJobRole")
        (start,) = [s for s in scheduler if s["Action"] == "emr-serverless:StartJobRun"]
        assert start["Resource"]["Fn::GetAtt"][0].startswith("ReportJobApplication")

    def test_refuses_a_capacity_below_a_driver_and_an_executor(self) -> None:
        stack = Stack(App(), "Test", env=Environment(account=OPS, region="us-east-1"))
        with pytest.raises(ValueError, match="max_vcpus: must be a whole number from 4 to 400"):
            DeliveryReportJob(
                stack, "Job", log_bucket=DeliveryLogBucket(stack, "Bucket"), max_vcpus=2
            )

    def test_an_env_agnostic_stack_takes_the_job_and_passes_cdk_nag(self, tmp_path: Path) -> None:
        """Without an account and region the job's log-group grant names the pseudo
        parameters, and its acknowledgment names them as cdk-nag does."""
        app = App(outdir=str(tmp_path))
        stack = Stack(app, "Analytics")
        DeliveryReportJob(stack, "Job", log_bucket=DeliveryLogBucket(stack, "Bucket"))
        Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
        app.synth()  # an unacknowledged cdk-nag finding would fail it

        template = (tmp_path / "Analytics.template.json").read_text()
        assert '{"Ref":"AWS::Region"}' in template.replace(" ", "").replace("\n", "")
