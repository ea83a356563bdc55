"""Reading policy documents: who a statement's principal is once its conditions narrow it, the
grants of its Allow statements, and its Deny of non-TLS requests.

Resource policies (queues, topics, keys, destinations, buckets) and identity policies (roles)
are read alike, so that every kind of resource reports its grants in the same shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, TypeVar

from stacks.checks.access_report.assembly import AccessReportError
from stacks.checks.access_report.records import Conditions, Grant, PrefixGrant, Principal

Statement = Mapping[str, Any]
"""A policy statement as the template writes it, its intrinsics resolved."""

GrantRecord = TypeVar("GrantRecord", Grant, PrefixGrant)


def as_list(value: Any) -> list[Any]:
    """A policy element that may be one value or a list of them, as a list."""
    return value if isinstance(value, list) else [value]


def principals(principal: Any) -> list[Principal]:
    """Normalize a policy principal into ``{"account"|"service"|"arn"|"any": ...}`` entries."""
    if principal == "*":
        return [{"any": "*"}]
    result: list[Principal] = []
    for kind, values in principal.items():
        for value in as_list(values):
            if kind == "AWS" and value == "*":
                result.append({"any": "*"})
            elif kind == "AWS" and value.endswith(":root"):
                result.append({"account": value.split(":")[4]})
            elif kind == "AWS" and value.isdigit():
                result.append({"account": value})
            elif kind == "AWS":
                result.append({"arn": value})
            elif kind == "Service":
                result.append({"service": value})
            else:
                result.append({kind.lower(): value})
    return result


_EQUALS = ("StringEquals", "ArnEquals", "ArnLike", "StringLike")
"""The operators whose values name who a statement is for (any one of them matches)."""
_IAM_ARN = re.compile(r"^arn:[a-z-]+:iam::(\d{12}):role/")


def condition_values(conditions: Conditions, key: str) -> list[str]:
    """Every value ``key`` is compared with under an equality or pattern operator, in order:
    a request matching any one of them passes (a list in a condition is an OR)."""
    values: list[str] = []
    for operator in _EQUALS:
        values += [v for v in as_list(conditions.get(operator, {}).get(key, [])) if v not in values]
    return values


def _role_pattern_account(arn: str, where: Principal) -> str:
    """The account a role ARN or pattern of ``aws:PrincipalArn`` names; refused when the
    pattern could match roles of any account (a wildcard before the role's name)."""
    match = _IAM_ARN.match(arn)
    if match is None or set("*?") & set(arn[: match.end()]):
        raise AccessReportError(
            f"aws:PrincipalArn {arn!r} (principal {where}) does not name one account's roles; "
            "the report cannot tell whom it admits"
        )
    return match.group(1)


def effective_principals(principal: Principal, conditions: Conditions) -> list[Principal]:
    """The principals a statement's principal stands for once its conditions narrow it: ``"*"``
    restricted by ``aws:PrincipalArn`` is each role (or pattern of one account's roles), by
    ``aws:PrincipalAccount`` each account, by ``aws:PrincipalOrgID`` (alone) each
    organization; an account restricted by ``aws:PrincipalArn`` its roles; SNS restricted by
    ``aws:SourceArn`` each topic. An organization beside the narrower keys is a further
    condition, kept in the grant's conditions."""
    roles = condition_values(conditions, "aws:PrincipalArn")
    if roles and (principal == {"any": "*"} or "account" in principal):
        for role in roles:
            account = _role_pattern_account(role, principal)
            if "account" in principal and account != principal["account"]:
                raise AccessReportError(
                    f"aws:PrincipalArn {role!r} names account {account}, not the statement's "
                    f"principal {principal['account']}; the statement admits nobody"
                )
        return [{"role": role} for role in roles]
    if principal == {"any": "*"}:
        accounts = condition_values(conditions, "aws:PrincipalAccount")
        if accounts:
            return [{"account": account} for account in accounts]
        organizations = condition_values(conditions, "aws:PrincipalOrgID")
        if organizations:
            return [{"organization": organization} for organization in organizations]
    topics = condition_values(conditions, "aws:SourceArn")
    if principal.get("service", "").split(".")[0] == "sns" and topics:
        return [{"topic": topic} for topic in topics]
    return [principal]


def action_grants(statement: Statement, actions_of_interest: frozenset[str]) -> list[Grant]:
    """The grants of one Allow statement that cover ``actions_of_interest``, each with all the
    statement's actions. An action is read as IAM reads it: any case, ``*`` and ``?``
    wildcards (``sqs:Send*``, ``SQS:SendMessage`` and ``*`` all cover ``sqs:SendMessage``).

    A service principal restricted by ``aws:SourceArn`` is reported as each topic it is
    restricted to; ``"*"`` restricted by ``aws:PrincipalAccount``, ``aws:PrincipalArn`` or
    ``aws:PrincipalOrgID`` as each account, role or organization (see
    :func:`effective_principals`).
    """
    if not any(pattern_matches(a, statement.get("Action", [])) for a in actions_of_interest):
        return []
    actions = sorted(as_list(statement["Action"]))
    return principal_grants(
        statement, lambda principal: Grant(principal=principal, actions=actions)
    )


def principal_grants(
    statement: Statement, record: Callable[[Principal], GrantRecord]
) -> list[GrantRecord]:
    """One grant per principal of a resource-policy Allow statement, as its conditions narrow
    it (a principal may stand for several: a list of accounts, roles or topics): ``record`` of
    it (what it may do), then the conditions, so that every kind of resource reports its
    grants alike."""
    conditions = statement.get("Condition", {})
    grants: list[GrantRecord] = []
    for principal in principals(statement.get("Principal", {})):
        for effective in effective_principals(principal, conditions):
            grant = record(effective)
            if conditions:
                grant["conditions"] = conditions
            grants.append(grant)
    return grants


@dataclass(frozen=True)
class Policy:
    """What the report reads of a policy document: its Allow statements, and whether it denies
    requests made without TLS (what ``enforceSSL`` writes), which the report notes per
    resource."""

    allows: list[Statement]
    denies_insecure_transport: bool


def read_policy(document: Mapping[str, Any], where: str) -> Policy:
    """The Allow statements and the TLS Deny of a policy document, its intrinsics resolved.

    ``NotAction`` and ``NotResource`` in an Allow are refused: what they allow cannot be told
    from the template, and skipping them would hide a grant.
    """
    statements: list[Statement] = as_list(document.get("Statement", []))
    denies = any(_denies_insecure_transport(s) for s in statements)
    return Policy(_allow_statements(statements, where), denies)


def _denies_insecure_transport(statement: Statement) -> bool:
    secure = statement.get("Condition", {}).get("Bool", {})
    return statement.get("Effect") == "Deny" and secure.get("aws:SecureTransport") == "false"


def _allow_statements(statements: Sequence[Statement], where: str) -> list[Statement]:
    allowed = []
    for statement in statements:
        if statement.get("Effect") != "Allow":
            continue
        if "NotAction" in statement or "NotResource" in statement:
            raise AccessReportError(
                f"{where} allows with NotAction or NotResource; the report cannot tell what it "
                "allows"
            )
        allowed.append(statement)
    return allowed


def pattern_matches(value: str, patterns: Any) -> bool:
    """Whether an IAM action or resource pattern (``*`` and ``?``) covers ``value``."""
    return any(
        isinstance(p, str) and fnmatchcase(value.lower(), p.lower()) for p in as_list(patterns)
    )
