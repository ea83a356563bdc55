"""A team hands the constructs aws-cdk-lib's own queues and topics (made in the same app, or
imported), as aws-cdk-lib's constructs take an ``IQueue`` or an ``ITopic``; what cannot be known
of one is asked for by name, and what SNS or another account could never use is refused at
synth (a FIFO queue on a standard topic, an AWS-managed key)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template

from constructs_lib import (
    CrossAccountQueueSubscription,
    CrossAccountRelay,
    DeliveryLoggedTopic,
    EndpointQueue,
    IEndpointQueue,
    RelayDirection,
    RelayRoute,
    RelayTiming,
    SnsHttpsEndpoint,
)

SALES = "111111111111"
BILLING = "222222222222"
TOPIC_ARN = f"arn:aws:sns:us-east-1:{BILLING}:OrderBilled"
FIFO_TOPIC_ARN = f"arn:aws:sns:us-east-1:{BILLING}:OrderBilled.fifo"
INGRESS = f"arn:aws:sqs:us-east-1:{BILLING}:Billing-ingress"
VISIBILITY = RelayTiming.for_batch(10).visibility_timeout


def sales_stack() -> Stack:
    return Stack(App(), "Sales", env=Environment(account=SALES, region="us-east-1"))


def team_queue(stack: Stack, name: str = "Team", *, fifo: bool = False, **props: Any) -> sqs.Queue:
    """A queue the team made itself, with a key and a dead-letter queue of its own."""
    suffix = ".fifo" if fifo else ""
    key = kms.Key(stack, f"{name}Key", enable_key_rotation=True)
    dlq = sqs.Queue(
        stack,
        f"{name}Dlq",
        queue_name=f"{name}-dlq{suffix}",
        encryption_master_key=key,
        fifo=fifo or None,
    )
    return sqs.Queue(
        stack,
        name,
        queue_name=f"{name}{suffix}",
        fifo=fifo or None,
        encryption_master_key=key,
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=7),
        **props,
    )


def resources(template: Template, kind: str) -> list[dict[str, Any]]:
    return [dict(r) for r in template.find_resources(kind).values()]


def logical_id(template: Template, kind: str, name: str) -> str:
    (found,) = [
        key
        for key, resource in template.find_resources(kind).items()
        if resource["Properties"].get("QueueName") == name
    ]
    return str(found)


# EndpointQueue.from_queue ------------------------------------------------------------------


def test_a_queue_of_the_app_is_read_as_an_endpoint_queue() -> None:
    stack = sales_stack()
    queue = team_queue(stack, visibility_timeout=VISIBILITY)
    endpoint = EndpointQueue.from_queue(stack, "AsEndpoint", queue)
    assert isinstance(endpoint, IEndpointQueue)
    assert endpoint.queue is queue
    assert endpoint.dead_letter_queue is queue.dead_letter_queue.queue  # type: ignore[union-attr]
    assert endpoint.encryption_key is queue.encryption_master_key
    assert (endpoint.fifo, endpoint.max_receive_count) == (False, 7)
    assert endpoint.visibility_timeout is not None
    assert endpoint.visibility_timeout.to_seconds() == VISIBILITY.to_seconds()


def test_a_queue_without_a_visibility_timeout_has_sqss() -> None:
    stack = sales_stack()
    endpoint = EndpointQueue.from_queue(stack, "AsEndpoint", team_queue(stack))
    assert endpoint.visibility_timeout is not None
    assert endpoint.visibility_timeout.to_seconds() == 30


def test_an_imported_queue_is_told_its_dead_letter_queue() -> None:
    stack = sales_stack()
    queue = sqs.Queue.from_queue_arn(stack, "Team", f"arn:aws:sqs:us-east-1:{SALES}:Team")
    dlq = sqs.Queue.from_queue_arn(stack, "TeamDlq", f"arn:aws:sqs:us-east-1:{SALES}:Team-dlq")
    endpoint = EndpointQueue.from_queue(
        stack, "AsEndpoint", queue, dead_letter_queue=dlq, max_receive_count=5
    )
    assert (endpoint.dead_letter_queue, endpoint.max_receive_count) == (dlq, 5)
    assert (endpoint.encryption_key, endpoint.visibility_timeout) == (None, None)


def test_a_relay_reads_a_queue_of_the_app_as_its_source() -> None:
    stack = sales_stack()
    relay = CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[RelayRoute(team_queue(stack, visibility_timeout=VISIBILITY), INGRESS)],
        local_endpoints=["Sales"],
    )
    (route,) = json.loads(relay.configuration)["routes"].items()
    assert route == (
        "Team",
        {"deadLetterQueue": "Team-dlq", "destination": INGRESS, "maxReceiveCount": 7},
    )
    (mapping,) = resources(Template.from_stack(stack), "AWS::Lambda::EventSourceMapping")
    assert mapping["Properties"]["EventSourceArn"] == {
        "Fn::GetAtt": [logical_id(Template.from_stack(stack), "AWS::SQS::Queue", "Team"), "Arn"]
    }


def test_a_relay_reads_an_imported_queue_told_its_dead_letter_queue() -> None:
    stack = sales_stack()
    queue = sqs.Queue.from_queue_arn(stack, "Shadow", f"arn:aws:sqs:us-east-1:{SALES}:Billing")
    dlq = sqs.Queue.from_queue_arn(stack, "Dlq", f"arn:aws:sqs:us-east-1:{SALES}:Billing-dlq")
    relay = CrossAccountRelay(
        stack,
        "Outbound",
        direction=RelayDirection.OUTBOUND,
        routes=[
            RelayRoute(EndpointQueue.from_queue(stack, "S", queue, dead_letter_queue=dlq), INGRESS)
        ],
        local_endpoints=["Sales"],
    )
    routes = json.loads(relay.configuration)["routes"]
    assert routes == {queue.queue_arn: {"deadLetterQueue": dlq.queue_arn, "destination": INGRESS}}


# Subscriptions -----------------------------------------------------------------------------


def test_a_queue_of_the_app_subscribes_to_another_accounts_topic() -> None:
    stack = sales_stack()
    queue = team_queue(stack)
    subscription = CrossAccountQueueSubscription(
        stack, "Billed", topic_arn=TOPIC_ARN, subscription_name="Team", queue=queue
    )
    template = Template.from_stack(stack)
    (created,) = resources(template, "AWS::SNS::Subscription")
    team = logical_id(template, "AWS::SQS::Queue", "Team")
    assert created["Properties"]["Endpoint"] == {"Fn::GetAtt": [team, "Arn"]}
    (dlq,) = [
        q
        for q in resources(template, "AWS::SQS::Queue")
        if q["Properties"]["QueueName"] == ("OrderBilled-Team-dlq")
    ]
    # The subscription's dead-letter queue is encrypted with the queue's key.
    assert dlq["Properties"]["KmsMasterKeyId"] == {
        "Fn::GetAtt": [logical_id_of_key(template), "Arn"]
    }
    assert subscription.dead_letter_queue.encryption_master_key is queue.encryption_master_key
    (send,) = [
        s
        for r in resources(template, "AWS::SQS::QueuePolicy")
        for s in r["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Allow" and s["Resource"] == {"Fn::GetAtt": [team, "Arn"]}
    ]
    assert send["Condition"] == {"ArnEquals": {"aws:SourceArn": TOPIC_ARN}}


def logical_id_of_key(template: Template) -> str:
    (key,) = template.find_resources("AWS::KMS::Key")
    return str(key)


def test_an_imported_queue_subscribes_and_its_policies_stay_its_owners() -> None:
    stack = sales_stack()
    queue = sqs.Queue.from_queue_arn(stack, "Team", f"arn:aws:sqs:us-east-1:{SALES}:Team")
    CrossAccountQueueSubscription(
        stack, "Billed", topic_arn=TOPIC_ARN, subscription_name="Team", queue=queue
    )
    template = Template.from_stack(stack)
    (created,) = resources(template, "AWS::SNS::Subscription")
    assert created["Properties"]["Endpoint"] == queue.queue_arn
    # Only the new dead-letter queue's policy is written.
    (policy,) = resources(template, "AWS::SQS::QueuePolicy")
    assert policy["Properties"]["Queues"] == [
        {"Ref": logical_id(template, "AWS::SQS::Queue", "OrderBilled-Team-dlq")}
    ]


def test_a_topic_of_the_app_subscribes_a_queue_of_the_app() -> None:
    stack = sales_stack()
    topic = DeliveryLoggedTopic(stack, "Topic", topic_name="OrderBilled")
    topic.add_queue_subscription("Team", team_queue(stack))
    template = Template.from_stack(stack)
    (created,) = resources(template, "AWS::SNS::Subscription")
    assert created["Properties"]["Protocol"] == "sqs"
    assert created["Properties"]["RawMessageDelivery"] is True


def test_a_fifo_topic_may_deliver_to_a_standard_queue_with_a_fifo_dead_letter_queue() -> None:
    """SNS FIFO topics deliver to standard queues too (AWS, "Amazon SNS message delivery for
    FIFO topics"), and a FIFO topic's subscription dead-letter queue is FIFO ("Amazon SNS
    dead-letter queues")."""
    stack = sales_stack()
    subscription = CrossAccountQueueSubscription(
        stack, "Billed", topic_arn=FIFO_TOPIC_ARN, subscription_name="Team", queue=team_queue(stack)
    )
    assert subscription.dead_letter_queue.fifo
    dlq = resources(Template.from_stack(stack), "AWS::SQS::Queue")
    assert "OrderBilled-Team-dlq.fifo" in [q["Properties"]["QueueName"] for q in dlq]


def test_an_https_endpoint_subscribes_to_a_topic_of_the_app(partner_handler: Path) -> None:
    stack = Stack(App(), "Billing", env=Environment(account=BILLING, region="us-east-1"))
    key = kms.Key(stack, "TopicKey", enable_key_rotation=True)
    topic = sns.Topic(stack, "Topic", topic_name="OrderBilled", master_key=key)
    endpoint = SnsHttpsEndpoint(
        stack,
        "Partner",
        topic=topic,
        handler="partner.handler:handle",
        handler_code=partner_handler,
    )
    template = Template.from_stack(stack)
    (subscription,) = resources(template, "AWS::SNS::Subscription")
    (topic_id,) = template.find_resources("AWS::SNS::Topic")
    assert subscription["Properties"]["TopicArn"] == {"Ref": topic_id}
    assert endpoint.dead_letter_queue.encryption_master_key is key
    (sns_grant,) = [
        s
        for s in resources(template, "AWS::KMS::Key")[0]["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Principal", {}).get("Service") == "sns.amazonaws.com"
    ]
    # The topic's ARN computed from its name: the key cannot refer to the topic it encrypts.
    assert sns_grant["Condition"]["ArnEquals"]["aws:SourceArn"] == [
        {
            "Fn::Join": [
                "",
                ["arn:", {"Ref": "AWS::Partition"}, f":sns:us-east-1:{BILLING}:OrderBilled"],
            ]
        }
    ]


def test_an_https_endpoint_subscribes_to_an_imported_topic(partner_handler: Path) -> None:
    stack = Stack(App(), "Billing", env=Environment(account=BILLING, region="us-east-1"))
    topic = sns.Topic.from_topic_arn(stack, "Topic", TOPIC_ARN)
    SnsHttpsEndpoint(
        stack,
        "Partner",
        topic=topic,
        handler="partner.handler:handle",
        handler_code=partner_handler,
    )
    (subscription,) = resources(Template.from_stack(stack), "AWS::SNS::Subscription")
    assert subscription["Properties"]["TopicArn"] == TOPIC_ARN


# What cannot be known, or could never work, is refused naming the keyword --------------------


def imported(stack: Stack, name: str = "Team") -> sqs.IQueue:
    return sqs.Queue.from_queue_arn(stack, name, f"arn:aws:sqs:us-east-1:{SALES}:{name}")


def function(stack: Stack) -> lambda_.IFunction:
    return lambda_.Function.from_function_arn(
        stack, "F", f"arn:aws:lambda:us-east-1:{SALES}:function:react"
    )


MISUSES: dict[str, tuple[Callable[[Stack], object], type[Exception], str]] = {
    "a token for a queue ARN": (
        lambda s: EndpointQueue.from_queue_arn(
            s, "Q", team_queue(s).queue_arn, dead_letter_queue_arn="x"
        ),
        ValueError,
        r"^queue_arn: .*EndpointQueue\.from_queue\(scope, id, queue\)",
    ),
    "an imported queue without its dead-letter queue": (
        lambda s: EndpointQueue.from_queue(s, "Q", imported(s)),
        ValueError,
        r"^dead_letter_queue: Sales/Team does not say its redrive dead-letter queue",
    ),
    "a queue of the app without a dead-letter queue": (
        lambda s: EndpointQueue.from_queue(s, "Q", sqs.Queue(s, "Plain")),
        ValueError,
        r"^dead_letter_queue: Sales/Plain does not say",
    ),
    "a dead-letter queue the queue does not redrive to": (
        lambda s: EndpointQueue.from_queue(
            s, "Q", team_queue(s), dead_letter_queue=imported(s, "Other")
        ),
        ValueError,
        r"^dead_letter_queue: the queue says otherwise \(Sales/TeamDlq, not Sales/Other\)",
    ),
    "a receive count the queue does not have": (
        lambda s: EndpointQueue.from_queue(s, "Q", team_queue(s), max_receive_count=3),
        ValueError,
        r"^max_receive_count: the queue says otherwise \(7, not 3\)",
    ),
    "a dead-letter queue of the other kind": (
        lambda s: EndpointQueue.from_queue(
            s, "Q", imported(s, "Team.fifo"), dead_letter_queue=imported(s)
        ),
        ValueError,
        r"^dead_letter_queue: dead-letter queue .*:Team' is a standard queue but its source "
        r".*:Team\.fifo' is a FIFO queue",
    ),
    "an endpoint queue where an aws-cdk-lib queue is meant": (
        lambda s: EndpointQueue.from_queue(s, "Q", EndpointQueue(s, "E", endpoint_name="E")),  # type: ignore[arg-type]
        TypeError,
        r"^queue: expected aws_sqs.IQueue, got a constructs_lib\.endpoint_queue\.queue\.EndpointQueue",
    ),
    "a queue encrypted with alias/aws/sqs": (
        lambda s: EndpointQueue.from_queue(
            s, "Q", sqs.Queue(s, "Managed", encryption=sqs.QueueEncryption.KMS_MANAGED)
        ),
        ValueError,
        r"^queue: Sales/Managed is encrypted with the AWS-managed key alias/aws/sqs",
    ),
    "a subscription of a queue encrypted with alias/aws/sqs": (
        lambda s: CrossAccountQueueSubscription(
            s,
            "Sub",
            topic_arn=TOPIC_ARN,
            subscription_name="Managed",
            queue=sqs.Queue(s, "Managed", encryption=sqs.QueueEncryption.KMS_MANAGED),
        ),
        ValueError,
        r"^queue: Sales/Managed is encrypted with the AWS-managed key",
    ),
    "a key ARN of alias/aws/sqs": (
        lambda s: EndpointQueue.from_queue_arn(
            s,
            "Q",
            f"arn:aws:sqs:us-east-1:{SALES}:Team",
            dead_letter_queue_arn=f"arn:aws:sqs:us-east-1:{SALES}:Team-dlq",
            encryption_key_arn=f"arn:aws:kms:us-east-1:{SALES}:alias/aws/sqs",
        ),
        ValueError,
        r"^encryption_key_arn: the AWS-managed key alias/aws/sqs cannot be used",
    ),
    "a topic key of alias/aws/sns": (
        lambda s: DeliveryLoggedTopic(
            s,
            "T",
            topic_name="T",
            encryption_key=kms.Alias.from_alias_name(s, "A", "alias/aws/sns"),
        ),
        ValueError,
        r"^encryption_key: the AWS-managed key alias/aws/sns cannot be used",
    ),
    "a topic key ARN of alias/aws/sns": (
        lambda s: DeliveryLoggedTopic.from_topic_arn(
            s, "T", TOPIC_ARN, encryption_key_arn=f"arn:aws:kms:us-east-1:{BILLING}:alias/aws/sns"
        ),
        ValueError,
        r"^encryption_key_arn: the AWS-managed key alias/aws/sns",
    ),
    "an aws-cdk-lib topic encrypted with alias/aws/sns": (
        lambda s: DeliveryLoggedTopic.from_topic(
            s,
            "T",
            sns.Topic(
                s,
                "Topic",
                topic_name="T",
                master_key=kms.Alias.from_alias_name(s, "A", "alias/aws/sns"),
            ),
        ),
        ValueError,
        r"^topic: the AWS-managed key alias/aws/sns .*master_key=aws_kms\.Key",
    ),
    "an aws-cdk-lib topic CloudFormation names": (
        lambda s: DeliveryLoggedTopic.from_topic(s, "T", sns.Topic(s, "Topic")),
        ValueError,
        r"^topic: Sales/Topic has no name known at synth .*topic_name=",
    ),
    "a FIFO queue subscribed to a standard topic across accounts": (
        lambda s: CrossAccountQueueSubscription(
            s, "Sub", topic_arn=TOPIC_ARN, subscription_name="T", queue=team_queue(s, fifo=True)
        ),
        ValueError,
        r"^queue: Sales/Team is a FIFO queue and 'OrderBilled' a standard topic",
    ),
    "a FIFO queue subscribed to a standard topic of the app": (
        lambda s: DeliveryLoggedTopic(s, "T", topic_name="T").add_queue_subscription(
            "Team", team_queue(s, fifo=True)
        ),
        ValueError,
        r"^queue: Sales/Team is a FIFO queue and 'T' a standard topic",
    ),
    "a FIFO endpoint queue subscribed to a standard topic": (
        lambda s: DeliveryLoggedTopic(s, "T", topic_name="T").add_queue_subscription(
            "Billing", EndpointQueue(s, "Billing", endpoint_name="Billing", fifo=True)
        ),
        ValueError,
        r"^queue: Sales/Billing/Queue is a FIFO queue and 'T' a standard topic",
    ),
    "a Lambda function on a FIFO topic": (
        lambda s: DeliveryLoggedTopic(s, "T", topic_name="T", fifo=True).add_lambda_subscription(
            "React", function(s)
        ),
        ValueError,
        r"^function: FIFO topics deliver only to SQS queues",
    ),
    "a string where a queue is meant": (
        lambda s: CrossAccountQueueSubscription(
            s,
            "Sub",
            topic_arn=TOPIC_ARN,
            subscription_name="T",
            queue="Team",  # type: ignore[arg-type]
        ),
        TypeError,
        r"^queue: expected IEndpointQueue or aws_sqs.IQueue, got str 'Team'",
    ),
    "a string where a topic is meant": (
        lambda s: SnsHttpsEndpoint(s, "E", topic=TOPIC_ARN, handler="a.b:c"),  # type: ignore[arg-type]
        TypeError,
        r"^topic: expected IDeliveryLoggedTopic or aws_sns.ITopic, got str",
    ),
    "a relay source without its dead-letter queue": (
        lambda s: CrossAccountRelay(
            s,
            "Outbound",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(imported(s), INGRESS)],
            local_endpoints=["Sales"],
        ),
        ValueError,
        r"^routes: Sales/Team: dead_letter_queue: .*EndpointQueue\.from_queue\(scope, id, queue, "
        r"dead_letter_queue=\.\.\.\)",
    ),
    "a relay source hiding messages for SQS's default 30 s": (
        lambda s: CrossAccountRelay(
            s,
            "Outbound",
            direction=RelayDirection.OUTBOUND,
            routes=[RelayRoute(team_queue(s), INGRESS)],
            local_endpoints=["Sales"],
        ),
        ValueError,
        r"^routes: the source queue Sales/Team has a visibility timeout of 30 s, under the 360 s",
    ),
}


