"""The HTML report: every section present, log text escaped."""

from __future__ import annotations

from cross_account_runtime.delivery_report.html_report import render_report
from cross_account_runtime.delivery_report.summary import Aggregates, build_summary

HOSTILE = "<script>alert(1)</script>"


def _fact(status: str, count: int, **extra: object) -> dict[str, object]:
    fact: dict[str, object] = {
        "topic": "arn:aws:sns:us-east-1:222222222222:OrderBilled",
        "protocol": "http/s",
        "destination": "https://partner.example.com/hook",
        "status": status,
        "cause": None,
        "error_code": None,
        "status_code": 200,
        "attempts": 1,
        "http_4xx_success": False,
        "count": count,
    }
    fact.update(extra)
    return fact


def test_report_sections_and_escaping() -> None:
    aggregates = Aggregates(
        facts=[
            _fact("SUCCESS", 90),
            _fact("SUCCESS", 3, status_code=403, http_4xx_success=True),
            _fact("FAILURE", 7, cause="timeout", status_code=None, attempts=4),
        ],
        dwell=[
            {
                "protocol": None,
                "count": 100,
                "percentiles": [50.0, 900.5, 61000.0],
                "max": 65000,
                "is_total": 1,
            }
        ],
        minutes=[{"minute": "2025-01-06T10:05Z", "status": "FAILURE", "count": 7}],
        per_destination=[
            {
                "topic": "arn:aws:sns:us-east-1:222222222222:OrderBilled",
                "destination": "https://partner.example.com/hook",
                "lost": 7,
                "duplicated": 0,
                "extra_records": 0,
                "lost_ids": ["m-1"],
                "duplicate_ids": [],
            },
        ],
        lost_samples=[{"topic": "t", "destination": "d", "message_id": "m-1"}],
        duplicate_samples=[],
        reject_counts=[{"reject_reason": "not_json", "layout": "jsonl", "count": 1}],
        reject_samples=[
            {"reject_reason": "not_json", "layout": "jsonl", "source_file": "f", "sample": HOSTILE}
        ],
    )
    summary = build_summary(aggregates, read=101, files=[])
    assert summary["accounting"]["balanced"]
    assert summary["retries"] == {
        "retried": 7,
        "retried_succeeded": 0,
        "retried_failed": 7,
        "by_attempts": {"4": 7},
        "by_destination": summary["retries"]["by_destination"],
    }
    assert summary["http_4xx_success"]["by_status_code"] == {"403": 3}
    html = render_report(summary)
    assert HOSTILE not in html
    assert "&lt;script&gt;" in html
    for section in (
        "Accounting",
        "Deliveries",
        "Failures",
        "Top failing",
        "Retried",
        "Lost",
        "Rejected",
        "<svg",
    ):
        assert section in html
