"""Cause classification: the Spark expression and its Python twin agree, rule by rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as sf

from cross_account_runtime.delivery_report.causes import (
    CAUSE_RULES,
    CauseRule,
    cause_column,
    classify,
    error_code,
    error_code_column,
    failure_text,
)

VOCABULARY = [
    *sorted({text for rule in CAUSE_RULES for text in rule.response_contains}),
    '{"ErrorCode":"KMS.AccessDeniedException","sqsRequestId":"Unrecoverable"}',
    "NotificationErrorResponse(command=8, status=InvalidToken, id=1, cause=null)",
    "504 Gateway Timeout",
    "OK",
]
PROTOCOLS = ["http/s", "sqs", "lambda", "firehose", "application", "sms", "unknown"]

cases = st.lists(
    st.tuples(
        st.sampled_from(["SUCCESS", "FAILURE"]),
        st.sampled_from(PROTOCOLS),
        st.one_of(st.none(), st.sampled_from([200, 202, 400, 403, 429, 500, 503, 8])),
        st.one_of(
            st.none(),
            st.builds(
                lambda words, upper: " ".join(words).upper() if upper else " ".join(words),
                st.lists(st.sampled_from(VOCABULARY), max_size=3),
                st.booleans(),
            ),
        ),
    ),
    min_size=1,
    max_size=60,
)


@pytest.mark.spark
@settings(max_examples=8, deadline=None)
@given(rows=cases)
def test_spark_expression_matches_python(
    spark: SparkSession, rows: list[tuple[str, str, int | None, str | None]]
) -> None:
    frame = spark.createDataFrame(
        rows, "status string, protocol string, code bigint, response string"
    )
    result = frame.select(
        cause_column(
            failure_text(sf.col("status"), sf.col("response")), sf.col("protocol"), sf.col("code")
        ).alias("cause"),
        error_code_column(sf.col("status"), sf.col("response")).alias("error_code"),
    ).collect()
    assert [(r["cause"], r["error_code"]) for r in result] == [
        (classify(status, protocol, code, response), error_code(status, response))
        for status, protocol, code, response in rows
    ]


@pytest.mark.parametrize(
    ("protocol", "code", "response", "cause"),
    [
        ("sqs", 400, '{"ErrorCode":"KMS.AccessDeniedException"}', "kms_access_denied"),
        ("sqs", 400, '{"ErrorCode":"KMS.DisabledException"}', "kms_error"),
        ("http/s", 504, "504 Gateway Timeout", "http_5xx"),
        ("http/s", None, "SocketTimeoutException: Read timed out", "timeout"),
        ("http/s", None, "SSLPeerUnverifiedException in HttpClient", "tls_error"),
        ("http/s", None, "Connection refused", "connection_error"),
        (
            "sqs",
            403,
            "The topic's data protection policy prohibits this message",
            "data_protection_policy",
        ),
        ("application", 8, "NotificationErrorResponse(status=InvalidToken)", "provider_error"),
        ("http/s", 404, "", "http_4xx"),
        ("sqs", None, "something new", "other"),
    ],
)
def test_rules(protocol: str, code: int | None, response: str, cause: str) -> None:
    assert classify("FAILURE", protocol, code, response) == cause
    assert classify("SUCCESS", protocol, code, response) is None


def test_a_rule_needs_a_condition() -> None:
    with pytest.raises(ValueError, match="has no condition"):
        CauseRule("everything")
    with pytest.raises(ValueError, match="lower case"):
        CauseRule("x", response_contains=("Timeout",))
