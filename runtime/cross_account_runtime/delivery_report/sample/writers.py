"""Writing generated log events the ways they reach S3, one directory per layout.

- ``export/<log group>/<taskId>/<logStream>/NNNNNN.gz`` plus the ``aws-logs-write-test`` probe,
  as CreateExportTask writes them (lines not sorted), up to ``lines_per_file`` lines a file.
- ``firehose/YYYY/MM/dd/HH/<stream>-1-<yyyy-MM-dd-HH-mm-ss>-<uuid>.gz``: gzip members back to
  back (one CloudWatch Logs envelope each), named as a delivery stream with
  ``FileExtension: ".gz"`` names them, in the folder of the object's first record; a
  CONTROL_MESSAGE per log group; objects of about ``firehose_object_bytes`` each (Firehose
  buffers), so that many objects let every core work (gzip is not splittable).
- ``filter-log-events/<log group>/page-NNNNN.json``: CLI pages (indented, <= 10,000 events and
  about 1 MB), ``nextToken`` on every page of a group but its last.
- ``jsonl/<log group>/part-NNNNN.jsonl.gz``: bare messages, one per line.

The log group is part of every path so the job can name the topic of records without one.

Events stream through: :func:`write_layouts` reads the generator's events once and hands each
to a writer per layout (one data set read through every layout must give one summary), and
every writer holds only bounded buffers -- an open gzip stream per file being written, an
envelope per log stream, an object, a page per group -- so memory does not grow with the
records, and files are opened only to append a batch. Events are written in the order they
are made (Firehose objects and pages are not sorted by time).

Chunks of the stream (see ``generator.py``) are written by as many processes as there are
cores, each into files of its own under hidden staged names; once all are done, the files of
each folder are numbered in chunk order. The files are the same whatever the number of cores.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import random
import shutil
import uuid
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from cross_account_runtime.delivery_report.sample.events import LogEvent, Truth, TruthCounter
from cross_account_runtime.delivery_report.sample.generator import (
    CHUNK_RECORDS,
    DEFAULT_HOURS,
    DEFAULT_START,
    DUPLICATE_RATE,
    chunk_sizes,
    generate_chunk,
    millis_text,
)
from cross_account_runtime.delivery_report.sample.topology import SampleTopology

LAYOUTS = ("export", "firehose", "filter-log-events", "jsonl")
LINES_PER_FILE = 50_000
EVENTS_PER_ENVELOPE = 200
FIREHOSE_OBJECT_BYTES = 4 * 1024 * 1024
PAGE_EVENTS = 10_000
PAGE_BYTES = 1024 * 1024
GZIP_LEVEL = 3
"""A fast level: at the default (6) compression takes a third of the time of writing a record;
at 3 a fifth, for files about a tenth larger."""
FIREHOSE_STREAM = "sns-delivery-logs"
SUBSCRIPTION_FILTER = "sns-delivery-to-s3"
EXPORT_PROBE = "aws-logs-write-test"
BATCH_CHARS = 256 * 1024
"""Text gathered per file before it is compressed and appended: few opens, bounded memory."""
STAGED_PREFIX = ".staged-"
"""Files of one chunk before they are numbered; hidden, so the job skips any a failed run left."""
NUMBERED: dict[str, tuple[str, int]] = {
    "export": ("{:06d}.gz", 0),
    "filter-log-events": ("page-{:05d}.json", 1),
    "jsonl": ("part-{:05d}.jsonl.gz", 0),
}
"""Final names of the numbered layouts' files, and the first number."""


