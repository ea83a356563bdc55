"""SNS subscription filter policies, checked against SNS's documented rules at synth.

CloudFormation passes a filter policy to SNS as it is written; SNS refuses a bad one only when
the subscription is created, after other accounts' stacks may already be deployed. So every
construct that takes a ``filter_policy`` refuses a malformed one (:func:`check_filter_policy`),
and the topology reports each problem at its field (:func:`filter_policy_problems`). A team may
call either on a policy of its own. The rules (SNS developer guide, "Filter policy constraints"
and "Filter policy syntax"):

* at most :data:`MAX_KEYS` keys with values, and at most :data:`MAX_COMBINATIONS` combinations
  (the product of the lengths of the value lists; the sum over ``$or`` branches);
* at most :data:`MAX_POLICY_BYTES` of JSON;
* a policy on message attributes (the default scope) is flat; nesting needs the scope
  ``MessageBody``;
* a value list is not empty, and holds strings, numbers within ±10⁹ and five decimals,
  ``true``/``false``/``null``, or one-key operator objects: ``prefix``, ``suffix``,
  ``anything-but``, ``numeric``, ``exists``, ``equals-ignore-case``, ``cidr``.
"""

from __future__ import annotations

import enum
import ipaddress
import json
import math
from collections.abc import Mapping
from typing import Any, Final

MAX_KEYS: Final = 5
MAX_COMBINATIONS: Final = 150
MAX_POLICY_BYTES: Final = 256 * 1024
NUMERIC_LIMIT: Final = 1_000_000_000
NUMERIC_DECIMALS: Final = 5
OR_KEY: Final = "$or"
COMPARISONS: Final = ("=", "<", "<=", ">", ">=")


class FilterPolicyScope(enum.StrEnum):
    """What a subscription's filter policy looks at (SNS's ``FilterPolicyScope``): the message
    attributes (flat policies), or the message body (nested policies allowed)."""

    MESSAGE_ATTRIBUTES = "MessageAttributes"
    MESSAGE_BODY = "MessageBody"


Problem = tuple[str, str]
"""(field path, rule broken): the path is the policy's own (``""`` for the whole policy,
``.store[0]`` for a value), for the caller to put after its name for the policy."""


def check_filter_policy(
    policy: Mapping[str, Any],
    scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES,
    name: str = "filter_policy",
) -> None:
    """Refuse a policy SNS would refuse, naming ``name`` and the path of each problem inside
    the policy (``filter_policy.store[0]: ...``)."""
    if not isinstance(policy, Mapping):
        raise TypeError(
            f"{name}: must be a dict, as SNS's JSON syntax writes a policy, got "
            f"{type(policy).__name__}"
        )
    try:
        scope = FilterPolicyScope(scope)
    except ValueError:
        raise ValueError(
            f"{name}_scope: must be one of {', '.join(s.value for s in FilterPolicyScope)}, "
            f"got {scope!r}"
        ) from None
    problems = filter_policy_problems(policy, scope)
    if problems:
        raise ValueError("; ".join(f"{name}{path}: {rule}" for path, rule in problems))


def filter_policy_problems(policy: Mapping[str, Any], scope: FilterPolicyScope) -> list[Problem]:
    """Every rule ``policy`` breaks, each with the path of the field at fault."""
    problems: list[Problem] = []
    keys, combinations = _walk(policy, scope, "", problems)
    if keys > MAX_KEYS:
        problems.append(
            ("", f"has {keys} keys with values; SNS takes at most {MAX_KEYS} keys in a policy")
        )
    if combinations > MAX_COMBINATIONS:
        problems.append(
            (
                "",
                f"has {combinations} combinations (the product of its value lists' lengths); "
                f"SNS takes at most {MAX_COMBINATIONS}: split it over subscriptions or use "
                "prefix / anything-but",
            )
        )
    size = len(json.dumps(policy, separators=(",", ":"), default=str).encode())
    if size > MAX_POLICY_BYTES:
        problems.append(
            ("", f"is {size:,} bytes of JSON; SNS takes at most {MAX_POLICY_BYTES:,} (256 KB)")
        )
    return problems


def _walk(
    policy: Mapping[str, Any],
    scope: FilterPolicyScope,
    path: str,
    problems: list[Problem],
) -> tuple[int, int]:
    """(keys with values, combinations) of one policy object, recording problems."""
    keys, combinations = 0, 1
    if not policy:
        problems.append((path, "is an empty object, which SNS refuses; add keys or remove it"))
    for key, value in policy.items():
        where = f"{path}.{key}"
        if key == OR_KEY:
            branch_keys, branch_combinations = _or(value, scope, where, problems)
            keys += branch_keys
            combinations *= branch_combinations
        elif isinstance(value, Mapping):
            if scope is FilterPolicyScope.MESSAGE_ATTRIBUTES:
                problems.append(
                    (
                        where,
                        "a nested object filters the message body, and a policy on the "
                        "message attributes is flat: give the subscription the scope "
                        f"{FilterPolicyScope.MESSAGE_BODY} (a construct's "
                        "filter_policy_scope=FilterPolicyScope.MESSAGE_BODY, a topology's "
                        f'"filterPolicyScope": "{FilterPolicyScope.MESSAGE_BODY}")',
                    )
                )
                continue
            nested_keys, nested_combinations = _walk(value, scope, where, problems)
            keys += nested_keys
            combinations *= nested_combinations
        elif isinstance(value, list):
            keys += 1
            combinations *= max(len(value), 1)
            _values(value, where, problems)
        else:
            problems.append(
                (where, "takes a list of values (or, filtering the body, a nested object)")
            )
    return keys, combinations


