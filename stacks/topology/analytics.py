"""``topology.analytics``: where delivery logs are collected and analysed.

One account (the ops account, typically) receives every account's topic delivery logs through a
CloudWatch Logs destination, lands them in S3 with Firehose and runs the daily Spark report on
EMR Serverless. The section is optional; without it no logs leave their account.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from constructs_lib.defaults import (
    LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS,
    LOG_BUCKET_RETENTION_DAYS,
    MAX_RETENTION_DAYS,
    REPORT_SCHEDULE,
)
from constructs_lib.delivery_log_bucket import lifecycle_problems
from constructs_lib.delivery_log_stream import LogFormat
from stacks.topology.field_checker import FieldChecker

SCHEDULE_EXPRESSION = re.compile(r"^(cron\((\S+ ){5}\S+\)|rate\(\d+ (minute|hour|day)s?\))$")
_ANALYTICS_KEYS = (
    "account",
    "logFormat",
    "retentionDays",
    "infrequentAccessAfterDays",
    "scheduleExpression",
)
_LIFECYCLE_FIELDS = {
    "retention": "retentionDays",
    "infrequent_access_after": "infrequentAccessAfterDays",
}
"""The fields of the bucket's keywords whose rules :func:`lifecycle_problems` applies."""


@dataclass(frozen=True)
class AnalyticsSettings:
    """The validated ``topology.analytics`` section."""

    account: str
    log_format: LogFormat = LogFormat.ENVELOPES
    retention_days: int = LOG_BUCKET_RETENTION_DAYS
    infrequent_access_after_days: int = LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS
    schedule_expression: str = REPORT_SCHEDULE


def parse_analytics(
    check: FieldChecker,
    raw: Any,
    account_regions: Mapping[str, str],
    topic_accounts: Sequence[tuple[str, str]],
) -> AnalyticsSettings | None:
    """Validate ``topology.analytics``.

    ``account_regions`` maps account names to regions; ``topic_accounts`` lists each topic's name
    and account name (one name may be a topic in several accounts). A CloudWatch Logs subscription can only reach a destination in the
    log group's own region, so every account with topics must share the analytics account's
    region.
    """
    if raw is None:
        return None
    path = "topology.analytics"
    obj = check.obj(raw, path)
    if obj is None:
        return None
    check.unknown_keys(obj, _ANALYTICS_KEYS, path)
    account = check.reference(obj, "account", path, account_regions, "account")
    log_format = LogFormat.ENVELOPES
    if "logFormat" in obj:
        choices = [f.value for f in LogFormat]
        if obj["logFormat"] in choices:
            log_format = LogFormat(obj["logFormat"])
        else:
            check.fail(f"{path}.logFormat", f"must be one of {', '.join(choices)}")
    retention = check.integer(
        obj,
        "retentionDays",
        path,
        default=LOG_BUCKET_RETENTION_DAYS,
        low=1,
        high=MAX_RETENTION_DAYS,
    )
    infrequent = check.integer(
        obj,
        "infrequentAccessAfterDays",
        path,
        default=LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS,
        low=1,
        high=MAX_RETENTION_DAYS,
    )
    for keyword, rule in lifecycle_problems(retention, infrequent):
        check.fail(f"{path}.{_LIFECYCLE_FIELDS[keyword]}", rule)
    schedule = check.string(obj, "scheduleExpression", path, required=False) or REPORT_SCHEDULE
    if not SCHEDULE_EXPRESSION.match(schedule):
        check.fail(
            f"{path}.scheduleExpression",
            "must be an EventBridge Scheduler cron(...) with 6 fields or rate(<n> <unit>), "
            f"e.g. {REPORT_SCHEDULE}",
        )
    if account is None:
        return None
    region = account_regions[account]
    for topic, owner in sorted(set(topic_accounts)):
        if account_regions.get(owner, region) != region:
            check.fail(
                f"{path}.account",
                f"{account!r} is in {region} but topic {topic!r} is in {owner!r} "
                f"({account_regions[owner]}): CloudWatch Logs sends a log group only to a "
                "destination in its own region; place the accounts with topics in one region",
            )
    return AnalyticsSettings(account, log_format, retention, infrequent, schedule)
