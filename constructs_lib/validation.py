"""Checks on construct props, so a bad value fails at synth naming the prop and the fix."""

from __future__ import annotations

import re
from collections.abc import Iterable

ACCOUNT_ID = re.compile(r"^\d{12}$")
ORGANIZATION_ID = re.compile(r"^o-[a-z0-9]{10,32}$")


def require_role_arn(name: str, role_arn: str, *, pattern: bool = False) -> str:
    """Refuse anything but an IAM role ARN of a well-formed account (with ``pattern``, or an
    ARN pattern whose ``*`` and ``?`` are in the role's name: it then matches roles of that
    one account only); return the account id."""
    parts = role_arn.split(":") if isinstance(role_arn, str) else []
    what = (
        "an IAM role ARN or a pattern of one account's role names"
        if pattern
        else ("an IAM role ARN")
    )
    if len(parts) != 6 or parts[2] != "iam" or not parts[5].startswith("role/"):
        raise ValueError(f"{name}: {role_arn!r} is not {what}")
    wildcards = set("*?")
    if wildcards & set(":".join(parts[:5])) or (not pattern and wildcards & set(parts[5])):
        raise ValueError(
            f"{name}: {role_arn!r} is not {what}; wildcards may stand only for part of a role's "
            "name, after the account id"
        )
    require_account_ids(f"{name} (account)", [parts[4]])
    return parts[4]


def require_range(name: str, value: int, low: int, high: int) -> None:
    """Refuse a whole number outside ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: must be a whole number from {low} to {high}, got {value!r}")


def require_account_ids(name: str, values: Iterable[str]) -> None:
    """Refuse anything but 12-digit account ids (a typo would grant a stranger's account)."""
    for value in values:
        if not isinstance(value, str) or not ACCOUNT_ID.match(value):
            raise ValueError(f"{name}: account ids are exactly 12 digits, got {value!r}")


def require_organization_ids(name: str, values: Iterable[str]) -> None:
    """Refuse malformed organization ids (``o-`` and 10-32 lowercase letters or digits)."""
    for value in values:
        if not isinstance(value, str) or not ORGANIZATION_ID.match(value):
            raise ValueError(f"{name}: organization ids look like 'o-a1b2c3d4e5', got {value!r}")
