"""The ``NServiceBus.Transport.Sqs.ARN`` header format of seed 000: ``name=value;name=value``
with ``=`` and ``;`` doubled inside names and values."""

from __future__ import annotations

import pytest

from local_aws.released_transport.arn_aware.header import (
    ArnHeaderFormatError,
    format_arn_header,
    parse_arn_header,
)

SENDER_ARN = "arn:aws:sqs:us-east-1:111111111111:Sender"


@pytest.mark.parametrize(
    ("entries", "text"),
    [
        ({}, ""),
        ({"NServiceBus.ReplyToAddress": SENDER_ARN}, f"NServiceBus.ReplyToAddress={SENDER_ARN}"),
        (
            {"NServiceBus.SubscriberAddress": "arn:1", "NServiceBus.FailedQ": "arn:2"},
            "NServiceBus.SubscriberAddress=arn:1;NServiceBus.FailedQ=arn:2",
        ),
        ({"a=b": "c;d"}, "a==b=c;;d"),
        ({";x": "y="}, ";;x=y=="),
    ],
)
def test_format_and_parse(entries: dict[str, str], text: str) -> None:
    assert format_arn_header(entries) == text
    assert parse_arn_header(text) == entries


def test_a_run_of_three_reads_the_escape_first() -> None:
    assert parse_arn_header("a===b") == {"a=": "b"}


def test_a_doubled_separator_is_part_of_the_value() -> None:
    assert parse_arn_header("a=1;;b") == {"a": "1;b"}


def test_later_entries_replace_earlier_ones_and_a_trailing_separator_is_allowed() -> None:
    assert parse_arn_header("a=1;a=2;") == {"a": "2"}


@pytest.mark.parametrize("text", ["a", "a=1;b", "a=b=c", ";"])
def test_malformed_text_is_refused(text: str) -> None:
    with pytest.raises(ArnHeaderFormatError):
        parse_arn_header(text)
