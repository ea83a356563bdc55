"""Command line: ``python -m cross_account_runtime.delivery_report --input PATH... --output DIR``.

The scheduled run instead passes ``--bucket s3://BUCKET --scheduled-time TIME``: it reads the
previous UTC day's prefix of the analytics bucket and writes the report next to the logs
(:mod:`cross_account_runtime.delivery_report.bucket_layout`).

Exit codes: 0 done; 1 records went missing between stages (read != parsed + rejected);
2 bad command line or input (missing path, unknown layout); 3 Spark could not read the input
(a corrupt ``.gz`` file, an unreachable bucket). The reason is printed on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
from pyspark.errors import PySparkException

from cross_account_runtime.delivery_report.bucket_layout import (
    day_prefix,
    previous_day,
    report_prefix,
)
from cross_account_runtime.delivery_report.detect import LAYOUT_CHOICES
from cross_account_runtime.delivery_report.errors import AccountingError, InputError
from cross_account_runtime.delivery_report.inputs import check_local_inputs
from cross_account_runtime.delivery_report.job import JobConfig, build_session, print_timings, run

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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_local_inputs(args.input)
    except InputError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    spark = build_session(args.master, args.driver_memory, app_name=PROG)
    config = JobConfig(
        inputs=tuple(args.input),
        output=args.output,
        layout=args.layout,
        s3_scheme=args.s3_scheme,
    )
    try:
        result = run(spark, config)
    except InputError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except AccountingError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except (Py4JJavaError, PySparkException) as error:
        first_line = (
            str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        )
        print(f"{PROG}: error: Spark could not read the input: {first_line}", file=sys.stderr)
        return 3
    finally:
        spark.stop()
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
