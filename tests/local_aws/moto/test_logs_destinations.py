"""The deployed export pipeline carries the delivery logs in the local AWS as in AWS: a record
SNS writes into a topic account's log group travels through the stack's subscription filter to
the analytics account's CloudWatch Logs destination, its Firehose stream and into the analytics
bucket, under the prefix the report job reads, buffered and compressed as deployed.

The templates are the constructs' own (``DeliveryLogStream``, ``DeliveryLoggedTopic``), synthesized
once with placeholder accounts that each test replaces with fresh ones. Plain moto skips the
destination and the filters in templates, and its Firehose writes under the prefix taken
literally, so every test here fails without ``local_aws.moto.logs_destinations`` and
``local_aws.moto.firehose_s3``. :func:`broken_link` says which link lost a record; each
``test_link_*`` breaks one link in a template and checks that it is the one named.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import botocore.exceptions
import pytest
from aws_cdk import App, Environment, Stack

from constructs_lib import DeliveryLogBucket, DeliveryLoggedTopic, DeliveryLogStream
from constructs_lib.defaults import FIREHOSE_BUFFERING_INTERVAL
from constructs_lib.delivery_log_stream import LogFormat
from constructs_lib.delivery_logged_topic.topic_base import DeliveryProtocol
from cross_account_runtime.delivery_report.bucket_paths import (
    FIREHOSE_PREFIX,
    LOG_PREFIX,
    bucket_name,
    day_prefix,
)
from cross_account_runtime.delivery_report.detect import Layout, detect_layout
from cross_account_runtime.delivery_report.gunzip import gunzip_members
from local_aws.accounts import AccountCredentials
from local_aws.moto.firehose_s3 import age_firehose_buffers
from tests.local_aws.accounts import REGION, client, fresh_account

pytestmark = pytest.mark.moto

TOPIC_ACCOUNT = "111111111111"
ANALYTICS_ACCOUNT = "333333333333"
TOPIC = "Prices"
INTERVAL = int(FIREHOSE_BUFFERING_INTERVAL.to_seconds())

SNS_GROUP = "the SNS log group → its subscription filter"
FILTER = "the subscription filter → the destination (its policy)"
DESTINATION = "the destination → its Firehose stream → S3"
PREFIX = "Firehose → the report job's prefix"

Template = dict[str, Any]


@pytest.fixture(scope="module")
def templates() -> dict[str, str]:
    """The analytics stack (envelopes and messages) and the topic's stack, as JSON text."""
    app = App()
    env = Environment(account=ANALYTICS_ACCOUNT, region=REGION)
    for name, log_format in (("Analytics", LogFormat.ENVELOPES), ("Messages", LogFormat.MESSAGES)):
        stack = Stack(app, name, env=env)
        logs = DeliveryLogBucket(stack, "Logs", bucket_name=bucket_name(ANALYTICS_ACCOUNT, REGION))
        stream = DeliveryLogStream(
            stack, "Stream", log_bucket=logs, source_accounts=[TOPIC_ACCOUNT], log_format=log_format
        )
    topics = Stack(app, "Topics", env=Environment(account=TOPIC_ACCOUNT, region=REGION))
    topic = DeliveryLoggedTopic(
        topics, "Topic", topic_name=TOPIC, logged_protocols=[DeliveryProtocol.SQS]
    )
    topic.stream_logs_to(stream.destination_arn)
    assembly = app.synth()
    # Deployed without bootstrapping: the bootstrap version's parameter and rule go.
    return {
        s.stack_name: json.dumps(
            {k: v for k, v in s.template.items() if k not in ("Parameters", "Rules")}
        )
        for s in assembly.stacks
    }


@dataclass(frozen=True)
class Account:
    credentials: AccountCredentials
    endpoint_url: str

    @property
    def id(self) -> str:
        return self.credentials.account_id

    def client(self, service: str) -> Any:
        return client(self.credentials, service, self.endpoint_url)


