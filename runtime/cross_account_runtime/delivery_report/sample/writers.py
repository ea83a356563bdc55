"""Writing generated log events the ways they reach S3, one directory per layout.

- ``export/<log group>/<taskId>/<logStream>/000000.gz`` plus the ``aws-logs-write-test`` probe,
  as CreateExportTask writes them (lines not sorted).
- ``firehose/YYYY/MM/dd/HH/<stream>-1-<time>-<uuid>``: gzip members back to back, no suffix,
  a CONTROL_MESSAGE per log group, objects of about ``firehose_object_bytes`` each (Firehose
  buffers), so that many objects let every core work (gzip is not splittable).
- ``filter-log-events/<log group>/page-NNNNN.json``: CLI pages (indented, <= 10,000 events).
- ``jsonl/<log group>/part-NNNNN.jsonl.gz``: bare messages, one per line.

The log group is part of every path so the job can name the topic of records without one.
"""

from __future__ import annotations

import gzip
import json
import random
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cross_account_runtime.delivery_report.sample.generator import LogEvent, SampleData

LINES_PER_FILE = 50_000
EVENTS_PER_ENVELOPE = 200
FIREHOSE_OBJECT_BYTES = 4 * 1024 * 1024
PAGE_EVENTS = 10_000
PAGE_BYTES = 1024 * 1024
GZIP_LEVEL = 6
FIREHOSE_STREAM = "sns-delivery-logs"
SUBSCRIPTION_FILTER = "sns-delivery-to-s3"


