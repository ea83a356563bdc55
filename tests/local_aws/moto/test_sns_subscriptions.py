"""A stack's SNS subscriptions exist in the local AWS, on their topic in the topic's account,
and SNS delivers into the queue of the account its ARN names, as in AWS: a queue's owner
subscribes it to another account's topic, and a publish there arrives in the owner's queue,
raw or enveloped, filtered, with its attributes, and FIFO ids kept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import botocore.exceptions
import pytest

from local_aws.accounts import AccountCredentials
from tests.local_aws.accounts import client, fresh_account
from tests.local_aws.moto.cloudformation import delete, deploy, update

pytestmark = pytest.mark.moto

REGION = "us-east-1"
BILLED = {"kind": {"DataType": "String", "StringValue": "billed"}}


@dataclass(frozen=True)
class Accounts:
    """Account A owns the queue and the stack that subscribes it; account B owns the topic,
    and a queue of the same name that must never receive A's messages."""

    a: AccountCredentials
    b: AccountCredentials
    endpoint_url: str

    def client(self, account: AccountCredentials, service: str) -> Any:
        return client(account, service, self.endpoint_url)

    def topic(self, name: str, **attributes: str) -> str:
        arn: str = self.client(self.b, "sns").create_topic(Name=name, Attributes=attributes)[
            "TopicArn"
        ]
        return arn

    def decoy(self, name: str, **attributes: str) -> str:
        url: str = self.client(self.b, "sqs").create_queue(QueueName=name, Attributes=attributes)[
            "QueueUrl"
        ]
        return url

    def queue_url(self, account: AccountCredentials, name: str) -> str:
        url: str = self.client(account, "sqs").get_queue_url(QueueName=name)["QueueUrl"]
        return url

    def receive(self, account: AccountCredentials, name: str) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = (
            self.client(account, "sqs")
            .receive_message(
                QueueUrl=self.queue_url(account, name),
                MaxNumberOfMessages=10,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            )
            .get("Messages", [])
        )
        return messages


@pytest.fixture
def accounts(moto_endpoint: str) -> Accounts:
    return Accounts(fresh_account(moto_endpoint), fresh_account(moto_endpoint), moto_endpoint)


def queue_subscription(
    topic_arn: str,
    queue: str,
    *,
    raw: bool = True,
    filter_policy: dict[str, Any] | None = None,
    fifo: bool = False,
) -> dict[str, Any]:
    """What CDK's ``SqsSubscription`` synthesizes in the queue owner's stack for a topic of
    another account: the queue, the subscription's DLQ, the subscription on the topic."""
    properties: dict[str, Any] = {
        "Protocol": "sqs",
        "TopicArn": topic_arn,
        "Endpoint": {"Fn::GetAtt": ["Queue", "Arn"]},
        "RawMessageDelivery": raw,
        "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["DeadLetterQueue", "Arn"]}},
        "Region": REGION,
    }
    if filter_policy is not None:
        properties["FilterPolicy"] = filter_policy
    fifo_queue = {"FifoQueue": True} if fifo else {}
    return {
        "Resources": {
            "Queue": {
                "Type": "AWS::SQS::Queue",
                "Properties": {"QueueName": queue, **fifo_queue},
            },
            "DeadLetterQueue": {
                "Type": "AWS::SQS::Queue",
                "Properties": {
                    "QueueName": queue.removesuffix(".fifo") + ("-dlq.fifo" if fifo else "-dlq"),
                    **fifo_queue,
                },
            },
            "Subscription": {"Type": "AWS::SNS::Subscription", "Properties": properties},
        },
        "Outputs": {
            "Ref": {"Value": {"Ref": "Subscription"}},
            "Arn": {"Value": {"Fn::GetAtt": ["Subscription", "Arn"]}},
        },
    }


def test_a_queue_subscribed_to_another_accounts_topic_gets_its_raw_filtered_messages(
    accounts: Accounts,
) -> None:
    topic_arn = accounts.topic("Prices")
    decoy = accounts.decoy("Prices")
    template = queue_subscription(topic_arn, "Prices", filter_policy={"kind": ["billed"]})
    deploy(accounts.a, accounts.endpoint_url, "Subscriber", template)

    sns = accounts.client(accounts.b, "sns")
    amount = {"amount": {"DataType": "Number", "StringValue": "12.5"}}
    sns.publish(TopicArn=topic_arn, Message="billed-1", MessageAttributes={**BILLED, **amount})
    sns.publish(
        TopicArn=topic_arn,
        Message="refunded-1",
        MessageAttributes={"kind": {"DataType": "String", "StringValue": "refunded"}},
    )

    (received,) = accounts.receive(accounts.a, "Prices")
    assert received["Body"] == "billed-1"
    assert received["MessageAttributes"] == {
        "kind": {"DataType": "String", "StringValue": "billed"},
        "amount": {"DataType": "Number", "StringValue": "12.5"},
    }
    assert (
        accounts.client(accounts.b, "sqs").receive_message(QueueUrl=decoy).get("Messages", []) == []
    )


