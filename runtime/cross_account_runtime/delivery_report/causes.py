"""Why a delivery failed, decided from the status code, the protocol and ``providerResponse``.

The rules are data (``CAUSE_RULES``) so that one table drives the Spark column expression the
job uses and the plain-Python classifier the tests and the benchmark use as a reference: the
two cannot drift apart. Rules are tried in order and the first match wins, so specific text
(a KMS error code) comes before generic status ranges (any 4xx), and an endpoint's own 5xx
answer ("504 Gateway Timeout") counts as 5xx before transport errors are looked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as sf

OTHER_CAUSE = "other"


@dataclass(frozen=True)
class CauseRule:
    """One failure cause and what identifies it; every given condition must hold.

    ``response_contains`` holds lower-case substrings of ``providerResponse`` (any one is
    enough), ``status_range`` an inclusive range of ``statusCode`` and ``protocols`` the
    subscription protocols the rule applies to.
    """

    cause: str
    response_contains: tuple[str, ...] = ()
    status_range: tuple[int, int] | None = None
    protocols: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (self.response_contains or self.status_range or self.protocols):
            raise ValueError(f"cause rule {self.cause!r} has no condition: it would match all")
        if any(text != text.lower() for text in self.response_contains):
            raise ValueError(f"cause rule {self.cause!r}: response_contains must be lower case")


CAUSE_RULES: tuple[CauseRule, ...] = (
    CauseRule("kms_access_denied", response_contains=("kms.accessdenied", "kmsaccessdenied")),
    CauseRule(
        "kms_error",
        response_contains=("kms.", "kmsdisabled", "kmsnotfound", "kmsinvalidstate"),
    ),
    CauseRule("data_protection_policy", response_contains=("data protection policy",)),
    CauseRule("http_5xx", status_range=(500, 599)),
    CauseRule(
        "tls_error",
        response_contains=(
            "sslpeerunverified",
            "sslhandshake",
            "sslexception",
            "certificate",
            "pkix",
        ),
    ),
    CauseRule("timeout", response_contains=("timed out", "timeout")),
    CauseRule(
        "connection_error",
        response_contains=(
            "connection refused",
            "connectexception",
            "connection reset",
            "unknownhost",
            "nohttpresponse",
            "no route to host",
            "connection closed",
            "unable to connect",
        ),
    ),
    CauseRule(
        "endpoint_missing",
        response_contains=(
            "nonexistentqueue",
            "does not exist",
            "resourcenotfound",
            "endpoint is disabled",
            "endpointdisabled",
        ),
    ),
    CauseRule(
        "access_denied",
        response_contains=("accessdenied", "access denied", "not authorized", "authorizationerror"),
    ),
    CauseRule(
        "throttled",
        response_contains=("throttl", "toomanyrequests", "rate exceeded", "slowdown"),
    ),
    CauseRule("provider_error", protocols=("application", "sms")),
    CauseRule("http_4xx", status_range=(400, 499)),
)
"""Failure causes in priority order; a failure no rule matches is ``other``."""

ERROR_CODE_PATTERNS: tuple[str, ...] = (
    r'"ErrorCode"\s*:\s*"([^"]+)"',
    r"status=([A-Za-z_]+)",
)
"""Provider error codes: SQS/KMS JSON answers, and mobile push ``status=`` answers."""


def failure_text(status: Column, response: Column) -> Column:
    """Spark expression: ``providerResponse`` of a FAILURE record, lower-cased; null otherwise.

    The cause rules test it a few dozen times; handed to :func:`cause_column` as a column of
    its own it is lower-cased once per failure, where ``lower`` inside every test was generated
    (and run for a failure) once per test, 36 times; the ~98% of records that succeeded skip
    it at the status test.
    """
    return sf.when(status == sf.lit("FAILURE"), sf.lower(sf.coalesce(response, sf.lit(""))))


def cause_column(failure: Column, protocol: Column, status_code: Column) -> Column:
    """Spark expression: the cause of a FAILURE record, null for anything else.

    ``failure`` is :func:`failure_text` of the record (null unless it failed).
    """
    expression = None
    for rule in CAUSE_RULES:
        condition = _rule_condition(rule, protocol, status_code, failure)
        if expression is None:
            expression = sf.when(condition, sf.lit(rule.cause))
        else:
            expression = expression.when(condition, sf.lit(rule.cause))
    assert expression is not None
    return sf.when(failure.isNotNull(), expression.otherwise(sf.lit(OTHER_CAUSE)))


def _rule_condition(
    rule: CauseRule, protocol: Column, status_code: Column, lowered: Column
) -> Column:
    conditions: list[Column] = []
    if rule.response_contains:
        text_match = lowered.contains(rule.response_contains[0])
        for text in rule.response_contains[1:]:
            text_match = text_match | lowered.contains(text)
        conditions.append(text_match)
    if rule.status_range is not None:
        low, high = rule.status_range
        conditions.append(sf.coalesce(status_code.between(low, high), sf.lit(False)))
    if rule.protocols:
        conditions.append(sf.coalesce(protocol.isin(*rule.protocols), sf.lit(False)))
    combined = conditions[0]
    for condition in conditions[1:]:
        combined = combined & condition
    return combined


def error_code_column(status: Column, response: Column) -> Column:
    """Spark expression: the provider's error code of a FAILURE record, if it names one."""
    extracted = [
        sf.nullif(sf.regexp_extract(response, p, 1), sf.lit("")) for p in ERROR_CODE_PATTERNS
    ]
    return sf.when(status == sf.lit("FAILURE"), sf.coalesce(*extracted))


def classify(
    status: str | None,
    protocol: str | None,
    status_code: int | None,
    response: str | None,
) -> str | None:
    """Plain-Python twin of :func:`cause_column`, for references outside Spark."""
    if status != "FAILURE":
        return None
    lowered = (response or "").lower()
    for rule in CAUSE_RULES:
        if rule.response_contains and not any(t in lowered for t in rule.response_contains):
            continue
        if rule.status_range is not None and not (
            status_code is not None and rule.status_range[0] <= status_code <= rule.status_range[1]
        ):
            continue
        if rule.protocols and protocol not in rule.protocols:
            continue
        return rule.cause
    return OTHER_CAUSE


_COMPILED_ERROR_CODES = tuple(re.compile(pattern) for pattern in ERROR_CODE_PATTERNS)


def error_code(status: str | None, response: str | None) -> str | None:
    """Plain-Python twin of :func:`error_code_column`."""
    if status != "FAILURE" or response is None:
        return None
    for pattern in _COMPILED_ERROR_CODES:
        match = pattern.search(response)
        if match and match.group(1):
            return match.group(1)
    return None
