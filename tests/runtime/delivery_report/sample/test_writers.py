"""The writers: every layout holds exactly the generated records, in files shaped as AWS
writes them, and the files depend on the arguments alone."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cross_account_runtime.delivery_report.sample.events import Truth
from cross_account_runtime.delivery_report.sample.generator import generate
from cross_account_runtime.delivery_report.sample.writers import (
    EVENTS_PER_ENVELOPE,
    LAYOUTS,
    PAGE_EVENTS,
    write_layouts,
)
from tests.runtime.delivery_report.conftest import truth_of
from tests.runtime.delivery_report.sample.recount import (
    LAYOUT_RECORDS,
    export_records,
    firehose_envelopes,
    recount,
)

ARGUMENTS: dict[str, Any] = {
    "records": 1501,
    "seed": 3,
    "duplicate_rate": 0.05,
    "chunk_records": 400,
}
LINES_PER_FILE = 60
OBJECT_BYTES = 8 * 1024
FIREHOSE_NAME = re.compile(
    r"^sns-delivery-logs-1-(\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)-"
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.gz$"
)


@dataclass(frozen=True)
class Written:
    out: Path
    truth: Truth


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    """Every layout, written by two processes, with small files so that each layout has many."""
    out = tmp_path_factory.mktemp("written")
    truth = write_layouts(
        out=out,
        lines_per_file=LINES_PER_FILE,
        firehose_object_bytes=OBJECT_BYTES,
        workers=2,
        **ARGUMENTS,
    )
    return Written(out, truth)


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_files_depend_on_the_arguments_alone_not_on_the_number_of_processes(
    tmp_path: Path,
) -> None:
    arguments = {**ARGUMENTS, "lines_per_file": 100, "firehose_object_bytes": 4096}
    write_layouts(out=tmp_path / "one", workers=1, **arguments)
    write_layouts(out=tmp_path / "two", workers=2, **arguments)
    write_layouts(out=tmp_path / "other", workers=1, **{**arguments, "seed": 4})

    one = _files(tmp_path / "one")
    assert one == _files(tmp_path / "two")
    other = _files(tmp_path / "other")
    assert other["manifest.json"] != one["manifest.json"]
    assert not set(one.values()) & set(other.values()) - {b"Permission Check Successful"}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_layout_holds_exactly_the_records_counted(written: Written, layout: str) -> None:
    records = list(LAYOUT_RECORDS[layout](written.out / layout))
    assert len(records) == ARGUMENTS["records"]
    assert recount(records) == written.truth


def test_the_manifest_holds_the_truth_of_the_generated_events(written: Written) -> None:
    manifest = json.loads((written.out / "manifest.json").read_text())
    events = generate(
        ARGUMENTS["records"],
        ARGUMENTS["seed"],
        duplicate_rate=ARGUMENTS["duplicate_rate"],
        chunk_records=ARGUMENTS["chunk_records"],
    )
    assert manifest == {
        "seed": ARGUMENTS["seed"],
        "records": ARGUMENTS["records"],
        "layouts": list(LAYOUTS),
        "truth": truth_of(events).to_dict(),
    }
    assert written.truth.duplicated_deliveries > 0
    assert written.truth.by_status["FAILURE"] > 0


def test_no_staged_file_is_left(written: Written) -> None:
    assert not list(written.out.rglob(".*"))


def _numbered(folder: Path, pattern: str, first: int) -> list[Path]:
    """The folder's files, checked to be named ``pattern`` numbered on from ``first``."""
    files = sorted(p for p in folder.iterdir() if p.is_file())
    assert [p.name for p in files] == [pattern.format(n) for n in range(first, first + len(files))]
    return files


def test_export_files_are_numbered_per_log_stream_under_one_task_per_group(
    written: Written,
) -> None:
    root = written.out / "export"
    streams = {p.parent for p in root.rglob("*.gz")}
    tasks = {stream.parent for stream in streams}
    groups = {task.parent for task in tasks}
    assert len(groups) == len(tasks) > 1  # every chunk wrote into the group's one task
    assert max(len(_numbered(stream, "{:06d}.gz", 0)) for stream in streams) > 1
    for group in groups:
        assert (group / "aws-logs-write-test").read_text() == "Permission Check Successful"


