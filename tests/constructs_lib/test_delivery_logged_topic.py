"""DeliveryLoggedTopic, its subscriptions and the alarms: every policy statement and setting."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from constructs_lib import (
    CrossAccountQueueSubscription,
    DeliveryLoggedTopic,
    DeliveryProtocol,
    EndpointQueue,
    FilterPolicyScope,
    HttpDeliveryPolicy,
)

BILLING = "222222222222"
SALES = "111111111111"
TOPIC_ARN = f"arn:aws:sns:us-east-1:{BILLING}:OrderBilled"


def synth(build: Callable[[Stack], object], account: str = BILLING) -> Template:
    app = App(context={"@aws-cdk/aws-sns-subscriptions:restrictSqsDescryption": True})
    stack = Stack(app, "Test", env=Environment(account=account, region="us-east-1"))
    build(stack)
    return Template.from_stack(stack)


def resources(template: Template, kind: str) -> list[dict[str, Any]]:
    return [dict(r) for r in template.find_resources(kind).values()]


def build_topic(stack: Stack) -> None:
    topic = DeliveryLoggedTopic(
        stack,
        "OrderBilled",
        topic_name="OrderBilled",
        publisher_accounts=[SALES],
        subscriber_accounts=[SALES],
        success_sample_rate=25,
    )
    local = EndpointQueue(stack, "Audit", endpoint_name="Audit")
    topic.add_queue_subscription("Audit", local, filter_policy={"kind": ["billed"]})
    topic.add_url_subscription(
        "Partner",
        "https://partner.example.com/hook",
        delivery_policy=HttpDeliveryPolicy(num_retries=5, min_delay_target=5, max_delay_target=40),
    )
    topic.add_lambda_subscription(
        "Fn",
        lambda_.Function.from_function_arn(
            stack, "F", f"arn:aws:lambda:us-east-1:{BILLING}:function:react"
        ),
    )


@pytest.fixture(scope="module")
def topic() -> Template:
    return synth(build_topic)


def test_the_topic_is_encrypted_with_a_rotated_customer_managed_key(topic: Template) -> None:
    (resource,) = resources(topic, "AWS::SNS::Topic")
    assert resource["Properties"]["TopicName"] == "OrderBilled"
    assert "Fn::GetAtt" in resource["Properties"]["KmsMasterKeyId"]
    keys = resources(topic, "AWS::KMS::Key")
    assert all(k["Properties"]["EnableKeyRotation"] for k in keys)


def test_delivery_status_is_logged_for_every_subscribed_protocol(topic: Template) -> None:
    (resource,) = resources(topic, "AWS::SNS::Topic")
    logging = resource["Properties"]["DeliveryStatusLogging"]
    assert sorted(c["Protocol"] for c in logging) == ["http/s", "lambda", "sqs"]
    for config in logging:
        assert config["SuccessFeedbackSampleRate"] == "25"
        assert config["SuccessFeedbackRoleArn"] == config["FailureFeedbackRoleArn"]


def test_all_five_protocols_on_request() -> None:
    template = synth(
        lambda s: DeliveryLoggedTopic(
            s, "T", topic_name="Everything", logged_protocols=list(DeliveryProtocol)
        )
    )
    (resource,) = resources(template, "AWS::SNS::Topic")
    protocols = sorted(c["Protocol"] for c in resource["Properties"]["DeliveryStatusLogging"])
    assert protocols == ["application", "firehose", "http/s", "lambda", "sqs"]


def test_the_log_groups_exist_first_with_retention_and_are_retained(topic: Template) -> None:
    groups = resources(topic, "AWS::Logs::LogGroup")
    names = sorted(json.dumps(g["Properties"]["LogGroupName"]) for g in groups)
    assert len(groups) == 2
    assert all(g["Properties"]["RetentionInDays"] == 90 for g in groups)
    assert all(g["DeletionPolicy"] == "Retain" for g in groups)
    assert "OrderBilled/Failure" in names[0] + names[1]


def test_the_feedback_role_trusts_sns_only_for_this_topic(topic: Template) -> None:
    (role,) = resources(topic, "AWS::IAM::Role")
    (statement,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "sns.amazonaws.com"}
    assert statement["Condition"]["StringEquals"] == {"aws:SourceAccount": BILLING}
    assert statement["Condition"]["ArnLike"]["aws:SourceArn"] == {
        "Fn::Join": [
            "",
            ["arn:", {"Ref": "AWS::Partition"}, f":sns:us-east-1:{BILLING}:OrderBilled"],
        ]
    }


def test_the_feedback_role_writes_only_to_the_topics_log_groups(topic: Template) -> None:
    (policy,) = [
        p for p in resources(topic, "AWS::IAM::Policy") if "DeliveryStatus" in json.dumps(p)
    ]
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert sorted(statement["Action"]) == [
        "logs:CreateLogGroup",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
    ]
    resources_json = json.dumps(statement["Resource"])
    assert resources_json.count("Fn::GetAtt") == 2
    assert "SuccessLogs" in resources_json
    assert "FailureLogs" in resources_json


def topic_statements(template: Template) -> list[dict[str, Any]]:
    (policy,) = resources(template, "AWS::SNS::TopicPolicy")
    return list(policy["Properties"]["PolicyDocument"]["Statement"])


def test_every_request_on_the_topic_needs_tls(topic: Template) -> None:
    denies = [s for s in topic_statements(topic) if s["Effect"] == "Deny"]
    assert len(denies) == 1
    assert denies[0]["Action"] == "sns:*"
    assert denies[0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_declared_accounts_may_publish_and_subscribe_only_their_queues(topic: Template) -> None:
    allows = {s["Sid"]: s for s in topic_statements(topic) if s["Effect"] == "Allow"}
    assert set(allows) == {"AllowPublishAccounts", f"AllowSubscribeQueuesOf{SALES}"}
    assert allows["AllowPublishAccounts"]["Action"] == "sns:Publish"
    assert allows["AllowPublishAccounts"]["Principal"] == {"AWS": "*"}
    assert allows["AllowPublishAccounts"]["Condition"] == {
        "StringEquals": {"aws:PrincipalAccount": [SALES]}
    }
    subscribe = allows[f"AllowSubscribeQueuesOf{SALES}"]
    assert subscribe["Action"] == "sns:Subscribe"
    assert subscribe["Condition"]["StringEquals"] == {"sns:Protocol": "sqs"}
    assert subscribe["Condition"]["StringLike"]["sns:Endpoint"] == {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":sqs:*:{SALES}:*"]]
    }


def test_publishers_may_use_the_topic_key_only_through_sns(topic: Template) -> None:
    statements = [
        s
        for k in resources(topic, "AWS::KMS::Key")
        for s in k["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Sid", "").startswith("AllowPublishersThroughSns")
    ]
    (statement,) = statements
    via = statement["Condition"]["StringEquals"]["kms:ViaService"]
    assert "sns." in json.dumps(via)


def subscriptions_by_protocol(template: Template) -> dict[str, dict[str, Any]]:
    return {
        s["Properties"]["Protocol"]: s["Properties"]
        for s in resources(template, "AWS::SNS::Subscription")
    }


def test_every_subscription_has_its_own_dlq(topic: Template) -> None:
    subscriptions = subscriptions_by_protocol(topic)
    assert set(subscriptions) == {"sqs", "https", "lambda"}
    queue_names = {q["Properties"].get("QueueName") for q in resources(topic, "AWS::SQS::Queue")}
    assert {
        "OrderBilled-Audit-dlq",
        "OrderBilled-Partner-dlq",
        "OrderBilled-Fn-dlq",
    } <= queue_names
    for subscription in subscriptions.values():
        assert "deadLetterTargetArn" in subscription["RedrivePolicy"]


def test_queue_subscriptions_are_raw_and_filtered(topic: Template) -> None:
    sqs = subscriptions_by_protocol(topic)["sqs"]
    assert sqs["RawMessageDelivery"] is True
    assert sqs["FilterPolicy"] == {"kind": ["billed"]}


def test_a_policy_on_the_message_body_says_so_and_one_on_attributes_keeps_snss_default() -> None:
    def build(stack: Stack) -> None:
        topic = DeliveryLoggedTopic(stack, "T", topic_name="OrderBilled")
        body = EndpointQueue(stack, "Body", endpoint_name="Body")
        plain = EndpointQueue(stack, "Plain", endpoint_name="Plain")
        topic.add_queue_subscription(
            "Body",
            body,
            filter_policy={"order": {"total": [{"numeric": [">", 100]}]}},
            filter_policy_scope=FilterPolicyScope.MESSAGE_BODY,
        )
        topic.add_queue_subscription("Plain", plain, filter_policy={"kind": ["billed"]})

    found = {
        json.dumps(s["Properties"]["FilterPolicy"]): s["Properties"].get("FilterPolicyScope")
        for s in resources(synth(build), "AWS::SNS::Subscription")
    }
    assert found == {
        '{"order": {"total": [{"numeric": [">", 100]}]}}': "MessageBody",
        '{"kind": ["billed"]}': None,
    }


def test_https_subscriptions_carry_the_validated_delivery_policy(topic: Template) -> None:
    https = subscriptions_by_protocol(topic)["https"]
    assert https["Endpoint"] == "https://partner.example.com/hook"
    assert (
        https["DeliveryPolicy"]
        == HttpDeliveryPolicy(
            num_retries=5, min_delay_target=5, max_delay_target=40
        ).to_subscription_json()
    )


def test_sns_may_send_to_a_subscribed_queue_only_for_this_topic(topic: Template) -> None:
    grants = [
        s
        for p in resources(topic, "AWS::SQS::QueuePolicy")
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow"
    ]
    assert grants
    for grant in grants:
        assert grant["Principal"] == {"Service": "sns.amazonaws.com"}
        assert grant["Action"] == "sqs:SendMessage"
        assert "aws:SourceArn" in grant["Condition"]["ArnEquals"]


def test_plain_http_subscriptions_are_refused() -> None:
    stack = Stack(App(), "S")
    topic = DeliveryLoggedTopic(stack, "T", topic_name="T")
    with pytest.raises(ValueError, match="must be an https:// URL"):
        topic.add_url_subscription("Hook", "http://partner.example.com/hook")


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"success_sample_rate": 101}, "success_sample_rate: must be a whole number from 0 to 100"),
        ({"publisher_accounts": ["1"]}, "publisher_accounts: account ids are exactly 12 digits"),
        ({"content_based_deduplication": True}, "content_based_deduplication: only FIFO topics"),
        ({"topic_name": "T.fifo"}, "topic_name: 'T.fifo' ends with '.fifo' but fifo is False"),
    ],
)
def test_bad_props_fail_naming_the_prop(props: dict[str, Any], message: str) -> None:
    stack = Stack(App(), "S")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        DeliveryLoggedTopic(stack, "T", **{"topic_name": "T", **props})


def test_the_subscriber_account_creates_its_cross_account_subscription() -> None:
    def build(stack: Stack) -> None:
        queue = EndpointQueue(stack, "Sales", endpoint_name="Sales")
        CrossAccountQueueSubscription(
            stack, "OrderBilledSales", topic_arn=TOPIC_ARN, subscription_name="Sales", queue=queue
        )

    template = synth(build, account=SALES)
    (subscription,) = resources(template, "AWS::SNS::Subscription")
    assert subscription["Properties"]["TopicArn"] == TOPIC_ARN
    assert subscription["Properties"]["Region"] == "us-east-1"
    queue_names = {q["Properties"]["QueueName"] for q in resources(template, "AWS::SQS::Queue")}
    assert queue_names == {"Sales", "Sales-dlq", "Sales-delay.fifo", "OrderBilled-Sales-dlq"}
    key_statements = [
        s
        for k in resources(template, "AWS::KMS::Key")
        for s in k["Properties"]["KeyPolicy"]["Statement"]
        if s["Principal"] == {"Service": "sns.amazonaws.com"}
    ]
    # SNS encrypts, for this topic only, into the queue and the subscription's DLQ, which
    # shares the queue's key: one statement for both.
    assert len(key_statements) == 1
    assert all(s["Condition"]["ArnEquals"]["aws:SourceArn"] == [TOPIC_ARN] for s in key_statements)
    contexts = [
        c["Fn::Join"][1][-1]
        for s in key_statements
        for c in s["Condition"]["StringEquals"]["kms:EncryptionContext:aws:sqs:arn"]
    ]
    assert contexts == [
        f":sqs:us-east-1:{SALES}:OrderBilled-Sales-dlq",
        f":sqs:us-east-1:{SALES}:Sales",
    ]


def test_a_topic_arn_token_is_refused() -> None:
    stack = Stack(App(), "S")
    queue = EndpointQueue(stack, "Q", endpoint_name="Q")
    other = DeliveryLoggedTopic(stack, "T", topic_name="T")
    with pytest.raises(ValueError, match="topic_arn: give the topic's ARN as a string"):
        CrossAccountQueueSubscription(
            stack, "S", topic_arn=other.topic.topic_arn, subscription_name="S", queue=queue
        )


def test_the_stacks_alarm_on_failures_dead_letters_and_old_messages(example_assembly: Path) -> None:
    template = json.loads((example_assembly / "Messaging-Billing.template.json").read_text())
    alarms = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
    ]
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for alarm in alarms:
        by_metric.setdefault(alarm["MetricName"], []).append(alarm)
    assert len(by_metric["NumberOfNotificationsFailed"]) == 1
    assert by_metric["NumberOfNotificationsFailed"][0]["Threshold"] == 0
    # Billing's queue, the shadows of Shipping, Sales and ServiceControl's four queues, and
    # Billing's ingress queue (not the shadows of delay queues, whose messages are meant to
    # wait); their DLQs, the DLQs of the delay shadows of Shipping and Sales (what goes to
    # ServiceControl is never delayed, so its shadows have none) and the partner webhook
    # subscription's DLQ.
    assert len(by_metric["ApproximateAgeOfOldestMessage"]) == 8
    assert {a["Threshold"] for a in by_metric["ApproximateAgeOfOldestMessage"]} == {900}
    assert len(by_metric["ApproximateNumberOfMessagesVisible"]) == 11


def test_an_organization_may_subscribe_only_sqs_queues() -> None:
    template = synth(
        lambda s: DeliveryLoggedTopic(
            s, "T", topic_name="T", subscriber_organization_ids=["o-a1b2c3d4e5"]
        )
    )
    (statement,) = [s for s in topic_statements(template) if s["Effect"] == "Allow"]
    assert statement["Principal"] == {"AWS": "*"}
    assert statement["Action"] == "sns:Subscribe"
    assert statement["Condition"] == {
        "StringEquals": {"sns:Protocol": "sqs", "aws:PrincipalOrgID": "o-a1b2c3d4e5"}
    }


def logged_protocols(template: Template) -> list[str]:
    (resource,) = resources(template, "AWS::SNS::Topic")
    return sorted(c["Protocol"] for c in resource["Properties"].get("DeliveryStatusLogging", []))


@pytest.mark.parametrize(
    "subscribers",
    [{"subscriber_accounts": [SALES]}, {"subscriber_organization_ids": ["o-a1b2c3d4e5"]}],
    ids=["accounts", "organizations"],
)
def test_a_topic_whose_subscribers_are_all_in_other_accounts_logs_their_deliveries(
    subscribers: dict[str, Any],
) -> None:
    """The subscriptions are made in the subscribers' stacks, but SNS delivers (and logs)
    them in the topic's account: nothing in this stack subscribes, and still SQS is logged."""
    template = synth(lambda s: DeliveryLoggedTopic(s, "T", topic_name="T", **subscribers))
    assert logged_protocols(template) == ["sqs"]
    assert len(resources(template, "AWS::Logs::LogGroup")) == 2
    assert len(resources(template, "AWS::IAM::Role")) == 1