@dataclass(frozen=True)
class Pipeline:
    """The two accounts, deployed, and what SNS writes to."""

    topic: Account
    analytics: Account
    topic_stack_error: str | None

    @property
    def groups(self) -> tuple[str, str]:
        success = f"sns/{REGION}/{self.topic.id}/{TOPIC}"
        return success, success + "/Failure"

    @property
    def bucket(self) -> str:
        return bucket_name(self.analytics.id, REGION)

    def publish(self, *messages: str) -> None:
        """Publish to the topic, whose one SQS subscriber SNS logs the delivery of."""
        sns, sqs = self.topic.client("sns"), self.topic.client("sqs")
        topic_arn = f"arn:aws:sns:{REGION}:{self.topic.id}:{TOPIC}"
        url = sqs.create_queue(QueueName="Subscriber")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn)
        for message in messages:
            sns.publish(TopicArn=topic_arn, Message=message)

    def sns_records(self) -> list[str]:
        events = self.topic.client("logs").filter_log_events(logGroupName=self.groups[0])["events"]
        return [str(e["message"]) for e in events]

    def objects(self, prefix: str = "") -> dict[str, bytes]:
        s3 = self.analytics.client("s3")
        listed = s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix).get("Contents", [])
        return {
            o["Key"]: s3.get_object(Bucket=self.bucket, Key=o["Key"])["Body"].read() for o in listed
        }


def deploy(
    endpoint_url: str,
    templates: dict[str, str],
    *,
    analytics: str = "Analytics",
    edit_analytics: Callable[[Template], None] = lambda _t: None,
    edit_topic: Callable[[Template], None] = lambda _t: None,
) -> Pipeline:
    """Both stacks in fresh accounts, the analytics one first; the topic stack's failure, if
    any, kept (as its stack events tell it)."""
    topic = Account(fresh_account(endpoint_url), endpoint_url)
    analytics_account = Account(fresh_account(endpoint_url), endpoint_url)

    def text(name: str) -> Template:
        replaced = (
            templates[name]
            .replace(TOPIC_ACCOUNT, topic.id)
            .replace(ANALYTICS_ACCOUNT, analytics_account.id)
        )
        template: Template = json.loads(replaced)
        return template

    analytics_template = text(analytics)
    edit_analytics(analytics_template)
    create(analytics_account, "Analytics", analytics_template)
    topic_template = text("Topics")
    edit_topic(topic_template)
    error = create(topic, "Topics", topic_template)
    return Pipeline(topic, analytics_account, error)


def create(account: Account, name: str, template: Template) -> str | None:
    """Create the stack; None once complete, else why it failed."""
    cloudformation = account.client("cloudformation")
    try:
        cloudformation.create_stack(
            StackName=name,
            TemplateBody=json.dumps(template),
            Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"],
        )
    except botocore.exceptions.ClientError as error:
        return str(error)
    (stack,) = cloudformation.describe_stacks(StackName=name)["Stacks"]
    if stack["StackStatus"] == "CREATE_COMPLETE":
        return None
    return str(stack.get("StackStatusReason", stack["StackStatus"]))


def resource(template: Template, kind: str, where: Callable[[str], bool]) -> Template:
    """The template's one resource of type ``kind`` whose logical id ``where`` accepts."""
    found: Template
    (found,) = [
        r
        for logical_id, r in template["Resources"].items()
        if r["Type"] == kind and where(logical_id)
    ]
    return found


def envelopes(data: bytes) -> list[dict[str, Any]]:
    """The envelopes of an object Firehose wrote uncompressed: one gzip member each."""
    text, error = gunzip_members(data)
    assert error is None
    decoder, found, position = json.JSONDecoder(), [], 0
    while position < len(text):
        document, position = decoder.raw_decode(text.decode(), position)
        found.append(document)
    return found


def broken_link(pipeline: Pipeline, records: list[str]) -> str | None:
    """Which link lost SNS's ``records`` on their way to the report job's prefix (None: every
    record arrived, each once)."""
    if pipeline.topic_stack_error is not None:
        return f"{FILTER}: {pipeline.topic_stack_error}"
    success_group = pipeline.groups[0]
    filters = pipeline.topic.client("logs").describe_subscription_filters(
        logGroupName=success_group
    )["subscriptionFilters"]
    if not filters:
        return f"{SNS_GROUP}: no filter on {success_group}, the group SNS writes to"
    everywhere = [
        e["message"]
        for data in pipeline.objects().values()
        for envelope in envelopes(data)
        for e in envelope["logEvents"]
    ]
    if sorted(everywhere) != sorted(records):
        return f"{DESTINATION}: {len(everywhere)} of {len(records)} records in the bucket"
    today = datetime.now(UTC).date()
    under_prefix = [
        e["message"]
        for day in {today, datetime.fromtimestamp(time.time() - INTERVAL, UTC).date()}
        for data in pipeline.objects(day_prefix(day)).values()
        for envelope in envelopes(data)
        for e in envelope["logEvents"]
    ]
    if sorted(under_prefix) != sorted(records):
        return f"{PREFIX}: objects at {sorted(pipeline.objects())}, not under {LOG_PREFIX}"
    return None


