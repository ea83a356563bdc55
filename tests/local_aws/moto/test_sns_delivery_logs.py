"""SNS writes delivery-status logs in the local AWS as in AWS: each SQS delivery of a topic that
logs SQS deliveries becomes a record in the topic's account, successes sampled into
``sns/<region>/<account>/<topic>``, failures into ``.../Failure``, only through a feedback role
SNS may assume, in the shape the delivery report reads. Plain moto writes no log event at all,
so every test here fails without the teaching."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import botocore.exceptions
import pytest

from cross_account_runtime.delivery_report.causes import classify, error_code
from cross_account_runtime.delivery_report.detect import Layout, detect_layout
from cross_account_runtime.delivery_report.schema import RECORD_SCHEMA
from cross_account_runtime.delivery_report.timestamps import parse_lenient
from local_aws.accounts import AccountCredentials
from local_aws.moto.delivery_status import SAMPLING_SEED, sns_deliveries
from tests.local_aws.accounts import client, fresh_account
from tests.local_aws.moto.cloudformation import deploy

pytestmark = pytest.mark.moto

REGION = "us-east-1"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
SNS_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$")


def trust(service: str = "sns.amazonaws.com", **condition: dict[str, Any]) -> dict[str, Any]:
    """A trust policy letting ``service`` assume the role, under ``condition``."""
    statement: dict[str, Any] = {
        "Effect": "Allow",
        "Principal": {"Service": service},
        "Action": "sts:AssumeRole",
    }
    if condition:
        statement["Condition"] = condition
    return {"Version": "2012-10-17", "Statement": [statement]}


@dataclass(frozen=True)
class Account:
    """One fresh account of the local AWS and its clients."""

    credentials: AccountCredentials
    endpoint_url: str

    @property
    def id(self) -> str:
        return self.credentials.account_id

    def client(self, service: str) -> Any:
        return client(self.credentials, service, self.endpoint_url)

    def role(self, name: str, policy: dict[str, Any]) -> str:
        arn: str = self.client("iam").create_role(
            RoleName=name, AssumeRolePolicyDocument=json.dumps(policy)
        )["Role"]["Arn"]
        return arn

    def logged_topic(
        self, name: str, role_arn: str, sample_rate: int = 100, *, protocol: str = "SQS"
    ) -> str:
        """A topic logging ``protocol``'s deliveries (its attributes' prefix: ``SQS``,
        ``HTTP``, ``Lambda``) through ``role_arn``, set as ``CreateTopic`` sets it."""
        arn: str = self.client("sns").create_topic(
            Name=name,
            Attributes={
                f"{protocol}SuccessFeedbackRoleArn": role_arn,
                f"{protocol}SuccessFeedbackSampleRate": str(sample_rate),
                f"{protocol}FailureFeedbackRoleArn": role_arn,
            },
        )["TopicArn"]
        return arn

    def queue(self, name: str) -> str:
        """A queue subscribed to nothing yet; returns its ARN."""
        sqs = self.client("sqs")
        url = sqs.create_queue(QueueName=name)["QueueUrl"]
        arn: str = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        return arn

    def subscribe(self, topic_arn: str, queue_arn: str) -> None:
        self.client("sns").subscribe(
            TopicArn=topic_arn,
            Protocol="sqs",
            Endpoint=queue_arn,
            Attributes={"RawMessageDelivery": "true"},
        )

    def events(self, group: str) -> list[dict[str, Any]]:
        """The group's log events (``filter-log-events``' shape), none if it does not exist."""
        logs = self.client("logs")
        try:
            pages = logs.get_paginator("filter_log_events").paginate(logGroupName=group)
            return [event for page in pages for event in page["events"]]
        except botocore.exceptions.ClientError as error:
            if error.response["Error"]["Code"] == "ResourceNotFoundException":
                return []
            raise

    def records(self, group: str) -> list[dict[str, Any]]:
        return [json.loads(event["message"]) for event in self.events(group)]

    def groups(self) -> list[str]:
        found = self.client("logs").describe_log_groups(logGroupNamePrefix="sns/")["logGroups"]
        return [group["logGroupName"] for group in found]


@pytest.fixture
def account(moto_endpoint: str) -> Account:
    return Account(fresh_account(moto_endpoint), moto_endpoint)


@pytest.fixture
def other_account(moto_endpoint: str) -> Account:
    return Account(fresh_account(moto_endpoint), moto_endpoint)


def groups_of(account: Account, topic: str) -> tuple[str, str]:
    success = f"sns/{REGION}/{account.id}/{topic}"
    return success, f"{success}/Failure"


def test_a_delivery_is_logged_in_the_topics_success_group_in_snss_shape(account: Account) -> None:
    role = account.role("PricesDeliveryStatus", trust())
    topic_arn = account.logged_topic("Prices", role)
    queue_arn = account.queue("Prices")
    account.subscribe(topic_arn, queue_arn)

    published = account.client("sns").publish(TopicArn=topic_arn, Message="billed-1")
    (received,) = account.client("sqs").receive_message(
        QueueUrl=account.client("sqs").get_queue_url(QueueName="Prices")["QueueUrl"]
    )["Messages"]

    success, failure = groups_of(account, "Prices")
    (event,) = account.events(success)
    assert UUID.match(event["logStreamName"])
    assert list(json.loads(event["message"])) == ["notification", "delivery", "status"]
    record = json.loads(event["message"])
    notification, delivery = record["notification"], record["delivery"]
    assert list(notification) == ["messageMD5Sum", "messageId", "topicArn", "timestamp"]
    assert notification["messageMD5Sum"] == hashlib.md5(b"billed-1").hexdigest()
    assert notification["messageId"] == published["MessageId"]
    assert notification["topicArn"] == topic_arn
    assert SNS_TIMESTAMP.match(notification["timestamp"])
    assert list(delivery) == [
        "deliveryId",
        "destination",
        "providerResponse",
        "dwellTimeMs",
        "attempts",
        "statusCode",
    ]
    assert UUID.match(delivery["deliveryId"])
    assert delivery["destination"] == queue_arn
    response = json.loads(delivery["providerResponse"])
    assert list(response) == ["sqsRequestId", "sqsMessageId"]
    assert response["sqsMessageId"] == received["MessageId"]
    assert isinstance(delivery["dwellTimeMs"], int)
    assert delivery["dwellTimeMs"] >= 0
    assert (delivery["attempts"], delivery["statusCode"]) == (1, 200)
    assert record["status"] == "SUCCESS"
    assert account.events(failure) == []

    attributes = account.client("sns").get_topic_attributes(TopicArn=topic_arn)["Attributes"]
    assert {k: v for k, v in attributes.items() if "Feedback" in k} == {
        "SQSSuccessFeedbackRoleArn": role,
        "SQSSuccessFeedbackSampleRate": "100",
        "SQSFailureFeedbackRoleArn": role,
    }


def test_a_delivery_to_a_missing_queue_is_logged_in_the_failure_group(account: Account) -> None:
    # A success sample rate of 0 logs no success; failures are always logged.
    topic_arn = account.logged_topic("Prices", account.role("Feedback", trust()), sample_rate=0)
    missing = f"arn:aws:sqs:{REGION}:{account.id}:Gone"
    account.subscribe(topic_arn, missing)

    # moto fails the publish when the queue is missing (SNS would accept it): kept as it is.
    with pytest.raises(botocore.exceptions.ClientError, match="queue does not exist"):
        account.client("sns").publish(TopicArn=topic_arn, Message="lost")

    success, failure = groups_of(account, "Prices")
    (record,) = account.records(failure)
    assert record["status"] == "FAILURE"
    assert record["delivery"]["destination"] == missing
    assert (record["delivery"]["attempts"], record["delivery"]["statusCode"]) == (1, 400)
    assert json.loads(record["delivery"]["providerResponse"]) == {
        "ErrorCode": "AWS.SimpleQueueService.NonExistentQueue",
        "ErrorMessage": "The specified queue does not exist.",
        "sqsRequestId": "Unrecoverable",
    }
    assert account.events(success) == []


def test_the_ledger_counts_every_delivery_sns_made_logged_or_not(account: Account) -> None:
    # Sample rate 0 logs no success, and a topic without a feedback role logs nothing: the
    # ledger, SNS's own record of what it did, counts them all the same.
    role = account.role("Feedback", trust())
    quiet = account.logged_topic("Quiet", role, sample_rate=0)
    lost = account.logged_topic("Lost", role, sample_rate=0)
    silent: str = account.client("sns").create_topic(Name="Silent")["TopicArn"]
    for topic_arn in (quiet, silent):
        account.subscribe(topic_arn, account.queue(topic_arn.rsplit(":", 1)[-1]))
        for number in range(3):
            account.client("sns").publish(TopicArn=topic_arn, Message=f"m-{number}")
    missing = f"arn:aws:sqs:{REGION}:{account.id}:Gone"
    account.subscribe(lost, missing)
    with pytest.raises(botocore.exceptions.ClientError, match="queue does not exist"):
        account.client("sns").publish(TopicArn=lost, Message="lost")

    ledger = [
        r for r in sns_deliveries(account.endpoint_url) if r["topic"].split(":")[4] == account.id
    ]
    rows = {
        (row["topic"].rsplit(":", 1)[-1], row["destination"].rsplit(":", 1)[-1]): (
            row["protocol"],
            row["deliveries"],
            row["attempts"],
            row["successes"],
            row["failures"],
        )
        for row in ledger
    }
    assert rows == {
        ("Quiet", "Quiet"): ("sqs", 3, 3, 3, 0),
        ("Lost", "Gone"): ("sqs", 1, 1, 0, 1),
        ("Silent", "Silent"): ("sqs", 3, 3, 3, 0),
    }
    # Each row names its subscription, whose ARN is the topic's followed by its id.
    assert all(row["subscription"].startswith(row["topic"] + ":") for row in ledger)


def test_sample_rate_100_logs_every_success_and_0_none(account: Account) -> None:
    role = account.role("Feedback", trust())
    for name, rate in (("Everything", 100), ("Nothing", 0)):
        topic_arn = account.logged_topic(name, role, sample_rate=rate)
        account.subscribe(topic_arn, account.queue(name))
        for number in range(5):
            account.client("sns").publish(TopicArn=topic_arn, Message=f"{name}-{number}")

    assert len(account.records(groups_of(account, "Everything")[0])) == 5
    assert account.events(groups_of(account, "Nothing")[0]) == []
    assert account.groups() == [groups_of(account, "Everything")[0]]


def publish_numbered(account: Account, topic_arn: str, count: int) -> dict[str, int]:
    """Publish ``m0``...: the messages' MD5 sums and their numbers, in batches of ten."""
    sns = account.client("sns")
    for start in range(0, count, 10):
        sns.publish_batch(
            TopicArn=topic_arn,
            PublishBatchRequestEntries=[
                {"Id": str(n), "Message": f"m{n}"} for n in range(start, min(count, start + 10))
            ],
        )
    return {hashlib.md5(f"m{n}".encode()).hexdigest(): n for n in range(count)}


