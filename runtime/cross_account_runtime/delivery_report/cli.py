"""Command line: ``python -m cross_account_runtime.delivery_report --input PATH... --output DIR``.

The scheduled run instead passes ``--bucket s3://BUCKET --scheduled-time TIME``: it reads the
previous UTC day's prefix of the analytics bucket and writes the report next to the logs
(:mod:`cross_account_runtime.delivery_report.bucket_paths`).

A failure ends the output with one line, ``delivery_report: error: <side> <path>: <cause>;
<fix>``, and the exit code of its kind (``errors.py``); Spark's traces go to a debug log whose
path is printed just before that line, never a Python traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.bucket_paths import (
    day_prefix,
    previous_day,
    report_prefix,
)
from cross_account_runtime.delivery_report.detect import LAYOUT_CHOICES
from cross_account_runtime.delivery_report.errors import InputError, JobError
from cross_account_runtime.delivery_report.inputs import check_local_inputs
from cross_account_runtime.delivery_report.java_errors import SPARK_ERRORS, root_cause
from cross_account_runtime.delivery_report.job import JobConfig, build_session, print_timings, run
from cross_account_runtime.delivery_report.jvm_logs import (
    task_failures_off_the_console,
    write_debug_log,
)
from cross_account_runtime.delivery_report.outputs import check_local_output
from cross_account_runtime.delivery_report.thresholds import (
    MIN_PARSED_FRACTION,
    MIN_PARSED_RECORDS,
    ParsedThreshold,
)

PROG = "delivery_report"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Failed, retried and lost SNS deliveries from delivery-status logs.",
    )
    parser.add_argument(
        "--input",
        nargs="+",
        action="extend",
        metavar="PATH",
        help="files or directories, local or s3://; may be repeated",
    )
    parser.add_argument("--output", metavar="DIR", help="output directory (local or s3://)")
    parser.add_argument(
        "--bucket",
        metavar="s3://BUCKET",
        help="daily run: read the day before --scheduled-time from the bucket's log prefix and "
        "write the report under its report prefix (instead of --input/--output)",
    )
    parser.add_argument(
        "--scheduled-time",
        metavar="ISO8601",
        help="with --bucket: when the run was scheduled, e.g. 2026-11-23T00:30:00Z",
    )
    parser.add_argument(
        "--layout",
        default="auto",
        choices=LAYOUT_CHOICES,
        help="how the logs were written; auto detects it per file",
    )
    parser.add_argument("--master", help="Spark master, e.g. local[*] (default: spark-submit's)")
    parser.add_argument("--driver-memory", help="driver memory when the JVM starts here, e.g. 4g")
    parser.add_argument(
        "--s3-scheme",
        default="s3a",
        choices=("s3a", "s3"),
        help="Hadoop scheme for s3:// inputs: s3a (open-source Hadoop) or s3 (EMRFS on EMR)",
    )
    parser.add_argument(
        "--min-parsed-records",
        type=_count,
        default=MIN_PARSED_RECORDS,
        metavar="N",
        help="fail (exit 5) unless at least N delivery-status records parsed "
        f"(default {MIN_PARSED_RECORDS}: a run that parsed nothing fails)",
    )
    parser.add_argument(
        "--min-parsed-fraction",
        type=_fraction,
        default=MIN_PARSED_FRACTION,
        metavar="F",
        help="fail (exit 5) unless at least this share, 0 to 1, of the units that were not "
        f"skipped parsed (default {MIN_PARSED_FRACTION})",
    )
    args = parser.parse_args(argv)
    if args.bucket is not None:
        if args.input or args.output:
            parser.error("--bucket replaces --input and --output; pass one or the other")
        if not args.scheduled_time:
            parser.error("--bucket needs --scheduled-time (the schedule's scheduled time)")
        try:
            day = previous_day(args.scheduled_time)
        except ValueError as error:
            parser.error(f"--scheduled-time: {error}")
        root = args.bucket.rstrip("/")
        args.input = [f"{root}/{day_prefix(day)}"]
        args.output = f"{root}/{report_prefix(day)}"
    elif not args.input or not args.output:
        parser.error("pass --input and --output, or --bucket with --scheduled-time")
    return args


def _count(text: str) -> int:
    """argparse type: a whole number, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0; pass e.g. 1")
    return int(text)


def _fraction(text: str) -> float:
    """argparse type: a share from 0 to 1."""
    refused = argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1; pass e.g. 0.5")
    try:
        value = float(text)
    except ValueError as error:
        raise refused from error
    if not 0.0 <= value <= 1.0:
        raise refused
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_local_inputs(args.input)
        check_local_output(args.output, args.input)
    except JobError as error:
        return _fail(error)
    try:
        spark = build_session(args.master, args.driver_memory, app_name=PROG)
    except SPARK_ERRORS as error:
        given = " ".join(
            f"{flag} {value}"
            for flag, value in (("--master", args.master), ("--driver-memory", args.driver_memory))
            if value
        )
        return _fail(
            InputError(
                f"Spark did not start ({given or 'no options'}): {root_cause(error)}; "
                "check those options and that Java 17 or later is installed",
            ),
        )
    try:
        return execute(spark, args)
    finally:
        spark.stop()


def execute(spark: SparkSession, args: argparse.Namespace) -> int:
    """Run the job on ``spark`` and report it; the exit code.

    Apart from ``main`` so it can run on a session the caller owns (``main`` stops its own).
    """
    config = JobConfig(
        inputs=tuple(args.input),
        output=args.output,
        layout=args.layout,
        s3_scheme=args.s3_scheme,
        threshold=ParsedThreshold(args.min_parsed_records, args.min_parsed_fraction),
    )
    try:
        with task_failures_off_the_console(spark):
            result = run(spark, config)
    except JobError as error:
        if isinstance(error.__cause__, SPARK_ERRORS):
            print(f"{PROG}: Spark's trace: {write_debug_log(spark, error)}", file=sys.stderr)
        return _fail(error)
    accounting = result.summary["accounting"]
    print(
        json.dumps(
            {
                "output": args.output,
                "records_read": accounting["records_read"],
                "records_parsed": accounting["records_parsed"],
                "records_rejected": accounting["records_rejected"],
            },
        ),
    )
    print_timings(result)
    return 0


def _fail(error: JobError) -> int:
    """Print the error as the last line of output; the exit code of its kind."""
    print(f"{PROG}: error: {error}", file=sys.stderr)
    return error.exit_code
