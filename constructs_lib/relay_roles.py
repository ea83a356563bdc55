"""The fixed names of the account bridge's relay roles, and their ARNs, which other accounts
admit.

Other accounts admit an account's relays before they exist (an ingress queue admits the
sending accounts' outbound relays, a body bucket the relays that copy into it), so each relay
role has a name fixed by its account's name, its direction and the number of its account's
stack: ``messaging-relay-<direction>-<account name>`` for the first, ``-<n>`` after. They are
admitted each by its exact ARN (``ArnEquals`` on ``aws:PrincipalArn``): never by a pattern,
which a role another team of the account names alike (``...-SalesEvil``, ``...-Sales-etl``, or
one under a path of that name) would match. A role created under the very name of a relay role
before the bridge creates it is what :class:`~constructs_lib.RelayRoleGuard` prevents.
"""

from __future__ import annotations

import re

from constructs_lib.defaults import RELAY_STACK_NUMBER
from constructs_lib.validation import require_account_ids
from cross_account_runtime.relay.config_format import RelayDirection

IAM_ROLE_NAME_MAX = 64
"""IAM's limit on a role's name."""
RELAY_ROLE_PREFIX = "messaging-relay-"
"""What every relay role's name starts with, before ``<direction>-<account name>[-<n>]``:
fixed, so that other accounts can admit the roles before they exist and a reader of the
templates can tell a relay's role."""
RELAY_STACKS = (1, 999)
"""An account's relay roles are numbered 1 to 999, one per stack of the account with relays."""
_ROLE_NAME_CHARACTERS = re.compile(r"^[\w+=,.@-]+$")


def relay_role_name(
    account_name: str, direction: RelayDirection, n: int = RELAY_STACK_NUMBER
) -> str:
    """``messaging-relay-<direction>-<account name>`` for the relay of an account's first stack,
    with ``-<n>`` for its n-th stack's (``n`` >= 2); at most 64 characters (IAM's limit), the
    account's part shortened before the suffix where needed.

    :param account_name: the account's name, as every account of the bridge calls it.
    :param direction: the relay's direction.
    :param n: the number of the account's stack that holds the relay. Default:
        :data:`~constructs_lib.defaults.RELAY_STACK_NUMBER` (1).
    """
    low, high = RELAY_STACKS
    if isinstance(n, bool) or not isinstance(n, int) or not low <= n <= high:
        raise ValueError(f"n: an account's relay stacks are numbered {low} to {high}, got {n!r}")
    base = _relay_role_base(account_name, direction)
    if n == 1:
        return base[:IAM_ROLE_NAME_MAX]
    suffix = f"-{n}"
    return f"{base[: IAM_ROLE_NAME_MAX - len(suffix)]}{suffix}"


def relay_role_arn(
    account_name: str,
    account_id: str,
    direction: RelayDirection,
    n: int = RELAY_STACK_NUMBER,
    partition: str = "aws",
) -> str:
    """The exact ARN of the relay role of an account's stack ``n`` (no path: the bridge creates
    its roles at the root), which other accounts' policies admit before it exists.

    :param account_name: the account's name, as every account of the bridge calls it.
    :param account_id: its 12-digit id.
    :param direction: the relay's direction.
    :param n: the number of the account's stack that holds the relay. Default:
        :data:`~constructs_lib.defaults.RELAY_STACK_NUMBER` (1).
    :param partition: the account's partition (``aws-cn``, ``aws-us-gov``). Default: ``aws``.
    """
    require_account_ids("account_id", [account_id])
    return f"arn:{partition}:iam::{account_id}:role/{relay_role_name(account_name, direction, n)}"


def _relay_role_base(account_name: str, direction: RelayDirection) -> str:
    if not isinstance(account_name, str) or not _ROLE_NAME_CHARACTERS.match(account_name):
        raise ValueError(
            f"account_name: {account_name!r} names the account's relay roles, and IAM role names "
            "take letters, digits and +=,.@_- only"
        )
    return f"{RELAY_ROLE_PREFIX}{RelayDirection(direction)}-{account_name}"
