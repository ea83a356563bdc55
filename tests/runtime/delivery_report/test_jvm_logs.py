"""Task-failure loggers are silenced while the job runs and follow the root logger after."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.jvm_logs import (
    TASK_FAILURE_LOGGERS,
    task_failures_off_the_console,
)

pytestmark = pytest.mark.spark


def _levels(spark: SparkSession) -> set[str]:
    manager = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager  # type: ignore[union-attr]
    return {str(manager.getLogger(name).getLevel()) for name in TASK_FAILURE_LOGGERS}


def test_task_failure_loggers_are_off_inside_and_inherit_after(spark: SparkSession) -> None:
    assert _levels(spark) == {"ERROR"}
    for _ in range(2):
        with task_failures_off_the_console(spark):
            assert _levels(spark) == {"OFF"}
    spark.sparkContext.setLogLevel("WARN")
    try:
        assert _levels(spark) == {"WARN"}
    finally:
        spark.sparkContext.setLogLevel("ERROR")
