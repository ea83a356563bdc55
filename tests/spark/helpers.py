"""Running the job's stages on small files from a test."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from runtime.delivery_report.detect import Layout
from runtime.delivery_report.inputs import list_input_files
from runtime.delivery_report.layouts import units_for_files
from runtime.delivery_report.normalize import classify_units


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
