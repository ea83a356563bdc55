"""The constructs write the conditions they document themselves: in an app with no feature flags
at all, every queue and key policy admits SNS for the subscribed topic alone
(``aws:SourceArn``), exactly as in an app with the flags the project's own app sets.

aws-cdk-lib's ``SqsSubscription`` lets SNS use a subscribed queue's key for every topic unless
the app sets ``@aws-cdk/aws-sns-subscriptions:restrictSqsDescryption``; of the project's other
flags, ``@aws-cdk/aws-iam:minimizePolicies`` only orders and merges the statements of identity
policies (the same grants), and ``@aws-cdk/core:checkSecretUsage`` touches nothing the
constructs make (no secret).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template

from constructs_lib import (
    CrossAccountQueueSubscription,
    DeliveryLoggedTopic,
    EndpointQueue,
    MessagingKey,
)
from stacks.app_builder import FEATURE_FLAGS

SALES = "111111111111"
BILLING = "222222222222"
TOPIC_NAME = "OrderBilled"
TOPIC_ARN = f"arn:aws:sns:us-east-1:{BILLING}:{TOPIC_NAME}"


def billing_stack(app: App) -> Stack:
    return Stack(app, "Billing", env=Environment(account=BILLING, region="us-east-1"))


def sales_stack(app: App) -> Stack:
    return Stack(app, "Sales", env=Environment(account=SALES, region="us-east-1"))


def user_queue(stack: Stack, name: str) -> sqs.Queue:
    """A team's own queue, encrypted with a key of its own."""
    key = kms.Key(stack, f"{name}Key", enable_key_rotation=True)
    return sqs.Queue(stack, name, queue_name=name, encryption_master_key=key, enforce_ssl=True)


def topic_with_every_subscription(app: App) -> Stack:
    stack = billing_stack(app)
    topic = DeliveryLoggedTopic(stack, "Topic", topic_name=TOPIC_NAME)
    topic.add_queue_subscription(
        "Billing", EndpointQueue(stack, "Billing", endpoint_name="Billing")
    )
    topic.add_queue_subscription("Team", user_queue(stack, "Team"))
    topic.add_queue_subscription(
        "TeamWithItsDlq", user_queue(stack, "Other"), dead_letter_queue=user_queue(stack, "Dlq")
    )
    function = lambda_.Function.from_function_arn(
        stack, "React", f"arn:aws:lambda:us-east-1:{BILLING}:function:react"
    )
    topic.add_lambda_subscription("React", function, dead_letter_queue=user_queue(stack, "Lambda"))
    topic.add_url_subscription(
        "Partner", "https://partner.example.com/sns", dead_letter_queue=user_queue(stack, "Http")
    )
    return stack


def subscriptions_across_accounts(app: App) -> Stack:
    stack = sales_stack(app)
    for name, queue in (
        ("Sales", EndpointQueue(stack, "Sales", endpoint_name="Sales")),
        ("Team", user_queue(stack, "Team")),
        ("Wrapped", EndpointQueue.from_queue(stack, "AsEndpoint", with_dlq(stack, "Wrapped"))),
    ):
        CrossAccountQueueSubscription(
            stack, f"{name}Subscription", topic_arn=TOPIC_ARN, subscription_name=name, queue=queue
        )
    return stack


def shared_key_subscriptions(app: App) -> Stack:
    stack = sales_stack(app)
    key = MessagingKey(stack, "QueueKey")
    for name in ("Sales", "Shipping"):
        CrossAccountQueueSubscription(
            stack,
            f"{name}Subscription",
            topic_arn=TOPIC_ARN,
            subscription_name=name,
            queue=EndpointQueue(stack, name, endpoint_name=name, shared_key=key),
        )
    return stack


def aws_cdk_lib_topic(app: App) -> Stack:
    stack = billing_stack(app)
    key = kms.Key(stack, "TopicKey", enable_key_rotation=True)
    topic = sns.Topic(stack, "Topic", topic_name=TOPIC_NAME, master_key=key, enforce_ssl=True)
    DeliveryLoggedTopic.from_topic(stack, "Wrapped", topic).add_url_subscription(
        "Partner", "https://partner.example.com/sns"
    )
    return stack


