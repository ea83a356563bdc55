"""The job: inputs -> normalized Parquet, summary JSON, HTML report, accounting check.

One pass over the input: every unit, parsed or rejected, is written once to Parquet
(partitioned by ``outcome`` and ``date``) and the aggregates read the few columns they need
back from there -- cheaper than caching wide rows in memory. Records read are counted with an
``Observation`` on the readers' output inside that same pass, so the check
``read == parsed + rejected`` compares counts taken at two different points of Spark's query plan.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as sf

from cross_account_runtime.delivery_report.detect import Layout
from cross_account_runtime.delivery_report.errors import AccountingError
from cross_account_runtime.delivery_report.html_report import render_report
from cross_account_runtime.delivery_report.inputs import InputFile, list_input_files
from cross_account_runtime.delivery_report.java_errors import SPARK_ERRORS
from cross_account_runtime.delivery_report.layout_readers import units_for_files
from cross_account_runtime.delivery_report.normalize import (
    PARSED,
    REJECTED,
    classify_units,
    with_outcome,
)
from cross_account_runtime.delivery_report.spark_failures import explain
from cross_account_runtime.delivery_report.summary import build_summary, collect_aggregates
from cross_account_runtime.delivery_report.thresholds import ParsedThreshold, check_parsed

SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
RECORDS_DIR = "records"
LOCAL_SHUFFLE_PARTITIONS = 8
LOCAL_JAVA_OPTIONS = "-XX:+UseSerialGC"
"""On a few cores G1's concurrent threads take CPU from the tasks; the serial collector cut the
job's CPU time by about 8% on two cores (docs/delivery_report.md, Benchmark)."""
CODEGEN_METHOD_LIMIT = {"spark.sql.codegen.hugeMethodLimit": "8000"}
"""Run an operator without whole-stage code generation when its per-row method would exceed
8,000 bytes of bytecode.

HotSpot never compiles a method that big (``-XX:HugeMethodLimit``), so the fused method of
the parse-and-write stage (about 13,000 bytes: every record column and reject reason of
``normalize.py``) ran interpreted for the whole job. Split into operators, each with its own
small compiled projection, parsing and classifying used about a fifth less CPU
(docs/delivery_report.md, *Where the CPU goes*). Spark's documentation recommends this value
on HotSpot."""
MIN_PARTITIONS = "spark.sql.files.minPartitionNum"
LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
DRIVER_LISTING_THRESHOLD = 1_000_000
"""Files Spark may stat on the driver before it lists them with a Spark job instead.

The inputs are handed to Spark as a list of files already listed; for local files a listing
job (its task launch, and the first task of a fresh JVM) costs seconds where stating the files
on the driver costs milliseconds. Remote inputs keep Spark's own threshold: there each stat is
a request and a listing job spreads them over the executors."""
NO_DICTIONARY = {
    f"parquet.enable.dictionary#{column}": "false"
    for column in (
        "published_at",
        "delivered_at",
        "log_time",
        "message_id",
        "message_md5",
        "delivery_id",
        "provider_response",
        "token",
        "dwell_ms",
        "sample",
    )
}
"""Columns with (nearly) one value per record: trying a dictionary for them only costs time
(Parquet hashes every value before it gives up), about 15% of the write."""


@dataclass(frozen=True)
class JobConfig:
    """What to read, where to write, how, and how much of it must parse."""

    inputs: tuple[str, ...]
    output: str
    layout: str = "auto"
    s3_scheme: str = "s3a"
    threshold: ParsedThreshold = field(default_factory=ParsedThreshold)


@dataclass
class JobResult:
    summary: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


def run(spark: SparkSession, config: JobConfig) -> JobResult:
    """Run the job on an existing session.

    Raises a ``JobError``: ``AccountingError`` if records went missing, ``TooLittleParsedError``
    (after writing the report, whose rejects explain it) if too little of the input parsed,
    and for a Spark failure the side it happened on (``spark_failures.explain``).
    """
    try:
        return _run(spark, config)
    except SPARK_ERRORS as error:
        raise explain(spark, error, config.output) from error


def _run(spark: SparkSession, config: JobConfig) -> JobResult:
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    with _session_conf(spark, CODEGEN_METHOD_LIMIT):
        return _passes(spark, config)


