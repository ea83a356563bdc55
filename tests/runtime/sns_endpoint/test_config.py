"""The endpoint's configuration: read from the environment, with every bad value named with its
fix."""

from __future__ import annotations

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.sns_endpoint.config import EndpointConfig
from tests.runtime.sns_endpoint.conftest import (
    OTHER_ALLOWED_TOPIC_ARN,
    TOPIC_ARN,
    VALID_ENVIRONMENT,
)


def test_the_configuration_is_read_from_the_environment() -> None:
    config = EndpointConfig.from_environment(
        {
            **VALID_ENVIRONMENT,
            "SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "600",
            "SNS_ENDPOINT_LEASE_SECONDS": "20",
        }
    )
    assert config == EndpointConfig(
        allowed_topic_arns=frozenset({TOPIC_ARN, OTHER_ALLOWED_TOPIC_ARN}),
        dedupe_table="sns-dedupe",
        handler_path="tests.runtime.sns_endpoint.conftest:record_notification",
        replay_window_seconds=600.0,
        lease_seconds=20.0,
    )


def test_unset_durations_take_their_defaults() -> None:
    config = EndpointConfig.from_environment(VALID_ENVIRONMENT)
    assert config.replay_window_seconds == 3900.0
    assert config.lease_seconds == 30.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": ""}, "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS) is empty"),
        (
            {"SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": "arn:aws:sns:us-east-1:111111111111:*"},
            "is not an SNS topic ARN",
        ),
        (
            {"SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": "arn:aws:sqs:us-east-1:111111111111:Orders"},
            "is not an SNS topic ARN",
        ),
        ({"SNS_ENDPOINT_DEDUPE_TABLE": ""}, "SNS_ENDPOINT_DEDUPE_TABLE is not set"),
        ({"SNS_ENDPOINT_DEDUPE_TABLE": "a b"}, "is not a DynamoDB table name"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "1h"}, "must be a number of seconds, got '1h'"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "-5"}, "must be a positive, finite number"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "inf"}, "must be a positive, finite number"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "nan"}, "must be a positive, finite number"),
        ({"SNS_ENDPOINT_LEASE_SECONDS": "0"}, "lease_seconds (SNS_ENDPOINT_LEASE_SECONDS)"),
    ],
)
def test_a_bad_setting_is_named_with_its_fix(change: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        EndpointConfig.from_environment({**VALID_ENVIRONMENT, **change})
    assert message in str(raised.value)
