"""The generator's ``Truth`` worked out again from records as they were written, and readers
of each layout's files with nothing but gzip and json: what the tests compare the generator's
own count against."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from cross_account_runtime.delivery_report.causes import classify
from cross_account_runtime.delivery_report.sample.events import Truth

PROTOCOL_PREFIXES = {
    "arn:aws:sqs:": "sqs",
    "arn:aws:lambda:": "lambda",
    "arn:aws:firehose:": "firehose",
    "http": "http/s",
    "+": "sms",
}

GroupAndRecord = tuple[str, str]
"""A record's log group and its text."""


def protocol_of(destination: str) -> str:
    if ":endpoint/" in destination:
        return "application"
    return next(p for prefix, p in PROTOCOL_PREFIXES.items() if destination.startswith(prefix))


def recount(records: Iterable[GroupAndRecord]) -> Truth:
    """The counts by their definitions, over all records at once: a delivery is a (topic,
    destination, messageId); the topic of a record without ``topicArn`` is its log group's."""
    truth = Truth()
    deliveries: Counter[tuple[str, str, str]] = Counter()
    failed: set[tuple[str, str, str]] = set()
    succeeded: set[tuple[str, str, str]] = set()
    for group, text in records:
        record = json.loads(text)
        notification, delivery, status = (
            record["notification"],
            record["delivery"],
            record["status"],
        )
        topic = notification.get("topicArn") or _topic_of_group(group)
        protocol = protocol_of(delivery["destination"])
        code = delivery.get("statusCode")
        key = (topic, delivery["destination"], notification["messageId"])
        deliveries[key] += 1
        truth.records += 1
        truth.by_status[status] += 1
        truth.by_protocol[protocol] += 1
        cause = classify(status, protocol, code, delivery.get("providerResponse"))
        if cause is not None:
            truth.by_cause[cause] += 1
        retried = delivery.get("attempts", 1) > 1
        truth.retried += retried
        truth.retried_succeeded += retried and status == "SUCCESS"
        truth.http_4xx_success += (
            status == "SUCCESS" and protocol == "http/s" and code is not None and 400 <= code < 500
        )
        (succeeded if status == "SUCCESS" else failed).add(key)
    truth.duplicated_deliveries = sum(1 for n in deliveries.values() if n > 1)
    truth.duplicate_extra_records = sum(n - 1 for n in deliveries.values())
    truth.lost = len(failed - succeeded)
    return truth


def _topic_of_group(group: str) -> str:
    _, region, account, resource = group.removesuffix("/Failure").split("/", 3)
    return f"arn:aws:sns:{region}:{account}:{resource}"


def export_records(root: Path) -> Iterator[GroupAndRecord]:
    """``<group>/<task>/<stream>/NNNNNN.gz``: lines of ``<ISO time> <record>``."""
    for path in sorted(root.rglob("*.gz")):
        group = path.relative_to(root).parents[2].as_posix()
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            _, record = line.split(" ", 1)
            yield group, record


def jsonl_records(root: Path) -> Iterator[GroupAndRecord]:
    """``<group>/part-NNNNN.jsonl.gz``: a record a line."""
    for path in sorted(root.rglob("*.jsonl.gz")):
        group = path.relative_to(root).parent.as_posix()
        for line in gzip.decompress(path.read_bytes()).decode().splitlines():
            yield group, line


def filter_log_events_records(root: Path) -> Iterator[GroupAndRecord]:
    """``<group>/page-NNNNN.json``: pages whose events hold the records."""
    for path in sorted(root.rglob("page-*.json")):
        group = path.relative_to(root).parent.as_posix()
        for event in json.loads(path.read_text())["events"]:
            yield group, event["message"]


def firehose_envelopes(path: Path) -> list[dict[str, object]]:
    """The CloudWatch Logs envelopes of one object: JSON documents back to back once gunzipped
    (gzip members back to back)."""
    text = gzip.decompress(path.read_bytes()).decode()
    decoder = json.JSONDecoder()
    envelopes, position = [], 0
    while position < len(text):
        envelope, position = decoder.raw_decode(text, position)
        envelopes.append(envelope)
    return envelopes


def firehose_records(root: Path) -> Iterator[GroupAndRecord]:
    """Data envelopes' events; control messages hold no record."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        for envelope in firehose_envelopes(path):
            if envelope["messageType"] == "DATA_MESSAGE":
                events = envelope["logEvents"]
                assert isinstance(events, list)
                for event in events:
                    yield str(envelope["logGroup"]), event["message"]


LAYOUT_RECORDS = {
    "export": export_records,
    "firehose": firehose_records,
    "filter-log-events": filter_log_events_records,
    "jsonl": jsonl_records,
}
"""Every record written in a layout, read back from the files under the layout's directory."""
