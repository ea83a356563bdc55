"""Explicit Spark schemas for every shape the delivery-status logs take on their way to S3.

Leaf fields of the delivery record are declared as strings on purpose: Spark's JSON reader
returns the raw text of a number or a nested object for a string field, so a record whose
``statusCode`` arrives as ``"202"`` or whose ``providerResponse`` arrives as an object still
parses, and the normalisation step decides with ``try_cast`` what is a usable number. Schema
inference is never used: it costs a pass over the data and makes the output depend on it.
"""

from __future__ import annotations

from pyspark.sql import types as st


def _strings(*names: str) -> list[st.StructField]:
    return [st.StructField(name, st.StringType()) for name in names]


NOTIFICATION_SCHEMA = st.StructType(
    _strings("messageMD5Sum", "messageId", "topicArn", "timestamp"),
)

DELIVERY_SCHEMA = st.StructType(
    _strings(
        "deliveryId",
        "destination",
        "providerResponse",
        "dwellTimeMs",
        "attempts",
        "statusCode",
        "token",
        "phoneCarrier",
        "mcc",
        "mnc",
        "priceInUSD",
        "smsType",
        "numberOfMessageParts",
        "dwellTimeMsUntilDeviceAck",
    ),
)

RECORD_SCHEMA = st.StructType(
    [
        st.StructField("notification", NOTIFICATION_SCHEMA),
        st.StructField("delivery", DELIVERY_SCHEMA),
        st.StructField("status", st.StringType()),
    ],
)
"""One SNS delivery-status record, as CloudWatch Logs stores it."""

LOG_EVENT_SCHEMA = st.StructType(_strings("id", "timestamp", "message"))

ENVELOPE_SCHEMA = st.StructType(
    [
        *_strings("messageType", "owner", "logGroup", "logStream"),
        st.StructField("subscriptionFilters", st.ArrayType(st.StringType())),
        st.StructField("logEvents", st.ArrayType(LOG_EVENT_SCHEMA)),
    ],
)
"""A CloudWatch Logs subscription payload as Firehose writes it (one gzip member each)."""

PAGE_EVENT_SCHEMA = st.StructType(
    _strings("logStreamName", "timestamp", "message", "ingestionTime", "eventId"),
)

PAGE_SCHEMA = st.StructType(
    [
        st.StructField("events", st.ArrayType(PAGE_EVENT_SCHEMA)),
        st.StructField("nextToken", st.StringType()),
    ],
)
"""One page of ``aws logs filter-log-events`` output."""

UNIT_SCHEMA = st.StructType(
    [
        st.StructField("layout", st.StringType(), nullable=False),
        st.StructField("source_file", st.StringType(), nullable=False),
        st.StructField("log_group", st.StringType()),
        st.StructField("log_stream", st.StringType()),
        st.StructField("log_time", st.TimestampType()),
        st.StructField("message", st.StringType()),
        st.StructField("reject_reason", st.StringType()),
        st.StructField("sample", st.StringType()),
    ],
)
"""What every layout reader yields: one row per log event, or per piece it had to reject.

A row either carries a ``message`` (the raw delivery record) or a ``reject_reason`` and a
``sample`` of the text that could not be used, so that nothing read is lost between stages.
"""

LINE_SCHEMA = st.StructType(
    [
        st.StructField("source_file", st.StringType(), nullable=False),
        st.StructField("value", st.StringType()),
        st.StructField("read_error", st.StringType()),
    ],
)
"""Text as read from one input file: a line, or the whole file for page-shaped layouts."""
