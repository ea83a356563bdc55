"""Firehose writes to S3 as the deployed stream says: its prefix expressions, its buffering, its
processing and its compression.

A Firehose stream with an S3 destination buffers the records it receives and writes one object
when the buffer holds ``BufferingHints.SizeInMBs`` or has waited ``IntervalInSeconds`` since its
first record (AWS's defaults 5 MiB and 300 s), named
``<prefix><stream>-<version>-<yyyy-MM-dd-HH-mm-ss>-<random><FileExtension>``. The prefix's
``!{timestamp:<pattern>}`` expressions are the approximate arrival time of the object's oldest
record in UTC, formatted as Java's ``DateTimeFormatter`` does; ``!{firehose:random-string}`` an
11-character random string; a prefix with no timestamp expression gets
``!{timestamp:yyyy/MM/dd/HH/}`` appended ("Understand custom prefixes for Amazon S3 objects").
Processing (``ProcessingConfiguration``) runs on each record: ``Decompression`` (GZIP) unpacks
it, ``CloudWatchLogProcessing`` with ``DataMessageExtraction`` turns a CloudWatch Logs envelope
into its events' messages, one per line, and drops a ``CONTROL_MESSAGE``;
``AppendDelimiterToRecord`` adds a newline. Then ``CompressionFormat`` ``GZIP`` compresses the
object (``UNCOMPRESSED`` writes the records as they are), ``FileExtension`` (else ``.gz`` for
``GZIP``) ends its name.

moto's ``FirehoseBackend.put_s3_records`` (``moto/firehose/models.py``) writes every
``PutRecord`` or ``PutRecordBatch`` at once as an object of its own, under the prefix taken
literally (``delivery-logs/!{timestamp:yyyy/MM/dd}/``) followed by ``YYYY/MM/DD/HH/``,
uncompressed and unprocessed: the delivery report's job, reading ``delivery-logs/YYYY/MM/DD/``,
would find nothing. :func:`register` replaces it with the buffered writer here.

Time: a buffer is written when a record arrives after it is due, by a clock thread that looks
once a second, or when the local AWS is asked to age the buffers:
``POST /moto-api/local-aws/firehose/age-buffers?seconds=N`` makes every buffered record N
seconds older (its arrival moved back, as :mod:`local_aws.moto.time_travel` ages SQS messages)
and writes what is then due; it answers ``{"written": <objects>}``. A 300 s buffer need not be
waited for.

Not modelled: compression formats other than ``GZIP`` and ``UNCOMPRESSED`` (refused when the
buffer is written, with the object left unwritten), Lambda processors (records pass unchanged),
dynamic partitioning and format conversion, the KMS encryption of the objects, the error output
prefix (moto's writes do not fail but for a missing bucket, whose records are lost here).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import string
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from moto.firehose.models import FirehoseBackend
from moto.moto_api._internal import mock_random
from moto.s3.models import s3_backends

from local_aws.moto.api_routes import add_route, ageing_route, request_ageing
from local_aws.moto.patching import replacing

AGE_BUFFERS_PATH = "/moto-api/local-aws/firehose/age-buffers"
"""The route, relative to the server's root."""

DEFAULT_INTERVAL_SECONDS = 300
DEFAULT_SIZE_MIB = 5
MIB = 1024 * 1024
DEFAULT_TIMESTAMP_PREFIX = "!{timestamp:yyyy/MM/dd/HH/}"
CLOCK_PERIOD_SECONDS = 1.0

_PATCHED = "_local_aws_firehose_s3"
_EXPRESSION = re.compile(r"!\{(?P<namespace>[a-z]+):(?P<argument>[^}]*)\}")
_JAVA_FIELDS = {
    "yyyy": "%Y",
    "yy": "%y",
    "MM": "%m",
    "dd": "%d",
    "HH": "%H",
    "mm": "%M",
    "ss": "%S",
}
_RANDOM_ALPHABET = string.ascii_letters + string.digits


