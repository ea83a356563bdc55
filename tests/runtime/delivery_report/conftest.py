"""Sample data, and helpers to run the job's stages on small files (the Spark session is the
run's one, from ``tests/conftest.py``)."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.detect import Layout
from cross_account_runtime.delivery_report.inputs import list_input_files
from cross_account_runtime.delivery_report.layout_readers import units_for_files
from cross_account_runtime.delivery_report.normalize import classify_units
from cross_account_runtime.delivery_report.sample.events import LogEvent, Truth, TruthCounter
from cross_account_runtime.delivery_report.sample.generator import generate
from cross_account_runtime.delivery_report.sample.writers import write_layouts

SAMPLE_RECORDS = 2000
SAMPLE_SEED = 6
"""A seed whose few thousand records show at least nine failure causes."""
SAMPLE_CHUNK_RECORDS = 700
"""Small chunks, so the sample is written by two processes and its files numbered across them."""


@dataclass(frozen=True)
class Sample:
    """The sample's events, held in memory (a few thousand), and what was generated."""

    events: list[LogEvent]
    truth: Truth


def truth_of(events: Iterable[LogEvent]) -> Truth:
    counter = TruthCounter()
    for event in events:
        counter.add(event)
    return counter.truth


@pytest.fixture(scope="session")
def sample() -> Sample:
    """The events :func:`sample_dir` writes."""
    events = list(generate(SAMPLE_RECORDS, SAMPLE_SEED, chunk_records=SAMPLE_CHUNK_RECORDS))
    return Sample(events, truth_of(events))


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample in every layout with its manifest; small Firehose objects and files so that
    there are several."""
    out = tmp_path_factory.mktemp("sample")
    write_layouts(
        records=SAMPLE_RECORDS,
        seed=SAMPLE_SEED,
        out=out,
        chunk_records=SAMPLE_CHUNK_RECORDS,
        firehose_object_bytes=16 * 1024,
        lines_per_file=200,
        workers=2,
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
