"""Accounts of their own for tests that must not see the example's resources."""

from __future__ import annotations

import random

from local_aws.accounts import AccountCredentials, create_account_credentials

REGION = "us-east-1"


def fresh_account(endpoint_url: str) -> AccountCredentials:
    """An account id drawn from a range the example's accounts are not in, with a key."""
    account_id = str(random.randrange(500_000_000_000, 999_999_999_999))
    return create_account_credentials(endpoint_url, account_id, REGION)
