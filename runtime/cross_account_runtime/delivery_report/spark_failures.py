"""Which side a Spark failure is on, input or output, the path, and the cause in one line.

Reading the input and writing the Parquet happen in one Spark job, so one exception type
covers both a truncated ``.gz`` and a full disk; the Java cause chain tells them apart. Spark
names the file it failed to read (``FAILED_READ_FILE``, parameter ``path``) or the directory it
failed to write (``TASK_WRITE_FAILED``); other write failures (a file where a directory should
be, permissions on S3) name a path under the output. A gzip file Spark could not read is read
again with Python's ``gzip`` to say whether it was cut short or is damaged.
"""

from __future__ import annotations

import os
import re

from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.errors import (
    InputUnreadableError,
    JobError,
    OutputUnwritableError,
    SparkFailureError,
)
from cross_account_runtime.delivery_report.gzip_check import gzip_damage
from cross_account_runtime.delivery_report.inputs import read_bytes
from cross_account_runtime.delivery_report.java_errors import (
    SPARK_ERRORS,
    JavaCause,
    cause_chain,
    root_cause,
)

READ_FAILED = "FAILED_READ_FILE"
WRITE_FAILED = "TASK_WRITE_FAILED"
GZIP_MAGIC = b"\x1f\x8b"
INPUT_FIX = (
    "copy the file again from its source, or move it out of the input; no report was written"
)
OUTPUT_FIX = "pass an --output you can write to (a directory, or an S3 prefix you may write)"
SPARK_FIX = "the full trace is in the debug log; rerun, and if it fails again report the trace"


def explain(spark: SparkSession, error: BaseException, output: str) -> JobError:
    """The operator's view of a Spark failure while the job read its input or wrote ``output``."""
    chain = cause_chain(error)
    under_output = _under(output)
    cause = f"cannot be written: {root_cause(error)}"
    for link in chain:
        if _is(link, WRITE_FAILED):
            return OutputUnwritableError(link.parameters.get("path", output), cause, OUTPUT_FIX)
        unread = link.parameters.get("path") if _is(link, READ_FAILED) else None
        if unread is not None and not under_output.search(unread):
            return InputUnreadableError(unread, _read_cause(spark, unread, error), INPUT_FIX)
    if any(under_output.search(text) for link in chain for text in _texts(link)):
        return OutputUnwritableError(output, cause, OUTPUT_FIX)
    return SparkFailureError(
        f"Spark failed and named neither an input file nor the output {output!r}: "
        f"{root_cause(error)}; {SPARK_FIX}",
    )


def _under(output: str) -> re.Pattern[str]:
    """``output`` or a path below it, in any form Hadoop prints it (``file:``, ``s3a://``)."""
    if "://" in output or output.startswith("file:"):
        location = output.split("://", 1)[-1].removeprefix("file:").rstrip("/")
    else:
        location = os.path.abspath(output)
    return re.compile(r"(?<![\w.-])" + re.escape(location) + r"(?![^/\s'\"])")


def _texts(link: JavaCause) -> list[str]:
    return [link.message, *link.parameters.values()]


def _is(link: JavaCause, condition: str) -> bool:
    return (link.condition or "").split(".", 1)[0] == condition


def _read_cause(spark: SparkSession, path: str, error: BaseException) -> str:
    """Why the file could not be read: Python's verdict on a gzip file, else Spark's cause."""
    spark_cause = f"cannot be read: {root_cause(error)}"
    try:
        if read_bytes(spark, path, len(GZIP_MAGIC)) != GZIP_MAGIC:
            return spark_cause
        damage = gzip_damage(read_bytes(spark, path))
    except SPARK_ERRORS:
        return spark_cause
    return damage or spark_cause
