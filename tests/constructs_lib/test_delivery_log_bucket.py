"""DeliveryLogBucket's lifecycle rules, the one home of the analytics retention bounds: the
construct refuses what S3 would refuse (or what defeats itself), naming the keyword, and the
topology reports the same rules at its fields."""

from __future__ import annotations

import pytest
from aws_cdk import App, Duration, Stack

from constructs_lib import DeliveryLogBucket
from constructs_lib.defaults import (
    LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS,
    LOG_BUCKET_RETENTION_DAYS,
    MAX_RETENTION_DAYS,
)
from constructs_lib.delivery_log_bucket import lifecycle_problems


def test_the_defaults_pass() -> None:
    assert (
        lifecycle_problems(LOG_BUCKET_RETENTION_DAYS, LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS) == []
    )
    assert lifecycle_problems(31, 30) == []


@pytest.mark.parametrize(
    ("retention", "infrequent", "keyword", "rule"),
    [
        (400, 29, "infrequent_access_after", "29 days is too soon"),
        (30, 30, "retention", "30 days must be longer than the 30 days"),
        (100, 365, "retention", "100 days must be longer than the 365 days"),
        (MAX_RETENTION_DAYS + 1, 30, "retention", "is more than 36,500"),
    ],
)
def test_each_rule_names_the_keyword_it_is_about(
    retention: int, infrequent: int, keyword: str, rule: str
) -> None:
    [(where, message)] = lifecycle_problems(retention, infrequent)
    assert (where, rule in message) == (keyword, True), message


def test_the_bucket_refuses_logs_that_expire_before_they_move_to_standard_ia() -> None:
    with pytest.raises(ValueError, match=r"^retention: 30 days must be longer than the 30 days"):
        DeliveryLogBucket(Stack(App(), "S"), "Bucket", retention=Duration.days(30))
