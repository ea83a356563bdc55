"""Every runtime boto3 client gives up quickly and retries in botocore's standard mode, and
boto3 is imported only when the first client is created."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cross_account_runtime.common.aws_clients import create_client

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials and a region in the environment, as Lambda provides them; no profile or
    config file can add settings of its own."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")


@pytest.mark.usefixtures("dummy_credentials")
@pytest.mark.parametrize("service", ["sqs", "dynamodb"])
def test_a_client_connects_within_2_s_reads_within_5_s_and_retries_3_times(service: str) -> None:
    """The relay's SQS clients and the endpoint's DynamoDB client share these settings:
    botocore's max_attempts of 3 counts retries, so a call makes at most 4 attempts."""
    config = create_client(service, "eu-west-1").meta.config

    assert (config.connect_timeout, config.read_timeout) == (2, 5)
    assert config.retries == {"mode": "standard", "total_max_attempts": 4}


@pytest.mark.usefixtures("dummy_credentials")
def test_a_client_is_in_the_region_asked_for_else_in_the_environments() -> None:
    assert create_client("sqs", "eu-west-1").meta.region_name == "eu-west-1"
    assert create_client("dynamodb").meta.region_name == "ap-south-1"


def test_importing_the_module_loads_neither_boto3_nor_botocore() -> None:
    """Cold starts pay for boto3 only when the first client is created."""
    probe = (
        "import sys, cross_account_runtime.common.aws_clients; "
        "print(sorted(m for m in ('boto3', 'botocore', 'typing') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
