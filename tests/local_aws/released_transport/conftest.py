"""An SQS client of an account of its own for each moto test of the released transport."""

from __future__ import annotations

from typing import Any

import pytest

from local_aws.accounts import AccountCredentials


@pytest.fixture
def sqs(new_account: AccountCredentials, moto_endpoint: str) -> Any:
    """An SQS client acting as a fresh account of the local AWS."""
    return new_account.session().client("sqs", endpoint_url=moto_endpoint)