def write_layouts(
    *,
    records: int,
    seed: int,
    out: Path,
    layouts: Sequence[str] = LAYOUTS,
    topology: SampleTopology | None = None,
    start: datetime = DEFAULT_START,
    hours: float = DEFAULT_HOURS,
    duplicate_rate: float = DUPLICATE_RATE,
    chunk_records: int = CHUNK_RECORDS,
    firehose_object_bytes: int = FIREHOSE_OBJECT_BYTES,
    lines_per_file: int = LINES_PER_FILE,
    workers: int | None = None,
) -> Truth:
    """Generate ``records`` events (see :func:`generate`) and write them in each layout under
    ``out/<layout>`` (replacing what was there), plus ``out/manifest.json``; returns what was
    generated. ``workers`` processes (default: one per core) write chunks side by side."""
    unknown = sorted(set(layouts) - set(LAYOUTS))
    if unknown:
        raise ValueError(f"unknown layouts {unknown}; choose from {LAYOUTS}")
    out.mkdir(parents=True, exist_ok=True)
    for layout in layouts:
        shutil.rmtree(out / layout, ignore_errors=True)
    chunks = [
        _Chunk(
            index=index,
            records=size,
            seed=seed,
            topology=topology,
            start=start,
            hours=hours,
            duplicate_rate=duplicate_rate,
            out=out,
            layouts=tuple(layouts),
            firehose_object_bytes=firehose_object_bytes,
            lines_per_file=lines_per_file,
        )
        for index, size in enumerate(chunk_sizes(records, chunk_records))
    ]
    workers = min(len(chunks), workers or os.cpu_count() or 1)
    if workers > 1:
        # Spawned, not forked: a fork would copy the caller's threads' locks (a Spark
        # session's, say) in whatever state they are.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            truths = list(pool.map(_write_chunk, chunks))
    else:
        truths = [_write_chunk(chunk) for chunk in chunks]
    for layout in layouts:
        if layout in NUMBERED:
            _number_staged(out / layout, layout)
    truth = sum(truths, Truth())
    manifest = {
        "seed": seed,
        "records": records,
        "layouts": list(layouts),
        "truth": truth.to_dict(),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return truth


def hourly_folder(moment: datetime) -> str:
    """Firehose's default S3 prefix: ``YYYY/MM/dd/HH`` of the object's first record."""
    return f"{moment:%Y/%m/%d/%H}"


def write_firehose(
    events: Iterable[LogEvent],
    out: Path,
    rng: random.Random,
    object_bytes: int,
    folder: Callable[[datetime], str] = hourly_folder,
) -> list[Path]:
    """Write the events as Firehose objects under ``out``, each in the folder ``folder``
    names for the moment of its first record (a delivery stream's custom prefix is another
    folder), reading them as they come; returns the objects."""
    writer = _FirehoseWriter(out, rng, object_bytes, folder)
    for event in events:
        writer.add(event)
    writer.close()
    return writer.written


class _Writer(Protocol):
    """Writes one layout from events handed to it one at a time."""

    def add(self, event: LogEvent) -> None: ...

    def close(self) -> None:
        """Write what is still buffered."""


@dataclass(frozen=True)
class _Chunk:
    """One chunk's work, as a worker process receives it."""

    index: int
    records: int
    seed: int
    topology: SampleTopology | None
    start: datetime
    hours: float
    duplicate_rate: float
    out: Path
    layouts: tuple[str, ...]
    firehose_object_bytes: int
    lines_per_file: int

    def writer(self, layout: str) -> _Writer:
        """This chunk's writer of ``layout``; what it draws is seeded from the seed, the layout
        and the chunk."""
        target = self.out / layout
        if layout == "export":
            return _ExportWriter(target, self.seed, self.index, self.lines_per_file)
        if layout == "jsonl":
            return _JsonlWriter(target, self.index, self.lines_per_file)
        rng = random.Random(f"{self.seed}:{layout}:{self.index}")
        if layout == "firehose":
            return _FirehoseWriter(target, rng, self.firehose_object_bytes)
        return _FilterLogEventsWriter(target, rng, self.index)


def _write_chunk(chunk: _Chunk) -> Truth:
    """Generate one chunk, feed every event to each layout's writer; what was generated."""
    writers = [chunk.writer(layout) for layout in chunk.layouts]
    adds = [writer.add for writer in writers]
    counter = TruthCounter()
    events = generate_chunk(
        chunk.index,
        chunk.records,
        chunk.seed,
        topology=chunk.topology,
        start=chunk.start,
        hours=chunk.hours,
        duplicate_rate=chunk.duplicate_rate,
    )
    for event in events:
        counter.add(event)
        for add in adds:
            add(event)
    for writer in writers:
        writer.close()
    return counter.truth


def _staged_name(chunk: int, index: int) -> str:
    """Sorts in chunk order, then file order within the chunk."""
    return f"{STAGED_PREFIX}{chunk:06d}-{index:06d}"


def _number_staged(root: Path, layout: str) -> None:
    """Give the staged files of each folder under ``root`` their final, consecutive names."""
    pattern, first = NUMBERED[layout]
    by_folder: dict[Path, list[Path]] = {}
    for path in root.rglob(f"{STAGED_PREFIX}*"):
        by_folder.setdefault(path.parent, []).append(path)
    for folder, staged in sorted(by_folder.items()):
        for number, path in enumerate(sorted(staged), start=first):
            path.rename(folder / pattern.format(number))
        if layout == "filter-log-events":
            _end_pages(folder / pattern.format(first + len(staged) - 1))


def _gzip_compressor() -> zlib._Compress:
    """A gzip stream with a fixed header (no name, no time), so reruns give identical bytes."""
    return zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)


