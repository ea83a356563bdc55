"""Delivery records from units: parse, validate, derive protocol, topic, cause and times.

``classify_units`` keeps every unit and says for each either why it was rejected or what it
holds, so that ``records read == records parsed + records rejected`` can be checked on one
DataFrame. All of it is column expressions evaluated in the JVM: no Python UDF.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as sf
from pyspark.sql import types as st

from cross_account_runtime.delivery_report.causes import (
    cause_column,
    error_code_column,
    failure_text,
)
from cross_account_runtime.delivery_report.schema import RECORD_SCHEMA, UNIT_SCHEMA
from cross_account_runtime.delivery_report.text_columns import (
    is_blank,
    is_single_object,
    parse_single_object,
)
from cross_account_runtime.delivery_report.timestamps import lenient_timestamp

SAMPLE_CHARS = 300
UNKNOWN_TOPIC = "(unknown)"

SKIP_REASONS: frozenset[str] = frozenset({"blank_line", "control_message", "empty_page"})
"""Reject reasons that are expected (health checks, blank lines), not signs of bad data."""

RECORD_COLUMNS: tuple[str, ...] = (
    "published_at",
    "delivered_at",
    "topic",
    "topic_source",
    "topic_arn",
    "message_id",
    "message_md5",
    "delivery_id",
    "destination",
    "protocol",
    "status",
    "status_code",
    "attempts",
    "dwell_ms",
    "retried",
    "http_4xx_success",
    "cause",
    "error_code",
    "provider_response",
    "token",
    "phone_carrier",
    "mcc",
    "mnc",
    "price_usd",
    "sms_type",
    "message_parts",
    "dwell_until_device_ack_ms",
    "log_group",
    "log_stream",
    "log_time",
    "layout",
    "source_file",
    "date",
)
"""The normalized record, as written to Parquet (partitioned by ``outcome`` and ``date``).