@dataclass
class Buffer:
    """The records a stream holds for one S3 destination, oldest first."""

    backend: FirehoseBackend
    stream: str
    version_id: str
    destination: dict[str, Any]
    records: list[bytes] = field(default_factory=list)
    first_arrival: float = 0.0
    """Epoch seconds the oldest record arrived (moved back by ageing)."""

    @property
    def size(self) -> int:
        return sum(len(r) for r in self.records)

    def due(self, now: float) -> bool:
        hints = self.destination.get("BufferingHints") or {}
        interval = float(hints.get("IntervalInSeconds", DEFAULT_INTERVAL_SECONDS))
        size_mib = float(hints.get("SizeInMBs", DEFAULT_SIZE_MIB))
        return bool(self.records) and (
            self.size >= size_mib * MIB or now >= self.first_arrival + interval
        )


_buffers: dict[tuple[str, str, str], Buffer] = {}
"""Per ``(account, region, stream)``: what it has received and not yet written."""
_lock = threading.RLock()
_clock_started = False


# Names -------------------------------------------------------------------------------------


def java_format(pattern: str, moment: datetime) -> str:
    """``moment`` formatted with a ``DateTimeFormatter`` pattern of the fields Firehose prefixes
    use (``yyyy``, ``yy``, ``MM``, ``dd``, ``HH``, ``mm``, ``ss``); any other letter is
    refused rather than written literally."""
    out: list[str] = []
    for run in re.finditer(r"([A-Za-z])\1*|[^A-Za-z]+", pattern):
        text = run.group(0)
        if text[0].isalpha():
            directive = _JAVA_FIELDS.get(text)
            if directive is None:
                raise ValueError(f"timestamp pattern {pattern!r}: {text!r} is not modelled")
            out.append(moment.strftime(directive))
        else:
            out.append(text)
    return "".join(out)


def evaluate_prefix(prefix: str, arrival: float) -> str:
    """The S3 prefix of an object whose oldest record arrived at ``arrival`` (epoch s)."""
    if "!{timestamp:" not in prefix:
        prefix += DEFAULT_TIMESTAMP_PREFIX
    moment = datetime.fromtimestamp(arrival, UTC)

    def expression(found: re.Match[str]) -> str:
        namespace, argument = found["namespace"], found["argument"]
        if namespace == "timestamp":
            return java_format(argument, moment)
        if namespace == "firehose" and argument == "random-string":
            return _random_string()
        raise ValueError(f"prefix {prefix!r}: !{{{namespace}:{argument}}} is not modelled")

    return _EXPRESSION.sub(expression, prefix)


def _random_string(length: int = 11) -> str:
    return "".join(mock_random.choice(_RANDOM_ALPHABET) for _ in range(length))


def object_key(buffer: Buffer) -> str:
    destination = buffer.destination
    compression = str(destination.get("CompressionFormat", "UNCOMPRESSED"))
    extension = destination.get("FileExtension") or (".gz" if compression == "GZIP" else "")
    moment = datetime.fromtimestamp(buffer.first_arrival, UTC)
    return (
        f"{evaluate_prefix(str(destination.get('Prefix', '')), buffer.first_arrival)}"
        f"{buffer.stream}-{buffer.version_id}-{moment:%Y-%m-%d-%H-%M-%S}-"
        f"{mock_random.uuid4()}{extension}"
    )


# Processing and compression ----------------------------------------------------------------


def _parameters(processor: dict[str, Any]) -> dict[str, str]:
    return {
        str(p.get("ParameterName")): str(p.get("ParameterValue"))
        for p in processor.get("Parameters", [])
    }


def process(destination: dict[str, Any], record: bytes) -> bytes:
    """One record through the stream's processors, in their order."""
    configuration = destination.get("ProcessingConfiguration") or {}
    if str(configuration.get("Enabled", "false")).lower() != "true":
        return record
    for processor in configuration.get("Processors", []):
        kind = processor.get("Type")
        parameters = _parameters(processor)
        if kind == "Decompression":
            record = gzip.decompress(record)
        elif kind == "CloudWatchLogProcessing":
            if parameters.get("DataMessageExtraction", "false").lower() == "true":
                document = json.loads(record)
                if document.get("messageType") != "DATA_MESSAGE":
                    return b""
                record = b"".join(str(e["message"]).encode() + b"\n" for e in document["logEvents"])
        elif kind == "AppendDelimiterToRecord":
            record += b"\n"
    return record


