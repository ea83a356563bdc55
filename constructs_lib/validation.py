"""Checks on construct props, so a bad value fails at synth naming the prop and the fix."""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Iterable

from aws_cdk import Annotations, IResource, Stack, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import IConstruct

from cross_account_runtime.sns_endpoint.config import check_topic_arn

ACCOUNT_ID = re.compile(r"^\d{12}$")
ORGANIZATION_ID = re.compile(r"^o-[a-z0-9]{10,32}$")
MAX_PORT = 65_535
_HTTPS_URL = re.compile(r"^https://[^/\s:@]+(:\d{1,5})?(/\S*)?$")
_HOST_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
AWS_MANAGED_KEY_ALIAS_PREFIX = "alias/aws/"
"""What the aliases of AWS-managed keys start with (``alias/aws/sqs``, ``alias/aws/sns``)."""


def require_role_arn(name: str, role_arn: str) -> str:
    """Refuse anything but one IAM role's exact ARN of a well-formed account (a wildcard would
    admit every role another team of the account names alike); return the account id."""
    parts = role_arn.split(":") if isinstance(role_arn, str) else []
    if len(parts) != 6 or parts[2] != "iam" or not parts[5].startswith("role/"):
        raise ValueError(f"{name}: {role_arn!r} is not an IAM role ARN")
    if set("*?") & set(role_arn):
        raise ValueError(
            f"{name}: {role_arn!r} is a pattern: name each role by its exact ARN (a pattern "
            "also admits the roles another team of the account names alike)"
        )
    require_account_ids(f"{name} (account)", [parts[4]])
    return parts[4]


