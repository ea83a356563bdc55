"""Delivery records from units: parse, validate, derive protocol, topic, cause and times.

``classify_units`` keeps every unit and says for each either why it was rejected or what it
holds, so that ``records read == records parsed + records rejected`` can be checked on one
DataFrame. All of it is column expressions evaluated in the JVM: no Python UDF.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as sf
from pyspark.sql import types as st

from runtime.delivery_report.causes import cause_column, error_code_column
from runtime.delivery_report.schema import RECORD_SCHEMA
from runtime.delivery_report.text_columns import ends_object, is_blank
from runtime.delivery_report.timestamps import lenient_timestamp

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

PARSED = "parsed"
REJECTED = "rejected"

_NUMBER_FIELDS = ("dwellTimeMs", "attempts", "statusCode")


def classify_units(units: DataFrame) -> DataFrame:
    """Every unit with the normalized record columns and ``reject_reason`` (null if parsed).

    Record columns are computed for rejected rows too (they come out null or partial): that
    keeps one projection for all rows, and rejected rows are rare.
    """
    parsed = sf.from_json(
        sf.concat(sf.lit("["), sf.col("message"), sf.lit("]")),
        st.ArrayType(RECORD_SCHEMA),
    )
    staged = units.withColumn("parsed", parsed).withColumn(
        "record",
        sf.col("parsed").getItem(0),
    )
    record = sf.col("record")
    notification = record.getField("notification")
    delivery = record.getField("delivery")
    fields = staged.select(
        "*",
        lenient_timestamp(notification.getField("timestamp")).alias("published_at"),
        *(_long(delivery.getField(name)).alias(f"_{name}") for name in _NUMBER_FIELDS),
    )
    return _with_reason(fields).select(*_record_columns(), "reject_reason", "sample")


def with_outcome(classified: DataFrame) -> DataFrame:
    """Record columns, reject columns and ``outcome`` (``parsed`` or ``rejected``) to store."""
    outcome = sf.when(sf.col("reject_reason").isNull(), sf.lit(PARSED)).otherwise(sf.lit(REJECTED))
    return classified.select(
        *RECORD_COLUMNS,
        sf.col("reject_reason"),
        sf.col("sample"),
        outcome.alias("outcome"),
    )


def protocol_column(destination: Column, delivery: Column) -> Column:
    """The subscription protocol a destination belongs to (SNS logging-config names)."""
    service = sf.split_part(destination, sf.lit(":"), sf.lit(3))
    is_arn = destination.startswith("arn:")
    lowered = sf.lower(destination)
    return (
        sf.when(is_arn & (service == "sqs"), sf.lit("sqs"))
        .when(is_arn & (service == "lambda"), sf.lit("lambda"))
        .when(is_arn & (service == "firehose"), sf.lit("firehose"))
        .when(
            is_arn & (service == "sns") & destination.contains(":endpoint/"), sf.lit("application")
        )
        .when(lowered.startswith("https://") | lowered.startswith("http://"), sf.lit("http/s"))
        .when(
            destination.startswith("+")
            | delivery.getField("smsType").isNotNull()
            | delivery.getField("phoneCarrier").isNotNull(),
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


def _long(value: Column) -> Column:
    return value.try_cast(st.LongType())


def _with_reason(fields: DataFrame) -> DataFrame:
    record = sf.col("record")
    notification = record.getField("notification")
    delivery = record.getField("delivery")
    status = record.getField("status")
    message = sf.col("message")
    message_id = sf.nullif(sf.trim(notification.getField("messageId")), sf.lit(""))
    destination = sf.nullif(sf.trim(delivery.getField("destination")), sf.lit(""))
    bad_number = sf.lit(False)
    for name in _NUMBER_FIELDS:
        bad_number = bad_number | (
            delivery.getField(name).isNotNull() & sf.col(f"_{name}").isNull()
        )
    well_formed = sf.coalesce(
        (sf.size("parsed") == 1) & ends_object(message) & record.isNotNull(),
        sf.lit(False),
    )
    reason = (
        sf.when(sf.col("reject_reason").isNotNull(), sf.col("reject_reason"))
        .when(is_blank(message), sf.lit("blank_line"))
        .when(~well_formed, sf.lit("not_json"))
        .when(
            notification.isNull() & delivery.isNull() & status.isNull(),
            sf.lit("not_a_delivery_record"),
        )
        .when(status.isNull(), sf.lit("missing_status"))
        .when(~status.isin("SUCCESS", "FAILURE"), sf.lit("unknown_status"))
        .when(message_id.isNull(), sf.lit("missing_message_id"))
        .when(destination.isNull(), sf.lit("missing_destination"))
        .when(notification.getField("timestamp").isNull(), sf.lit("missing_timestamp"))
        .when(sf.col("published_at").isNull(), sf.lit("bad_timestamp"))
        .when(bad_number, sf.lit("bad_number"))
    )
    sample = sf.when(
        sf.col("reject_reason").isNotNull(),
        sf.col("sample"),
    ).otherwise(sf.substring(message, 1, SAMPLE_CHARS))
    return fields.withColumns(
        {
            "sample": sf.when(reason.isNotNull(), sample),
            "reject_reason": reason,
        },
    )


def _record_columns() -> list[Column]:
    record = sf.col("record")
    notification = record.getField("notification")
    delivery = record.getField("delivery")
    status = record.getField("status")
    destination = sf.trim(delivery.getField("destination"))
    protocol = protocol_column(destination, delivery)
    status_code = sf.col("_statusCode")
    attempts = sf.col("_attempts")
    dwell = sf.col("_dwellTimeMs")
    response = delivery.getField("providerResponse")
    record_topic = sf.nullif(sf.trim(notification.getField("topicArn")), sf.lit(""))
    group_topic = topic_from_log_group(sf.col("log_group"))
    delivered_at = sf.timestamp_millis(
        sf.unix_millis(sf.col("published_at")) + sf.coalesce(dwell, sf.lit(0)),
    )
    columns: dict[str, Column] = {
        "published_at": sf.col("published_at"),
        "delivered_at": delivered_at,
        "topic": sf.coalesce(record_topic, group_topic, sf.lit(UNKNOWN_TOPIC)),
        "topic_source": sf.when(record_topic.isNotNull(), sf.lit("record"))
        .when(sf.col("log_group").isNotNull() & group_topic.isNotNull(), sf.lit("log_group"))
        .otherwise(sf.lit("unknown")),
        "topic_arn": record_topic,
        "message_id": sf.trim(notification.getField("messageId")),
        "message_md5": notification.getField("messageMD5Sum"),
        "delivery_id": delivery.getField("deliveryId"),
        "destination": destination,
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
        "cause": cause_column(status, protocol, status_code, response),
        "error_code": error_code_column(status, response),
        "provider_response": response,
        "token": delivery.getField("token"),
        "phone_carrier": delivery.getField("phoneCarrier"),
        "mcc": _long(delivery.getField("mcc")),
        "mnc": _long(delivery.getField("mnc")),
        "price_usd": delivery.getField("priceInUSD").try_cast(st.DoubleType()),
        "sms_type": delivery.getField("smsType"),
        "message_parts": _long(delivery.getField("numberOfMessageParts")),
        "dwell_until_device_ack_ms": _long(delivery.getField("dwellTimeMsUntilDeviceAck")),
        "log_group": sf.col("log_group"),
        "log_stream": sf.col("log_stream"),
        "log_time": sf.col("log_time"),
        "layout": sf.col("layout"),
        "source_file": sf.col("source_file"),
        "date": sf.to_date(delivered_at),
    }
    return [columns[name].alias(name) for name in RECORD_COLUMNS]
