"""The prop rules the constructs and the topology share: HTTPS subscription URLs and topic ARNs,
each refused by every construct that takes one, naming the keyword."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from aws_cdk import App, Stack

from constructs_lib import CrossAccountQueueSubscription, DeliveryLoggedTopic, EndpointQueue
from constructs_lib.sns_https_endpoint import SnsHttpsEndpoint
from constructs_lib.validation import https_url_problem, require_https_url, require_topic_arn
from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.sns_endpoint.config import EndpointConfig

TOPIC_ARN = "arn:aws:sns:us-east-1:111111111111:OrderBilled"


@pytest.mark.parametrize(
    "url",
    [
        "https://partner.example.com/hook",
        "https://partner.example.com:8443/hook?x=1",
        "https://10.0.0.7/hook",
        "https://hooks",
    ],
)
def test_https_urls_sns_accepts_pass(url: str) -> None:
    assert https_url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://partner.example.com/hook", "must be an https:// URL"),
        ("https:///hook", "must be an https:// URL with a host"),
        ("https://user:secret@partner.example.com/", "must be an https:// URL with a host"),
        ("https://partner.example.com:99999/hook", "the port must be from 1 to 65535"),
        ("https://partner.example.com:0/hook", "the port must be from 1 to 65535"),
        ("https://-partner.example.com/", "is not a host name"),
        ("https://partner_1.example.com/", "is not a host name"),
    ],
)
def test_https_urls_sns_would_refuse_or_that_are_not_https_are_named(url: str, rule: str) -> None:
    problem = https_url_problem(url)
    assert problem is not None
    assert rule in problem
    with pytest.raises(ValueError, match=f"^url: .*{re.escape(rule)}"):
        require_https_url("url", url)


def test_an_https_subscription_refuses_a_port_sns_would_refuse() -> None:
    topic = DeliveryLoggedTopic(Stack(App(), "S"), "T", topic_name="T")
    with pytest.raises(ValueError, match=r"^url: .*the port must be from 1 to 65535"):
        topic.add_url_subscription("Hook", "https://partner.example.com:99999/hook")


@pytest.mark.parametrize(
    "arn",
    [
        "*",
        "arn:aws:sns:us-east-1:111111111111:*",
        "arn:aws:sqs:us-east-1:111111111111:OrderBilled",
        "arn:aws:sns:us-east-1:1111:OrderBilled",
        "OrderBilled",
        f"{TOPIC_ARN},{TOPIC_ARN}",
    ],
)
def test_a_topic_arn_is_one_exact_topic_as_the_sns_endpoint_runtime_reads_it(arn: str) -> None:
    with pytest.raises(ValueError, match=r"^topic_arn: .* is not an SNS topic ARN") as caught:
        require_topic_arn("topic_arn", arn)
    # The runtime refuses the same value with the same rule: the synth check is its check.
    with pytest.raises(ConfigurationError, match="is not an SNS topic ARN"):
        EndpointConfig(allowed_topic_arns=frozenset([arn]), dedupe_table="Deliveries")
    assert caught.type is ConfigurationError


def test_a_topic_arn_the_runtime_accepts_passes() -> None:
    for arn in (TOPIC_ARN, TOPIC_ARN + ".fifo", "arn:aws-us-gov:sns:us-gov-west-1:111111111111:T"):
        assert require_topic_arn("topic_arn", arn) == arn
        EndpointConfig(allowed_topic_arns=frozenset([arn]), dedupe_table="Deliveries")


def test_a_cross_account_subscription_refuses_a_malformed_topic_arn() -> None:
    stack = Stack(App(), "S")
    queue = EndpointQueue(stack, "Q", endpoint_name="Q")
    with pytest.raises(ValueError, match=r"^topic_arn: 'arn:aws:sns:us-east-1:111111111111:\*'"):
        CrossAccountQueueSubscription(
            stack,
            "Sub",
            topic_arn="arn:aws:sns:us-east-1:111111111111:*",
            subscription_name="Q",
            queue=queue,
        )


@pytest.mark.parametrize("arn", ["*", "arn:aws:sqs:us-east-1:111111111111:Orders"])
def test_the_https_endpoint_refuses_allowed_topics_its_runtime_would_refuse(
    arn: str, partner_endpoint: Callable[..., SnsHttpsEndpoint]
) -> None:
    with pytest.raises(ValueError, match=r"^allowed_topic_arns: .* is not an SNS topic ARN"):
        partner_endpoint(Stack(App(), "S"), allowed_topic_arns=[arn])