def with_dlq(stack: Stack, name: str) -> sqs.Queue:
    key = kms.Key(stack, f"{name}Key", enable_key_rotation=True)
    dlq = sqs.Queue(stack, f"{name}Dlq", queue_name=f"{name}-dlq", encryption_master_key=key)
    return sqs.Queue(
        stack,
        name,
        queue_name=name,
        encryption_master_key=key,
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=10),
    )


SCENARIOS: dict[str, Callable[[App], Stack]] = {
    "a topic with queue, Lambda and HTTPS subscriptions": topic_with_every_subscription,
    "subscriptions to another account's topic": subscriptions_across_accounts,
    "endpoint queues sharing the account's key": shared_key_subscriptions,
    "an aws-cdk-lib topic": aws_cdk_lib_topic,
}


def synth(scenario: Callable[[App], Stack], context: Mapping[str, Any]) -> Template:
    return Template.from_stack(scenario(App(context=dict(context))))


def sns_statements(template: Template) -> list[dict[str, Any]]:
    """Every statement of a queue or key policy that admits an SNS principal."""
    found = []
    for kind, document in (
        ("AWS::SQS::QueuePolicy", "PolicyDocument"),
        ("AWS::KMS::Key", "KeyPolicy"),
    ):
        for resource in template.find_resources(kind).values():
            for statement in resource["Properties"][document]["Statement"]:
                service = statement.get("Principal", {}).get("Service", "")
                if statement["Effect"] == "Allow" and str(service).startswith("sns."):
                    found.append(statement)
    return found


def names_the_topic(arn: object, template: Template) -> bool:
    """``arn`` is the subscribed topic's: a reference to a topic of the template, or its ARN
    written out or computed from its name (``Fn::Join`` of the partition and the rest)."""
    if isinstance(arn, dict) and "Ref" in arn:
        return arn["Ref"] in template.find_resources("AWS::SNS::Topic")
    if isinstance(arn, dict) and "Fn::Join" in arn:
        arn = arn["Fn::Join"][1][-1]
    return isinstance(arn, str) and arn.endswith(f":{TOPIC_NAME}")


@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_sns_is_admitted_for_its_topic_alone_in_an_app_without_feature_flags(
    scenario: Callable[[App], Stack],
) -> None:
    template = synth(scenario, {})
    statements = sns_statements(template)
    assert statements
    for statement in statements:
        source = statement.get("Condition", {}).get("ArnEquals", {}).get("aws:SourceArn")
        assert source is not None, statement
        sources = source if isinstance(source, list) else [source]
        assert all(names_the_topic(arn, template) for arn in sources), statement


@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_the_project_flags_change_no_sns_grant(scenario: Callable[[App], Stack]) -> None:
    assert sns_statements(synth(scenario, {})) == sns_statements(synth(scenario, FEATURE_FLAGS))


@pytest.mark.parametrize("flag", sorted(FEATURE_FLAGS))
def test_no_project_flag_changes_what_a_resource_policy_grants(flag: str) -> None:
    """Resource policies (queues, keys, topics) come out the same with each flag; only
    ``minimizePolicies`` may reorder and merge identity policies' statements."""
    for scenario in SCENARIOS.values():
        plain, flagged = synth(scenario, {}), synth(scenario, {flag: True})
        for kind, document in (
            ("AWS::SQS::QueuePolicy", "PolicyDocument"),
            ("AWS::KMS::Key", "KeyPolicy"),
            ("AWS::SNS::TopicPolicy", "PolicyDocument"),
        ):
            assert [r["Properties"][document] for r in plain.find_resources(kind).values()] == [
                r["Properties"][document] for r in flagged.find_resources(kind).values()
            ]


def test_a_team_queue_subscribed_through_aws_cdk_lib_alone_would_admit_every_topic() -> None:
    """What the constructs replace: aws-cdk-lib's own subscription, in an app without the
    flag, lets SNS use the queue's key with no condition at all."""
    stack = billing_stack(App())
    topic = sns.Topic(stack, "Topic", topic_name=TOPIC_NAME)
    topic.add_subscription(subscriptions.SqsSubscription(user_queue(stack, "Team")))
    (key_grant,) = [
        s for s in sns_statements(Template.from_stack(stack)) if "kms:Decrypt" in s["Action"]
    ]
    assert "Condition" not in key_grant
