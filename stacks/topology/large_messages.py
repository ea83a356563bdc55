"""``topology.largeMessages``: where message bodies over SQS's limit wait, in every account.

NServiceBus's SQS transport moves a body over 1 MiB (256 KiB for a publish) to S3, under
``{KeyPrefix}/{MessageId}`` in the *sender's* configured bucket, and the receiver reads that key
from *its own* configured bucket. With the section present, every account that hosts endpoints
gets one body bucket (``messaging-bodies-<account id>-<region>``) for its endpoints to
configure, and the outbound relays copy each body into the receiving account's bucket before
forwarding the message. A direct send between accounts has no relay to copy the body, so it is
refused here while the section is present.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from constructs_lib.defaults import (
    BODY_BUCKET_NAME_PREFIX,
    BODY_EXPIRATION_DAYS,
    BODY_EXPIRATION_RANGE_DAYS,
)
from stacks.topology.field_checker import FieldChecker

_KEYS = ("expirationDays",)


@dataclass(frozen=True)
class LargeMessageSettings:
    """The validated ``topology.largeMessages`` section."""

    expiration_days: int = BODY_EXPIRATION_DAYS
    """Days a body is kept in each bucket it reaches (a relayed copy starts afresh)."""


def parse_large_messages(check: FieldChecker, raw: Any) -> LargeMessageSettings | None:
    """Validate ``topology.largeMessages``; absent means no endpoint offloads bodies."""
    if raw is None:
        return None
    obj = check.obj(raw, "topology.largeMessages")
    if obj is None:
        return None
    check.unknown_keys(obj, _KEYS, "topology.largeMessages")
    days = check.integer(
        obj,
        "expirationDays",
        "topology.largeMessages",
        default=BODY_EXPIRATION_DAYS,
        low=BODY_EXPIRATION_RANGE_DAYS[0],
        high=BODY_EXPIRATION_RANGE_DAYS[1],
    )
    return LargeMessageSettings(days)


def body_bucket_name(account_id: str, region: str) -> str:
    """The body bucket of one account: what its endpoints configure (``S3Settings``) and what
    the relays of other accounts copy bodies into."""
    return f"{BODY_BUCKET_NAME_PREFIX}-{account_id}-{region}"
