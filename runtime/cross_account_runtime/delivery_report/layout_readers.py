"""Per-layout readers: text rows in, one ``UNIT_SCHEMA`` row per log event (or reject) out.

Every function here is DataFrame -> DataFrame over ``LINE_SCHEMA`` rows, so each layout can be
tested on an in-memory DataFrame. No row is dropped: a line, envelope or page that cannot
yield a log event becomes a row with a ``reject_reason`` (``explode_outer``, never ``explode``,
where an array may be empty).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as sf
from pyspark.sql import types as st

from cross_account_runtime.delivery_report.detect import Layout
from cross_account_runtime.delivery_report.inputs import InputFile, read_lines
from cross_account_runtime.delivery_report.schema import ENVELOPE_SCHEMA, PAGE_SCHEMA, UNIT_SCHEMA
from cross_account_runtime.delivery_report.text_columns import (
    is_blank,
    is_single_object,
    parse_single_object,
)
from cross_account_runtime.delivery_report.timestamps import lenient_timestamp

SAMPLE_CHARS = 300
PIECE_SEPARATOR = "\u0001"
"""Cannot occur in valid JSON text: raw control characters are not allowed, even in strings."""

CONCATENATED_BOUNDARY = r'\}\s*\{(?=\s*"[A-Za-z])'
"""Where one JSON object ends and the next begins when objects are written back to back.

