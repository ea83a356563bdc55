"""Whether a resource policy (a queue's, a key's) lets SNS do one thing for one topic, read
from the template alone.

The answer is three-valued: :attr:`Access.UNKNOWN` where it hangs on something the template
cannot tell (a condition key the request does not settle, a value known only at deploy, a
``NotPrincipal``), which the rules turn into not applicable rather than a false alarm. Only
what decides SNS's deliveries is modelled: the principal, the action, and the condition keys
SNS's requests carry (``aws:SourceArn`` and ``aws:SourceAccount`` of the topic, TLS, the
queue's ARN in SQS's encryption context); a statement's ``Resource`` is taken to cover the
queue or key whose policy it is.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from constructs_lib.messaging_checks._template import StackTemplate, text_matches

SNS_PRINCIPAL = "sns.amazonaws.com"


class Access(enum.Enum):
    ADMITS = "admits"
    REFUSES = "refuses"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Request:
    """One call SNS makes, as a policy sees it: ``context`` maps condition keys (lower case)
    to their values rendered as text (``None``: not known at synth)."""

    action: str
    context: Mapping[str, str | None] = field(default_factory=dict)
    service: str = SNS_PRINCIPAL


def sns_request(action: str, topic_arn: str, queue_arn: str) -> Request:
    """SNS delivering from ``topic_arn`` into ``queue_arn`` (the queue's ``SendMessage``, or the
    key calls SQS's encryption makes on its behalf)."""
    parts = topic_arn.split(":", 5)
    account = parts[4] if len(parts) == 6 else None
    return Request(
        action,
        {
            "aws:sourcearn": topic_arn,
            "aws:sourceaccount": account,
            "aws:sourceowner": account,
            "aws:securetransport": "true",
            "kms:encryptioncontext:aws:sqs:arn": queue_arn,
        },
    )


def _values(value: object) -> list[object]:
    return value if isinstance(value, list) else [value]


def _all_of(results: Iterable[bool | None]) -> bool | None:
    answers = list(results)
    if False in answers:
        return False
    return True if all(answers) else None


def _any_of(results: Iterable[bool | None]) -> bool | None:
    answers = list(results)
    if True in answers:
        return True
    return False if all(answer is False for answer in answers) else None


def _principal(statement: Mapping[str, object], request: Request, t: StackTemplate) -> bool | None:
    if "NotPrincipal" in statement:
        return None
    principal = statement.get("Principal")
    if principal == "*":
        return True
    if not isinstance(principal, Mapping):
        return False
    answers: list[bool | None] = []
    for kind, names in principal.items():
        for name in _values(names):
            text = t.render(name)
            if kind == "AWS" and text == "*":
                return True
            if kind == "Service":
                answers.append(None if text is None else text == request.service)
    return _any_of(answers) if answers else False


def _action(statement: Mapping[str, object], request: Request) -> bool | None:
    if "NotAction" in statement:
        return None
    actions = _values(statement.get("Action"))
    wanted = request.action.lower()
    return any(
        isinstance(action, str) and fnmatch.fnmatchcase(wanted, action.lower())
        for action in actions
    )


_MATCHING = {
    "stringequals": False,
    "stringlike": True,
    "arnequals": True,
    "arnlike": True,
    "bool": False,
}
_NEGATED = {
    "stringnotequals": "stringequals",
    "stringnotlike": "stringlike",
    "arnnotequals": "arnequals",
    "arnnotlike": "arnlike",
}


def _condition(statement: Mapping[str, object], request: Request, t: StackTemplate) -> bool | None:
    conditions = statement.get("Condition", {})
    if not isinstance(conditions, Mapping):
        return None
    answers: list[bool | None] = []
    for operator, tests in conditions.items():
        if not isinstance(tests, Mapping) or not isinstance(operator, str):
            return None
        for key, expected in tests.items():
            answers.append(_test(operator.lower(), str(key).lower(), expected, request, t))
    return _all_of(answers)


def _test(
    operator: str, key: str, expected: object, request: Request, t: StackTemplate
) -> bool | None:
    if_exists = operator.endswith("ifexists")
    operator = operator.removesuffix("ifexists")
    negated = operator in _NEGATED
    operator = _NEGATED.get(operator, operator)
    if operator not in _MATCHING:
        return None
    if key not in request.context:
        return True if if_exists else None
    actual = request.context[key]
    if actual is None:
        return None
    wildcards = _MATCHING[operator]
    answers: list[bool | None] = []
    for pattern in _values(expected):
        text = t.render(pattern)
        if text is None:
            answers.append(None)
        elif operator == "bool":
            answers.append(text.lower() == actual.lower())
        else:
            answers.append(text_matches(text, actual, wildcards=wildcards))
    matched = _any_of(answers)
    if matched is None or not negated:
        return matched
    return not matched


def access(documents: Iterable[object], request: Request, t: StackTemplate) -> Access:
    """Whether the policy ``documents`` of one resource let ``request`` through: an explicit
    deny wins, then an allow; with neither, SQS and KMS refuse a service principal."""
    allowed: list[bool | None] = []
    denied: list[bool | None] = []
    for document in documents:
        if not isinstance(document, Mapping):
            return Access.UNKNOWN
        for statement in _values(document.get("Statement", [])):
            if not isinstance(statement, Mapping):
                return Access.UNKNOWN
            applies = _all_of(
                (
                    _principal(statement, request, t),
                    _action(statement, request),
                    _condition(statement, request, t),
                )
            )
            (denied if statement.get("Effect") == "Deny" else allowed).append(applies)
    if True in denied:
        return Access.REFUSES
    if None in denied:
        return Access.UNKNOWN
    if True in allowed:
        return Access.ADMITS
    return Access.UNKNOWN if None in allowed else Access.REFUSES


def access_to_all(documents: list[object], requests: Iterable[Request], t: StackTemplate) -> Access:
    """Whether the documents let every one of ``requests`` through (KMS: SNS needs both
    ``kms:GenerateDataKey`` and ``kms:Decrypt``)."""
    answers = [access(documents, request, t) for request in requests]
    if Access.REFUSES in answers:
        return Access.REFUSES
    return Access.UNKNOWN if Access.UNKNOWN in answers else Access.ADMITS
