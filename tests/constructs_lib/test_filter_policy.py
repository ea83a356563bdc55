"""SNS filter policies: the rules SNS applies when a subscription is created, applied at synth by
every construct that takes a ``filter_policy``, each problem named with its path in the policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_lambda as lambda_

from constructs_lib import (
    CrossAccountQueueSubscription,
    DeliveryLoggedTopic,
    EndpointQueue,
    FilterPolicyScope,
)
from constructs_lib.filter_policy import check_filter_policy, filter_policy_problems

ATTRIBUTES = FilterPolicyScope.MESSAGE_ATTRIBUTES
BODY = FilterPolicyScope.MESSAGE_BODY
ACCOUNT = "222222222222"


@pytest.mark.parametrize(
    "policy",
    [
        {"kind": ["billed", "refunded"], "amount": [{"numeric": [">", 0, "<=", 1000]}]},
        {"store": [{"prefix": "eu-"}], "region": [{"anything-but": ["us-east-1"]}]},
        {"source": [{"cidr": "10.0.0.0/24"}], "flag": [True, None], "vip": [{"exists": True}]},
        {"name": [{"equals-ignore-case": "ACME"}, {"suffix": {"equals-ignore-case": ".COM"}}]},
        {"$or": [{"a": ["1"]}, {"b": [2.5]}]},
    ],
)
def test_policies_sns_accepts_pass(policy: dict[str, Any]) -> None:
    assert filter_policy_problems(policy, ATTRIBUTES) == []


@pytest.mark.parametrize(
    ("policy", "path", "rule"),
    [
        ({}, "", "an empty object"),
        ({"a": []}, ".a", "an empty list"),
        ({"a": "billed"}, ".a", "takes a list of values"),
        ({"a": [{"begins-with": "x"}]}, ".a[0]", "unknown operator 'begins-with'"),
        ({"a": [{"prefix": "x", "suffix": "y"}]}, ".a[0]", "exactly one key"),
        ({"a": [{"prefix": ""}]}, ".a[0]", "'prefix' takes a non-empty string"),
        ({"a": [{"exists": "yes"}]}, ".a[0]", "'exists' takes true or false"),
        ({"a": [{"cidr": "10.0.0.300/8"}]}, ".a[0]", "'cidr' takes an IP prefix"),
        ({"a": [{"numeric": [">", "0"]}]}, ".a[0]", "'numeric' takes"),
        ({"a": [{"numeric": ["<", 5, ">", 1]}]}, ".a[0]", "from a lower bound"),
        ({"a": [2_000_000_000]}, ".a[0]", "from -1,000,000,000 to 1,000,000,000"),
        ({"a": [0.123456]}, ".a[0]", "more than 5 decimals"),
        ({"a": [{"anything-but": []}]}, ".a[0]", "'anything-but' takes"),
        ({"a": [["nested"]]}, ".a[0]", "must be a string, a number"),
        ({"$or": [{"a": ["1"]}]}, ".$or", "at least two policy objects"),
        ({k: ["x"] for k in "abcdef"}, "", "at most 5 keys"),
        ({"a": list(range(13)), "b": list(range(12))}, "", "156 combinations"),
        ({"a": ["x" * 270_000]}, "", "bytes of JSON; SNS takes at most 262,144"),
    ],
)
def test_each_rule_sns_applies_is_reported_at_its_path(
    policy: dict[str, Any], path: str, rule: str
) -> None:
    [(where, message)] = filter_policy_problems(policy, ATTRIBUTES)
    assert (where, rule in message) == (path, True), message


def test_or_branches_add_their_combinations_and_keys() -> None:
    branches = [{"a": list(range(75))}, {"b": list(range(76))}]
    [(path, rule)] = filter_policy_problems({"$or": branches}, ATTRIBUTES)
    assert (path, "151 combinations" in rule) == ("", True)


def test_a_nested_policy_filters_the_body_only() -> None:
    nested = {"order": {"total": [{"numeric": [">", 100]}]}}
    assert filter_policy_problems(nested, BODY) == []
    [(path, rule)] = filter_policy_problems(nested, ATTRIBUTES)
    assert path == ".order"
    assert "filter_policy_scope=FilterPolicyScope.MESSAGE_BODY" in rule


def test_every_problem_is_reported_at_once() -> None:
    problems = filter_policy_problems({"a": [], "b": [{"prefx": "x"}]}, ATTRIBUTES)
    assert [path for path, _ in problems] == [".a", ".b[0]"]


def test_the_check_names_the_keyword_and_each_path() -> None:
    with pytest.raises(
        ValueError,
        match=r"^filter_policy\.a: is an empty list.*; filter_policy\.b\[0\]: unknown operator 'prefx'",
    ):
        check_filter_policy({"a": [], "b": [{"prefx": "x"}]})


def test_the_check_refuses_what_is_no_policy_object() -> None:
    with pytest.raises(TypeError, match="filter_policy: must be a dict"):
        check_filter_policy('{"a": ["x"]}')  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="filter_policy_scope: must be one of"):
        check_filter_policy({"a": ["x"]}, "Body")  # type: ignore[arg-type]


def _stack() -> Stack:
    return Stack(App(), "Test", env=Environment(account=ACCOUNT, region="us-east-1"))


def _topic(stack: Stack) -> DeliveryLoggedTopic:
    return DeliveryLoggedTopic(stack, "Topic", topic_name="OrderBilled")


SUBSCRIBERS: dict[str, Callable[[Stack, dict[str, Any], FilterPolicyScope], object]] = {
    "queue": lambda s, policy, scope: _topic(s).add_queue_subscription(
        "Audit",
        EndpointQueue(s, "Audit", endpoint_name="Audit"),
        filter_policy=policy,
        filter_policy_scope=scope,
    ),
    "url": lambda s, policy, scope: _topic(s).add_url_subscription(
        "Partner",
        "https://partner.example.com/hook",
        filter_policy=policy,
        filter_policy_scope=scope,
    ),
    "lambda": lambda s, policy, scope: _topic(s).add_lambda_subscription(
        "Fn",
        lambda_.Function.from_function_arn(
            s, "F", f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:react"
        ),
        filter_policy=policy,
        filter_policy_scope=scope,
    ),
    "imported topic url": lambda s, policy, scope: DeliveryLoggedTopic.from_topic_arn(
        s, "Imported", f"arn:aws:sns:us-east-1:{ACCOUNT}:OrderBilled"
    ).add_url_subscription(
        "Partner",
        "https://partner.example.com/hook",
        filter_policy=policy,
        filter_policy_scope=scope,
    ),
    "cross-account queue": lambda s, policy, scope: CrossAccountQueueSubscription(
        s,
        "Sub",
        topic_arn="arn:aws:sns:us-east-1:111111111111:OrderBilled",
        subscription_name="Audit",
        queue=EndpointQueue(s, "Audit", endpoint_name="Audit"),
        filter_policy=policy,
        filter_policy_scope=scope,
    ),
}


@pytest.mark.parametrize("subscriber", sorted(SUBSCRIBERS))
def test_every_subscribing_construct_refuses_a_malformed_policy(subscriber: str) -> None:
    with pytest.raises(ValueError, match=r"^filter_policy\.kind: is an empty list"):
        SUBSCRIBERS[subscriber](_stack(), {"kind": []}, ATTRIBUTES)


@pytest.mark.parametrize("subscriber", sorted(SUBSCRIBERS))
def test_every_subscribing_construct_takes_a_nested_policy_on_the_body_only(
    subscriber: str,
) -> None:
    nested = {"order": {"total": [{"numeric": [">", 100]}]}}
    SUBSCRIBERS[subscriber](_stack(), nested, BODY)
    with pytest.raises(ValueError, match=r"^filter_policy\.order: a nested object"):
        SUBSCRIBERS[subscriber](_stack(), nested, ATTRIBUTES)