def write_layouts(
    data: SampleData,
    out: Path,
    layouts: Sequence[str],
    *,
    seed: int,
    firehose_object_bytes: int = FIREHOSE_OBJECT_BYTES,
    lines_per_file: int = LINES_PER_FILE,
) -> dict[str, Path]:
    """Write ``data`` in each layout under ``out/<layout>``; also ``out/manifest.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for layout in layouts:
        rng = random.Random(f"{seed}:{layout}")
        target = out / layout
        if layout == "firehose":
            write_firehose(data.events, target, rng, firehose_object_bytes)
        elif layout == "filter-log-events":
            write_filter_log_events(data.events, target, rng)
        else:
            WRITERS[layout](data.events, target, rng, lines_per_file)
        written[layout] = target
    manifest = {
        "seed": seed,
        "records": len(data.events),
        "layouts": list(layouts),
        "truth": data.truth.to_dict(),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return written


def write_export(
    events: Sequence[LogEvent], out: Path, rng: random.Random, lines_per_file: int
) -> None:
    by_stream: dict[tuple[str, str], list[LogEvent]] = defaultdict(list)
    for event in events:
        by_stream[(event.log_group, event.log_stream)].append(event)
    tasks: dict[str, str] = {}
    for (group, stream), stream_events in sorted(by_stream.items()):
        if group not in tasks:
            tasks[group] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            prefix = out / group
            prefix.mkdir(parents=True, exist_ok=True)
            (prefix / "aws-logs-write-test").write_text("Permission Check Successful")
        folder = out / group / tasks[group] / stream
        folder.mkdir(parents=True, exist_ok=True)
        for index, chunk in enumerate(_chunks(stream_events, lines_per_file)):
            lines = (f"{_iso_millis(e.timestamp_ms)} {e.message}\n" for e in chunk)
            _write_gzip_lines(folder / f"{index:06d}.gz", lines)


def write_jsonl(
    events: Sequence[LogEvent], out: Path, rng: random.Random, lines_per_file: int
) -> None:
    del rng  # bare messages carry nothing random of their own
    by_group: dict[str, list[LogEvent]] = defaultdict(list)
    for event in events:
        by_group[event.log_group].append(event)
    for group, group_events in sorted(by_group.items()):
        folder = out / group
        folder.mkdir(parents=True, exist_ok=True)
        for index, chunk in enumerate(_chunks(group_events, lines_per_file)):
            _write_gzip_lines(
                folder / f"part-{index:05d}.jsonl.gz", (f"{e.message}\n" for e in chunk)
            )


def hourly_folder(moment: datetime) -> str:
    """Firehose's default S3 prefix: ``YYYY/MM/dd/HH`` of the object's first record."""
    return f"{moment:%Y/%m/%d/%H}"


def write_firehose(
    events: Sequence[LogEvent],
    out: Path,
    rng: random.Random,
    object_bytes: int,
    folder: Callable[[datetime], str] = hourly_folder,
) -> list[Path]:
    """Write the objects under ``out``, each in the folder ``folder`` names for the moment of
    its first record (a delivery stream's custom prefix is another folder); returns them."""
    ordered = sorted(events, key=lambda e: e.timestamp_ms)
    writer = _FirehoseObjects(out, rng, object_bytes, folder)
    pending: dict[tuple[str, str], list[LogEvent]] = defaultdict(list)
    seen_groups: set[str] = set()
    for event in ordered:
        if event.log_group not in seen_groups:
            seen_groups.add(event.log_group)
            writer.add(_control_envelope(event.timestamp_ms), event.timestamp_ms)
        key = (event.log_group, event.log_stream)
        pending[key].append(event)
        if len(pending[key]) >= EVENTS_PER_ENVELOPE:
            writer.add(_data_envelope(pending.pop(key), rng), event.timestamp_ms)
    for key in sorted(pending):
        batch = pending[key]
        writer.add(_data_envelope(batch, rng), batch[-1].timestamp_ms)
    writer.close()
    return writer.written


def write_filter_log_events(events: Sequence[LogEvent], out: Path, rng: random.Random) -> None:
    by_group: dict[str, list[LogEvent]] = defaultdict(list)
    for event in events:
        by_group[event.log_group].append(event)
    for group, group_events in sorted(by_group.items()):
        folder = out / group
        folder.mkdir(parents=True, exist_ok=True)
        pages: list[list[dict[str, Any]]] = [[]]
        size = 0
        for event in sorted(group_events, key=lambda e: e.timestamp_ms):
            item = {
                "logStreamName": event.log_stream,
                "timestamp": event.timestamp_ms,
                "message": event.message,
                "ingestionTime": event.timestamp_ms + rng.randint(100, 2000),
                "eventId": _event_id(rng),
            }
            item_size = len(event.message) + 200
            if len(pages[-1]) >= PAGE_EVENTS or (pages[-1] and size + item_size > PAGE_BYTES):
                pages.append([])
                size = 0
            pages[-1].append(item)
            size += item_size
        for index, page in enumerate(pages, start=1):
            body: dict[str, Any] = {"events": page}
            if index < len(pages):
                body["nextToken"] = f"{rng.getrandbits(256):064x}"
            (folder / f"page-{index:05d}.json").write_text(json.dumps(body, indent=4) + "\n")


WRITERS: dict[str, Callable[[Sequence[LogEvent], Path, random.Random, int], object]] = {
    "export": write_export,
    "firehose": write_firehose,
    "filter-log-events": lambda events, out, rng, _: write_filter_log_events(events, out, rng),
    "jsonl": write_jsonl,
}


class _FirehoseObjects:
    """Appends gzip members to the current object; starts a new one past the buffer size."""

    def __init__(
        self,
        out: Path,
        rng: random.Random,
        object_bytes: int,
        folder: Callable[[datetime], str],
    ) -> None:
        self._out = out
        self._rng = rng
        self._limit = object_bytes
        self._folder = folder
        self.written: list[Path] = []
        self._members: list[bytes] = []
        self._size = 0
        self._first_ms = 0

    def add(self, envelope: dict[str, Any], timestamp_ms: int) -> None:
        if not self._members:
            self._first_ms = timestamp_ms
        member = gzip.compress(
            json.dumps(envelope, separators=(",", ":")).encode(), GZIP_LEVEL, mtime=0
        )
        self._members.append(member)
        self._size += len(member)
        if self._size >= self._limit:
            self.close()

    def close(self) -> None:
        if not self._members:
            return
        moment = datetime.fromtimestamp(self._first_ms / 1000, UTC)
        folder = self._out / self._folder(moment)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{FIREHOSE_STREAM}-1-{moment:%Y-%m-%d-%H-%M-%S}-{uuid.UUID(int=self._rng.getrandbits(128), version=4)}"
        (folder / name).write_bytes(b"".join(self._members))
        self.written.append(folder / name)
        self._members = []
        self._size = 0


def _data_envelope(batch: Sequence[LogEvent], rng: random.Random) -> dict[str, Any]:
    first = batch[0]
    return {
        "messageType": "DATA_MESSAGE",
        "owner": first.owner,
        "logGroup": first.log_group,
        "logStream": first.log_stream,
        "subscriptionFilters": [SUBSCRIPTION_FILTER],
        "logEvents": [
            {"id": _event_id(rng), "timestamp": e.timestamp_ms, "message": e.message} for e in batch
        ],
    }


def _control_envelope(timestamp_ms: int) -> dict[str, Any]:
    return {
        "messageType": "CONTROL_MESSAGE",
        "owner": "CloudwatchLogs",
        "logGroup": "",
        "logStream": "",
        "subscriptionFilters": [],
        "logEvents": [
            {
                "id": "",
                "timestamp": timestamp_ms,
                "message": "CWL CONTROL MESSAGE: Checking health of destination Firehose.",
            },
        ],
    }


def _event_id(rng: random.Random) -> str:
    return f"{rng.getrandbits(186):056d}"[:56]


def _iso_millis(timestamp_ms: int) -> str:
    moment = datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{timestamp_ms % 1000:03d}Z"


def _chunks(items: Sequence[LogEvent], size: int) -> Iterable[Sequence[LogEvent]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _write_gzip_lines(path: Path, lines: Iterable[str]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=GZIP_LEVEL) as handle:
        handle.writelines(lines)
