"""Credentials that belong to one account of the local AWS.

moto keeps separate state per account and attributes a request to the account of its access
key. ``cdk bootstrap`` and ``cdk deploy`` need credentials of the target account, so an IAM
user and access key are created inside that account first (moto's ``x-moto-account-id``
header addresses the account for that one call).
"""

from __future__ import annotations

import contextlib
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

import boto3

MOTO_ACCOUNT_HEADER = "x-moto-account-id"
DEPLOYER_USER = "local-deployer"


@dataclass(frozen=True)
class AccountCredentials:
    """An access key pair of one account in the local AWS."""

    account_id: str
    region: str
    access_key_id: str
    secret_access_key: str

    def session(self) -> boto3.session.Session:
        """A boto3 session acting as this account."""
        return boto3.session.Session(
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            region_name=self.region,
        )

    def environment(self, endpoint_url: str) -> dict[str, str]:
        """Environment variables that point the AWS CLI tools at the local AWS as this account."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ENDPOINT_URL": endpoint_url,
            "AWS_ENDPOINT_URL_S3_FOR_CLOUDFORMATION": endpoint_url.replace(
                "127.0.0.1", "localhost"
            ),
        }


def route_sqs_by_queue_url(request: Any, **_: Any) -> None:
    """``before-sign`` hook: address an SQS call to the account in its ``QueueUrl``.

    In AWS a queue of another account is reached by its URL when its policy allows the caller;
    moto answers from the caller's account unless the ``x-moto-account-id`` header names
    another, so the header is set from the URL (JSON and query protocols alike).
    """
    body = request.body
    if not body:
        return
    text = body.decode() if isinstance(body, bytes) else str(body)
    url: object
    if text.lstrip().startswith("{"):
        url = json.loads(text).get("QueueUrl")
    else:
        values = urllib.parse.parse_qs(text).get("QueueUrl", [])
        url = values[0] if values else None
    if isinstance(url, str):
        request.headers[MOTO_ACCOUNT_HEADER] = url.rstrip("/").split("/")[-2]


def routed_session(credentials: AccountCredentials) -> boto3.session.Session:
    """A boto3 session acting as the account, whose SQS calls reach the queue URL's account."""
    session = credentials.session()
    session.events.register("before-sign.sqs", route_sqs_by_queue_url)
    return session


def create_account_credentials(
    endpoint_url: str, account_id: str, region: str
) -> AccountCredentials:
    """Create an IAM user with an access key inside ``account_id`` of the local AWS."""
    bootstrap = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=region
    )
    iam = bootstrap.client("iam", endpoint_url=endpoint_url)

    def address_account(request: Any, **_: Any) -> None:
        request.headers[MOTO_ACCOUNT_HEADER] = account_id

    iam.meta.events.register("before-sign.iam.*", address_account)
    with contextlib.suppress(iam.exceptions.EntityAlreadyExistsException):
        iam.create_user(UserName=DEPLOYER_USER)
    key = iam.create_access_key(UserName=DEPLOYER_USER)["AccessKey"]
    credentials = AccountCredentials(account_id, region, key["AccessKeyId"], key["SecretAccessKey"])
    actual = credentials.session().client("sts", endpoint_url=endpoint_url).get_caller_identity()
    if actual["Account"] != account_id:
        raise RuntimeError(
            f"local AWS attributed the new key to account {actual['Account']}, not {account_id}"
        )
    return credentials