@pytest.mark.parametrize(("build", "error", "message"), MISUSES.values(), ids=MISUSES.keys())
def test_a_misuse_is_refused_naming_the_keyword(
    build: Callable[[Stack], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build(sales_stack())


def test_an_https_subscription_dead_letter_queue_with_its_own_key_admits_sns_for_the_topic() -> (
    None
):
    stack = sales_stack()
    topic = DeliveryLoggedTopic(stack, "Topic", topic_name="OrderBilled")
    dlq = team_queue(stack, "Http")
    topic.add_url_subscription("Partner", "https://partner.example.com/sns", dead_letter_queue=dlq)
    template = Template.from_stack(stack)
    key = dlq.encryption_master_key
    assert key is not None
    (policy,) = [
        r["Properties"]["KeyPolicy"]
        for k, r in template.find_resources("AWS::KMS::Key").items()
        if k == stack.get_logical_id(key.node.default_child)  # type: ignore[arg-type]
    ]
    (grant,) = [
        s for s in policy["Statement"] if s.get("Principal") == {"Service": "sns.amazonaws.com"}
    ]
    (topic_id,) = template.find_resources("AWS::SNS::Topic")
    assert grant["Condition"]["ArnEquals"] == {"aws:SourceArn": [{"Ref": topic_id}]}


def test_a_duration_is_read_back_as_given() -> None:
    stack = sales_stack()
    endpoint = EndpointQueue.from_queue(
        stack,
        "Q",
        team_queue(stack, visibility_timeout=Duration.minutes(6)),
        visibility_timeout=Duration.seconds(360),
    )
    assert endpoint.visibility_timeout is not None
    assert endpoint.visibility_timeout.to_seconds() == 360
