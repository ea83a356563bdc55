"""The vectors of NServiceBus.AmazonSQS 9.1.1's ``QueueCacheTests`` (``QueueCache.GetSqsQueueName``,
the default queue-name generator), and vectors derived from its algorithm for what those tests
leave out: prefixes the replacement rewrites, Unicode, and UTF-16 lengths.

``DoesNotThrowWithPretruncation`` and ``Preserves_FifoQueue_WithPreTruncate`` test a helper of
the test project (``TestNameHelper``), not the transport, so they have no counterpart here; the
caching tests reduce to the name the cache asks SQS for.
"""

from __future__ import annotations

import pytest

from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import check_queue_name
from cross_account_runtime.nservicebus.queue_name_generator import default_queue_name

REALLY = "really-" * 15 + "really"


@pytest.mark.parametrize(("prefix", "destination"), [("", REALLY), ("PREFIX", "PREFIX" + REALLY)])
def test_ThrowsWhenLongerThanEightyChars(prefix: str, destination: str) -> None:
    with pytest.raises(AddressError, match="at most 80"):
        default_queue_name(destination, prefix)


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("destination-delay.fifo", "destination-delay.fifo"),
        ("destination-delay.blurb", "destination-delay-blurb"),
        ("destination-delay.blurb.fifo", "destination-delay-blurb.fifo"),
        ("destination-delay.fifo.fifo", "destination-delay-fifo.fifo"),
    ],
)
def test_Preserves_FifoQueue(destination: str, expected: str) -> None:
    assert default_queue_name(destination, "") == expected
    assert default_queue_name(expected, "") == expected


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("destination-1", "destination-1"),
        ("destination.1", "destination-1"),
        ("destination!1", "destination-1"),
        ("destination?1", "destination-1"),
        ("destination@1", "destination-1"),
        ("destination$1", "destination-1"),
        ("destination%1", "destination-1"),
        ("destination^1", "destination-1"),
        ("destination&1", "destination-1"),
        ("destination*1", "destination-1"),
        ("destination_1", "destination_1"),
    ],
)
def test_ReplacesNonDigitsWithDash(destination: str, expected: str) -> None:
    assert default_queue_name(destination, "") == expected
    assert default_queue_name(expected, "") == expected


def test_GetQueueUrl_caches() -> None:
    """The cache looks the queue up by the generator's name for its prefix."""
    assert default_queue_name("fakeQueueName", "PREFIX") == "PREFIXfakeQueueName"


@pytest.mark.parametrize(
    ("prefix", "destination", "expected"),
    [
        ("", "Sales.Orders", "Sales-Orders"),
        ("DEV-", "Sales", "DEV-Sales"),
        ("DEV-", "DEV-Sales", "DEV-Sales"),
        # A destination that happens to start with the prefix is not prefixed.
        ("DEV", "DEVICES", "DEVICES"),
        # A prefix the replacement rewrites is accepted, and does not recognise its own output.
        ("DEV.", "Sales", "DEV-Sales"),
        ("DEV.", "DEV-Sales", "DEV-DEV-Sales"),
        # Only the exact, lower-case suffix is kept.
        ("", "a.FIFO", "a-FIFO"),
        ("", ".fifo", ".fifo"),
        # char.IsLetterOrDigit: letters (Lu, Ll, Lt, Lm, Lo) and decimal digits (Nd) stay.
        ("", "café", "café"),
        ("", "ªµ٣Ａ１", "ªµ٣Ａ１"),
        # Other numbers (No, Nl), combining marks and symbols do not.
        ("", "x²", "x-"),
        ("", "xⅫ", "x-"),
        ("", "e\u0301", "e-"),
        # A character beyond U+FFFF is two UTF-16 code units, both surrogates, both replaced.
        ("", "a😀b", "a--b"),
        # .NET's white space excludes U+001C, which Python's str.isspace includes.
        ("", "\x1c", "-"),
    ],
)
def test_GetSqsQueueName_derived_vectors(prefix: str, destination: str, expected: str) -> None:
    assert default_queue_name(destination, prefix) == expected


@pytest.mark.parametrize("destination", ["", "  ", "\t\n", "\u3000", "\u2028"])
def test_GetSqsQueueName_refuses_a_destination_that_is_null_or_white_space(
    destination: str,
) -> None:
    with pytest.raises(AddressError, match="empty or white space"):
        default_queue_name(destination, "DEV-")


def test_GetSqsQueueName_counts_utf16_code_units_including_the_fifo_suffix() -> None:
    assert default_queue_name("x" * 78 + "😀", "") == "x" * 78 + "--"
    with pytest.raises(AddressError, match="81 characters"):
        default_queue_name("x" * 79 + "😀", "")
    with pytest.raises(AddressError, match="81 characters"):
        default_queue_name("x" * 74 + "ab.fifo", "")
    assert len(default_queue_name("x" * 73 + "ab.fifo", "")) == 80


def test_GetSqsQueueName_checks_the_length_before_replacing_and_with_the_prefix() -> None:
    with pytest.raises(AddressError, match="with prefix 'PREFIX' has 81 characters"):
        default_queue_name("y" * 75, "PREFIX")


@pytest.mark.parametrize(
    ("destination", "character", "position"),
    [("café", r"'é' \(U\+00E9\)", 3), ("ªb", r"'ª' \(U\+00AA\)", 0)],
)
def test_names_the_transport_makes_but_sqs_refuses_are_refused_naming_the_character(
    destination: str, character: str, position: int
) -> None:
    name = default_queue_name(destination, "")
    assert name == destination
    with pytest.raises(AddressError, match=f"{character} at position {position}.*SQS refuses"):
        check_queue_name(name)
