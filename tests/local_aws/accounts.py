"""Accounts of their own for tests that must not see the example's resources."""

from __future__ import annotations

import functools
import random
from typing import Any

import boto3

from local_aws.accounts import AccountCredentials, create_account_credentials

REGION = "us-east-1"


def fresh_account(endpoint_url: str) -> AccountCredentials:
    """An account id drawn from a range the example's accounts are not in, with a key."""
    account_id = str(random.randrange(500_000_000_000, 999_999_999_999))
    return create_account_credentials(endpoint_url, account_id, REGION)


@functools.cache
def client(account: AccountCredentials, service: str, endpoint_url: str) -> Any:
    """A client of ``service`` acting as ``account``, made once per run from one shared
    session, which loads each service's model once (a session per account costs 0.1 to 0.2 s
    per service)."""
    return _shared_session().client(
        service,
        endpoint_url=endpoint_url,
        region_name=account.region,
        aws_access_key_id=account.access_key_id,
        aws_secret_access_key=account.secret_access_key,
    )


@functools.cache
def _shared_session() -> boto3.session.Session:
    return boto3.session.Session()