def test_a_partial_sample_rate_logs_the_same_deliveries_in_every_run(
    account: Account, other_account: Account
) -> None:
    published, rate = 40, 30
    expected_draws = random.Random(f"{SAMPLING_SEED}:Sampled")
    expected = [n for n in range(published) if expected_draws.random() * 100 < rate]

    logged: list[list[int]] = []
    for owner in (account, other_account):
        topic_arn = owner.logged_topic("Sampled", owner.role("Feedback", trust()), rate)
        owner.subscribe(topic_arn, owner.queue("Sampled"))
        numbers = publish_numbered(owner, topic_arn, published)
        records = owner.records(groups_of(owner, "Sampled")[0])
        logged.append(sorted(numbers[r["notification"]["messageMD5Sum"]] for r in records))

    assert logged == [expected, expected]
    assert 0 < len(expected) < published


def test_no_logs_without_a_role_sns_may_assume(account: Account, other_account: Account) -> None:
    roles = {
        "Missing": f"arn:aws:iam::{account.id}:role/Missing",
        "TrustsLambda": account.role("ForLambda", trust("lambda.amazonaws.com")),
        "TrustsAnotherTopic": account.role(
            "ForOtherTopic",
            trust(
                StringEquals={"aws:SourceAccount": account.id},
                ArnLike={"aws:SourceArn": f"arn:aws:sns:{REGION}:{account.id}:Other"},
            ),
        ),
        "InAnotherAccount": other_account.role("Feedback", trust()),
        # The control: a role SNS may assume, trusted for this topic alone.
        "Logged": account.role(
            "Feedback",
            trust(ArnLike={"aws:SourceArn": f"arn:aws:sns:{REGION}:{account.id}:Logged"}),
        ),
    }
    sqs = account.client("sqs")
    for name, role in roles.items():
        topic_arn = account.logged_topic(name, role)
        account.subscribe(topic_arn, account.queue(name))
        account.client("sns").publish(TopicArn=topic_arn, Message=name)
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        assert [m["Body"] for m in sqs.receive_message(QueueUrl=url)["Messages"]] == [name]

    assert len(account.records(groups_of(account, "Logged")[0])) == 1
    assert account.groups() == [groups_of(account, "Logged")[0]]


