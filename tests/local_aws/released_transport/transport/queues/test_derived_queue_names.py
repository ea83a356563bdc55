"""Queue-name vectors derived from the algorithm of ``QueueCache.GetSqsQueueName`` (not upstream
tests): the prefix rule, the UTF-16 length limit, .NET's ``char.IsLetterOrDigit`` per code unit,
and the ``DEV.`` prefix that breaks idempotence without the start-up guard noticing."""

from __future__ import annotations

import pytest

from local_aws.released_transport.transport.queues.naming import (
    QueueNameError,
    assert_queue_name_generator_idempotent,
    delay_queue_name,
    get_sqs_queue_name,
)


@pytest.mark.parametrize(
    ("prefix", "destination", "expected"),
    [
        (None, "Sales.Orders", "Sales-Orders"),
        ("DEV-", "Sales", "DEV-Sales"),
        ("DEV-", "DEV-Sales", "DEV-Sales"),
        ("DEV", "DEVICES", "DEVICES"),
        ("DEV.", "Sales", "DEV-Sales"),
        ("DEV.", "DEV-Sales", "DEV-DEV-Sales"),
        ("", "a.FIFO", "a-FIFO"),
        ("", ".fifo", ".fifo"),
        ("", "café", "café"),
        ("", "Straße-Жук-日本", "Straße-Жук-日本"),
        ("", "ªµ٣Ａ１", "ªµ٣Ａ１"),
        ("", "x²", "x-"),
        ("", "Ⅻ½", "--"),
        ("", "e\u0301", "e-"),
        ("", "a😀b", "a--b"),
        ("", "\U0001d400", "--"),
        ("", "a b", "a-b"),
    ],
)
def test_derived_names(prefix: str | None, destination: str, expected: str) -> None:
    assert get_sqs_queue_name(destination, prefix) == expected


def test_a_supplementary_character_counts_twice_towards_the_limit() -> None:
    assert get_sqs_queue_name("😀" * 40, "") == "-" * 80
    with pytest.raises(QueueNameError, match="longer than 80 characters"):
        get_sqs_queue_name("😀" * 40 + "x", "")


def test_the_limit_includes_the_fifo_suffix_and_precedes_sanitizing() -> None:
    assert get_sqs_queue_name("x" * 73 + "a.fifo", "") == "x" * 73 + "a.fifo"
    with pytest.raises(QueueNameError, match="longer than 80 characters"):
        get_sqs_queue_name("x" * 74 + "ab.fifo", "")


@pytest.mark.parametrize("destination", ["", "  ", "\t\n"])
def test_a_blank_destination_is_refused(destination: str) -> None:
    with pytest.raises(QueueNameError, match=r"Value cannot be null. \(Parameter 'destination'\)"):
        get_sqs_queue_name(destination, "")


def test_the_guard_probes_only_with_its_own_prefix_so_dev_dot_passes() -> None:
    """The guard applies the generator with prefix ``Prefix``, never the configured one."""
    assert_queue_name_generator_idempotent(get_sqs_queue_name)
    once = get_sqs_queue_name("Sales", "DEV.")
    assert get_sqs_queue_name(once, "DEV.") == "DEV-DEV-Sales"


def test_the_delay_queue_name_appends_the_suffix_before_the_generator() -> None:
    assert delay_queue_name("DEV-Sales") == "DEV-Sales-delay.fifo"
    assert get_sqs_queue_name(delay_queue_name("DEV-Sales"), "DEV-") == "DEV-Sales-delay.fifo"