``}{"k`` can occur inside a valid JSON document only as the end of a string value (a quote
inside a string is always escaped, so an unescaped quote after ``{`` closes the string); a
closing quote is followed by ``,``, ``:``, ``}``, ``]`` or whitespace, never by a letter.
So a ``}`` and ``{`` followed by a quote and a letter is always an object boundary.
"""

EXPORT_LEVELS_BELOW_GROUP = 3
"""``<log group>/<exportTaskId>/<logStreamName>/000000.gz``."""
FILE_LEVELS_BELOW_GROUP = 1
"""``<log group>/<file>`` for JSON lines and filter-log-events pages."""


def units_for_files(spark: SparkSession, files: Sequence[InputFile]) -> DataFrame:
    """All units of all files, each file read with the reader of its layout."""
    frames: list[DataFrame] = []
    for layout in Layout:
        chosen = [f for f in files if f.layout is layout]
        if not chosen:
            continue
        whole = layout is Layout.FILTER_LOG_EVENTS
        frames.append(READERS[layout](read_lines(spark, chosen, whole_text=whole)))
    if not frames:
        return spark.createDataFrame([], UNIT_SCHEMA)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def export_units(lines: DataFrame) -> DataFrame:
    """CreateExportTask lines: ``<ISO timestamp>Z <raw message>``."""
    value = sf.col("value")
    staged = lines.withColumn("log_time", lenient_timestamp(sf.substring_index(value, " ", 1)))
    reason = (
        sf.when(sf.col("read_error").isNotNull(), sf.col("read_error"))
        .when(is_blank(value), sf.lit("blank_line"))
        .when(
            (sf.instr(value, " ") == 0) | sf.col("log_time").isNull(),
            sf.lit("export_line_malformed"),
        )
    )
    return _units(
        staged.withColumn("reject_reason", reason),
        layout=Layout.EXPORT,
        log_group=path_log_group(sf.col("source_file"), EXPORT_LEVELS_BELOW_GROUP),
        log_stream=_export_stream(sf.col("source_file")),
        log_time=sf.col("log_time"),
        message=sf.expr("substr(value, instr(value, ' ') + 1)"),
        sample=value,
    )


def jsonl_units(lines: DataFrame) -> DataFrame:
    """One raw delivery record per line (also Firehose's CloudWatchLogProcessing output)."""
    value = sf.col("value")
    reason = sf.when(sf.col("read_error").isNotNull(), sf.col("read_error")).when(
        is_blank(value),
        sf.lit("blank_line"),
    )
    return _units(
        lines.withColumn("reject_reason", reason),
        layout=Layout.JSONL,
        log_group=path_log_group(sf.col("source_file"), FILE_LEVELS_BELOW_GROUP),
        log_stream=sf.lit(None).cast("string"),
        log_time=sf.lit(None).cast("timestamp"),
        message=value,
        sample=value,
    )


def firehose_units(lines: DataFrame) -> DataFrame:
    """Firehose objects: CloudWatch Logs envelopes back to back, one per gzip member."""
    pieces = _pieces(lines)
    parsed = parse_single_object(sf.col("piece"), ENVELOPE_SCHEMA)
    envelope = sf.get(parsed, 0)
    message_type = envelope.getField("messageType")
    events = envelope.getField("logEvents")
    reason = (
        sf.when(sf.col("read_error").isNotNull(), sf.col("read_error"))
        .when(is_blank(sf.col("piece")), sf.lit("blank_line"))
        .when(~is_single_object(parsed, sf.col("piece")), sf.lit("envelope_malformed"))
        .when(message_type == "CONTROL_MESSAGE", sf.lit("control_message"))
        .when(
            message_type.isNotNull() & (message_type != "DATA_MESSAGE"),
            sf.lit("envelope_unknown_type"),
        )
        .when(sf.coalesce(sf.size(events), sf.lit(0)) < 1, sf.lit("envelope_without_events"))
    )
    staged = pieces.select(
        "source_file",
        "piece",
        reason.alias("stage_reason"),
        envelope.getField("logGroup").alias("env_group"),
        envelope.getField("logStream").alias("env_stream"),
        events.alias("events"),
    )
    exploded = staged.select(
        "*",
        sf.explode_outer(sf.when(sf.col("stage_reason").isNull(), sf.col("events"))).alias("event"),
    )
    return _event_units(
        exploded,
        layout=Layout.FIREHOSE,
        log_group=sf.col("env_group"),
        log_stream=sf.col("env_stream"),
    )


def filter_log_events_units(files: DataFrame) -> DataFrame:
    """``aws logs filter-log-events`` output: one or more JSON pages per file."""
    pieces = _pieces(files)
    parsed = parse_single_object(sf.col("piece"), PAGE_SCHEMA)
    page = sf.get(parsed, 0)
    events = page.getField("events")
    reason = (
        sf.when(sf.col("read_error").isNotNull(), sf.col("read_error"))
        .when(is_blank(sf.col("piece")), sf.lit("blank_line"))
        .when(~is_single_object(parsed, sf.col("piece")), sf.lit("page_malformed"))
        .when(events.isNull(), sf.lit("page_without_events"))
        .when(sf.size(events) == 0, sf.lit("empty_page"))
    )
    staged = pieces.select(
        "source_file",
        "piece",
        reason.alias("stage_reason"),
        events.alias("events"),
    )
    exploded = staged.select(
        "*",
        sf.explode_outer(sf.when(sf.col("stage_reason").isNull(), sf.col("events"))).alias("event"),
    )
    return _event_units(
        exploded,
        layout=Layout.FILTER_LOG_EVENTS,
        log_group=path_log_group(sf.col("source_file"), FILE_LEVELS_BELOW_GROUP),
        log_stream=sf.col("event").getField("logStreamName"),
    )


READERS = {
    Layout.EXPORT: export_units,
    Layout.JSONL: jsonl_units,
    Layout.FIREHOSE: firehose_units,
    Layout.FILTER_LOG_EVENTS: filter_log_events_units,
}


def _pieces(lines: DataFrame) -> DataFrame:
    """Split back-to-back JSON objects; a row with a read error passes through as it is."""
    split = sf.split(
        sf.regexp_replace(sf.col("value"), CONCATENATED_BOUNDARY, "}" + PIECE_SEPARATOR + "{"),
        PIECE_SEPARATOR,
    )
    return lines.select(
        "source_file",
        "read_error",
        sf.explode_outer(sf.when(sf.col("read_error").isNull(), split)).alias("piece"),
    )


def _event_units(
    exploded: DataFrame,
    *,
    layout: Layout,
    log_group: Column,
    log_stream: Column,
) -> DataFrame:
    event = sf.col("event")
    message = event.getField("message")
    reason = sf.when(sf.col("stage_reason").isNotNull(), sf.col("stage_reason")).when(
        message.isNull(),
        sf.lit("event_without_message"),
    )
    epoch_ms = event.getField("timestamp").try_cast(st.LongType())
    return _units(
        exploded.withColumn("reject_reason", reason),
        layout=layout,
        log_group=log_group,
        log_stream=log_stream,
        log_time=sf.when(epoch_ms.isNotNull(), sf.timestamp_millis(epoch_ms)),
        message=message,
        sample=sf.coalesce(sf.to_json(event), sf.col("piece")),
    )


def _units(
    frame: DataFrame,
    *,
    layout: Layout,
    log_group: Column,
    log_stream: Column,
    log_time: Column,
    message: Column,
    sample: Column,
) -> DataFrame:
    """Project to ``UNIT_SCHEMA``; ``frame`` already carries ``reject_reason``.

    The sample is only built for rejected rows: turning every event back into text would
    cost as much as parsing it.
    """
    rejected = sf.col("reject_reason").isNotNull()
    return frame.select(
        sf.lit(layout.value).alias("layout"),
        sf.col("source_file"),
        log_group.alias("log_group"),
        log_stream.alias("log_stream"),
        log_time.alias("log_time"),
        sf.when(~rejected, message).alias("message"),
        sf.col("reject_reason"),
        sf.when(
            rejected,
            sf.substring(sf.coalesce(sample, sf.col("source_file")), 1, SAMPLE_CHARS),
        ).alias("sample"),
    )


def path_log_group(path: Column, levels_below: int) -> Column:
    """The log group a path names: from its last ``sns/`` folder to ``levels_below`` levels up.

    ``.../sns/<region>/<account>/<topic>[/Failure]/<task>/<stream>/000000.gz`` with 3 levels
    below gives ``sns/<region>/<account>/<topic>[/Failure]``. Cut with ``substring_index`` (no
    regular expression: a backtracking regex per row cost more than parsing the JSON).
    """
    tail = sf.substring_index(path, "/", -levels_below)
    folder = sf.substring(path, sf.lit(1), sf.length(path) - sf.length(tail) - 1)
    after_last = sf.substring_index(folder, "/sns/", -1)
    return sf.when(
        folder.contains("/sns/") & (after_last != ""), sf.concat(sf.lit("sns/"), after_last)
    ).when(folder.startswith("sns/"), folder)


def _export_stream(path: Column) -> Column:
    """``<logStreamName>`` in ``.../<logStreamName>/000000.gz``."""
    return sf.nullif(sf.substring_index(sf.substring_index(path, "/", -2), "/", 1), sf.lit(""))
