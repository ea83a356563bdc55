"""SQS, SNS and S3 clients of one account of its own for each moto test of the released
transport."""

from __future__ import annotations

from typing import Any

import pytest

from local_aws.accounts import AccountCredentials


@pytest.fixture
def sqs(new_account: AccountCredentials, moto_endpoint: str) -> Any:
    """An SQS client acting as a fresh account of the local AWS."""
    return new_account.session().client("sqs", endpoint_url=moto_endpoint)


@pytest.fixture
def sns(new_account: AccountCredentials, moto_endpoint: str) -> Any:
    """An SNS client of the same account as :func:`sqs`."""
    return new_account.session().client("sns", endpoint_url=moto_endpoint)


@pytest.fixture
def s3(new_account: AccountCredentials, moto_endpoint: str) -> Any:
    """An S3 client of the same account as :func:`sqs`."""
    return new_account.session().client("s3", endpoint_url=moto_endpoint)
