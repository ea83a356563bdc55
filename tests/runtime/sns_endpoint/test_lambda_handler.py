"""The Lambda entry point: built from the environment once per container, 500 while the
configuration is unusable, and nothing heavy imported with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cross_account_runtime.sns_endpoint import lambda_handler
from tests.runtime.sns_endpoint.conftest import (
    VALID_ENVIRONMENT,
    Signer,
    function_url_event,
    record_notification,
    response_body,
)

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_handler_loads_neither_cryptography_nor_boto3() -> None:
    """Cold starts pay only for what a delivery needs; the heavy libraries load on first use."""
    probe = (
        "import sys, cross_account_runtime.sns_endpoint.lambda_handler; "
        "print(sorted(m for m in ('boto3', 'botocore', 'cryptography', 'urllib.request') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.usefixtures("fresh_default_receiver")
def test_the_entry_point_answers_500_while_misconfigured_and_logs_the_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signer: Signer
) -> None:
    monkeypatch.delenv("SNS_ENDPOINT_ALLOWED_TOPIC_ARNS", raising=False)
    monkeypatch.setenv("SNS_ENDPOINT_DEDUPE_TABLE", "sns-dedupe")
    monkeypatch.setenv("SNS_ENDPOINT_HANDLER", VALID_ENVIRONMENT["SNS_ENDPOINT_HANDLER"])
    response = lambda_handler.handler(function_url_event(signer.confirmation()), None)
    assert response["statusCode"] == 500
    assert response_body(response)["outcome"] == "misconfigured"
    log = json.loads(capsys.readouterr().out)
    assert log["level"] == "ERROR"
    assert "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS" in log["reason"]


@pytest.mark.usefixtures("fresh_default_receiver")
def test_the_entry_point_builds_its_endpoint_from_the_environment_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in VALID_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SNS_ENDPOINT_REPLAY_WINDOW_SECONDS", "60")
    event = function_url_event("{}", message_type="Notification", method="GET")
    assert lambda_handler.handler(event, None)["statusCode"] == 405
    receiver = lambda_handler._default_receiver()
    assert receiver.config.replay_window_seconds == 60.0
    assert receiver.process is record_notification
    monkeypatch.setenv("SNS_ENDPOINT_REPLAY_WINDOW_SECONDS", "120")
    assert lambda_handler._default_receiver() is receiver


@pytest.mark.usefixtures("fresh_default_receiver")
def test_the_entry_point_answers_400_to_an_invocation_without_an_event(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invocation whose payload is JSON ``null`` is a bad request, not a failure to retry."""
    for name, value in VALID_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    response = lambda_handler.handler(None, None)
    assert response["statusCode"] == 400
    assert response_body(response)["reason"].startswith("event: null, not an object")
    log, metrics = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (log["level"], log["outcome"]) == ("WARNING", "rejected")
    assert metrics["Rejected"] == 1
