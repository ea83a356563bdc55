"""Checking a local output directory before the JVM starts.

Spark finds out that it cannot write only after it has read and parsed the whole input, and
then says so in a trace about the Parquet writer. A local output is checked up front instead:
created if missing and written to once. ``s3://`` outputs cannot be checked without writing
to the bucket with the job's credentials; Spark's errors writing them are told apart from
read errors afterwards (``spark_failures.py``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from urllib.parse import urlparse

from cross_account_runtime.delivery_report.errors import OutputUnwritableError

DIRECTORY_FIX = "pass a directory (it is created if missing), or move the file out of the way"
WRITABLE_FIX = "pass a directory you can write to"
OVERLAP_FIX = "pass an --output outside every --input"


def check_local_output(output: str, inputs: Sequence[str]) -> None:
    """Fail when a local ``output`` cannot hold the report or overlaps an input.

    An output inside an input (or the reverse) would have the job overwrite files it is
    reading, and the next run read the report as logs.
    """
    path = local_path(output)
    if path is None:
        return
    blocker = _file_in_the_way(path)
    if blocker is not None:
        what = "is a file" if blocker == path else f"is under {blocker}, which is a file"
        raise OutputUnwritableError(output, f"{what}, not a directory", DIRECTORY_FIX)
    for uri in inputs:
        source = local_path(uri)
        if source is not None and _overlap(path, source):
            raise OutputUnwritableError(output, f"overlaps the input {uri}", OVERLAP_FIX)
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise OutputUnwritableError(
            output, f"cannot be written: {error.strerror} ({error.filename})", WRITABLE_FIX
        ) from error


def local_path(uri: str) -> str | None:
    """The absolute local path a plain path or ``file:`` URI names; None for other schemes."""
    if uri.startswith("file:"):
        return os.path.abspath(urlparse(uri).path)
    if "://" in uri:
        return None
    return os.path.abspath(uri)


def _file_in_the_way(path: str) -> str | None:
    """``path`` or its nearest existing ancestor, if that is not a directory."""
    current = path
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None if os.path.isdir(current) else current


def _overlap(output: str, source: str) -> bool:
    real_output, real_source = os.path.realpath(output), os.path.realpath(source)
    return real_output == real_source or any(
        inner.startswith(outer.rstrip(os.sep) + os.sep)
        for outer, inner in ((real_source, real_output), (real_output, real_source))
    )
