"""Sample data, and helpers to run the job's stages on small files (the Spark session is the
run's one, from ``tests/conftest.py``)."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.detect import Layout
from cross_account_runtime.delivery_report.inputs import list_input_files
from cross_account_runtime.delivery_report.layouts import units_for_files
from cross_account_runtime.delivery_report.normalize import classify_units
from cross_account_runtime.delivery_report.sample.generator import SampleData, generate
from cross_account_runtime.delivery_report.sample.writers import WRITERS, write_layouts

SAMPLE_RECORDS = 2000
SAMPLE_SEED = 11


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


def classified_rows(
    spark: SparkSession,
    paths: Sequence[Path],
    layout: Layout | None = None,
) -> list[dict[str, Any]]:
    """Every unit the job would see in ``paths``, classified, as dicts."""
    files = list_input_files(spark, [str(p) for p in paths], layout)
    readable = [f for f in files if f.layout is not None]
    frame = classify_units(units_for_files(spark, readable))
    return [row.asDict() for row in frame.collect()]


def write_lines(path: Path, lines: Iterable[str], compress: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{line}\n" for line in lines)
    if compress:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path
