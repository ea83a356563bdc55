"""Bad input through the command line: the exit code, and a last line naming the side, the
path and the cause.

The cases run the command line's job on the run's Spark session (``execute``; ``main`` would
stop it); one case runs the module in a process of its own to see what the user sees: the
JVM's own output and no Python traceback.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

import cross_account_runtime
from cross_account_runtime.delivery_report import job
from cross_account_runtime.delivery_report.cli import execute, main, parse_args
from cross_account_runtime.delivery_report.job import JobConfig, run
from cross_account_runtime.delivery_report.normalize import with_outcome
from tests.runtime.delivery_report.conftest import write_lines
from tests.runtime.delivery_report.test_golden import LAMBDA, TLS

pytestmark = pytest.mark.spark

ERROR = "delivery_report: error: "
EXPORT_LINES = [f"2024-08-27T10:10:33.576Z {LAMBDA}"] * 2000
"""Enough export lines that half the gzip is well inside the compressed stream."""


def _gzip_cut_in_half(folder: Path, spark: SparkSession) -> None:
    data = gzip.compress("".join(f"{line}\n" for line in EXPORT_LINES).encode(), mtime=0)
    folder.mkdir(parents=True)
    (folder / "000000.gz").write_bytes(data[: len(data) // 2])


def _gzip_with_a_bad_header(folder: Path, spark: SparkSession) -> None:
    folder.mkdir(parents=True)
    (folder / "000000.gz").write_bytes(b"\x1f\x8b" + b"not deflate" * 50)


@pytest.fixture(autouse=True)
def debug_logs_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Debug logs of failed runs go to the test's own folder, not the machine's temp folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def _binary(folder: Path, spark: SparkSession) -> None:
    folder.mkdir(parents=True)
    (folder / "blob.bin").write_bytes(bytes(range(256)) * 40)


def _other_json(folder: Path, spark: SparkSession) -> None:
    write_lines(
        folder / "trail.json",
        ['{"eventVersion":"1.08","eventName":"PutObject","awsRegion":"us-east-1"}'] * 5,
    )


def _previous_report(folder: Path, spark: SparkSession) -> None:
    logs = folder.parent / "logs"
    write_lines(logs / "records.jsonl", [LAMBDA, TLS])
    run(spark, JobConfig(inputs=(str(logs),), output=str(folder)))


def _one_record_in_four(folder: Path, spark: SparkSession) -> None:
    write_lines(folder / "mixed.jsonl", [LAMBDA, "GET /index.html 200", "<html>", "}"])


@dataclass(frozen=True)
class Case:
    """An input the job is pointed at, and what the command line must answer."""

    name: str
    write_input: Callable[[Path, SparkSession], None]
    exit_code: int
    last_line: tuple[str, ...]
    """Fragments of the last line; ``{input}`` is the input folder."""
    options: tuple[str, ...] = ()


CASES = [
    Case(
        "corrupt gzip",
        _gzip_with_a_bad_header,
        3,
        ("input file://{input}/000000.gz: corrupt gzip: Unknown compression method; copy",),
    ),
    Case(
        "binary file",
        _binary,
        5,
        (
            "input {input}: parsed 0 of ",
            " records (0.0%), need at least 1 (--min-parsed-records); rejected: not_json ",
            "(e.g. file:{input}/blob.bin); point --input at SNS delivery-status logs",
        ),
    ),
    Case(
        "JSON that is not a delivery-status log",
        _other_json,
        5,
        (
            "input {input}: parsed 0 of 5 records (0.0%)",
            "rejected: not_a_delivery_record 5 (e.g. file:{input}/trail.json)",
        ),
    ),
    Case(
        "a previous report",
        _previous_report,
        5,
        ("input {input}: parsed 0 of ", "rejected: not_json ", "summary.json)"),
    ),
    Case(
        "mostly not records",
        _one_record_in_four,
        5,
        (
            "input {input}: parsed 1 of 4 records (25.0%), need at least 50.0% "
            "(--min-parsed-fraction); rejected: not_json 3",
        ),
    ),
    Case(
        "mostly not records, with a lower threshold",
        _one_record_in_four,
        0,
        ('{"timings": ',),
        ("--min-parsed-fraction", "0.2"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_exits_non_zero_naming_the_file_and_the_cause(
    case: Case,
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "input"
    case.write_input(folder, spark)
    argv = ["--input", str(folder), "--output", str(tmp_path / "out"), *case.options]
    assert execute(spark, parse_args(argv)) == case.exit_code
    last = capsys.readouterr().err.splitlines()[-1]
    for fragment in case.last_line:
        assert fragment.replace("{input}", str(folder)) in last
    assert last.startswith(ERROR) == (case.exit_code != 0)


def test_an_input_hadoop_cannot_list_is_an_input_error(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--input", "nosuchscheme://bucket/logs/", "--output", str(tmp_path / "out")]
    assert execute(spark, parse_args(argv)) == 3
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"{ERROR}input nosuchscheme://bucket/logs/: cannot be listed: "
        "org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for scheme "
        '"nosuchscheme"; check the URI and the credentials, and that Hadoop has a connector for '
        "its scheme (s3a:// needs hadoop-aws: --packages org.apache.hadoop:hadoop-aws:<version>; "
        "on EMR pass --s3-scheme s3)"
    )


def test_a_file_hadoop_cannot_open_is_named(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A colon in a local file's name: Hadoop lists the file but cannot open it."""
    write_lines(tmp_path / "in" / "2025-01-06T10:00:00.jsonl", [LAMBDA])
    argv = ["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    assert execute(spark, parse_args(argv)) == 3
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"{ERROR}input file:{tmp_path}/in/2025-01-06T10:00:00.jsonl: cannot be read: "
        "java.net.URISyntaxException: Relative path in absolute URI: .2025-01-06T10:00:00.jsonl.crc; "
        "check that the job's credentials may read it; Hadoop cannot open a local file whose "
        "name holds a colon, so rename such a file"
    )


