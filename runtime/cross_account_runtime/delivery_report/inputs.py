"""Finding the input files and reading their text, the same way for local paths and S3.

Listing and sniffing go through Hadoop's ``FileSystem`` in the JVM, so an ``s3a://`` prefix is
handled by the same code as a local directory. Text is read by Spark's text source, which
decompresses ``.gz`` files (including gzip files of several members) in the JVM; our delivery
stream names its objects ``.gz`` (``FileExtension``) for that reason. Firehose objects of a
stream without ``FileExtension`` are gzip without the suffix, which Hadoop would read as raw
bytes: those alone are gunzipped in Python workers (zlib, in C) and handed back as text; JSON
is still parsed in the JVM.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from pyspark import cloudpickle
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from cross_account_runtime.delivery_report import gunzip
from cross_account_runtime.delivery_report.detect import (
    Layout,
    detect_layout,
    head_text,
    needs_python_gunzip,
    skip_reason,
)
from cross_account_runtime.delivery_report.errors import InputError, InputUnreadableError
from cross_account_runtime.delivery_report.java_errors import SPARK_ERRORS, root_cause
from cross_account_runtime.delivery_report.schema import LINE_SCHEMA

SNIFF_BYTES = 65536
SNIFF_THREADS = 16
LISTING_FIX = (
    "check the URI and the credentials, and that Hadoop has a connector for its scheme "
    "(s3a:// needs hadoop-aws: --packages org.apache.hadoop:hadoop-aws:<version>; on EMR pass "
    "--s3-scheme s3)"
)
READ_FIX = (
    "check that the job's credentials may read it; Hadoop cannot open a local file whose name "
    "holds a colon, so rename such a file"
)

cloudpickle.register_pickle_by_value(gunzip)  # type: ignore[no-untyped-call]
"""Ship the gunzip code to Python workers by value: they need not have this package installed."""
_GLOB_CHARS = re.compile(r"([\\\[\]{}*?])")


@dataclass(frozen=True)
class InputFile:
    """One file found under the inputs, and how it will be read.

    ``layout`` is None for a skipped file (``skipped`` says why). ``detected`` is False when the
    layout was forced on the command line or the content fitted no layout (read as JSON lines
    so every line is accounted for).
    """

    path: str
    size: int
    layout: Layout | None
    detected: bool
    gunzip_in_python: bool
    skipped: str | None = None


def hadoop_uri(uri: str, s3_scheme: str) -> str:
    """``s3://`` URIs in the scheme Hadoop has a connector for (``s3a`` outside EMR)."""
    if uri.startswith("s3://"):
        return f"{s3_scheme}://{uri.removeprefix('s3://')}"
    return uri


def check_local_inputs(inputs: Sequence[str]) -> None:
    """Fail before the JVM starts when a local input path plainly does not exist."""
    for uri in inputs:
        if "://" in uri or uri.startswith("file:") or _GLOB_CHARS.search(uri):
            continue
        if not os.path.exists(uri):
            raise InputError(
                f"input path {uri!r} does not exist (working directory {os.getcwd()!r}); "
                "pass an existing file or directory, or an s3:// URI",
            )


def list_input_files(
    spark: SparkSession,
    inputs: Sequence[str],
    forced: Layout | None,
    s3_scheme: str = "s3a",
) -> list[InputFile]:
    """Every file under the inputs, sorted by path, with the layout it will be read as."""
    jvm = _jvm(spark)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    found: list[tuple[str, int]] = []
    for uri in inputs:
        try:
            path = jvm.org.apache.hadoop.fs.Path(hadoop_uri(uri, s3_scheme))
            fs = path.getFileSystem(conf)
            statuses = fs.globStatus(path)
            if statuses is None or len(statuses) == 0:
                raise InputError(
                    f"input path {uri!r} does not exist or matches nothing; "
                    "pass an existing file or directory (s3:// URIs name bucket and prefix)",
                )
            for status in statuses:
                found.extend(_files_under(fs, status))
        except SPARK_ERRORS as error:
            raise InputUnreadableError(
                uri, f"cannot be listed: {root_cause(error)}", LISTING_FIX
            ) from error
    if not found:
        raise InputError(f"no files under {', '.join(inputs)}; nothing to analyse")
    unique = sorted(set(found))
    with ThreadPoolExecutor(max_workers=SNIFF_THREADS) as pool:
        heads = list(pool.map(partial(_read_head, spark), (p for p, _ in unique)))
    return [
        _classify(path, size, head, forced)
        for (path, size), head in zip(unique, heads, strict=True)
    ]


