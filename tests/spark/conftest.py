"""One local SparkSession for the whole test run (starting one takes ~10 s), and sample data."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runtime.delivery_report.generator import SampleData, generate
from runtime.delivery_report.sample_writers import WRITERS, write_layouts

SAMPLE_RECORDS = 2000
SAMPLE_SEED = 11


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("delivery-report-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def sample() -> SampleData:
    return generate(SAMPLE_RECORDS, SAMPLE_SEED)


@pytest.fixture(scope="session")
def sample_dir(sample: SampleData, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample in every layout; small Firehose objects and files so there are several."""
    out = tmp_path_factory.mktemp("sample")
    write_layouts(
        sample,
        out,
        tuple(WRITERS),
        seed=SAMPLE_SEED,
        firehose_object_bytes=16 * 1024,
        lines_per_file=700,
    )
    return out
