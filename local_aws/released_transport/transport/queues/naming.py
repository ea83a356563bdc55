"""Queue names as the released transport derives them: ``QueueCache.GetSqsQueueName``.

Every address the transport touches goes through this generator: the endpoint's own receive
address (so transport addresses on the wire are already prefixed, sanitized physical names),
every destination and the configured error queue at send time, and the delay queue
``{address}-delay.fifo``. The generator is applied again to names that already went through it,
so it must be idempotent; it is, as long as the prefix itself survives sanitizing — prefix
``DEV.`` turns ``Sales`` into ``DEV-Sales`` and that into ``DEV-DEV-Sales``.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/QueueCache.cs``
(``GetSqsQueueName``, ``GetSanitizedQueueName``), ``Configure/SqsTransport.cs``
(``AssertQueueNameGeneratorIdempotent``, the default generator), ``TransportConstraints.cs``;
test vectors in ``src/NServiceBus.Transport.SQS.Tests/QueueCacheTests.cs`` and
``QueueNameGeneratorTests.cs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from local_aws.released_transport.dotnet.text import (
    is_letter_or_digit,
    is_null_or_whitespace,
    utf16_length,
    utf16_units,
)
from local_aws.released_transport.headers import DELAYED_DELIVERY_QUEUE_SUFFIX

QueueNameGenerator = Callable[[str, str | None], str]
"""``Func<string, string, string>``: (destination, prefix) to physical queue name."""

MAXIMUM_QUEUE_NAME_LENGTH: Final = 80
FIFO_SUFFIX: Final = ".fifo"
_KEPT_PUNCTUATION: Final = frozenset(map(ord, "-_"))
_REPLACEMENT: Final = "-"
_IDEMPOTENCE_PROBE: Final = ("Destination", "Prefix")
"""What ``AssertQueueNameGeneratorIdempotent`` applies the generator to."""


class QueueNameError(Exception):
    """The generator refused a name (.NET ``Exception`` / ``ArgumentNullException``); the
    message is the transport's."""


def get_sqs_queue_name(destination: str, queue_name_prefix: str | None) -> str:
    """The default queue name generator.

    1. A null or whitespace-only destination is refused.
    2. The prefix is prepended unless it is non-empty and the destination already starts with
       it (ordinal comparison).
    3. More than 80 UTF-16 code units, counted before sanitizing and including ``.fifo``, is
       refused.
    4. Every code unit that is not a letter or digit (.NET ``char.IsLetterOrDigit``: categories
       Lu, Ll, Lt, Lm, Lo, Nd; a supplementary character is two surrogates, so two ``-``), ``-``
       or ``_`` becomes ``-``, except in a trailing ``.fifo``.
    """
    if is_null_or_whitespace(destination):
        raise QueueNameError("Value cannot be null. (Parameter 'destination')")
    prefix = queue_name_prefix or ""
    queue_name = destination if prefix and destination.startswith(prefix) else prefix + destination
    if utf16_length(queue_name) > MAXIMUM_QUEUE_NAME_LENGTH:
        raise QueueNameError(
            f"Address {destination} with configured prefix {prefix} is longer than 80 characters"
            " and therefore cannot be used to create an SQS queue. Use a shorter queue name."
        )
    return _sanitized(queue_name)


def _sanitized(queue_name: str) -> str:
    """``GetSanitizedQueueName``: one output code unit per input code unit."""
    units = list(utf16_units(queue_name))
    kept_tail = len(FIFO_SUFFIX) if queue_name.endswith(FIFO_SUFFIX) else 0
    processed = len(units) - kept_tail
    sanitized = [
        unit
        if index >= processed or is_letter_or_digit(unit) or unit in _KEPT_PUNCTUATION
        else ord(_REPLACEMENT)
        for index, unit in enumerate(units)
    ]
    return b"".join(unit.to_bytes(2, "little") for unit in sanitized).decode("utf-16-le")


def assert_queue_name_generator_idempotent(generator: QueueNameGenerator) -> None:
    """``AssertQueueNameGeneratorIdempotent``: the start-up probe with prefix ``Prefix``.

    It cannot catch a prefix that sanitizing alters, since it only ever probes with ``Prefix``.
    """
    destination, prefix = _IDEMPOTENCE_PROBE
    once = generator(destination, prefix)
    twice = generator(once, prefix)
    if once != twice:
        raise QueueNameError(
            "The queue name generator function needs to return the same result when it is"
            f" applied multiple times (idempotent). Result of applying once is {once} and"
            f" twice -- {twice}."
        )


def delay_queue_name(address: str) -> str:
    """The logical name of an address's delay queue, before the generator: the dispatcher and
    the delayed messages pump both append the suffix to the (physical) address."""
    return f"{address}{DELAYED_DELIVERY_QUEUE_SUFFIX}"
