"""Layout detection, gzip handling and line splitting: pure functions, no Spark."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cross_account_runtime.delivery_report.detect import (
    Layout,
    detect_layout,
    head_text,
    needs_python_gunzip,
    skip_reason,
)
from cross_account_runtime.delivery_report.errors import InputError
from cross_account_runtime.delivery_report.gunzip import gunzip_members, split_lines
from cross_account_runtime.delivery_report.inputs import check_local_inputs, hadoop_uri


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ('2024-08-27T10:10:33.576Z {"notification":{}}', Layout.EXPORT),
        ('2024-08-27T7:10:33Z {"notification":{}}', Layout.EXPORT),
        ('{"messageType":"DATA_MESSAGE","owner":"1"}', Layout.FIREHOSE),
        ('{"owner":"1","logGroup":"g"}', Layout.FIREHOSE),
        ('{\n    "events": [\n', Layout.FILTER_LOG_EVENTS),
        ('\ufeff{"nextToken": "x"}', Layout.FILTER_LOG_EVENTS),
        ('{"notification":{"messageId":"m"}}', Layout.JSONL),
        ('{"status":"SUCCESS"}', Layout.JSONL),
        ("garbage", None),
        ("", None),
    ],
)
def test_detect_layout(text: str, layout: Layout | None) -> None:
    assert detect_layout(text) is layout


def test_skip_reason() -> None:
    assert skip_reason("aws-logs-write-test") == "export_write_test_probe"
    assert skip_reason("_SUCCESS") == "hidden_or_marker_file"
    assert skip_reason(".part.crc") == "hidden_or_marker_file"
    assert skip_reason("000000.gz") is None


def test_gzip_without_suffix_is_gunzipped_here() -> None:
    member = gzip.compress(b'{"messageType":"DATA_MESSAGE"}')
    assert needs_python_gunzip("stream-1-2024-01-01-00-00-00-abc", member)
    assert not needs_python_gunzip("000000.gz", member)
    assert not needs_python_gunzip("records.jsonl", b'{"a":1}')
    assert detect_layout(head_text(member)) is Layout.FIREHOSE


def test_gunzip_members_concatenated_truncated_and_corrupt() -> None:
    first, second = gzip.compress(b'{"a":1}'), gzip.compress(b'{"b":2}')
    assert gunzip_members(first + second) == (b'{"a":1}{"b":2}', None)
    assert gunzip_members(first + second[:-4]) == (b'{"a":1}{"b":2}', "gzip_truncated")
    assert gunzip_members(first + b"not gzip at all") == (b'{"a":1}', "gzip_corrupt")
    assert gunzip_members(first + b"\x00" * 8) == (b'{"a":1}', None)


def test_split_lines_like_hadoop() -> None:
    assert split_lines("a\nb\r\nc\rd\n") == ["a", "b", "c", "d"]
    assert split_lines("a\n\nb") == ["a", "", "b"]
    assert split_lines("") == []
    assert split_lines("x\u2028y") == ["x\u2028y"]


def test_s3_uris_go_to_hadoop_with_the_chosen_scheme() -> None:
    assert hadoop_uri("s3://logs/sns/", "s3a") == "s3a://logs/sns/"
    assert hadoop_uri("s3://logs/sns/", "s3") == "s3://logs/sns/"
    assert hadoop_uri("/data/logs", "s3a") == "/data/logs"


def test_missing_local_paths_fail_before_spark_starts(tmp_path: Path) -> None:
    check_local_inputs([str(tmp_path), "s3://bucket/prefix", "/data/*/logs"])
    with pytest.raises(InputError, match="does not exist"):
        check_local_inputs([str(tmp_path / "absent")])