def publisher_template(topic: str, retention_days: int) -> dict[str, Any]:
    """What ``DeliveryLoggedTopic`` synthesizes, in short: a feedback role trusting SNS for this
    topic only, the success group with its retention, the topic logging SQS deliveries."""
    topic_arn = {
        "Fn::Sub": f"arn:${{AWS::Partition}}:sns:${{AWS::Region}}:${{AWS::AccountId}}:{topic}"
    }
    role_arn = {"Fn::GetAtt": ["DeliveryStatusRole", "Arn"]}
    return {
        "Resources": {
            "DeliveryStatusRole": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": trust(
                        StringEquals={"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                        ArnLike={"aws:SourceArn": topic_arn},
                    )
                },
            },
            "SuccessLogs": {
                "Type": "AWS::Logs::LogGroup",
                "Properties": {
                    "LogGroupName": {
                        "Fn::Sub": f"sns/${{AWS::Region}}/${{AWS::AccountId}}/{topic}"
                    },
                    "RetentionInDays": retention_days,
                },
            },
            "Topic": {
                "Type": "AWS::SNS::Topic",
                "Properties": {
                    "TopicName": topic,
                    "DeliveryStatusLogging": [
                        {
                            "Protocol": "sqs",
                            "SuccessFeedbackRoleArn": role_arn,
                            "SuccessFeedbackSampleRate": "100",
                            "FailureFeedbackRoleArn": role_arn,
                        }
                    ],
                },
            },
        },
        "Outputs": {"Topic": {"Value": {"Ref": "Topic"}}},
    }


