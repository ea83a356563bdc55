"""Each layout, with malformed input mixed in: exact counts of parsed and rejected units."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.detect import Layout
from cross_account_runtime.delivery_report.inputs import list_input_files
from tests.runtime.delivery_report.conftest import classified_rows, write_lines
from tests.runtime.delivery_report.test_golden import LAMBDA, TLS

pytestmark = pytest.mark.spark


def _variant(**changes: Any) -> str:
    """The Lambda reference record with fields replaced (``None`` removes a field)."""
    record = json.loads(LAMBDA)
    for dotted, value in changes.items():
        section, _, name = dotted.partition("__")
        target = record[section] if name else record
        key = name or section
        if value is None:
            target.pop(key)
        else:
            target[key] = value
    return json.dumps(record)


MIXED_LINES = [
    LAMBDA,
    "",
    "garbage",
    '{"a":1}',
    LAMBDA + "xyz",
    _variant(status=None),
    _variant(status="PENDING"),
    _variant(notification__messageId=None),
    _variant(delivery__destination=None),
    _variant(notification__timestamp="yesterday"),
    _variant(notification__timestamp=None),
    _variant(delivery__dwellTimeMs="abc"),
    LAMBDA[:50],
    TLS,
    _variant(delivery__statusCode="202"),
    LAMBDA + LAMBDA,
    LAMBDA + "," + LAMBDA,
]
MIXED_REJECTS = {
    "blank_line": 1,
    "not_json": 5,
    "not_a_delivery_record": 1,
    "missing_status": 1,
    "unknown_status": 1,
    "missing_message_id": 1,
    "missing_destination": 1,
    "bad_timestamp": 1,
    "missing_timestamp": 1,
    "bad_number": 1,
}


def _expected(parsed: int, rejects: dict[str, int]) -> Counter[str | None]:
    expected: Counter[str | None] = Counter({None: parsed})
    expected.update(rejects)
    return expected


def _reasons(rows: list[dict[str, Any]]) -> Counter[str | None]:
    return Counter(r["reject_reason"] for r in rows)


def test_json_lines_mixing_good_and_malformed(spark: SparkSession, tmp_path: Path) -> None:
    write_lines(tmp_path / "mixed.jsonl.gz", MIXED_LINES, compress=True)
    rows = classified_rows(spark, [tmp_path])
    assert len(rows) == len(MIXED_LINES)
    assert _reasons(rows) == _expected(3, {**MIXED_REJECTS})
    lenient = [r for r in rows if r["reject_reason"] is None and r["protocol"] == "lambda"]
    assert [r["status_code"] for r in lenient] == [202, 202]
    samples = {r["reject_reason"]: r["sample"] for r in rows if r["reject_reason"]}
    assert samples["not_json"] in {
        "garbage",
        LAMBDA + "xyz",
        LAMBDA[:50],
        (LAMBDA + LAMBDA)[:300],
        (LAMBDA + "," + LAMBDA)[:300],
    }


def test_export_lines_with_malformed_prefixes(spark: SparkSession, tmp_path: Path) -> None:
    lines = [
        f"2024-08-27T10:10:33.700Z {LAMBDA}",
        f"2024-08-27T10:10:34.000Z {TLS}",
        LAMBDA,
        f"2024-13-45T10:10:34.000Z {TLS}",
        "",
        "2024-08-27T10:10:35.000Z {broken",
    ]
    folder = tmp_path / "sns/us-east-1/111111111111/Orders/task/stream"
    write_lines(folder / "000000.gz", lines, compress=True)
    (tmp_path / "sns/us-east-1/111111111111/Orders/aws-logs-write-test").write_text(
        "Permission Check Successful"
    )
    rows = classified_rows(spark, [tmp_path])
    assert _reasons(rows) == Counter(
        {None: 2, "export_line_malformed": 2, "blank_line": 1, "not_json": 1}
    )
    assert {r["log_group"] for r in rows} == {"sns/us-east-1/111111111111/Orders"}


def _envelope(
    events: list[dict[str, Any]], stream: str = "stream-1", kind: str = "DATA_MESSAGE"
) -> bytes:
    body = {
        "messageType": kind,
        "owner": "222222222222",
        "logGroup": "sns/us-east-1/222222222222/OrderBilled",
        "logStream": stream,
        "subscriptionFilters": ["to-s3"],
        "logEvents": events,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def _event(message: str | None, timestamp: int = 1_724_753_433_700) -> dict[str, Any]:
    event: dict[str, Any] = {"id": "3" * 56, "timestamp": timestamp}
    if message is not None:
        event["message"] = message
    return event


def _firehose_members(truncate_last: bool) -> bytes:
    members = [
        gzip.compress(
            _envelope([_event("CWL CONTROL MESSAGE: Checking health")], kind="CONTROL_MESSAGE")
        ),
        gzip.compress(_envelope([_event(LAMBDA), _event("junk }{")], stream="odd}{")),
        gzip.compress(_envelope([])),
        gzip.compress(_envelope([_event(None)])),
        gzip.compress(b'{"messageType":"DATA_MESSAGE","logEvents":[{"id":"1"}'),
    ]
    last = gzip.compress(_envelope([_event(TLS)]))
    members.append(last[:-4] if truncate_last else last)
    return b"".join(members)


FIREHOSE_REJECTS = {
    "control_message": 1,
    "not_json": 1,
    "envelope_without_events": 1,
    "event_without_message": 1,
    "envelope_malformed": 1,
}


def test_firehose_object_without_suffix(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "2024/08/27/10/stream-1-2024-08-27-10-10-33-abc"
    path.parent.mkdir(parents=True)
    path.write_bytes(_firehose_members(truncate_last=True))
    files = list_input_files(spark, [str(tmp_path)], None)
    assert [(f.layout, f.gunzip_in_python) for f in files] == [(Layout.FIREHOSE, True)]
    rows = classified_rows(spark, [tmp_path])
    assert _reasons(rows) == _expected(2, {"gzip_truncated": 1, **FIREHOSE_REJECTS})
    parsed = [r for r in rows if r["reject_reason"] is None]
    assert {r["log_stream"] for r in parsed} == {"odd}{", "stream-1"}
    assert {r["protocol"] for r in parsed} == {"lambda", "http/s"}


def test_firehose_object_read_by_hadoop(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "object.gz").write_bytes(_firehose_members(truncate_last=False))
    rows = classified_rows(spark, [tmp_path])
    assert _reasons(rows) == _expected(2, {**FIREHOSE_REJECTS})


def _page(events: list[dict[str, Any]], token: str | None = None) -> str:
    body: dict[str, Any] = {"events": events}
    if token:
        body["nextToken"] = token
    return json.dumps(body, indent=4)


def _page_event(message: str | None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "logStreamName": "s-1",
        "timestamp": 1_724_753_433_700,
        "ingestionTime": 1,
    }
    if message is not None:
        event["message"] = message
    return event


def test_filter_log_events_pages(spark: SparkSession, tmp_path: Path) -> None:
    folder = tmp_path / "sns/us-east-1/111122223333/DirectPublishToPhoneNumber"
    folder.mkdir(parents=True)
    two_pages = (
        _page([_page_event(LAMBDA), _page_event(TLS)], token="t")
        + "\n"
        + _page([_page_event(LAMBDA)])
    )
    (folder / "pages.json").write_text(two_pages + "\n")
    (folder / "empty.json").write_text(_page([]))
    (folder / "broken.json").write_text('{\n    "events": [\n')
    (folder / "missing.json").write_text(_page([_page_event(None), _page_event("nope")]))
    files = list_input_files(spark, [str(tmp_path)], None)
    assert {f.layout for f in files} == {Layout.FILTER_LOG_EVENTS}
    rows = classified_rows(spark, [tmp_path])
    assert _reasons(rows) == Counter(
        {None: 3, "empty_page": 1, "page_malformed": 1, "event_without_message": 1, "not_json": 1},
    )
    assert {r["log_stream"] for r in rows if r["reject_reason"] is None} == {"s-1"}


def test_auto_detection_per_file(spark: SparkSession, tmp_path: Path) -> None:
    write_lines(tmp_path / "a/records.jsonl", [LAMBDA])
    write_lines(tmp_path / "b/t/s/000000.gz", [f"2024-08-27T10:10:33.700Z {TLS}"], compress=True)
    (tmp_path / "c").mkdir()
    (tmp_path / "c/object").write_bytes(gzip.compress(_envelope([_event(LAMBDA)])))
    (tmp_path / "d.json").write_text(_page([_page_event(TLS)]))
    write_lines(tmp_path / "e.txt", ["neither json nor export"])
    (tmp_path / "_SUCCESS").write_text("")
    files = list_input_files(spark, [str(tmp_path)], None)
    found = {Path(f.path).name: (f.layout, f.detected, f.skipped) for f in files}
    assert found == {
        "records.jsonl": (Layout.JSONL, True, None),
        "000000.gz": (Layout.EXPORT, True, None),
        "object": (Layout.FIREHOSE, True, None),
        "d.json": (Layout.FILTER_LOG_EVENTS, True, None),
        "e.txt": (Layout.JSONL, False, None),
        "_SUCCESS": (None, False, "hidden_or_marker_file"),
    }
    rows = classified_rows(spark, [tmp_path])
    assert _reasons(rows) == Counter({None: 4, "not_json": 1})
