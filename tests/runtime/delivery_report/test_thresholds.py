"""How much must parse: counts and shares from a summary's accounting, as data."""

from __future__ import annotations

from typing import Any

import pytest

from cross_account_runtime.delivery_report.errors import TooLittleParsedError
from cross_account_runtime.delivery_report.thresholds import ParsedThreshold, check_parsed

SAMPLE_FILE = "file:/logs/blob.bin"


def _summary(parsed: int, malformed: dict[str, int]) -> dict[str, Any]:
    return {
        "accounting": {"records_parsed": parsed, "malformed_by_reason": malformed},
        "rejected_samples": {
            reason: [{"layout": "jsonl", "source_file": SAMPLE_FILE, "sample": "x"}]
            for reason in malformed
        },
    }


@pytest.mark.parametrize(
    ("parsed", "malformed", "threshold", "message"),
    [
        (
            0,
            {"not_json": 31},
            ParsedThreshold(),
            "input /logs: parsed 0 of 31 records (0.0%), need at least 1 (--min-parsed-records); "
            f"rejected: not_json 31 (e.g. {SAMPLE_FILE}); point --input at SNS delivery-status "
            "logs, or lower the threshold if this input is right (the rejects and their samples "
            "are in /out/summary.json)",
        ),
        (
            0,
            {},
            ParsedThreshold(),
            "input /logs: parsed 0 of 0 records (0.0%), need at least 1 (--min-parsed-records); "
            "nothing was rejected as malformed (only blank lines or control messages); ",
        ),
        (
            1,
            {"not_json": 2, "missing_status": 1},
            ParsedThreshold(),
            "input /logs: parsed 1 of 4 records (25.0%), need at least 50.0% "
            "(--min-parsed-fraction); rejected: not_json 2, missing_status 1 (e.g. ",
        ),
        (
            2,
            {},
            ParsedThreshold(min_records=3),
            "input /logs: parsed 2 of 2 records (100.0%), need at least 3 (--min-parsed-records)",
        ),
        (
            1,
            {"a": 5, "b": 4, "c": 3, "d": 2},
            ParsedThreshold(),
            "rejected: a 5, b 4, c 3 (e.g. ",
        ),
        (5, {"not_json": 5}, ParsedThreshold(), None),
        (1, {"not_json": 3}, ParsedThreshold(min_fraction=0.25), None),
        (0, {"not_json": 3}, ParsedThreshold(min_records=0, min_fraction=0.0), None),
    ],
    ids=[
        "nothing parsed",
        "only skipped units",
        "a quarter parsed",
        "fewer records than asked",
        "three commonest reasons",
        "exactly half",
        "lowered share",
        "thresholds off",
    ],
)
def test_a_run_fails_when_it_parsed_less_than_the_threshold(
    parsed: int, malformed: dict[str, int], threshold: ParsedThreshold, message: str | None
) -> None:
    def check() -> None:
        check_parsed(_summary(parsed, malformed), threshold, ["/logs"], "/out/summary.json")

    if message is None:
        check()
        return
    with pytest.raises(TooLittleParsedError) as failed:
        check()
    assert message in str(failed.value)
    assert failed.value.path == "/logs"
