"""The Lambda entry point: built from its configuration file once per container, every message
reported failed while the configuration is unusable, and nothing heavy imported with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cross_account_runtime.relay import lambda_handler
from tests.runtime.relay.conftest import (
    BILLING_INGRESS_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    SALES_ARN,
    LambdaContext,
    failed_ids,
    good_record,
    log_lines,
    message_lines,
    sqs_event,
)

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_relay_loads_neither_boto3_nor_botocore() -> None:
    """Cold starts pay for boto3 only when the first message is sent."""
    probe = (
        "import sys, cross_account_runtime.relay.lambda_handler; "
        "print(sorted(m for m in ('boto3', 'botocore', 'typing', 'dataclasses') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.usefixtures("fresh_default_relay")
def test_the_entry_point_reports_every_message_failed_while_misconfigured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("RELAY_CONFIGURATION", "relay-config.json")
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sales-outbound-relay")
    records = [good_record(), good_record()]

    response = lambda_handler.handler(sqs_event(*records), LambdaContext())

    assert failed_ids(response) == [record["messageId"] for record in records]
    [line] = log_lines(capsys.readouterr().out)
    assert line["level"] == "ERROR"
    assert line["outcome"] == "misconfigured"
    assert line["service"] == "sales-outbound-relay"
    assert line["reason"].startswith(
        f"RELAY_CONFIGURATION: cannot read {tmp_path / 'relay-config.json'} "
    )


@pytest.mark.usefixtures("fresh_default_relay")
def test_the_entry_point_reads_its_configuration_file_once_per_container(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    configuration = tmp_path / "relay-config.json"
    configuration.write_text(
        json.dumps(
            {
                "direction": "outbound",
                "routes": {
                    "Billing": {
                        "destination": BILLING_INGRESS_ARN,
                        "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                    }
                },
                "localEndpoints": ["Sales"],
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("RELAY_CONFIGURATION", "relay-config.json")
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    monkeypatch.setenv("RELAY_HOME", "arn:aws:sqs:us-east-1:111111111111")
    unrouted = good_record(source="arn:aws:sqs:us-east-1:111111111111:Unrouted")

    response = lambda_handler.handler(sqs_event(unrouted), LambdaContext())

    assert failed_ids(response) == [unrouted["messageId"]]
    built = lambda_handler._default_relay()
    assert set(built.config.routes) == {BILLING_SHADOW_ARN}
    assert built.config.local_endpoints == {"Sales": SALES_ARN}
    configuration.unlink()
    # A warm invocation reads nothing: the file is gone, the relay is the same.
    lambda_handler.handler(sqs_event(unrouted), LambdaContext())
    assert lambda_handler._default_relay() is built
    kinds = [line["kind"] for line in message_lines(capsys.readouterr().out)]
    assert kinds == ["unknown_route", "unknown_route"]
