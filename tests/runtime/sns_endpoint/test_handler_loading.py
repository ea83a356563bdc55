"""The notification handler named by SNS_ENDPOINT_HANDLER: imported by its path, or a
configuration error naming the variable and the fix."""

from __future__ import annotations

import json

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.sns_endpoint.handler_loading import load_notification_handler


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("tests.runtime.sns_endpoint.conftest", "is not 'package.module:function'"),
        (":record_notification", "is not 'package.module:function'"),
        ("tests.runtime.sns_endpoint.no_such_module:handle", "cannot import module"),
        ("tests.runtime.sns_endpoint.conftest:no_such_function", "has no 'no_such_function'"),
        ("tests.runtime.sns_endpoint.conftest:TOPIC_ARN", "is not callable"),
    ],
)
def test_a_bad_handler_path_is_named_with_its_fix(path: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match="SNS_ENDPOINT_HANDLER") as raised:
        load_notification_handler(path)
    assert message in str(raised.value)


def test_a_handler_path_may_name_an_attribute_of_an_attribute() -> None:
    loaded: object = load_notification_handler("json:JSONDecoder.decode")
    assert loaded is json.JSONDecoder.decode
