"""``topology.analytics``: which account collects the delivery logs, and how."""

from __future__ import annotations

from typing import Any

import pytest

from constructs_lib import LogFormat
from stacks.delivery_log_stack import delivery_log_destination_arn, log_source_accounts
from stacks.topology import parse_topology
from stacks.topology.analytics import AnalyticsSettings
from tests.stacks.topology.problems import problems_of


def test_the_example_collects_logs_in_ops_with_the_defaults(
    example_document: dict[str, Any],
) -> None:
    topology = parse_topology(example_document)
    assert topology.analytics == AnalyticsSettings(
        account="Ops",
        log_format=LogFormat.ENVELOPES,
        retention_days=400,
        infrequent_access_after_days=30,
        schedule_expression="cron(30 0 * * ? *)",
    )
    assert delivery_log_destination_arn(topology) == (
        "arn:aws:logs:us-east-1:333333333333:destination:messaging-delivery-logs"
    )
    assert log_source_accounts(topology) == ("222222222222",)


def test_without_the_section_no_logs_leave_their_account(document: dict[str, Any]) -> None:
    del document["analytics"]
    topology = parse_topology(document)
    assert topology.analytics is None
    assert delivery_log_destination_arn(topology) is None


def test_every_setting_can_be_chosen(document: dict[str, Any]) -> None:
    document["analytics"] = {
        "account": "Billing",
        "logFormat": "messages",
        "retentionDays": 90,
        "infrequentAccessAfterDays": 60,
        "scheduleExpression": "rate(12 hours)",
    }
    assert parse_topology(document).analytics == AnalyticsSettings(
        "Billing", LogFormat.MESSAGES, 90, 60, "rate(12 hours)"
    )


@pytest.mark.parametrize(
    ("analytics", "expected"),
    [
        (
            {"account": "Nowhere"},
            (
                "topology.analytics.account",
                "unknown account 'Nowhere'; declared accounts: Billing, Ops, Sales",
            ),
        ),
        ({}, ("topology.analytics.account", "is required")),
        (
            {"account": "Ops", "logFormat": "parquet"},
            ("topology.analytics.logFormat", "must be one of envelopes, messages"),
        ),
        (
            {"account": "Ops", "retentionDays": 0},
            ("topology.analytics.retentionDays", "must be a whole number from 1 to 36500"),
        ),
        (
            {"account": "Ops", "retentionDays": 30},
            (
                "topology.analytics.retentionDays",
                "30 days must be longer than the 30 days after which logs move to Standard-IA: "
                "S3 refuses a lifecycle rule that expires objects before or when it moves them; "
                "keep logs longer or move them sooner",
            ),
        ),
        (
            {"account": "Ops", "infrequentAccessAfterDays": 7},
            (
                "topology.analytics.infrequentAccessAfterDays",
                "7 days is too soon: S3 moves objects to Standard-IA no sooner than 30 days "
                "after their creation",
            ),
        ),
        (
            {"account": "Ops", "scheduleExpression": "every day"},
            (
                "topology.analytics.scheduleExpression",
                "must be an EventBridge Scheduler cron(...) with 6 fields or rate(<n> <unit>), "
                "e.g. cron(30 0 * * ? *)",
            ),
        ),
        (
            {"account": "Ops", "bucket": "mine"},
            (
                "topology.analytics.bucket",
                "unknown field; allowed fields: account, infrequentAccessAfterDays, logFormat, "
                "retentionDays, scheduleExpression",
            ),
        ),
        ("Ops", ("topology.analytics", "must be an object, got str")),
    ],
)
def test_bad_settings_name_the_field_and_the_fix(
    document: dict[str, Any], analytics: Any, expected: tuple[str, str]
) -> None:
    document["analytics"] = analytics
    assert expected in problems_of(document)


def test_accounts_with_topics_must_share_the_analytics_region(document: dict[str, Any]) -> None:
    document["accounts"][2]["region"] = "eu-west-1"
    assert problems_of(document) == [
        (
            "topology.analytics.account",
            "'Ops' is in eu-west-1 but topic 'MyCompany-Messages-OrderBilled' is in 'Billing' (us-east-1): "
            "CloudWatch Logs sends a log group only to a destination in its own region; place "
            "the accounts with topics in one region",
        )
    ]
