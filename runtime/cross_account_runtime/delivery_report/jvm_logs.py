"""Keeping Spark's traces of a failed task off the console, and in a debug log instead.

When one file cannot be read, Spark logs the same Java trace four or five times (the task,
the executor, the task set, the writer aborting the job), some 300 lines ahead of the one line
that matters. The command line turns the failure into that line; the loggers that repeat the
trace are silenced while the job runs and the trace goes to a file the line can point to.
"""

from __future__ import annotations

import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.java_errors import java_trace

TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.util.Utils",
    "org.apache.spark.sql.execution.datasources.FileFormatWriter",
    "org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter",
)
"""The loggers that print a failed task's trace (in local mode the executor is the driver)."""


@contextmanager
def task_failures_off_the_console(spark: SparkSession) -> Iterator[None]:
    """Silence ``TASK_FAILURE_LOGGERS`` while the block runs, then give each back the level it
    had: its own, or none, so it follows the root logger again (``sc.setLogLevel``)."""
    jvm: Any = spark.sparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    configuration = log4j.LogManager.getContext(False).getConfiguration()
    previous = {name: _own_level(configuration, name) for name in TASK_FAILURE_LOGGERS}
    for name in TASK_FAILURE_LOGGERS:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)
    try:
        yield
    finally:
        for name, level in previous.items():
            log4j.core.config.Configurator.setLevel(name, level)


def _own_level(configuration: Any, name: str) -> Any:
    """The level configured for the logger itself, None if it inherits its parent's."""
    logger_config = configuration.getLoggerConfig(name)
    return logger_config.getExplicitLevel() if logger_config.getName() == name else None


def write_debug_log(spark: SparkSession, error: BaseException) -> str:
    """Write the Python and Java traces of ``error`` and its causes to a new file; its path."""
    with tempfile.NamedTemporaryFile(
        "w", prefix="delivery_report-", suffix=".log", delete=False, encoding="utf-8"
    ) as log:
        log.write("".join(traceback.format_exception(error)))
        cause = error.__cause__
        if cause is not None:
            log.write("\nJava trace:\n")
            log.write(java_trace(spark.sparkContext._jvm, cause))
        return log.name