def range_problem(value: object, low: int, high: int) -> str | None:
    """Why ``value`` is not a whole number from ``low`` to ``high``, or None: the one wording
    of a range refusal, for a construct's keyword and a topology's field alike."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return f"must be a whole number from {low} to {high}, got {value!r}"
    return None


def require_range(name: str, value: int, low: int, high: int) -> None:
    """Refuse a whole number outside ``low..high`` (:func:`range_problem`)."""
    problem = range_problem(value, low, high)
    if problem is not None:
        raise ValueError(f"{name}: {problem}")


def require_account_ids(name: str, values: Iterable[str]) -> None:
    """Refuse anything but 12-digit account ids (a typo would grant a stranger's account)."""
    for value in values:
        if not isinstance(value, str) or not ACCOUNT_ID.match(value):
            raise ValueError(f"{name}: account ids are exactly 12 digits, got {value!r}")


def require_other_accounts(
    name: str, account_ids: Iterable[str], scope: IConstruct, grant: str
) -> None:
    """Refuse the stack's own account among accounts a resource policy is to admit.

    A grant to an account is ``Principal: *`` narrowed by ``aws:PrincipalAccount``: for
    another account, its principals still need an IAM policy of their own (the request crosses
    accounts); for the resource's own account, the resource policy alone suffices, so every
    role and user of the account could then act without any IAM grant. Same-account access is
    granted with IAM (``grant`` says how).

    In a stack without an account (env-agnostic) synth cannot tell the own account: the check
    is left out and a warning says so, since a stack that admits other accounts by id is
    deployed to a known account anyway (give it ``env=Environment(account=...)``)."""
    listed = list(account_ids)
    if not listed:
        return
    own = Stack.of(scope).account
    if Token.is_unresolved(own):
        Annotations.of(scope).add_warning_v2(
            f"constructs-lib:{name}-own-account-unchecked",
            f"{name}: this stack has no account (env-agnostic), so synth cannot check that the "
            "accounts listed leave out its own (a grant to it would admit every principal of "
            "the account without IAM); give the stack env=Environment(account=...)",
        )
        return
    if own in listed:
        raise ValueError(
            f"{name}: {own} is this stack's own account, and a grant to it would admit every "
            "principal of the account (Principal: *, aws:PrincipalAccount) without an IAM "
            f"policy; leave it out and grant same-account principals with IAM ({grant})"
        )


def require_local(
    name: str, resource: IResource, scope: IConstruct, what: str, instead: str
) -> None:
    """Refuse a resource of another account where ``scope``'s construct needs one of its own
    stack's account (a queue SNS subscribes from the queue's account, a queue whose metrics
    CloudWatch keeps in that account alone): made there, it would land in the wrong account
    and fail at deploy, or watch nothing. ``what`` names the resource (``"a queue"``),
    ``instead`` says what to use. Where either account is unknown at synth (an env-agnostic
    stack) nothing can be told."""
    account = resource.env.account
    own = Stack.of(scope).account
    if Token.is_unresolved(account) or Token.is_unresolved(own) or account == own:
        return
    raise ValueError(
        f"{name}: {resource.node.path} is {what} of account {account}, not of this stack's "
        f"({own}); {instead}"
    )


def require_organization_ids(name: str, values: Iterable[str]) -> None:
    """Refuse malformed organization ids (``o-`` and 10-32 lowercase letters or digits)."""
    for value in values:
        if not isinstance(value, str) or not ORGANIZATION_ID.match(value):
            raise ValueError(f"{name}: organization ids look like 'o-a1b2c3d4e5', got {value!r}")


def https_url_problem(url: str) -> str | None:
    """What is wrong with an HTTPS subscription's URL, or None: SNS refuses a port outside
    1-65535 or a host that is no DNS name or IP address when the subscription is created;
    plain ``http://`` would send every message across the internet in clear, and credentials
    in the URL would stand in the template in clear too."""
    if not isinstance(url, str) or not _HTTPS_URL.match(url):
        return f"{url!r} must be an https:// URL with a host (plain http sends messages in clear)"
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= MAX_PORT:
        return f"{url!r}: the port must be from 1 to {MAX_PORT}"
    host = parts.hostname or ""
    if not all(_HOST_LABEL.match(label) for label in host.split(".")) and not _is_ip(host):
        return f"{url!r}: {host!r} is not a host name (letters, digits and '-' between dots)"
    return None


def require_https_url(name: str, url: str) -> None:
    """Refuse an HTTPS subscription URL SNS would refuse or that would not be HTTPS
    (:func:`https_url_problem`)."""
    problem = https_url_problem(url)
    if problem is not None:
        raise ValueError(f"{name}: {problem}")


def require_topic_arn(name: str, arn: str) -> str:
    """Refuse anything but one exact SNS topic ARN (no wildcards): the SNS HTTPS endpoint's
    runtime rule (:func:`cross_account_runtime.sns_endpoint.config.check_topic_arn`), applied
    at synth wherever a construct takes a topic ARN, so the two cannot disagree."""
    return check_topic_arn(arn, name)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def require_customer_managed_key(
    name: str, key: kms.IKey | str | None, fix: str | None = None
) -> None:
    """Refuse an AWS-managed key (``alias/aws/sqs``, ``alias/aws/sns``, any ``alias/aws/*``),
    given as a key object or as an ARN or alias name. Its key policy is AWS's and cannot be
    changed: it admits the principals of its own account through its own service only, so
    senders, publishers and subscribers in other accounts, and SNS delivering into an
    encrypted queue, could never use it. ``fix`` says what to do instead, where leaving
    ``name`` out is not the way."""
    if key is None:
        return
    names = (
        [key]
        if isinstance(key, str)
        else [getattr(key, "alias_name", None), getattr(key, "key_arn", None)]
    )
    for value in names:
        if not isinstance(value, str):
            continue
        alias = value.split(":")[-1]
        if alias.startswith(AWS_MANAGED_KEY_ALIAS_PREFIX):
            raise ValueError(
                f"{name}: the AWS-managed key {alias} {_AWS_MANAGED_KEY_REASON}; "
                + (
                    fix
                    or f"pass a customer-managed key (aws_kms.Key, or its ARN) or leave {name} out"
                )
            )


def require_customer_managed_queue_key(name: str, queue: sqs.IQueue) -> None:
    """Refuse a queue encrypted with SQS's AWS-managed key (``QueueEncryption.KMS_MANAGED``),
    for the reason :func:`require_customer_managed_key` gives."""
    if queue.encryption_type is sqs.QueueEncryption.KMS_MANAGED:
        raise ValueError(
            f"{name}: {queue.node.path} is encrypted with the AWS-managed key alias/aws/sqs, "
            f"which {_AWS_MANAGED_KEY_REASON}; encrypt it with a customer-managed key "
            "(encryption_master_key) or SSE-SQS"
        )


_AWS_MANAGED_KEY_REASON = (
    "cannot be used by other accounts or by SNS delivering into a queue (its policy is AWS's own)"
)