def test_a_delivery_status_record_reaches_the_report_jobs_prefix_as_deployed(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    pipeline = deploy(moto_endpoint, templates)
    pipeline.publish("billed-1", "billed-2")
    records = pipeline.sns_records()
    assert len(records) == 2

    # Firehose buffers for the deployed interval: nothing is written before it has passed.
    assert pipeline.objects() == {}
    age_firehose_buffers(moto_endpoint, INTERVAL - 10)
    assert pipeline.objects() == {}
    age_firehose_buffers(moto_endpoint, 10)

    assert broken_link(pipeline, records) is None
    ((key, data),) = pipeline.objects().items()
    stream = resource(
        json.loads(templates["Analytics"]), "AWS::KinesisFirehose::DeliveryStream", bool
    )
    assert stream["Properties"]["ExtendedS3DestinationConfiguration"]["Prefix"] == FIREHOSE_PREFIX
    day = key.removeprefix(LOG_PREFIX)[:10]
    name = key.rsplit("/", 1)[1]
    assert key == f"{LOG_PREFIX}{day}/{name}"
    assert name.endswith(".gz")
    assert detect_layout(gunzip_members(data)[0].decode()) is Layout.FIREHOSE
    # CloudWatch Logs sends each batch SNS put as one envelope from the topic's account.
    (filter_name,) = [
        f["filterName"]
        for f in pipeline.topic.client("logs").describe_subscription_filters(
            logGroupName=pipeline.groups[0]
        )["subscriptionFilters"]
    ]
    found = envelopes(data)
    assert len(found) == 2
    for envelope in found:
        assert list(envelope) == [
            "messageType",
            "owner",
            "logGroup",
            "logStream",
            "subscriptionFilters",
            "logEvents",
        ]
        assert envelope["messageType"] == "DATA_MESSAGE"
        assert envelope["owner"] == pipeline.topic.id
        assert envelope["logGroup"] == pipeline.groups[0]
        assert envelope["subscriptionFilters"] == [filter_name]
        (event,) = envelope["logEvents"]
        assert list(event) == ["id", "timestamp", "message"]


def test_extracted_messages_are_written_gzip_compressed_one_per_line(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    pipeline = deploy(moto_endpoint, templates, analytics="Messages")
    pipeline.publish("billed-1")
    age_firehose_buffers(moto_endpoint, INTERVAL)

    ((key, data),) = pipeline.objects(LOG_PREFIX).items()
    assert key.endswith(".jsonl.gz")
    assert gzip.decompress(data).decode().splitlines() == pipeline.sns_records()


def test_link_the_log_group_a_character_off_loses_every_record(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    def one_character_off(template: Template) -> None:
        group = resource(
            template, "AWS::Logs::LogGroup", lambda i: i.startswith("TopicSuccessLogs")
        )
        parts = group["Properties"]["LogGroupName"]["Fn::Join"][1]
        parts[-1] = parts[-1][:-1]  # "/Prices" -> "/Price"

    pipeline = deploy(moto_endpoint, templates, edit_topic=one_character_off)
    pipeline.publish("billed-1")
    age_firehose_buffers(moto_endpoint, INTERVAL)

    assert pipeline.objects() == {}
    assert (broken_link(pipeline, pipeline.sns_records()) or "").startswith(SNS_GROUP)


def test_link_a_filter_on_the_wrong_group_loses_every_record(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    def on_the_failure_group(template: Template) -> None:
        success_filter = resource(
            template,
            "AWS::Logs::SubscriptionFilter",
            lambda i: i.startswith("TopicSuccessLogsStreamToAnalytics"),
        )
        failure_group = next(
            i
            for i in template["Resources"]
            if i.startswith("TopicFailureLogs") and "Stream" not in i
        )
        success_filter["Properties"]["LogGroupName"] = {"Ref": failure_group}
        success_filter["Properties"]["FilterName"] = "OnTheWrongGroup"

    pipeline = deploy(moto_endpoint, templates, edit_topic=on_the_failure_group)
    pipeline.publish("billed-1")
    age_firehose_buffers(moto_endpoint, INTERVAL)

    assert pipeline.objects() == {}
    assert (broken_link(pipeline, pipeline.sns_records()) or "").startswith(SNS_GROUP)


def test_link_a_destination_policy_without_the_topic_account_refuses_the_filter(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    def without_the_topic_account(template: Template) -> None:
        destination = resource(template, "AWS::Logs::Destination", bool)
        parts = destination["Properties"]["DestinationPolicy"]["Fn::Join"][1]
        parts[0] = parts[0].replace(f'"{TOPIC_ACCOUNT}", ', "")

    def drop_topic_account_from(templates_text: dict[str, str]) -> dict[str, str]:
        # Edited before the placeholder is replaced, so the policy's list loses it.
        template: Template = json.loads(templates_text["Analytics"])
        without_the_topic_account(template)
        return {**templates_text, "Analytics": json.dumps(template)}

    pipeline = deploy(moto_endpoint, drop_topic_account_from(templates))

    assert pipeline.topic_stack_error is not None
    assert "AccessDenied" in pipeline.topic_stack_error
    assert "logs:PutSubscriptionFilter" in pipeline.topic_stack_error
    assert (broken_link(pipeline, []) or "").startswith(FILTER)


def test_link_a_firehose_prefix_other_than_the_report_jobs_is_named(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    def another_prefix(template: Template) -> None:
        stream = resource(template, "AWS::KinesisFirehose::DeliveryStream", bool)
        stream["Properties"]["ExtendedS3DestinationConfiguration"]["Prefix"] = (
            "delivery-log/!{timestamp:yyyy/MM/dd}/"
        )

    pipeline = deploy(moto_endpoint, templates, edit_analytics=another_prefix)
    pipeline.publish("billed-1")
    age_firehose_buffers(moto_endpoint, INTERVAL)

    assert pipeline.objects(LOG_PREFIX) == {}
    assert pipeline.objects("delivery-log/") != {}
    assert (broken_link(pipeline, pipeline.sns_records()) or "").startswith(PREFIX)


def test_a_filter_pattern_selects_the_events_it_matches(
    moto_endpoint: str, templates: dict[str, str]
) -> None:
    def failures_only(template: Template) -> None:
        for logical_id, r in template["Resources"].items():
            if r["Type"] == "AWS::Logs::SubscriptionFilter" and logical_id.startswith(
                "TopicSuccessLogs"
            ):
                r["Properties"]["FilterPattern"] = '{ $.status = "FAILURE" }'

    pipeline = deploy(moto_endpoint, templates, edit_topic=failures_only)
    logs = pipeline.topic.client("logs")
    logs.create_log_stream(logGroupName=pipeline.groups[0], logStreamName="s")
    now = int(time.time() * 1000)
    logs.put_log_events(
        logGroupName=pipeline.groups[0],
        logStreamName="s",
        logEvents=[
            {"timestamp": now, "message": json.dumps({"status": "SUCCESS"})},
            {"timestamp": now, "message": json.dumps({"status": "FAILURE"})},
        ],
    )
    age_firehose_buffers(moto_endpoint, INTERVAL)

    ((_, data),) = pipeline.objects(LOG_PREFIX).items()
    (envelope,) = envelopes(data)
    assert [json.loads(e["message"]) for e in envelope["logEvents"]] == [{"status": "FAILURE"}]
    with pytest.raises(botocore.exceptions.ClientError, match="Invalid filter pattern"):
        logs.put_subscription_filter(
            logGroupName=pipeline.groups[1],
            filterName="Unread",
            filterPattern="[ip, user]",
            destinationArn=f"arn:aws:logs:{REGION}:{pipeline.analytics.id}:destination:x",
        )
