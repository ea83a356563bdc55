"""The binary body of a metric report: ``TaggedLongValueWriterV1`` and ServiceControl's reader.

Little-endian, as ``BinaryWriter`` writes: the version (``long`` 1), the smallest entry's ticks
(``long``), the number of distinct tags (``int``) then per tag its id (``int``), the byte length
(``int``) and UTF-8 bytes of its text, the number of entries (``int``) and per entry — sorted by
ticks — its ticks minus the smallest (cast to ``int``: wraps beyond 2^31 ticks, about 214 s,
as the unchecked cast does), its tag id (``int``) and its value (``long``). A tag id is given to a
tag text the first time one of the writer's entries uses it, counting from 1, and stays for the
writer's life. Tags are listed in the order their first entry appears in the sorted chunk
(``Array.Sort`` of equal ticks is not stable upstream; the model keeps write order for them).

ServiceControl.Monitoring reads it back (``TaggedLongValueSerializer.Deserialize``) into one
``TaggedLongValueOccurrence`` per tag (a second one when a tag has more than 512 entries), each
entry ``(baseTicks + delta, value)``, every listed tag giving one even without entries; a
version other than 1 is refused, an entry whose tag is not listed (an untagged one, tag 0) fails
the read, and no entries give no message.

Facts: NServiceBus.Metrics.ServiceControl 6.0.1
``src/NServiceBus.Metrics.ServiceControl/TaggedLongValueWriterV1.cs``, ``RingBuffer.cs``
(``Entry``), ``EntryTickComparer.cs``; vectors in
``src/NServiceBus.Metrics.ServiceControl.Tests/TaggedLongValueWriterTests.cs``; ServiceControl
6.19.2 ``src/ServiceControl.Monitoring/Messaging/TaggedLongValueWriterOccurrenceSerializerDefinition.cs``,
``Messaging/TaggedLongValueOccurrence.cs``, ``Messaging/RawMessage.cs`` (512 entries).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

VERSION: Final = 1
MAX_ENTRIES_PER_OCCURRENCE: Final = 512
"""``RawMessage.MaxEntries``."""
_INT_RANGE: Final = 1 << 32
_INT_LIMIT: Final = 1 << 31


class MetricReportFormatError(ValueError):
    """A metric report body ServiceControl cannot read."""


@dataclass(frozen=True)
class MetricEntry:
    """``RingBuffer.Entry``: when (``DateTime.Ticks``), the value, the tag id (0: no tag)."""

    ticks: int
    value: int
    tag: int = 0


class TagRegistry:
    """The writer's tag ids (``GetTagId``), from 1, one per tag text."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def tag_id(self, tag: str) -> int:
        """The id of ``tag``, given now when it has none."""
        if tag not in self._ids:
            self._ids[tag] = len(self._ids) + 1
        return self._ids[tag]

    def tag_text(self, tag_id: int) -> str:
        """The text of a given id."""
        for text, known in self._ids.items():
            if known == tag_id:
                return text
        raise KeyError(tag_id)


def _as_int(value: int) -> int:
    """``(int)value`` of a ``long``: the low 32 bits, signed."""
    low = value % _INT_RANGE
    return low - _INT_RANGE if low >= _INT_LIMIT else low


def write_tagged_values(entries: Sequence[MetricEntry], tags: TagRegistry) -> bytes:
    """``TaggedLongValueWriterV1.Write`` of one chunk (at least one entry)."""
    ordered = sorted(entries, key=lambda entry: entry.ticks)
    minimum = ordered[0].ticks
    used: list[int] = []
    for entry in ordered:
        if entry.tag > 0 and entry.tag not in used:
            used.append(entry.tag)
    output = bytearray(struct.pack("<qqi", VERSION, minimum, len(used)))
    for tag_id in used:
        text = tags.tag_text(tag_id).encode("utf-8")
        output += struct.pack("<ii", tag_id, len(text)) + text
    output += struct.pack("<i", len(ordered))
    for entry in ordered:
        output += struct.pack("<iiq", _as_int(entry.ticks - minimum), entry.tag, entry.value)
    return bytes(output)


@dataclass
class TaggedLongValueOccurrence:
    """What ServiceControl.Monitoring's handlers get: a tag's entries ``(ticks, value)``."""

    tag_value: str
    entries: list[tuple[int, int]] = field(default_factory=list)


def read_tagged_values(body: bytes) -> list[TaggedLongValueOccurrence]:
    """``TaggedLongValueSerializer.Deserialize``."""
    try:
        return _read(body)
    except (struct.error, KeyError) as unreadable:
        raise MetricReportFormatError(f"unreadable metric report: {unreadable}") from unreadable


def _read(body: bytes) -> list[TaggedLongValueOccurrence]:
    offset = 0

    def take(fmt: str) -> tuple[int, ...]:
        nonlocal offset
        values = struct.unpack_from(fmt, body, offset)
        offset += struct.calcsize(fmt)
        return values

    (version,) = take("<q")
    if version != VERSION:
        raise MetricReportFormatError(
            f"The message version number '{version}' cannot be handled properly."
        )
    (base_ticks,) = take("<q")
    (tag_count,) = take("<i")
    tag_texts: dict[int, str] = {}
    for _ in range(tag_count):
        tag_id, length = take("<ii")
        if offset + length > len(body):
            raise struct.error("tag text past the end of the body")
        tag_texts[tag_id] = body[offset : offset + length].decode("utf-8", errors="replace")
        offset += length
    (count,) = take("<i")
    if count == 0:
        return []
    current = {tag_id: TaggedLongValueOccurrence(text) for tag_id, text in tag_texts.items()}
    full: list[TaggedLongValueOccurrence] = []
    for _ in range(count):
        delta, tag_id, value = take("<iiq")
        occurrence = current[tag_id]
        if len(occurrence.entries) == MAX_ENTRIES_PER_OCCURRENCE:
            full.append(occurrence)
            occurrence = current[tag_id] = TaggedLongValueOccurrence(tag_texts[tag_id])
        occurrence.entries.append((base_ticks + delta, value))
    return full + list(current.values())