def test_spark_failing_to_write_is_an_output_error(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As with an S3 output, which cannot be checked before the job: Spark's write fails."""
    write_lines(tmp_path / "in" / "records.jsonl", [LAMBDA])
    argv = ["--input", str(tmp_path / "in"), "--output", "/proc/delivery-report"]
    assert execute(spark, parse_args(argv)) == 4
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"{ERROR}output file:/proc/delivery-report/records: cannot be ")
    assert err[-1].endswith(
        "; pass an --output you can write to (a directory, or an S3 prefix you may write)"
    )
    trace = Path(err[-2].removeprefix("delivery_report: Spark's trace: "))
    assert "TASK_WRITE_FAILED" in trace.read_text()


def test_a_failure_naming_neither_side_says_so(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_lines(tmp_path / "in" / "records.jsonl", [LAMBDA])

    def failing(classified: DataFrame) -> DataFrame:
        return with_outcome(classified).withColumn(
            "date", sf.raise_error(sf.lit("boom")).cast("string")
        )

    monkeypatch.setattr(job, "with_outcome", failing)
    argv = ["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    assert execute(spark, parse_args(argv)) == 6
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"{ERROR}Spark failed and named neither an input file nor the output "
        f"{str(tmp_path / 'out')!r}: org.apache.spark.SparkRuntimeException: "
        "[USER_RAISED_EXCEPTION] boom SQLSTATE: P0001; the full trace is in the debug log; "
        "rerun, and if it fails again report the trace"
    )


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        ("out/file", "is a file, not a directory"),
        ("out/file/report", "is under {tmp}/out/file, which is a file, not a directory"),
        ("in/report", "overlaps the input {tmp}/in"),
    ],
)
def test_an_output_that_cannot_be_written_fails_before_spark_starts(
    output: str, cause: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_lines(tmp_path / "in" / "records.jsonl", [LAMBDA])
    write_lines(tmp_path / "out" / "file", ["in the way"])
    argv = ["--input", str(tmp_path / "in"), "--output", str(tmp_path / output)]
    assert main(argv) == 4
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"{ERROR}output {tmp_path / output}: {cause.format(tmp=tmp_path)}; ")


def _run_module(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, importing this checkout's package."""
    runtime = Path(cross_account_runtime.__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(runtime), str(runtime.parent)]),
        "TMPDIR": tempfile.gettempdir(),
    }
    return subprocess.run(
        [sys.executable, "-m", "cross_account_runtime.delivery_report", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_a_truncated_gzip_shows_one_line_not_the_jvm_traces(
    spark: SparkSession, tmp_path: Path
) -> None:
    _gzip_cut_in_half(tmp_path / "in", spark)
    result = _run_module(
        "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--master", "local[1]"
    )
    lines = result.stderr.splitlines()
    assert result.returncode == 3
    assert lines[-1].startswith(f"{ERROR}input file://{tmp_path}/in/000000.gz: truncated gzip: ")
    assert lines[-1].endswith(
        " bytes, before the end of its compressed stream; copy the file again from its source, "
        "or move it out of the input; no report was written"
    )
    assert not [line for line in lines if line.startswith(("\tat ", "Caused by", "Traceback"))]
    trace = Path(lines[-2].removeprefix("delivery_report: Spark's trace: "))
    assert "java.io.EOFException: Unexpected end of input stream" in trace.read_text()
    assert result.stdout == ""


def test_spark_that_cannot_start_is_one_line_too(tmp_path: Path) -> None:
    write_lines(tmp_path / "in" / "records.jsonl", [LAMBDA])
    result = _run_module(
        "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--driver-memory", "x"
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"{ERROR}Spark did not start (--driver-memory x): [JAVA_GATEWAY_EXITED] Java gateway "
        "process exited before sending its port number.; check those options and that Java 17 "
        "or later is installed"
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--min-parsed-records", "-1", "'-1' is not a whole number >= 0; pass e.g. 1"),
        ("--min-parsed-records", "some", "'some' is not a whole number >= 0"),
        ("--min-parsed-fraction", "1.5", "'1.5' is not a number from 0 to 1; pass e.g. 0.5"),
        ("--min-parsed-fraction", "half", "'half' is not a number from 0 to 1"),
        ("--min-parsed-fraction", "nan", "'nan' is not a number from 0 to 1"),
    ],
)
def test_a_threshold_out_of_range_is_refused_by_the_command_line(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["--input", "in", "--output", "out", option, value])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