def test_the_subscription_is_the_topics_with_the_templates_attributes_and_its_owner(
    accounts: Accounts,
) -> None:
    topic_arn = accounts.topic("Prices")
    policy = {"kind": ["billed"]}
    template = queue_subscription(topic_arn, "Prices", filter_policy=policy)
    out = deploy(accounts.a, accounts.endpoint_url, "Subscriber", template)

    assert out["Ref"] == out["Arn"]
    assert out["Arn"].startswith(topic_arn + ":")
    sns = accounts.client(accounts.b, "sns")
    (listed,) = sns.list_subscriptions_by_topic(TopicArn=topic_arn)["Subscriptions"]
    assert listed["SubscriptionArn"] == out["Arn"]
    attributes = sns.get_subscription_attributes(SubscriptionArn=out["Arn"])["Attributes"]
    queue_arn = f"arn:aws:sqs:{REGION}:{accounts.a.account_id}:Prices"
    assert {k: attributes[k] for k in ("Protocol", "Endpoint", "TopicArn", "Owner")} == {
        "Protocol": "sqs",
        "Endpoint": queue_arn,
        "TopicArn": topic_arn,
        "Owner": accounts.a.account_id,
    }
    assert attributes["PendingConfirmation"] == "false"
    assert attributes["RawMessageDelivery"] == "true"
    assert json.loads(attributes["FilterPolicy"]) == policy
    assert attributes["FilterPolicyScope"] == "MessageAttributes"
    assert json.loads(attributes["RedrivePolicy"]) == {"deadLetterTargetArn": queue_arn + "-dlq"}


def test_an_enveloped_delivery_carries_the_attributes_for_publish_and_publish_batch(
    accounts: Accounts,
) -> None:
    topic_arn = accounts.topic("Prices")
    accounts.decoy("Prices")
    deploy(
        accounts.a,
        accounts.endpoint_url,
        "Subscriber",
        queue_subscription(topic_arn, "Prices", raw=False),
    )

    sns = accounts.client(accounts.b, "sns")
    sns.publish(TopicArn=topic_arn, Message="one", MessageAttributes=BILLED)
    sns.publish_batch(
        TopicArn=topic_arn,
        PublishBatchRequestEntries=[
            {"Id": "2", "Message": "two", "MessageAttributes": BILLED},
            {"Id": "3", "Message": "three", "MessageAttributes": BILLED},
        ],
    )

    envelopes = [json.loads(m["Body"]) for m in accounts.receive(accounts.a, "Prices")]
    assert sorted(e["Message"] for e in envelopes) == ["one", "three", "two"]
    for envelope in envelopes:
        assert envelope["Type"] == "Notification"
        assert envelope["TopicArn"] == topic_arn
        assert envelope["MessageAttributes"] == {"kind": {"Type": "String", "Value": "billed"}}
    assert accounts.receive(accounts.b, "Prices") == []


def test_a_fifo_topics_group_and_deduplication_ids_reach_the_fifo_queue(
    accounts: Accounts,
) -> None:
    topic_arn = accounts.topic("Prices.fifo", FifoTopic="true")
    accounts.decoy("Prices.fifo", FifoQueue="true")
    template = queue_subscription(topic_arn, "Prices.fifo", fifo=True)
    deploy(accounts.a, accounts.endpoint_url, "Subscriber", template)

    accounts.client(accounts.b, "sns").publish(
        TopicArn=topic_arn, Message="first", MessageGroupId="order-7", MessageDeduplicationId="d-1"
    )

    (received,) = accounts.receive(accounts.a, "Prices.fifo")
    assert received["Body"] == "first"
    assert received["Attributes"]["MessageGroupId"] == "order-7"
    assert received["Attributes"]["MessageDeduplicationId"] == "d-1"
    assert accounts.receive(accounts.b, "Prices.fifo") == []