def test_export_and_jsonl_files_hold_at_most_lines_per_file(written: Written) -> None:
    for path in [*(written.out / "export").rglob("*.gz"), *(written.out / "jsonl").rglob("*.gz")]:
        assert 0 < len(gzip.decompress(path.read_bytes()).splitlines()) <= LINES_PER_FILE


def test_jsonl_files_are_numbered_per_group(written: Written) -> None:
    folders = {p.parent for p in (written.out / "jsonl").rglob("*.jsonl.gz")}
    assert folders
    for folder in folders:
        _numbered(folder, "part-{:05d}.jsonl.gz", 0)


def test_firehose_objects_are_named_as_the_delivery_stream_names_them(written: Written) -> None:
    """``<stream>-1-<yyyy-MM-dd-HH-mm-ss>-<uuid>.gz`` (the stream sets ``FileExtension``), in
    the hour folder of their first record."""
    objects = [p for p in (written.out / "firehose").rglob("*") if p.is_file()]
    assert len(objects) > 3
    for path in objects:
        match = FIREHOSE_NAME.match(path.name)
        assert match, path.name
        first = firehose_envelopes(path)[0]["logEvents"]
        assert isinstance(first, list)
        moment = datetime.fromtimestamp(first[0]["timestamp"] / 1000, UTC)
        assert match.group(1) == f"{moment:%Y-%m-%d-%H-%M-%S}"
        assert path.parent.relative_to(written.out / "firehose").as_posix() == (
            f"{moment:%Y/%m/%d/%H}"
        )


def test_firehose_envelopes_hold_one_log_streams_events_and_control_messages(
    written: Written,
) -> None:
    envelopes = [
        envelope
        for path in sorted((written.out / "firehose").rglob("*"))
        if path.is_file()
        for envelope in firehose_envelopes(path)
    ]
    control = [e for e in envelopes if e["messageType"] == "CONTROL_MESSAGE"]
    data = [e for e in envelopes if e["messageType"] == "DATA_MESSAGE"]
    groups = {e["logGroup"] for e in data}
    assert len(control) >= len(groups) > 1
    for envelope in data:
        events = envelope["logEvents"]
        assert isinstance(events, list)
        assert 0 < len(events) <= EVENTS_PER_ENVELOPE
        assert envelope["subscriptionFilters"] == ["sns-delivery-to-s3"]
        assert str(envelope["owner"]) in str(envelope["logGroup"])


def test_filter_log_events_pages_chain_with_next_tokens_as_the_cli_prints_them(
    written: Written,
) -> None:
    folders = {p.parent for p in (written.out / "filter-log-events").rglob("page-*.json")}
    assert folders
    for folder in folders:
        pages = _numbered(folder, "page-{:05d}.json", 1)
        for index, path in enumerate(pages, start=1):
            text = path.read_text()
            page = json.loads(text)
            assert text == json.dumps(page, indent=4) + "\n"
            assert 0 < len(page["events"]) <= PAGE_EVENTS
            assert ("nextToken" in page) == (index < len(pages))
            assert {"logStreamName", "timestamp", "message", "ingestionTime", "eventId"} == set(
                page["events"][0]
            )


def test_writing_again_replaces_what_the_layouts_held(tmp_path: Path) -> None:
    write_layouts(records=500, seed=1, out=tmp_path, layouts=("export", "jsonl"))
    kept = tmp_path / "notes.txt"
    kept.write_text("mine")
    write_layouts(records=20, seed=2, out=tmp_path, layouts=("export",))

    assert len(list(export_records(tmp_path / "export"))) == 20
    assert (tmp_path / "jsonl").is_dir()  # a layout not written again is left alone
    assert kept.read_text() == "mine"


def test_an_unknown_layout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown layouts \['csv'\]"):
        write_layouts(records=1, seed=1, out=tmp_path, layouts=("csv",))