def _passes(spark: SparkSession, config: JobConfig) -> JobResult:
    """List the inputs, write the records, aggregate them, write the summary and report."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    forced = None if config.layout == "auto" else Layout(config.layout)
    files = list_input_files(spark, config.inputs, forced, config.s3_scheme)
    readable = [f for f in files if f.layout is not None]
    timings["list_files_s"] = time.perf_counter() - started
    output = config.output.rstrip("/")
    stored_at = f"{output}/{RECORDS_DIR}"
    step = time.perf_counter()
    observation = Observation("units")
    with _session_conf(spark, _read_and_write_conf(spark, readable)):
        units = units_for_files(spark, readable).observe(
            observation,
            sf.count(sf.lit(1)).alias("read"),
        )
        normalized = with_outcome(classify_units(units))
        normalized.write.mode("overwrite").options(**NO_DICTIONARY).partitionBy(
            "outcome", "date"
        ).parquet(stored_at)
    read = int(observation.get["read"])
    timings["parse_and_write_s"] = time.perf_counter() - step
    step = time.perf_counter()
    # The schema is the one just written: given, Spark runs no job to read it from a footer.
    stored = spark.read.schema(normalized.schema).parquet(stored_at)
    aggregates = collect_aggregates(
        stored.filter(sf.col("outcome") == PARSED),
        stored.filter(sf.col("outcome") == REJECTED),
    )
    timings["aggregate_s"] = time.perf_counter() - step
    summary = build_summary(aggregates, read, files)
    write_text(spark, f"{output}/{SUMMARY_FILE}", dump_summary(summary))
    write_text(spark, f"{output}/{REPORT_FILE}", render_report(summary))
    timings["total_s"] = time.perf_counter() - started
    accounting = summary["accounting"]
    if not accounting["balanced"]:
        raise AccountingError(
            f"records read ({accounting['records_read']}) != parsed ({accounting['records_parsed']})"
            f" + rejected ({accounting['records_rejected']}): records were lost between stages",
        )
    check_parsed(summary, config.threshold, config.inputs, f"{output}/{SUMMARY_FILE}")
    return JobResult(summary=summary, timings=timings)


def _read_and_write_conf(spark: SparkSession, files: Sequence[InputFile]) -> dict[str, str]:
    """Session settings for the pass that reads the input and writes the Parquet.

    One read task per file, small files packed together (``openCostInBytes``): Spark packs
    files into as few partitions as ``defaultParallelism`` allows, and gzip files cannot be
    split, so a few big partitions leave cores idle while the last one finishes. Local files
    are stated on the driver rather than by a listing job.
    """
    settings = {MIN_PARTITIONS: str(max(len(files), spark.sparkContext.defaultParallelism))}
    if all(f.path.startswith("file:") for f in files):
        settings[LISTING_THRESHOLD] = str(DRIVER_LISTING_THRESHOLD)
    return settings


@contextmanager
def _session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set session settings for one pass and restore the caller's afterwards, even on failure.

    Reading the Parquet back must pack its many small files into few tasks again, and a
    caller's session (tests, a notebook) must not keep the job's settings.
    """
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in previous.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


def dump_summary(summary: dict[str, Any]) -> str:
    """The summary as JSON text; key order is the summary's own, which is deterministic."""
    return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"


def write_text(spark: SparkSession, uri: str, text: str) -> None:
    """Write a small text file through Hadoop's FileSystem (local path or S3 alike)."""
    jvm = spark.sparkContext._jvm
    if jvm is None:
        raise RuntimeError("the SparkContext has no JVM gateway (was the session stopped?)")
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = fs.create(path, True)
    try:
        stream.write(text.encode("utf-8"))
    finally:
        stream.close()


def build_session(master: str | None, driver_memory: str | None, app_name: str) -> SparkSession:
    """A session for the job; master, driver memory and, in local mode, the serial collector
    only apply when the JVM starts here.

    Python workers run this interpreter unless PYSPARK_PYTHON says otherwise (PySpark would
    pick whatever ``python3`` is on PATH). In local mode few shuffle partitions suit the few cores (the default 200 would mean 200
    tiny tasks per aggregation); a cluster keeps whatever spark-submit configured.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).config("spark.ui.showConsoleProgress", "false")
    if master:
        builder = builder.master(master)
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    if master and master.startswith("local"):
        builder = builder.config("spark.driver.extraJavaOptions", LOCAL_JAVA_OPTIONS)
    spark = builder.config("spark.sql.session.timeZone", "UTC").getOrCreate()
    if (spark.sparkContext.master or "").startswith(
        "local"
    ) and not spark.sparkContext.getConf().contains(
        "spark.sql.shuffle.partitions",
    ):
        spark.conf.set("spark.sql.shuffle.partitions", str(LOCAL_SHUFFLE_PARTITIONS))
    return spark


def print_timings(result: JobResult) -> None:
    """One line of timings on stderr for logs and the benchmark."""
    print(
        json.dumps({"timings": {k: round(v, 3) for k, v in result.timings.items()}}),
        file=sys.stderr,
    )