def test_a_delivery_to_a_queue_missing_from_its_account_fails_the_publish_and_lands_nowhere(
    accounts: Accounts,
) -> None:
    topic_arn = accounts.topic("Prices")
    decoy = accounts.decoy("Prices")
    sns = accounts.client(accounts.b, "sns")
    missing = f"arn:aws:sqs:{REGION}:{accounts.a.account_id}:Prices"
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=missing)

    with pytest.raises(botocore.exceptions.ClientError, match="queue does not exist"):
        sns.publish(TopicArn=topic_arn, Message="lost")
    assert (
        accounts.client(accounts.b, "sqs").receive_message(QueueUrl=decoy).get("Messages", []) == []
    )


def test_an_https_subscription_stays_pending_and_the_local_aws_posts_nothing(
    accounts: Accounts,
) -> None:
    policy = {
        "healthyRetryPolicy": {"numRetries": 3},
        "throttlePolicy": {"maxReceivesPerSecond": 1},
    }
    template = {
        "Resources": {
            "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "Prices"}},
            "Webhook": {
                "Type": "AWS::SNS::Subscription",
                "Properties": {
                    "Protocol": "https",
                    # Nothing listens on the discard port: a delivery attempt would fail the publish.
                    "Endpoint": "https://127.0.0.1:9/prices",
                    "TopicArn": {"Ref": "Topic"},
                    "DeliveryPolicy": policy,
                },
            },
        },
        "Outputs": {"Webhook": {"Value": {"Ref": "Webhook"}}, "Topic": {"Value": {"Ref": "Topic"}}},
    }
    out = deploy(accounts.b, accounts.endpoint_url, "Publisher", template)

    sns = accounts.client(accounts.b, "sns")
    attributes = sns.get_subscription_attributes(SubscriptionArn=out["Webhook"])["Attributes"]
    assert attributes["PendingConfirmation"] == "true"
    assert attributes["ConfirmationWasAuthenticated"] == "false"
    assert json.loads(attributes["DeliveryPolicy"]) == policy
    assert sns.publish(TopicArn=out["Topic"], Message="no one hears this")["MessageId"]


def test_a_lambda_subscription_is_confirmed_and_the_local_aws_invokes_nothing(
    accounts: Accounts,
) -> None:
    function_arn = f"arn:aws:lambda:{REGION}:{accounts.b.account_id}:function:Invoicing"
    template = {
        "Resources": {
            "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "Prices"}},
            # The function is imported, as the stacks do: it is not in the local AWS.
            "Invoicing": {
                "Type": "AWS::SNS::Subscription",
                "Properties": {
                    "Protocol": "lambda",
                    "Endpoint": function_arn,
                    "TopicArn": {"Ref": "Topic"},
                },
            },
        },
        "Outputs": {
            "Invoicing": {"Value": {"Ref": "Invoicing"}},
            "Topic": {"Value": {"Ref": "Topic"}},
        },
    }
    out = deploy(accounts.b, accounts.endpoint_url, "Publisher", template)

    sns = accounts.client(accounts.b, "sns")
    attributes = sns.get_subscription_attributes(SubscriptionArn=out["Invoicing"])["Attributes"]
    assert (attributes["Endpoint"], attributes["PendingConfirmation"]) == (function_arn, "false")
    assert sns.publish(TopicArn=out["Topic"], Message="no function runs")["MessageId"]


def test_a_stack_update_applies_the_new_filter_and_deleting_the_stack_unsubscribes(
    accounts: Accounts,
) -> None:
    topic_arn = accounts.topic("Prices")
    name = "Subscriber"
    deploy(
        accounts.a,
        accounts.endpoint_url,
        name,
        queue_subscription(topic_arn, "Prices", filter_policy={"kind": ["billed"]}),
    )
    update(
        accounts.a,
        accounts.endpoint_url,
        name,
        queue_subscription(topic_arn, "Prices", filter_policy={"kind": ["refunded"]}),
    )

    sns = accounts.client(accounts.b, "sns")
    assert len(sns.list_subscriptions_by_topic(TopicArn=topic_arn)["Subscriptions"]) == 1
    for kind in ("billed", "refunded"):
        sns.publish(
            TopicArn=topic_arn,
            Message=kind,
            MessageAttributes={"kind": {"DataType": "String", "StringValue": kind}},
        )
    assert [m["Body"] for m in accounts.receive(accounts.a, "Prices")] == ["refunded"]

    delete(accounts.a, accounts.endpoint_url, name)
    assert sns.list_subscriptions_by_topic(TopicArn=topic_arn)["Subscriptions"] == []