def _jvm(spark: SparkSession) -> Any:
    """The py4j gateway to the driver JVM, where Hadoop's FileSystem lives."""
    jvm = spark.sparkContext._jvm
    if jvm is None:
        raise RuntimeError("the SparkContext has no JVM gateway (was the session stopped?)")
    return jvm


def _files_under(fs: Any, status: Any) -> Iterator[tuple[str, int]]:
    if not status.isDirectory():
        yield status.getPath().toString(), int(status.getLen())
        return
    root = status.getPath().toString().rstrip("/")
    listing = fs.listFiles(status.getPath(), True)
    while listing.hasNext():
        child = listing.next()
        path = child.getPath().toString()
        relative = path[len(root) :].strip("/").split("/")
        if any(part.startswith(("_", ".")) for part in relative[:-1]):
            continue
        yield path, int(child.getLen())


def _read_head(spark: SparkSession, path: str) -> bytes:
    try:
        return read_bytes(spark, path, SNIFF_BYTES)
    except SPARK_ERRORS as error:
        raise InputUnreadableError(
            path, f"cannot be read: {root_cause(error)}", READ_FIX
        ) from error


def read_bytes(spark: SparkSession, path: str, limit: int | None = None) -> bytes:
    """The first ``limit`` bytes of a file (all of it if None), through Hadoop's FileSystem."""
    jvm = _jvm(spark)
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = fs.open(hadoop_path)
    try:
        return bytes(stream.readAllBytes() if limit is None else stream.readNBytes(limit))
    finally:
        stream.close()


def _classify(path: str, size: int, head: bytes, forced: Layout | None) -> InputFile:
    name = path.rsplit("/", 1)[-1]
    gunzip = needs_python_gunzip(name, head)
    reason = skip_reason(name)
    if reason is not None:
        return InputFile(path, size, None, detected=False, gunzip_in_python=gunzip, skipped=reason)
    if size == 0:
        return InputFile(path, size, None, detected=False, gunzip_in_python=False, skipped="empty")
    if forced is not None:
        return InputFile(path, size, forced, detected=False, gunzip_in_python=gunzip)
    layout = detect_layout(head_text(head))
    if layout is None:
        return InputFile(path, size, Layout.JSONL, detected=False, gunzip_in_python=gunzip)
    return InputFile(path, size, layout, detected=True, gunzip_in_python=gunzip)


def read_lines(spark: SparkSession, files: Sequence[InputFile], whole_text: bool) -> DataFrame:
    """The text of the files as ``LINE_SCHEMA`` rows: one per line, or one per file."""
    frames: list[DataFrame] = []
    by_hadoop = [f.path for f in files if not f.gunzip_in_python]
    by_python = [f.path for f in files if f.gunzip_in_python]
    if by_hadoop:
        text = spark.read.text([_escape_glob(p) for p in by_hadoop], wholetext=whole_text)
        frames.append(
            text.select(
                sf.col("_metadata.file_path").alias("source_file"),
                sf.col("value"),
                sf.lit(None).cast("string").alias("read_error"),
            ),
        )
    if by_python:
        binary = spark.read.format("binaryFile").load([_escape_glob(p) for p in by_python])
        rows = binary.select("path", "content").rdd.flatMap(
            partial(gunzip.gunzip_rows, whole_text=whole_text),
        )
        frames.append(spark.createDataFrame(rows, LINE_SCHEMA))
    if not frames:
        return spark.createDataFrame([], LINE_SCHEMA)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def _escape_glob(path: str) -> str:
    """Spark treats ``[``, ``{``, ``*``... in a path as a glob; a listed file must not be one."""
    return _GLOB_CHARS.sub(r"\\\1", path)