def _or(
    value: Any, scope: FilterPolicyScope, path: str, problems: list[Problem]
) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) < 2
        or not all(isinstance(v, Mapping) for v in value)
    ):
        problems.append((path, "takes a list of at least two policy objects"))
        return 0, 1
    results = [_walk(branch, scope, f"{path}[{i}]", problems) for i, branch in enumerate(value)]
    return sum(k for k, _ in results), sum(c for _, c in results)


def _values(values: list[Any], path: str, problems: list[Problem]) -> None:
    if not values:
        problems.append(
            (path, "is an empty list, which SNS refuses; list a value or remove the key")
        )
    for i, value in enumerate(values):
        where = f"{path}[{i}]"
        if isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        if isinstance(value, int | float):
            _number(value, where, problems)
        elif isinstance(value, Mapping):
            _operator(value, where, problems)
        else:
            problems.append(
                (where, "must be a string, a number, true, false, null or an operator object")
            )


def _number(value: Any, path: str, problems: list[Problem]) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.append((path, f"{value!r} is not a number"))
        return False
    if not -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
        problems.append(
            (
                path,
                f"{value} is out of range: SNS matches numbers from -1,000,000,000 to 1,000,000,000",
            )
        )
        return False
    if isinstance(value, float) and round(value, NUMERIC_DECIMALS) != value:
        problems.append(
            (path, f"{value} has more than {NUMERIC_DECIMALS} decimals, SNS's precision")
        )
        return False
    return True


def _operator(operator: Mapping[str, Any], path: str, problems: list[Problem]) -> None:
    if len(operator) != 1:
        problems.append((path, 'an operator object has exactly one key, e.g. {"prefix": "ord-"}'))
        return
    ((name, operand),) = operator.items()
    if name in ("prefix", "suffix", "equals-ignore-case"):
        if not _text_or_ignore_case(operand, name):
            problems.append((path, f"{name!r} takes a non-empty string"))
    elif name == "exists":
        if not isinstance(operand, bool):
            problems.append((path, "'exists' takes true or false"))
    elif name == "cidr":
        try:
            ipaddress.ip_network(operand, strict=False)
        except (TypeError, ValueError):
            problems.append(
                (path, f"'cidr' takes an IP prefix such as '10.0.0.0/24', got {operand!r}")
            )
    elif name == "numeric":
        _numeric(operand, path, problems)
    elif name == "anything-but":
        _anything_but(operand, path, problems)
    else:
        problems.append(
            (
                path,
                f"unknown operator {name!r}; SNS knows prefix, suffix, anything-but, numeric, "
                "exists, equals-ignore-case and cidr",
            )
        )


def _text_or_ignore_case(operand: Any, name: str) -> bool:
    if isinstance(operand, str):
        return bool(operand)
    if name in ("prefix", "suffix") and isinstance(operand, Mapping) and len(operand) == 1:
        inner = operand.get("equals-ignore-case")
        return isinstance(inner, str) and bool(inner)
    return False


def _numeric(operand: Any, path: str, problems: list[Problem]) -> None:
    rule = (
        '\'numeric\' takes [operator, number] or a range [">" or ">=", number, "<" or '
        '"<=", number], operators =, <, <=, >, >='
    )
    if not isinstance(operand, list) or len(operand) not in (2, 4):
        problems.append((path, rule))
        return
    operators, numbers = operand[0::2], operand[1::2]
    if not all(isinstance(o, str) and o in COMPARISONS for o in operators) or not all(
        isinstance(n, int | float) and not isinstance(n, bool) for n in numbers
    ):
        problems.append((path, rule))
        return
    if not all(_number(n, path, problems) for n in numbers):
        return
    if len(operand) == 4 and (
        operators[0] not in (">", ">=")
        or operators[1] not in ("<", "<=")
        or numbers[0] >= numbers[1]
    ):
        problems.append(
            (path, "a 'numeric' range goes from a lower bound (> or >=) to a higher one (< or <=)")
        )


def _anything_but(operand: Any, path: str, problems: list[Problem]) -> None:
    if isinstance(operand, str | int | float) and not isinstance(operand, bool):
        return
    if (
        isinstance(operand, list)
        and operand
        and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in operand)
    ):
        return
    if isinstance(operand, Mapping) and len(operand) == 1:
        ((name, inner),) = operand.items()
        if (
            name in ("prefix", "suffix", "equals-ignore-case")
            and isinstance(inner, str | list)
            and inner
        ):
            return
    problems.append(
        (
            path,
            "'anything-but' takes a string, a number, a non-empty list of them, or one of "
            '{"prefix": ...}, {"suffix": ...}, {"equals-ignore-case": ...}',
        )
    )
