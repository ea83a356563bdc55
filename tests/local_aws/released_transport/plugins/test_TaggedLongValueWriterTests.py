# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.Metrics.ServiceControl 6.0.1
``src/NServiceBus.Metrics.ServiceControl.Tests/TaggedLongValueWriterTests.cs`` (the expected
bytes written as its ``BinaryWriter`` writes them), and ServiceControl 6.19.2's reader of the same
format (``src/ServiceControl.Monitoring/Messaging/TaggedLongValueWriterOccurrenceSerializerDefinition.cs``)."""

from __future__ import annotations

import struct

import pytest

from local_aws.released_transport.plugins.metrics_wire import (
    MetricEntry,
    MetricReportFormatError,
    TaggedLongValueOccurrence,
    TagRegistry,
    read_tagged_values,
    write_tagged_values,
)

TAG1 = "this is a test tag value 111!!!"
TAG2 = "this is another test tag value 222@@@ Even longer than the first one!"


def _long(value: int) -> bytes:
    return struct.pack("<q", value)


def _int(value: int) -> bytes:
    return struct.pack("<i", value)


def test_Writing_one_not_tagged_value() -> None:
    body = write_tagged_values([MetricEntry(2, 3)], TagRegistry())

    assert body == _long(1) + _long(2) + _int(0) + _int(1) + _int(0) + _int(0) + _long(3)


def test_Writing_one_tagged_value() -> None:
    tags = TagRegistry()
    tag_id = tags.tag_id(TAG1)

    body = write_tagged_values([MetricEntry(13123, 1345347, tag_id)], tags)

    text = TAG1.encode()
    assert body == (
        _long(1)
        + _long(13123)
        + _int(1)
        + _int(tag_id)
        + _int(len(text))
        + text
        + _int(1)
        + _int(0)
        + _int(tag_id)
        + _long(1345347)
    )


def test_Writing_two_tagged_values_sorted_by_date() -> None:
    tags = TagRegistry()
    tag1, tag2 = tags.tag_id(TAG1), tags.tag_id(TAG2)
    ticks, value1 = 334346347, 983745897384573

    body = write_tagged_values(
        [MetricEntry(ticks + 1, value1 + 1, tag2), MetricEntry(ticks, value1, tag1)], tags
    )

    text1, text2 = TAG1.encode(), TAG2.encode()
    assert body == (
        _long(1)
        + _long(ticks)
        + _int(2)
        + _int(tag1)
        + _int(len(text1))
        + text1
        + _int(tag2)
        + _int(len(text2))
        + text2
        + _int(2)
        + _int(0)
        + _int(tag1)
        + _long(value1)
        + _int(1)
        + _int(tag2)
        + _long(value1 + 1)
    )


def test_a_tag_keeps_its_id_and_new_tags_count_on() -> None:
    tags = TagRegistry()

    assert [tags.tag_id("a"), tags.tag_id("b"), tags.tag_id("a"), tags.tag_id("")] == [1, 2, 1, 3]


def test_a_tick_distance_past_int_wraps_as_the_unchecked_cast_does() -> None:
    tags = TagRegistry()
    tag = tags.tag_id("t")

    body = write_tagged_values([MetricEntry(0, 1, tag), MetricEntry(2**31, 2, tag)], tags)

    (occurrence,) = read_tagged_values(body)
    assert occurrence.entries == [(0, 1), (-(2**31), 2)]


def test_servicecontrol_reads_one_occurrence_per_tag() -> None:
    tags = TagRegistry()
    a, b = tags.tag_id("Ns.A, Asm"), tags.tag_id("Ns.B, Asm")
    body = write_tagged_values(
        [MetricEntry(10, 5, a), MetricEntry(12, 7, b), MetricEntry(11, 6, a)], tags
    )

    assert read_tagged_values(body) == [
        TaggedLongValueOccurrence("Ns.A, Asm", [(10, 5), (11, 6)]),
        TaggedLongValueOccurrence("Ns.B, Asm", [(12, 7)]),
    ]


def test_servicecontrol_splits_a_tag_past_512_entries() -> None:
    tags = TagRegistry()
    tag = tags.tag_id("t")
    body = write_tagged_values([MetricEntry(i, i, tag) for i in range(513)], tags)

    first, second = read_tagged_values(body)

    assert (len(first.entries), second.entries) == (512, [(512, 512)])


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_long(2) + _long(0) + _int(0) + _int(0), "version number '2'"),
        (_long(1) + _long(0), "unreadable"),
        (_long(1) + _long(0) + _int(0) + _int(1) + _int(0) + _int(0) + _long(1), "unreadable"),
    ],
)
def test_servicecontrol_refuses_what_it_cannot_read(body: bytes, reason: str) -> None:
    """Another version, a body cut short, an entry whose tag is not listed (an untagged one)."""
    with pytest.raises(MetricReportFormatError, match=reason):
        read_tagged_values(body)


def test_no_entries_is_no_occurrence() -> None:
    assert read_tagged_values(_long(1) + _long(0) + _int(0) + _int(0)) == []