def test_a_topic_that_logs_nothing_creates_no_log_groups_nor_feedback_role() -> None:
    template = synth(lambda s: DeliveryLoggedTopic(s, "T", topic_name="T"))
    assert logged_protocols(template) == []
    assert resources(template, "AWS::Logs::LogGroup") == []
    assert resources(template, "AWS::IAM::Role") == []


def test_a_fifo_topic_logs_every_protocol_it_delivers_to_sqs_alone() -> None:
    assert DeliveryProtocol.delivered_by(fifo=True) == (DeliveryProtocol.SQS,)
    assert set(DeliveryProtocol.delivered_by(fifo=False)) == set(DeliveryProtocol)
    template = synth(
        lambda s: DeliveryLoggedTopic(
            s, "T", topic_name="T", fifo=True, logged_protocols=DeliveryProtocol.delivered_by(True)
        )
    )
    assert logged_protocols(template) == ["sqs"]


def test_logs_streamed_before_the_topic_logs_stream_once_it_does() -> None:
    destination = f"arn:aws:logs:us-east-1:{SALES}:destination:messaging-delivery-logs"

    def build(stack: Stack) -> None:
        topic = DeliveryLoggedTopic(stack, "T", topic_name="T")
        assert topic.stream_logs_to(destination) == ()
        topic.add_url_subscription("Partner", "https://partner.example.com/hook")

    filters = resources(synth(build), "AWS::Logs::SubscriptionFilter")
    assert [f["Properties"]["DestinationArn"] for f in filters] == [destination] * 2
