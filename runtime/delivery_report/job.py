"""The job: inputs -> normalized Parquet, summary JSON, HTML report, accounting check.

One pass over the input: every unit, parsed or rejected, is written once to Parquet
(partitioned by ``outcome`` and ``date``) and the aggregates read the few columns they need
back from there -- cheaper than caching wide rows in memory. Records read are counted with an
``Observation`` on the readers' output inside that same pass, so the check
``read == parsed + rejected`` compares counts taken at two different points of the plan.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as sf

from runtime.delivery_report.detect import Layout
from runtime.delivery_report.errors import AccountingError
from runtime.delivery_report.inputs import list_input_files
from runtime.delivery_report.layouts import units_for_files
from runtime.delivery_report.normalize import PARSED, REJECTED, classify_units, with_outcome
from runtime.delivery_report.report import render_report
from runtime.delivery_report.summary import build_summary, collect_aggregates

SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
RECORDS_DIR = "records"
LOCAL_SHUFFLE_PARTITIONS = 8
MIN_PARTITIONS = "spark.sql.files.minPartitionNum"
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
    """What to read, where to write, and how."""

    inputs: tuple[str, ...]
    output: str
    layout: str = "auto"
    s3_scheme: str = "s3a"


@dataclass
class JobResult:
    summary: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


def run(spark: SparkSession, config: JobConfig) -> JobResult:
    """Run the job on an existing session; raises ``AccountingError`` if records went missing."""
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    forced = None if config.layout == "auto" else Layout(config.layout)
    files = list_input_files(spark, config.inputs, forced, config.s3_scheme)
    readable = [f for f in files if f.layout is not None]
    previous_min_partitions = spark.conf.get(MIN_PARTITIONS, None)
    _balance_partitions(spark, len(readable))
    timings["list_files_s"] = time.perf_counter() - started
    observation = Observation("units")
    units = units_for_files(spark, readable).observe(
        observation,
        sf.count(sf.lit(1)).alias("read"),
    )
    output = config.output.rstrip("/")
    stored_at = f"{output}/{RECORDS_DIR}"
    step = time.perf_counter()
    try:
        with_outcome(classify_units(units)).write.mode("overwrite").options(
            **NO_DICTIONARY,
        ).partitionBy("outcome", "date").parquet(stored_at)
    finally:
        if previous_min_partitions is None:
            spark.conf.unset(MIN_PARTITIONS)
        else:
            spark.conf.set(MIN_PARTITIONS, previous_min_partitions)
    read = int(observation.get["read"])
    timings["parse_and_write_s"] = time.perf_counter() - step
    step = time.perf_counter()
    stored = spark.read.parquet(stored_at)
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
    return JobResult(summary=summary, timings=timings)


def _balance_partitions(spark: SparkSession, files: int) -> None:
    """One read task per file, small files packed together (``openCostInBytes``).

    Spark packs files into as few partitions as ``defaultParallelism`` allows; gzip files
    cannot be split, so a few big partitions leave cores idle while the last one finishes.
    Restored after the input is read, so reading the Parquet back packs its files.
    """
    wanted = max(files, spark.sparkContext.defaultParallelism)
    spark.conf.set(MIN_PARTITIONS, str(wanted))


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
    """A session for the job; master and driver memory only apply when the JVM starts here.

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
    spark = builder.config("spark.sql.session.timeZone", "UTC").getOrCreate()
    if (spark.sparkContext.master or "").startswith(
        "local"
    ) and not spark.sparkContext.getConf().contains(
        "spark.sql.shuffle.partitions",
    ):
        spark.conf.set("spark.sql.shuffle.partitions", str(LOCAL_SHUFFLE_PARTITIONS))
    return spark


def print_timings(result: JobResult, stream: Any = sys.stderr) -> None:
    """One line of timings for logs and the benchmark."""
    print(json.dumps({"timings": {k: round(v, 3) for k, v in result.timings.items()}}), file=stream)
