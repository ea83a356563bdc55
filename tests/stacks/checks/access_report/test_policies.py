"""Policy statements read alike for every kind of resource: principals normalized and narrowed
by their conditions, one grant per principal, Allow statements with a negation refused."""

from __future__ import annotations

from typing import Any

import pytest

from stacks.checks.access_report import AccessReportError
from stacks.checks.access_report.policies import (
    action_grants,
    effective_principals,
    pattern_matches,
    principals,
    read_policy,
)

SENDING = frozenset({"sqs:SendMessage", "sqs:*"})


@pytest.mark.parametrize(
    ("principal", "normalized"),
    [
        ("*", [{"any": "*"}]),
        ({"AWS": "*"}, [{"any": "*"}]),
        ({"AWS": "arn:aws:iam::222222222222:root"}, [{"account": "222222222222"}]),
        ({"AWS": "222222222222"}, [{"account": "222222222222"}]),
        (
            {"AWS": "arn:aws:iam::222222222222:role/relay"},
            [{"arn": "arn:aws:iam::222222222222:role/relay"}],
        ),
        ({"Service": ["sns.amazonaws.com"]}, [{"service": "sns.amazonaws.com"}]),
        (
            {"Federated": "cognito-identity.amazonaws.com"},
            [{"federated": "cognito-identity.amazonaws.com"}],
        ),
    ],
)
def test_principals_are_normalized_by_kind(
    principal: Any, normalized: list[dict[str, str]]
) -> None:
    assert principals(principal) == normalized


ROLE = "arn:aws:iam::222222222222:role/r"
RELAYS = "arn:aws:iam::333333333333:role/messaging-relay-outbound-Sales*"
TOPIC = "arn:aws:sns:us-east-1:222222222222:t"


@pytest.mark.parametrize(
    ("principal", "conditions", "narrowed"),
    [
        ({"any": "*"}, {"StringEquals": {"aws:PrincipalOrgID": "o-1"}}, [{"organization": "o-1"}]),
        (
            {"any": "*"},
            {"StringEquals": {"aws:PrincipalAccount": ["222222222222", "333333333333"]}},
            [{"account": "222222222222"}, {"account": "333333333333"}],
        ),
        (
            {"any": "*"},
            {
                "StringEquals": {
                    "aws:PrincipalAccount": ["222222222222"],
                    "aws:PrincipalOrgID": "o-1",
                }
            },
            [{"account": "222222222222"}],
        ),
        (
            {"any": "*"},
            {"ArnLike": {"aws:PrincipalArn": [ROLE, RELAYS]}},
            [{"role": ROLE}, {"role": RELAYS}],
        ),
        ({"account": "222222222222"}, {"ArnEquals": {"aws:PrincipalArn": ROLE}}, [{"role": ROLE}]),
        (
            {"service": "sns.amazonaws.com"},
            {"ArnLike": {"aws:SourceArn": TOPIC}},
            [{"topic": TOPIC}],
        ),
        (
            {"service": "sns.ap-east-1.amazonaws.com"},
            {"ArnEquals": {"aws:SourceArn": [TOPIC, TOPIC + "2"]}},
            [{"topic": TOPIC}, {"topic": TOPIC + "2"}],
        ),
        ({"account": "222222222222"}, {}, [{"account": "222222222222"}]),
        ({"any": "*"}, {"Bool": {"aws:SecureTransport": "true"}}, [{"any": "*"}]),
    ],
    ids=[
        "organization",
        "accounts",
        "accounts-within-an-organization",
        "roles-and-patterns",
        "role-of-an-account",
        "topic",
        "topics-to-a-regional-principal",
        "unconditioned",
        "anyone",
    ],
)
def test_conditions_narrow_a_principal(
    principal: dict[str, str], conditions: dict[str, dict[str, Any]], narrowed: list[dict[str, str]]
) -> None:
    assert effective_principals(principal, conditions) == narrowed


@pytest.mark.parametrize(
    ("principal", "role", "message"),
    [
        ({"any": "*"}, "arn:aws:iam::*:role/relay", "does not name one account's roles"),
        ({"any": "*"}, "arn:aws:iam::2222*:role/relay", "does not name one account's roles"),
        ({"account": "222222222222"}, RELAYS, "names account 333333333333, not the statement's"),
    ],
)
def test_a_role_pattern_that_no_one_account_bounds_is_refused(
    principal: dict[str, str], role: str, message: str
) -> None:
    with pytest.raises(AccessReportError, match=message):
        effective_principals(principal, {"ArnLike": {"aws:PrincipalArn": role}})


def test_a_statement_grants_each_principal_all_its_actions_under_its_conditions() -> None:
    statement = {
        "Effect": "Allow",
        "Action": ["sqs:SendMessage", "sqs:GetQueueUrl"],
        "Principal": {"AWS": ["222222222222", "333333333333"]},
        "Condition": {"Bool": {"aws:SecureTransport": "true"}},
    }
    conditions = {"Bool": {"aws:SecureTransport": "true"}}
    assert action_grants(statement, SENDING) == [
        {
            "principal": {"account": account},
            "actions": ["sqs:GetQueueUrl", "sqs:SendMessage"],
            "conditions": conditions,
        }
        for account in ("222222222222", "333333333333")
    ]


def test_a_grant_without_conditions_has_no_conditions_key() -> None:
    statement = {"Effect": "Allow", "Action": "sqs:*", "Principal": {"AWS": "222222222222"}}
    assert action_grants(statement, SENDING) == [
        {"principal": {"account": "222222222222"}, "actions": ["sqs:*"]}
    ]


def test_a_statement_without_an_action_of_interest_grants_nothing() -> None:
    statement = {"Effect": "Allow", "Action": "sqs:ReceiveMessage", "Principal": "*"}
    assert action_grants(statement, SENDING) == []


def test_a_policy_is_read_as_its_allow_statements_and_its_tls_deny() -> None:
    allow = {"Effect": "Allow", "Action": "sqs:SendMessage", "Principal": "*"}
    deny = {
        "Effect": "Deny",
        "Action": "sqs:*",
        "Principal": "*",
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    policy = read_policy({"Statement": [allow, deny]}, "Messaging-Sales: QueuePolicy")
    assert policy.allows == [allow]
    assert policy.denies_insecure_transport
    assert not read_policy({"Statement": allow}, "here").denies_insecure_transport


@pytest.mark.parametrize("negation", ["NotAction", "NotResource"])
def test_an_allow_with_a_negation_is_refused(negation: str) -> None:
    statement = {"Effect": "Allow", "Principal": "*", negation: "sqs:DeleteQueue"}
    with pytest.raises(
        AccessReportError, match="Messaging-Sales: QueuePolicy allows with NotAction or NotResource"
    ):
        read_policy({"Statement": [statement]}, "Messaging-Sales: QueuePolicy")


@pytest.mark.parametrize(
    ("value", "patterns", "matches"),
    [
        ("s3:PutObject", "s3:*", True),
        ("s3:PutObject", ["s3:get*", "S3:PUT?bject"], True),
        ("s3:PutObject", ["s3:Get*"], False),
        ("arn:aws:s3:::logs/reports/x", "arn:aws:s3:::logs/*", True),
        ("arn:aws:s3:::logs/reports/x", {"Fn::ImportValue": "x"}, False),
    ],
)
def test_iam_patterns_match_case_insensitively_with_wildcards(
    value: str, patterns: Any, matches: bool
) -> None:
    assert pattern_matches(value, patterns) is matches