def subscriber_template(topic_arn: str, queue: str) -> dict[str, Any]:
    """The queue owner's stack: its queue, subscribed to the other account's topic."""
    return {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": queue}},
            "Subscription": {
                "Type": "AWS::SNS::Subscription",
                "Properties": {
                    "Protocol": "sqs",
                    "TopicArn": topic_arn,
                    "Endpoint": {"Fn::GetAtt": ["Queue", "Arn"]},
                    "RawMessageDelivery": True,
                    "Region": REGION,
                },
            },
        }
    }


def test_a_cross_account_subscribers_deliveries_are_logged_in_the_topics_account(
    account: Account, other_account: Account
) -> None:
    publisher, subscriber = account, other_account
    out = deploy(
        publisher.credentials,
        publisher.endpoint_url,
        "Publisher",
        publisher_template("OrderBilled", 90),
    )
    topic_arn = out["Topic"]
    deploy(
        subscriber.credentials,
        subscriber.endpoint_url,
        "Subscriber",
        subscriber_template(topic_arn, "Sales"),
    )

    publisher.client("sns").publish(TopicArn=topic_arn, Message="billed")

    success, _ = groups_of(publisher, "OrderBilled")
    (record,) = publisher.records(success)
    assert record["status"] == "SUCCESS"
    assert record["notification"]["topicArn"] == topic_arn
    assert record["delivery"]["destination"] == f"arn:aws:sqs:{REGION}:{subscriber.id}:Sales"
    assert subscriber.groups() == []
    (group,) = publisher.client("logs").describe_log_groups(logGroupNamePrefix=success)["logGroups"]
    assert group["retentionInDays"] == 90  # the stack's group, written into, not replaced
    attributes = publisher.client("sns").get_topic_attributes(TopicArn=topic_arn)["Attributes"]
    role = attributes["SQSSuccessFeedbackRoleArn"]
    assert role.startswith(f"arn:aws:iam::{publisher.id}:role/")
    assert (
        attributes["SQSSuccessFeedbackSampleRate"],
        attributes["SQSFailureFeedbackRoleArn"],
    ) == (
        "100",
        role,
    )


def schema_fields(schema: Any) -> Iterator[tuple[str, ...]]:
    """Every field path the report's record schema declares (``("delivery", "statusCode")``)."""
    for field in schema.fields:
        yield (field.name,)
        for inner in getattr(field.dataType, "fields", []):
            yield (field.name, inner.name)


def record_fields(record: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    for name, value in record.items():
        yield (name,)
        if isinstance(value, dict):
            yield from ((name, inner) for inner in value)


def test_the_records_read_as_the_delivery_report_reads_them(account: Account) -> None:
    """The report's own rules, without Spark: the layout a ``filter-log-events`` page is read
    as, the schema's fields, its timestamp parsing, failure causes and error codes."""
    topic_arn = account.logged_topic("Prices", account.role("Feedback", trust()))
    account.subscribe(topic_arn, account.queue("Prices"))
    account.subscribe(topic_arn, f"arn:aws:sqs:{REGION}:{account.id}:Gone")
    with pytest.raises(botocore.exceptions.ClientError):
        account.client("sns").publish(TopicArn=topic_arn, Message="billed")

    declared = set(schema_fields(RECORD_SCHEMA))
    outcomes = []
    for group in groups_of(account, "Prices"):
        events = account.events(group)
        assert detect_layout(json.dumps({"events": events})) is Layout.FILTER_LOG_EVENTS
        for event in events:
            record = json.loads(event["message"])
            assert set(record_fields(record)) <= declared
            delivery = record["delivery"]
            assert parse_lenient(record["notification"]["timestamp"]) is not None
            assert all(int(delivery[n]) >= 0 for n in ("dwellTimeMs", "attempts", "statusCode"))
            status, response = record["status"], delivery["providerResponse"]
            outcomes.append(
                (
                    group.endswith("/Failure"),
                    status,
                    classify(status, "sqs", delivery["statusCode"], response),
                    error_code(status, response),
                )
            )

    assert sorted(outcomes) == [
        (False, "SUCCESS", None, None),
        (True, "FAILURE", "endpoint_missing", "AWS.SimpleQueueService.NonExistentQueue"),
    ]