def content(buffer: Buffer) -> bytes:
    body = b"".join(process(buffer.destination, r) for r in buffer.records)
    compression = str(buffer.destination.get("CompressionFormat", "UNCOMPRESSED"))
    if compression == "GZIP":
        return gzip.compress(body)
    if compression == "UNCOMPRESSED":
        return body
    raise ValueError(f"Firehose {buffer.stream}: CompressionFormat {compression} is not modelled")


# Writing -----------------------------------------------------------------------------------


def write(buffer: Buffer) -> None:
    """The buffer's object into its bucket, in the stream's account; the buffer emptied."""
    try:
        if buffer.records:
            bucket = str(buffer.destination["BucketARN"]).split(":")[-1]
            s3 = s3_backends[buffer.backend.account_id][buffer.backend.partition]
            s3.put_object(bucket, object_key(buffer), content(buffer))
    finally:
        buffer.records.clear()


def write_due(now: float | None = None) -> int:
    """Write every buffer that is due; returns how many objects were written."""
    moment = time.time() if now is None else now
    written = 0
    with _lock:
        for key, buffer in list(_buffers.items()):
            if buffer.due(moment):
                del _buffers[key]  # gone even if its write fails: its records are lost
                write(buffer)
                written += 1
    return written


def age_buffers(seconds: float) -> int:
    """Make every buffered record ``seconds`` older, then write what is due."""
    with _lock:
        for buffer in _buffers.values():
            buffer.first_arrival -= seconds
        return write_due()


def _clock() -> None:
    while True:
        time.sleep(CLOCK_PERIOD_SECONDS)
        # A buffer that cannot be written (a format not modelled, a bucket gone) is dropped,
        # as the docstring says; the clock must go on for every other stream.
        with contextlib.suppress(Exception):
            write_due()


def _patch_put_s3_records() -> None:
    @replacing(FirehoseBackend, "put_s3_records", _PATCHED)
    def put_s3_records(
        self: FirehoseBackend,
        delivery_stream_name: str,
        version_id: str,
        s3_destination: dict[str, Any],
        records: list[dict[str, bytes]],
    ) -> list[dict[str, str]]:
        now = time.time()
        key = (self.account_id, self.region_name, delivery_stream_name)
        with _lock:
            write_due(now)
            buffer = _buffers.get(key)
            if buffer is None or buffer.destination is not s3_destination:
                if buffer is not None:  # the destination was updated: the old one's last object
                    del _buffers[key]
                    write(buffer)
                buffer = _buffers[key] = Buffer(
                    self, delivery_stream_name, version_id, s3_destination, first_arrival=now
                )
            buffer.records.extend(bytes(r["Data"]) for r in records)
            if buffer.due(now):
                del _buffers[key]
                write(buffer)
        return [{"RecordId": str(mock_random.uuid4())} for _ in records]


def register() -> None:
    """Buffer Firehose's S3 writes (``FirehoseBackend.put_s3_records`` in
    ``moto/firehose/models.py``, which ``PutRecord``, ``PutRecordBatch`` and moto's log
    subscriptions call), add the ageing route to moto's own API and start the clock thread.
    Idempotent."""
    global _clock_started  # noqa: PLW0603 (one clock per process)
    _patch_put_s3_records()
    add_route(AGE_BUFFERS_PATH, ageing_route(age_buffers, "written", example_seconds=300))
    with _lock:
        if not _clock_started:
            threading.Thread(target=_clock, name="firehose-buffers", daemon=True).start()
            _clock_started = True


def age_firehose_buffers(endpoint_url: str, seconds: float) -> int:
    """Ask the local AWS at ``endpoint_url`` to age every Firehose buffer by ``seconds``;
    returns how many objects were then written."""
    return request_ageing(endpoint_url, AGE_BUFFERS_PATH, seconds, "written")
