"""JSON log lines in the Powertools shape, and the service name every component defaults to."""

from __future__ import annotations

import io
import json

import pytest

from cross_account_runtime.common.json_log import ENV_SERVICE_NAME, JsonLogger, default_logger


def test_a_line_has_level_message_service_timestamp_and_the_fields_with_a_value() -> None:
    stream = io.StringIO()
    JsonLogger("orders", stream=stream).warning("refused", reason="stale", message_id=None)

    line = json.loads(stream.getvalue())

    assert [line["level"], line["message"], line["service"], line["reason"]] == [
        "WARNING",
        "refused",
        "orders",
        "stale",
    ]
    assert line["timestamp"].endswith("Z")
    assert "message_id" not in line, "fields without a value are left out"


def test_the_service_is_powertools_service_name_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_SERVICE_NAME, "sales-outbound-relay")
    assert default_logger("sqs-relay").service == "sales-outbound-relay"


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_the_service_is_the_components_default_otherwise(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv(ENV_SERVICE_NAME, raising=False)
    else:
        monkeypatch.setenv(ENV_SERVICE_NAME, value)
    assert default_logger("sns-https-endpoint").service == "sns-https-endpoint"
