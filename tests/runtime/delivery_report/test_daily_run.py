"""The scheduled daily run: which day's prefix it reads and where the report goes."""

from __future__ import annotations

from datetime import date

import pytest

from cross_account_runtime.delivery_report.bucket_paths import (
    FIREHOSE_PREFIX,
    bucket_name,
    day_prefix,
    previous_day,
    report_prefix,
)
from cross_account_runtime.delivery_report.cli import parse_args


@pytest.mark.parametrize(
    ("scheduled", "day"),
    [
        ("2026-11-23T00:30:00Z", date(2026, 11, 22)),
        ("2026-11-23T00:30:00+00:00", date(2026, 11, 22)),
        ("2026-11-23T01:30:00+02:00", date(2026, 11, 21)),
        ("2026-03-01T00:30:00Z", date(2026, 2, 28)),
        ("2026-11-23T00:30:00", date(2026, 11, 22)),
    ],
)
def test_a_run_analyses_the_utc_day_before_its_scheduled_time(scheduled: str, day: date) -> None:
    assert previous_day(scheduled) == day


def test_a_day_is_read_from_the_prefix_firehose_writes_it_under() -> None:
    day = date(2026, 11, 22)
    assert FIREHOSE_PREFIX == "delivery-logs/!{timestamp:yyyy/MM/dd}/"
    assert day_prefix(day) == "delivery-logs/2026/11/22/"
    assert report_prefix(day) == "reports/2026-11-22/"
    assert (
        bucket_name("333333333333", "us-east-1") == "messaging-delivery-logs-333333333333-us-east-1"
    )


def test_the_scheduled_arguments_become_the_day_input_and_report_output() -> None:
    args = parse_args(
        [
            "--bucket",
            "s3://messaging-delivery-logs-333333333333-us-east-1/",
            "--scheduled-time",
            "2026-11-23T00:30:00Z",
            "--s3-scheme",
            "s3",
        ]
    )
    root = "s3://messaging-delivery-logs-333333333333-us-east-1"
    assert args.input == [f"{root}/delivery-logs/2026/11/22/"]
    assert args.output == f"{root}/reports/2026-11-22/"
    assert args.s3_scheme == "s3"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bucket", "s3://b"], "--bucket needs --scheduled-time"),
        (
            ["--bucket", "s3://b", "--scheduled-time", "yesterday"],
            "--scheduled-time: scheduled time 'yesterday' is not ISO 8601; pass e.g. "
            "2026-11-23T00:15:00Z",
        ),
        (
            ["--bucket", "s3://b", "--scheduled-time", "2026-11-23T00:30:00Z", "--output", "x"],
            "--bucket replaces --input and --output",
        ),
        (["--output", "x"], "pass --input and --output, or --bucket with --scheduled-time"),
    ],
)
def test_inconsistent_arguments_exit_2_with_the_fix(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
