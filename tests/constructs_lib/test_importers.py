"""A team that already owns a queue or a topic imports it (``from_*_arn``) and hands it to the
constructs that consume one, as aws-cdk-lib's constructs take an ``IQueue``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk.assertions import Template

from constructs_lib import (
    CrossAccountQueueSubscription,
    CrossAccountRelay,
    DeliveryLoggedTopic,
    EndpointQueue,
    IDeliveryLoggedTopic,
    IEndpointQueue,
    RelayDirection,
    RelayRoute,
    SnsHttpsEndpoint,
)

SALES = "111111111111"
QUEUE = f"arn:aws:sqs:us-east-1:{SALES}:Sales"
DLQ = f"arn:aws:sqs:us-east-1:{SALES}:Sales-dlq"
KEY = f"arn:aws:kms:us-east-1:{SALES}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
TOPIC = "arn:aws:sns:us-east-1:222222222222:OrderBilled"


def sales_stack() -> Stack:
    return Stack(App(), "Sales", env=Environment(account=SALES, region="us-east-1"))


def resources(template: Template, kind: str) -> list[dict[str, Any]]:
    return [dict(resource) for resource in template.find_resources(kind).values()]


def template_id(template: Template, kind: str) -> str:
    (logical_id,) = template.find_resources(kind)
    return str(logical_id)


def test_an_imported_queue_is_an_endpoint_queue_and_creates_nothing() -> None:
    stack = sales_stack()
    queue = EndpointQueue.from_queue_arn(
        stack, "Sales", QUEUE, dead_letter_queue_arn=DLQ, encryption_key_arn=KEY
    )
    assert isinstance(queue, IEndpointQueue)
    assert isinstance(EndpointQueue(stack, "New", endpoint_name="New"), IEndpointQueue)
    assert queue.queue_arn == QUEUE
    assert queue.dead_letter_queue.queue_arn == DLQ
    assert queue.fifo is False
    assert queue.encryption_key is not None
    assert (
        Template.from_stack(stack).to_json()["Resources"]
        == Template.from_stack(new_queue_only()).to_json()["Resources"]
    )


def new_queue_only() -> Stack:
    stack = sales_stack()
    EndpointQueue(stack, "New", endpoint_name="New")
    return stack


def test_an_imported_queue_subscribes_across_accounts() -> None:
    stack = sales_stack()
    queue = EndpointQueue.from_queue_arn(
        stack, "Sales", QUEUE, dead_letter_queue_arn=DLQ, encryption_key_arn=KEY
    )
    CrossAccountQueueSubscription(
        stack, "Billed", topic_arn=TOPIC, subscription_name="Sales", queue=queue
    )
    template = Template.from_stack(stack)
    (subscription,) = resources(template, "AWS::SNS::Subscription")
    assert subscription["Properties"]["Endpoint"] == QUEUE
    assert subscription["Properties"]["TopicArn"] == TOPIC
    (dlq,) = resources(template, "AWS::SQS::Queue")
    assert dlq["Properties"]["QueueName"] == "OrderBilled-Sales-dlq"
    assert dlq["Properties"]["KmsMasterKeyId"] == KEY
    # The queue's policy belongs to its owner: the only policy written is the new DLQ's.
    (policy,) = resources(template, "AWS::SQS::QueuePolicy")
    assert policy["Properties"]["Queues"] == [{"Ref": template_id(template, "AWS::SQS::Queue")}]


def test_a_relay_reads_an_imported_queue() -> None:
    stack = sales_stack()
    shadow = EndpointQueue.from_queue_arn(
        stack,
        "Shadow",
        f"arn:aws:sqs:us-east-1:{SALES}:Billing",
        dead_letter_queue_arn=(f"arn:aws:sqs:us-east-1:{SALES}:Billing-dlq"),
    )
    relay = CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(shadow, "arn:aws:sqs:us-east-1:222222222222:Billing-ingress")],
        local_endpoints=["Sales"],
    )
    template = Template.from_stack(stack)
    (mapping,) = resources(template, "AWS::Lambda::EventSourceMapping")
    assert mapping["Properties"]["EventSourceArn"] == f"arn:aws:sqs:us-east-1:{SALES}:Billing"
    # An imported queue's ARN is known at synth: the configuration file names it so.
    routes = json.loads(relay.configuration)["routes"]
    assert routes[f"arn:aws:sqs:us-east-1:{SALES}:Billing"]["deadLetterQueue"] == (
        f"arn:aws:sqs:us-east-1:{SALES}:Billing-dlq"
    )


@pytest.mark.parametrize(
    ("queue_arn", "dlq_arn", "message"),
    [
        ("not-an-arn", DLQ, "^queue_arn: "),
        (
            QUEUE,
            "arn:aws:sqs:us-east-1:111111111111:Sales-dlq.fifo",
            r"^dead_letter_queue_arn: .* is a FIFO queue but its source .* is a standard queue",
        ),
        (
            QUEUE,
            "arn:aws:sqs:eu-west-1:111111111111:Sales-dlq",
            r"^dead_letter_queue_arn: .* must be in the account \(111111111111\) and region "
            r"\(us-east-1\) of its source queue",
        ),
    ],
)
def test_an_import_with_a_bad_arn_names_the_prop(
    queue_arn: str, dlq_arn: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        EndpointQueue.from_queue_arn(sales_stack(), "Q", queue_arn, dead_letter_queue_arn=dlq_arn)


def test_an_imported_topic_gets_an_https_endpoint_with_its_own_dlq(partner_handler: Path) -> None:
    stack = Stack(App(), "Partner", env=Environment(account="222222222222", region="us-east-1"))
    topic = DeliveryLoggedTopic.from_topic_arn(stack, "Billed", TOPIC)
    assert isinstance(topic, IDeliveryLoggedTopic)
    assert (topic.topic_name, topic.fifo) == ("OrderBilled", False)
    SnsHttpsEndpoint(
        stack,
        "Webhook",
        topic=topic,
        handler="partner.handler:handle",
        handler_code=partner_handler,
    )
    template = Template.from_stack(stack)
    (subscription,) = resources(template, "AWS::SNS::Subscription")
    assert subscription["Properties"]["TopicArn"] == TOPIC
    assert subscription["Properties"]["Protocol"] == "https"
    (dlq,) = resources(template, "AWS::SQS::Queue")
    assert dlq["Properties"]["QueueName"] == "OrderBilled-Webhook-dlq"
    (function,) = resources(template, "AWS::Lambda::Function")
    assert (
        function["Properties"]["Environment"]["Variables"]["SNS_ENDPOINT_ALLOWED_TOPIC_ARNS"]
        == TOPIC
    )


@pytest.mark.parametrize("arn", ["OrderBilled", "arn:aws:sqs:us-east-1:222222222222:Q"])
def test_a_topic_import_with_a_bad_arn_names_the_prop(arn: str) -> None:
    with pytest.raises(ValueError, match="topic_arn: "):
        DeliveryLoggedTopic.from_topic_arn(sales_stack(), "T", arn)


def test_an_imported_fifo_topic_refuses_https() -> None:
    stack = sales_stack()
    topic = DeliveryLoggedTopic.from_topic_arn(stack, "T", TOPIC + ".fifo")
    with pytest.raises(ValueError, match="FIFO topics deliver only to SQS queues"):
        topic.add_url_subscription("Hook", "https://example.com/sns")