class _GzipFiles:
    """Lines into staged gzip files of up to ``lines_per_file`` lines in one folder, a file
    after another; the compressor stays open, the file only while a batch is appended."""

    def __init__(self, folder: Path, chunk: int, lines_per_file: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._folder = folder
        self._chunk = chunk
        self._limit = lines_per_file
        self._index = 0
        self._lines = 0
        self._batch: list[str] = []
        self._batch_chars = 0
        self._compressor = _gzip_compressor()

    def add(self, line: str) -> None:
        if self._lines == self._limit:
            self._append(final=True)
            self._index += 1
            self._lines = 0
            self._compressor = _gzip_compressor()
        self._batch.append(line)
        self._lines += 1
        self._batch_chars += len(line)
        if self._batch_chars >= BATCH_CHARS:
            self._append(final=False)

    def close(self) -> None:
        self._append(final=True)

    def _append(self, final: bool) -> None:
        data = self._compressor.compress("".join(self._batch).encode())
        if final:
            data += self._compressor.flush()
        self._batch.clear()
        self._batch_chars = 0
        with (self._folder / _staged_name(self._chunk, self._index)).open("ab") as handle:
            handle.write(data)


class _ExportWriter:
    """Lines ``<ISO time> <message>`` per log stream, in the folder of the group's export task
    (one per group, from the seed, so every chunk writes into the same one)."""

    def __init__(self, out: Path, seed: int, chunk: int, lines_per_file: int) -> None:
        self._out = out
        self._seed = seed
        self._chunk = chunk
        self._lines_per_file = lines_per_file
        self._files: dict[tuple[str, str], _GzipFiles] = {}

    def add(self, event: LogEvent) -> None:
        key = (event.log_group, event.log_stream)
        files = self._files.get(key)
        if files is None:
            files = self._files[key] = self._open(*key)
        files.add(f"{millis_text(event.timestamp_ms, 'T')}Z {event.message}\n")

    def close(self) -> None:
        for files in self._files.values():
            files.close()

    def _open(self, group: str, stream: str) -> _GzipFiles:
        prefix = self._out / group
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            with (prefix / EXPORT_PROBE).open("x") as probe:  # once, whichever chunk is first
                probe.write("Permission Check Successful")
        except FileExistsError:
            pass
        task = _uuid4(random.Random(f"{self._seed}:export:{group}"))
        return _GzipFiles(prefix / task / stream, self._chunk, self._lines_per_file)


class _JsonlWriter:
    """Bare messages, one per line, per log group."""

    def __init__(self, out: Path, chunk: int, lines_per_file: int) -> None:
        self._out = out
        self._chunk = chunk
        self._lines_per_file = lines_per_file
        self._files: dict[str, _GzipFiles] = {}

    def add(self, event: LogEvent) -> None:
        files = self._files.get(event.log_group)
        if files is None:
            files = self._files[event.log_group] = _GzipFiles(
                self._out / event.log_group, self._chunk, self._lines_per_file
            )
        files.add(f"{event.message}\n")

    def close(self) -> None:
        for files in self._files.values():
            files.close()


class _FirehoseWriter:
    """Firehose objects from events as they come: envelopes of up to
    :data:`EVENTS_PER_ENVELOPE` events per log stream, gzipped one member each and appended
    to the current object, which is written once it reaches the buffer size."""

    def __init__(
        self,
        out: Path,
        rng: random.Random,
        object_bytes: int,
        folder: Callable[[datetime], str] = hourly_folder,
    ) -> None:
        self._out = out
        self._rng = rng
        self._limit = object_bytes
        self._folder = folder
        self._groups: set[str] = set()
        self._envelopes: dict[tuple[str, str], list[LogEvent]] = {}
        self._members: list[bytes] = []
        self._size = 0
        self._first_ms = 0
        self.written: list[Path] = []
        """The objects written so far."""

    def add(self, event: LogEvent) -> None:
        if event.log_group not in self._groups:
            self._groups.add(event.log_group)
            self._add_member(_control_envelope(event.timestamp_ms), event.timestamp_ms)
        key = (event.log_group, event.log_stream)
        batch = self._envelopes.setdefault(key, [])
        batch.append(event)
        if len(batch) >= EVENTS_PER_ENVELOPE:
            del self._envelopes[key]
            self._add_member(_data_envelope(batch, self._rng), batch[0].timestamp_ms)

    def close(self) -> None:
        for key in sorted(self._envelopes):
            batch = self._envelopes[key]
            self._add_member(_data_envelope(batch, self._rng), batch[0].timestamp_ms)
        self._envelopes.clear()
        self._write_object()

    def _add_member(self, envelope: dict[str, Any], timestamp_ms: int) -> None:
        if not self._members:
            self._first_ms = timestamp_ms
        member = gzip.compress(
            json.dumps(envelope, separators=(",", ":")).encode(), GZIP_LEVEL, mtime=0
        )
        self._members.append(member)
        self._size += len(member)
        if self._size >= self._limit:
            self._write_object()

    def _write_object(self) -> None:
        if not self._members:
            return
        moment = datetime.fromtimestamp(self._first_ms / 1000, UTC)
        folder = self._out / self._folder(moment)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{FIREHOSE_STREAM}-1-{moment:%Y-%m-%d-%H-%M-%S}-{_uuid4(self._rng)}.gz"
        (folder / name).write_bytes(b"".join(self._members))
        self.written.append(folder / name)
        self._members = []
        self._size = 0


class _FilterLogEventsWriter:
    """Pages of ``aws logs filter-log-events`` per log group, each written when full."""

    def __init__(self, out: Path, rng: random.Random, chunk: int) -> None:
        self._out = out
        self._rng = rng
        self._chunk = chunk
        self._pages: dict[str, _Page] = {}

    def add(self, event: LogEvent) -> None:
        page = self._pages.get(event.log_group)
        if page is None:
            folder = self._out / event.log_group
            folder.mkdir(parents=True, exist_ok=True)
            page = self._pages[event.log_group] = _Page(folder)
        size = len(event.message) + 200
        if page.events and (len(page.events) >= PAGE_EVENTS or page.size + size > PAGE_BYTES):
            self._write(page)
        page.events.append(
            _page_event(
                stream=event.log_stream,
                timestamp_ms=event.timestamp_ms,
                message=event.message,
                ingestion_ms=event.timestamp_ms + self._rng.randint(100, 2000),
                event_id=_event_id(self._rng),
            )
        )
        page.size += size

    def close(self) -> None:
        for group in sorted(self._pages):
            self._write(self._pages[group])

    def _write(self, page: _Page) -> None:
        """A staged page with a ``nextToken``: numbering drops the one of a group's last page."""
        path = page.folder / _staged_name(self._chunk, page.written)
        path.write_text(_page_text(page.events, f"{self._rng.getrandbits(256):064x}"))
        page.written += 1
        page.events = []
        page.size = 0


class _Page:
    """The page being filled for one log group (its events as JSON text), and pages written."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.events: list[str] = []
        self.size = 0
        self.written = 0


def _page_event(
    *, stream: str, timestamp_ms: int, message: str, ingestion_ms: int, event_id: str
) -> str:
    """One event of a page, indented as the CLI prints it (``json.dumps(..., indent=4)``)."""
    return (
        "        {\n"
        f'            "logStreamName": {json.dumps(stream)},\n'
        f'            "timestamp": {timestamp_ms},\n'
        f'            "message": {json.dumps(message)},\n'
        f'            "ingestionTime": {ingestion_ms},\n'
        f'            "eventId": "{event_id}"\n'
        "        }"
    )


def _page_text(events: Sequence[str], next_token: str) -> str:
    """A page as the CLI prints it, from events of :func:`_page_event`."""
    return (
        '{\n    "events": [\n'
        + ",\n".join(events)
        + f'\n    ],\n    "nextToken": {json.dumps(next_token)}\n}}\n'
    )


def _end_pages(last: Path) -> None:
    """The last page of a group: no ``nextToken``, as the CLI's last page."""
    page = json.loads(last.read_text())
    del page["nextToken"]
    last.write_text(json.dumps(page, indent=4) + "\n")


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


def _uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))
