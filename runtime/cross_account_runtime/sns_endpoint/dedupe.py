"""Each SNS notification processed once per success, although SNS delivers at least once.

A notification is claimed in DynamoDB before the handler runs, with a conditional write on its
``MessageId``::

    PutItem MessageId, TopicArn, State=IN_PROGRESS, ClaimToken, LeaseExpiresAt, ExpiresAt
      if attribute_not_exists(MessageId) OR (State = IN_PROGRESS AND LeaseExpiresAt < now)

The claim won, the handler runs; it returned, the item becomes ``DONE``; it raised, the item is
deleted so that SNS's retry processes the message. Completion and release are conditional on the
claim's own ``ClaimToken``, so a delivery whose lease ran out cannot touch another's claim. A
message is never dropped because of the deduplication.

The DynamoDB client is created on first use, with the shared settings
(:mod:`cross_account_runtime.common.aws_clients`), and reused for the life of the container.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass

from cross_account_runtime.common.aws_clients import create_client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class DedupeUnavailableError(RuntimeError):
    """DynamoDB could not be asked; the delivery must be retried later."""


class ClaimState(enum.StrEnum):
    """What claiming a message id found."""

    CLAIMED = "claimed"
    """This delivery owns the message (with the claim's token) and runs the handler."""
    DONE = "done"
    """The message was processed before: a duplicate."""
    IN_PROGRESS = "in_progress"
    """Another delivery holds a live claim on the message."""


class ItemState(enum.StrEnum):
    """The ``State`` attribute of a dedupe item, as stored in DynamoDB."""

    IN_PROGRESS = "IN_PROGRESS"
    """Claimed; the claim lasts until ``LeaseExpiresAt``."""
    DONE = "DONE"
    """Processed; kept until the table's TTL removes it."""


@dataclass(frozen=True)
class Claim:
    """The result of claiming a message id: its :class:`ClaimState` and, when this delivery
    owns the claim, the ``token`` that completes or releases it."""

    message_id: str
    state: ClaimState
    token: str = ""


class DynamoDbDedupe:
    """One item per ``MessageId``: claimed ``IN_PROGRESS`` before the handler runs, ``DONE``
    after it returned, deleted when it raised.

    A claim has a lease (``LeaseExpiresAt``): if the process dies while holding it, a later
    delivery takes the message over once the lease has run out, so a crash can cause a second
    processing but never a lost message. Items expire through the table's TTL on ``ExpiresAt``.
    The client is created on first use (a ``dynamodb`` client with the shared settings, the
    region and endpoint from the environment) and reused for the life of the container.
    """

    def __init__(self, table_name: str, *, client: Any = None) -> None:
        self.table_name = table_name
        self._client = client

    @property
    def client(self) -> Any:
        """The DynamoDB client, created once."""
        if self._client is None:
            self._client = create_client("dynamodb")
        return self._client

    def claim(
        self,
        message_id: str,
        topic_arn: str,
        *,
        now: float,
        lease_seconds: float,
        keep_until: float,
    ) -> Claim:
        """Claim ``message_id`` for this delivery unless it is done or validly held."""
        token = os.urandom(16).hex()
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item={
                    "MessageId": {"S": message_id},
                    "TopicArn": {"S": topic_arn},
                    "State": {"S": ItemState.IN_PROGRESS},
                    "ClaimToken": {"S": token},
                    "LeaseExpiresAt": {"N": _number(now + lease_seconds)},
                    "ExpiresAt": {"N": str(int(keep_until) + 1)},
                },
                ConditionExpression=(
                    "attribute_not_exists(#id) OR (#state = :in_progress AND #lease < :now)"
                ),
                ExpressionAttributeNames={
                    "#id": "MessageId",
                    "#state": "State",
                    "#lease": "LeaseExpiresAt",
                },
                ExpressionAttributeValues={
                    ":in_progress": {"S": ItemState.IN_PROGRESS},
                    ":now": {"N": _number(now)},
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except _aws_errors() as error:
            existing = _condition_failure_item(error)
            if existing is None:
                raise DedupeUnavailableError(f"claiming {message_id}: {error}") from error
            done = existing.get("State", {}).get("S") == ItemState.DONE
            return Claim(message_id, ClaimState.DONE if done else ClaimState.IN_PROGRESS)
        return Claim(message_id, ClaimState.CLAIMED, token)

    def complete(self, claim: Claim) -> None:
        """Mark the claimed message ``DONE`` (if the claim is still this delivery's)."""
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key={"MessageId": {"S": claim.message_id}},
                UpdateExpression="SET #state = :done REMOVE #lease",
                ConditionExpression="#token = :token",
                ExpressionAttributeNames={
                    "#state": "State",
                    "#lease": "LeaseExpiresAt",
                    "#token": "ClaimToken",
                },
                ExpressionAttributeValues={
                    ":done": {"S": ItemState.DONE},
                    ":token": {"S": claim.token},
                },
            )
        except _aws_errors() as error:
            raise DedupeUnavailableError(f"completing {claim.message_id}: {error}") from error

    def release(self, claim: Claim) -> None:
        """Delete the claim so that the next delivery of the message processes it."""
        try:
            self.client.delete_item(
                TableName=self.table_name,
                Key={"MessageId": {"S": claim.message_id}},
                ConditionExpression="#token = :token",
                ExpressionAttributeNames={"#token": "ClaimToken"},
                ExpressionAttributeValues={":token": {"S": claim.token}},
            )
        except _aws_errors() as error:
            raise DedupeUnavailableError(f"releasing {claim.message_id}: {error}") from error


def _aws_errors() -> tuple[type[Exception], ...]:
    """botocore's exceptions, imported only once one was raised (an ``except`` clause is
    evaluated only then)."""
    from botocore.exceptions import (  # noqa: PLC0415 (lazy, for cold starts)
        BotoCoreError,
        ClientError,
    )

    return (BotoCoreError, ClientError)


def _number(value: float) -> str:
    """A DynamoDB number with millisecond precision."""
    return f"{value:.3f}"


def _condition_failure_item(error: Exception) -> dict[str, Any] | None:
    """The existing item if ``error`` is DynamoDB's failed condition, else ``None``."""
    response = getattr(error, "response", None) or {}
    if response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
        return None
    item: dict[str, Any] = response.get("Item") or {}
    return item
