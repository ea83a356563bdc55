"""Reading policy documents: who a statement's principal is once its conditions narrow it, the
grants of its Allow statements, and its Deny of non-TLS requests.

Resource policies (queues, topics, keys, destinations, buckets) and identity policies (roles)
are read alike, so that every kind of resource reports its grants in the same shape.
"""

from __future__ import annotations

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


def effective_principal(principal: Principal, conditions: Conditions) -> Principal:
    """The principal as its conditions narrow it: ``"*"`` restricted by ``aws:PrincipalOrgID``
    is the organization, an account restricted by ``aws:PrincipalArn`` the role, and SNS
    restricted by ``aws:SourceArn`` the topic."""
    org = conditions.get("StringEquals", {}).get("aws:PrincipalOrgID")
    if principal == {"any": "*"} and org:
        return {"organization": org}
    role = conditions.get("ArnEquals", {}).get("aws:PrincipalArn")
    if "account" in principal and role:
        return {"role": role}
    source = next(
        (
            pairs["aws:SourceArn"]
            for op, pairs in conditions.items()
            if op in ("ArnEquals", "ArnLike", "StringEquals") and "aws:SourceArn" in pairs
        ),
        None,
    )
    if principal == {"service": "sns.amazonaws.com"} and source:
        return {"topic": source}
    return principal


def action_grants(statement: Statement, actions_of_interest: frozenset[str]) -> list[Grant]:
    """The grants of one Allow statement that cover ``actions_of_interest``, each with all the
    statement's actions.

    A service principal restricted by ``aws:SourceArn`` is reported as the topic it is
    restricted to; ``"*"`` restricted by ``aws:PrincipalOrgID`` as the organization.
    """
    if not [a for a in as_list(statement.get("Action", [])) if a in actions_of_interest]:
        return []
    actions = sorted(as_list(statement["Action"]))
    return principal_grants(
        statement, lambda principal: Grant(principal=principal, actions=actions)
    )


def principal_grants(
    statement: Statement, record: Callable[[Principal], GrantRecord]
) -> list[GrantRecord]:
    """One grant per principal of a resource-policy Allow statement: ``record`` of the principal
    as its conditions narrow it (what it may do), then the conditions, so that every kind of
    resource reports its grants alike."""
    conditions = statement.get("Condition", {})
    grants: list[GrantRecord] = []
    for principal in principals(statement.get("Principal", {})):
        grant = record(effective_principal(principal, conditions))
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