Rejected units are stored beside the records under ``outcome=rejected`` with their
``reject_reason`` and a ``sample`` of the text, so they can be inspected like the records.
"""

UNIT_COLUMNS: tuple[str, ...] = tuple(field.name for field in UNIT_SCHEMA.fields)

PARSED = "parsed"
REJECTED = "rejected"

_NUMBER_FIELDS = ("dwellTimeMs", "attempts", "statusCode")
_FLAT_FIELDS: dict[str, str] = {
    "n_md5": "notification.messageMD5Sum",
    "n_message_id": "notification.messageId",
    "n_topic_arn": "notification.topicArn",
    "n_timestamp": "notification.timestamp",
    "d_delivery_id": "delivery.deliveryId",
    "d_destination": "delivery.destination",
    "d_response": "delivery.providerResponse",
    "d_dwellTimeMs": "delivery.dwellTimeMs",
    "d_attempts": "delivery.attempts",
    "d_statusCode": "delivery.statusCode",
    "d_token": "delivery.token",
    "d_phone_carrier": "delivery.phoneCarrier",
    "d_mcc": "delivery.mcc",
    "d_mnc": "delivery.mnc",
    "d_price": "delivery.priceInUSD",
    "d_sms_type": "delivery.smsType",
    "d_parts": "delivery.numberOfMessageParts",
    "d_device_ack": "delivery.dwellTimeMsUntilDeviceAck",
    "r_status": "status",
}


def classify_units(units: DataFrame) -> DataFrame:
    """Every unit with the normalized record columns and ``reject_reason`` (null if parsed).

    Staged as flat projections (parse, flatten, derive, decide) so that each expression is
    computed once per row. Record columns are computed for rejected rows too (they come out
    null or partial): rejected rows are rare and one query plan serves both.
    """
    parsed = units.withColumn("records", parse_single_object(sf.col("message"), RECORD_SCHEMA))
    record = sf.get(sf.col("records"), 0)
    flat = parsed.select(
        *UNIT_COLUMNS,
        is_single_object(sf.col("records"), sf.col("message")).alias("single_object"),
        (
            record.getField("notification").isNull()
            & record.getField("delivery").isNull()
            & record.getField("status").isNull()
        ).alias("empty_record"),
        *(_field(record, path).alias(name) for name, path in _FLAT_FIELDS.items()),
    )
    derived = flat.select(
        "*",
        lenient_timestamp(sf.col("n_timestamp")).alias("published_at"),
        *(_long(sf.col(f"d_{name}")).alias(f"_{name}") for name in _NUMBER_FIELDS),
        sf.nullif(sf.trim(sf.col("d_destination")), sf.lit("")).alias("destination"),
        sf.nullif(sf.trim(sf.col("n_message_id")), sf.lit("")).alias("message_id"),
        sf.nullif(sf.trim(sf.col("n_topic_arn")), sf.lit("")).alias("topic_arn"),
    )
    decided = derived.withColumns(
        {
            "reject_reason": _reason(),
            "protocol": protocol_column(sf.col("destination")),
            "topic": sf.coalesce(
                sf.col("topic_arn"),
                topic_from_log_group(sf.col("log_group")),
                sf.lit(UNKNOWN_TOPIC),
            ),
            "failure_text": failure_text(sf.col("r_status"), sf.col("d_response")),
        },
    )
    return decided.select(*_record_columns(), "reject_reason", _sample().alias("sample"))


def with_outcome(classified: DataFrame) -> DataFrame:
    """Record columns, reject columns and ``outcome`` (``parsed`` or ``rejected``) to store."""
    outcome = sf.when(sf.col("reject_reason").isNull(), sf.lit(PARSED)).otherwise(sf.lit(REJECTED))
    return classified.select(
        *RECORD_COLUMNS,
        sf.col("reject_reason"),
        sf.col("sample"),
        outcome.alias("outcome"),
    )


def protocol_column(destination: Column) -> Column:
    """The subscription protocol a destination belongs to (SNS logging-config names).

    Only prefixes are looked at (the ARN's service field, the URL scheme): no split into an
    array and no lower-casing of the whole string, which would cost per row.
    """
    service = sf.substring_index(sf.substring_index(destination, ":", 3), ":", -1)
    is_arn = destination.startswith("arn:")
    scheme = sf.lower(sf.substring_index(sf.substring(destination, 1, 8), ":", 1))
    return (
        sf.when(is_arn & (service == "sqs"), sf.lit("sqs"))
        .when(is_arn & (service == "lambda"), sf.lit("lambda"))
        .when(is_arn & (service == "firehose"), sf.lit("firehose"))
        .when(
            is_arn & (service == "sns") & destination.contains(":endpoint/"), sf.lit("application")
        )
        .when(scheme.isin("https", "http") & destination.contains("://"), sf.lit("http/s"))
        .when(
            destination.startswith("+")
            | sf.col("d_sms_type").isNotNull()
            | sf.col("d_phone_carrier").isNotNull(),
            sf.lit("sms"),
        )
        .otherwise(sf.lit("unknown"))
    )


def topic_from_log_group(log_group: Column) -> Column:
    """The topic (or SMS / platform-application ARN) a log group ``sns/<region>/<acct>/<x>`` is for."""
    suffix = "/Failure"
    group = sf.when(
        log_group.endswith(suffix),
        sf.substring(log_group, sf.lit(1), sf.length(log_group) - len(suffix)),
    ).otherwise(log_group)
    region = sf.split_part(group, sf.lit("/"), sf.lit(2))
    account = sf.split_part(group, sf.lit("/"), sf.lit(3))
    prefix = sf.substring_index(group, "/", 3)
    resource = sf.substr(group, sf.length(prefix) + 2)
    partition = (
        sf.when(region.startswith("cn-"), sf.lit("aws-cn"))
        .when(region.startswith("us-gov-"), sf.lit("aws-us-gov"))
        .otherwise(sf.lit("aws"))
    )
    arn = sf.concat_ws(":", sf.lit("arn"), partition, sf.lit("sns"), region, account, resource)
    well_formed = group.startswith("sns/") & (region != "") & (account != "") & (resource != "")
    return sf.when(well_formed, arn)


def _field(record: Column, path: str) -> Column:
    """``record.a.b`` for the dotted ``path`` ``a.b``."""
    for name in path.split("."):
        record = record.getField(name)
    return record


def _long(value: Column) -> Column:
    return value.try_cast(st.LongType())


def _reason() -> Column:
    message = sf.col("message")
    bad_number = sf.lit(False)
    for name in _NUMBER_FIELDS:
        bad_number = bad_number | (sf.col(f"d_{name}").isNotNull() & sf.col(f"_{name}").isNull())
    return (
        sf.when(sf.col("reject_reason").isNotNull(), sf.col("reject_reason"))
        .when(is_blank(message), sf.lit("blank_line"))
        .when(~sf.col("single_object"), sf.lit("not_json"))
        .when(sf.col("empty_record"), sf.lit("not_a_delivery_record"))
        .when(sf.col("r_status").isNull(), sf.lit("missing_status"))
        .when(~sf.col("r_status").isin("SUCCESS", "FAILURE"), sf.lit("unknown_status"))
        .when(sf.col("message_id").isNull(), sf.lit("missing_message_id"))
        .when(sf.col("destination").isNull(), sf.lit("missing_destination"))
        .when(sf.col("n_timestamp").isNull(), sf.lit("missing_timestamp"))
        .when(sf.col("published_at").isNull(), sf.lit("bad_timestamp"))
        .when(bad_number, sf.lit("bad_number"))
    )


def _sample() -> Column:
    """The text a rejected row came from: the reader's sample, else the message itself."""
    return sf.when(
        sf.col("reject_reason").isNotNull(),
        sf.coalesce(sf.col("sample"), sf.substring(sf.col("message"), 1, SAMPLE_CHARS)),
    )


def _record_columns() -> list[Column]:
    status = sf.col("r_status")
    protocol = sf.col("protocol")
    status_code = sf.col("_statusCode")
    attempts = sf.col("_attempts")
    dwell = sf.col("_dwellTimeMs")
    response = sf.col("d_response")
    record_topic = sf.col("topic_arn")
    delivered_at = sf.timestamp_millis(
        sf.unix_millis(sf.col("published_at")) + sf.coalesce(dwell, sf.lit(0)),
    )
    columns: dict[str, Column] = {
        "published_at": sf.col("published_at"),
        "delivered_at": delivered_at,
        "topic": sf.col("topic"),
        "topic_source": sf.when(record_topic.isNotNull(), sf.lit("record"))
        .when(sf.col("topic") != UNKNOWN_TOPIC, sf.lit("log_group"))
        .otherwise(sf.lit("unknown")),
        "topic_arn": record_topic,
        "message_id": sf.col("message_id"),
        "message_md5": sf.col("n_md5"),
        "delivery_id": sf.col("d_delivery_id"),
        "destination": sf.col("destination"),
        "protocol": protocol,
        "status": status,
        "status_code": status_code,
        "attempts": attempts,
        "dwell_ms": dwell,
        "retried": sf.coalesce(attempts > 1, sf.lit(False)),
        "http_4xx_success": sf.coalesce(
            (status == "SUCCESS") & (protocol == "http/s") & status_code.between(400, 499),
            sf.lit(False),
        ),
        "cause": cause_column(sf.col("failure_text"), protocol, status_code),
        "error_code": error_code_column(status, response),
        "provider_response": response,
        "token": sf.col("d_token"),
        "phone_carrier": sf.col("d_phone_carrier"),
        "mcc": _long(sf.col("d_mcc")),
        "mnc": _long(sf.col("d_mnc")),
        "price_usd": sf.col("d_price").try_cast(st.DoubleType()),
        "sms_type": sf.col("d_sms_type"),
        "message_parts": _long(sf.col("d_parts")),
        "dwell_until_device_ack_ms": _long(sf.col("d_device_ack")),
        "log_group": sf.col("log_group"),
        "log_stream": sf.col("log_stream"),
        "log_time": sf.col("log_time"),
        "layout": sf.col("layout"),
        "source_file": sf.col("source_file"),
        "date": sf.to_date(delivered_at),
    }
    return [columns[name].alias(name) for name in RECORD_COLUMNS]
