"""Which of the four layouts a file is in, decided from its name and its first bytes.

Pure functions over bytes and text so the decision is testable without Spark or S3; the
caller (``inputs.py``) fetches the bytes through Hadoop's FileSystem.
"""

from __future__ import annotations

import re
import zlib
from enum import StrEnum


class Layout(StrEnum):
    """How delivery-status records were written to storage."""

    EXPORT = "export"
    FIREHOSE = "firehose"
    FILTER_LOG_EVENTS = "filter-log-events"
    JSONL = "jsonl"


LAYOUT_CHOICES: tuple[str, ...] = ("auto", *(layout.value for layout in Layout))

GZIP_MAGIC = b"\x1f\x8b"
HADOOP_GZIP_SUFFIX = ".gz"
"""The suffix Hadoop's codec factory maps to gzip; other gzip files are gunzipped here."""
EXPORT_PROBE_NAME = "aws-logs-write-test"

_EXPORT_LINE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{1,2}:\d{2}:\d{2}(\.\d+)?Z ")
_FIRST_KEY = re.compile(r'^\s*\[?\s*\{\s*"([^"\\]*)"')
_PAGE_KEYS = frozenset({"events", "nextToken", "searchedLogStreams"})
_ENVELOPE_KEYS = frozenset(
    {"messageType", "owner", "logGroup", "logStream", "subscriptionFilters", "logEvents"},
)


def skip_reason(name: str) -> str | None:
    """Why a file is not input at all (probe objects, Hadoop/Spark markers), else None."""
    if name == EXPORT_PROBE_NAME:
        return "export_write_test_probe"
    if name.startswith(("_", ".")):
        return "hidden_or_marker_file"
    return None


def is_gzip(head: bytes) -> bool:
    """Whether the bytes start a gzip member, whatever the name (a Firehose stream without
    ``FileExtension`` writes gzip objects without a ``.gz`` suffix)."""
    return head.startswith(GZIP_MAGIC)


def needs_python_gunzip(name: str, head: bytes) -> bool:
    """gzip content that Hadoop will not decompress because the name lacks ``.gz``."""
    return is_gzip(head) and not name.lower().endswith(HADOOP_GZIP_SUFFIX)


def head_text(head: bytes) -> str:
    """The first characters of a file, decompressing a gzip prefix if need be."""
    if is_gzip(head):
        decompressor = zlib.decompressobj(wbits=31)
        try:
            head = decompressor.decompress(head, 16384)
        except zlib.error:
            return ""
    return head.decode("utf-8", errors="replace")


def detect_layout(text: str) -> Layout | None:
    """The layout the first characters of a file belong to, or None if none fits."""
    stripped = text.lstrip("\ufeff")
    if _EXPORT_LINE.match(stripped):
        return Layout.EXPORT
    match = _FIRST_KEY.match(stripped)
    if match is None:
        return None
    key = match.group(1)
    if key in _PAGE_KEYS:
        return Layout.FILTER_LOG_EVENTS
    if key in _ENVELOPE_KEYS:
        return Layout.FIREHOSE
    return Layout.JSONL
