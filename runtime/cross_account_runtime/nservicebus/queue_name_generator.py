"""NServiceBus's queue-name generator, exactly, and the check that keeps it idempotent.

A legacy transport address is a queue name to which the generator adds the configured prefix,
or not, if the name already carries it: addresses arrive both ways, so only a generator that
leaves its own output unchanged sends both to the same queue (:class:`QueueNaming`).
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.dotnet_text import (
    is_letter_or_digit,
    is_null_or_white_space,
    starts_with_ordinal,
    utf16_length,
)
from cross_account_runtime.nservicebus.locations import AddressError, ImmutableValue
from cross_account_runtime.nservicebus.queue_arn import (
    FIFO_SUFFIX,
    MAX_QUEUE_NAME_LENGTH,
    QUEUE_NAME_CHARACTERS,
    check_queue_name,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Final

    QueueNameGenerator = Callable[[str, str], str]
    """``(destination, prefix) -> queue name``, as NServiceBus's ``QueueNameGenerator``."""

_GENERATOR_PROBES: Final = ("MyEndpoint", "Sales.Orders", "error")
_PREFIX_EXAMPLE: Final = "Sales"
# The default generator's replacement for ASCII text: every character but letters, digits, '-'
# and '_' becomes '-'.
_ASCII_REPLACEMENTS: Final = {
    code: "-" for code in range(128) if chr(code) not in QUEUE_NAME_CHARACTERS
}


class NonIdempotentGeneratorError(AddressError):
    """A queue-name generator that changes a name it has already made.

    Legacy addresses on the wire may or may not carry the prefix already, so the generator is
    applied to both; only an idempotent one sends both to the same queue.
    """


def default_queue_name(destination: str, prefix: str) -> str:
    """``QueueCache.GetSqsQueueName``, NServiceBus's default queue-name generator, exactly.

    1. A destination that is empty or white space is refused (.NET's ``IsNullOrWhiteSpace``).
    2. The prefix is added unless the destination already starts with it (ordinal).
    3. More than 80 UTF-16 code units, counted before any replacement and including a
       ``.fifo`` suffix, is refused.
    4. Every UTF-16 code unit that is not a letter or digit (``char.IsLetterOrDigit``), ``-`` or
       ``_`` becomes ``-``, except a trailing ``.fifo``. So ``DEV.`` + ``Sales`` is
       ``DEV-Sales``, a character beyond U+FFFF becomes ``--``, and Unicode letters and digits
       (``café``) are kept.

    The result is the transport's name, not necessarily one SQS accepts:
    :func:`~cross_account_runtime.nservicebus.queue_arn.check_queue_name` says whether it does.
    Nor is the rule idempotent for every prefix: one the replacement rewrites (``DEV.``) does not
    recognise its own output, so ``DEV-Sales`` becomes ``DEV-DEV-Sales`` (see
    :func:`check_queue_name_prefix`).
    """
    if not isinstance(destination, str) or is_null_or_white_space(destination):
        raise AddressError(
            f"destination {destination!r} is empty or white space; give the queue's name"
        )
    if not isinstance(prefix, str):
        raise AddressError(f"queue name prefix must be text, got {type(prefix).__name__}")
    name = (
        destination if prefix and starts_with_ordinal(destination, prefix) else prefix + destination
    )
    length = utf16_length(name)
    if length > MAX_QUEUE_NAME_LENGTH:
        raise AddressError(
            f"address {destination!r} with prefix {prefix!r} has {length} characters (UTF-16 "
            f"code units, as NServiceBus counts them); queue names have at most "
            f"{MAX_QUEUE_NAME_LENGTH}: use a shorter name or prefix"
        )
    kept = len(name) - len(FIFO_SUFFIX) if name.endswith(FIFO_SUFFIX) else len(name)
    head = name[:kept]
    if head.isascii():
        return head.translate(_ASCII_REPLACEMENTS) + name[kept:]
    return "".join(_replaced(character) for character in head) + name[kept:]


def _replaced(character: str) -> str:
    """One character as the default generator writes it: kept, ``-``, or ``--`` for the two
    UTF-16 code units of a character beyond U+FFFF (surrogates are not letters)."""
    if character in QUEUE_NAME_CHARACTERS:
        return character
    if ord(character) > 0xFFFF:
        return "--"
    return character if is_letter_or_digit(character) else "-"


def check_queue_name_prefix(prefix: str) -> str:
    """Return ``prefix`` if NServiceBus's default generator is idempotent with it; raise
    otherwise.

    The generator adds the prefix only when a name does not already start with it, so a prefix
    the replacement rewrites (``DEV.`` becomes ``DEV-``) is added again to every name it made:
    the transport address ``DEV-Sales`` names the queue ``DEV-DEV-Sales``. The transport accepts
    such a prefix (its start-up check probes only the prefix ``Prefix``); here it is refused,
    because the queues, the addresses in headers and the relay's routes would disagree.
    """
    if not isinstance(prefix, str):
        raise AddressError(f"queue name prefix must be text, got {type(prefix).__name__}")
    for index, character in enumerate(prefix):
        if _replaced(character) != character:
            once = default_queue_name(_PREFIX_EXAMPLE, prefix)
            raise NonIdempotentGeneratorError(
                f"queue name prefix {prefix!r} has {character!r} at position {index}, which "
                "NServiceBus's default generator turns into '-', so it would no longer "
                f"recognise its own names: {_PREFIX_EXAMPLE!r} becomes {once!r}, and the "
                f"transport address {once!r} names the queue "
                f"{default_queue_name(once, prefix)!r}. Use letters, digits, '-' and '_' only"
            )
    return prefix


class QueueNaming(ImmutableValue):
    """A queue-name prefix and the generator that applies it, checked for idempotence.

    The check runs on a few probe names when the naming is built and again on every name it
    makes, so a generator that is not idempotent is refused before it misroutes a message. The
    probes are checked for idempotence only, as the transport's own start-up probe is
    (``AssertQueueNameGeneratorIdempotent``): a custom generator that keeps dots, say, is fine
    as long as the names of real queues are, and those are checked against SQS's rules when
    they are made.
    """

    __slots__ = ("generator", "prefix")
    generator: QueueNameGenerator
    prefix: str

    def __init__(
        self,
        prefix: str = "",
        generator: QueueNameGenerator = default_queue_name,
        probes: Iterable[str] = _GENERATOR_PROBES,
    ) -> None:
        if not isinstance(prefix, str):
            raise AddressError(f"queue name prefix must be text, got {type(prefix).__name__}")
        if not callable(generator):
            raise AddressError("queue name generator must be a function (destination, prefix)")
        if generator is default_queue_name:
            check_queue_name_prefix(prefix)
        self._set("prefix", prefix)
        self._set("generator", generator)
        for probe in probes:
            self._idempotent_name(probe)
            self._idempotent_name(prefix + probe)

    def queue_name(self, destination: str) -> str:
        """The queue name for ``destination``, checked against SQS's naming rules; refuses a
        generator that is not idempotent."""
        name = self._idempotent_name(destination)
        check_queue_name(name, f"queue name generated from {destination!r}")
        return name

    def _idempotent_name(self, destination: str) -> str:
        """What the generator makes of ``destination``, if it leaves that unchanged."""
        name = self.generator(destination, self.prefix)
        if not isinstance(name, str):
            raise AddressError(
                f"the queue name generator returned {type(name).__name__} for "
                f"{destination!r}; it must return the queue name as text"
            )
        again = self.generator(name, self.prefix)
        if again != name:
            raise NonIdempotentGeneratorError(
                f"the queue name generator is not idempotent: g({destination!r}, "
                f"{self.prefix!r}) = {name!r} but g({name!r}, {self.prefix!r}) = {again!r}. "
                "Addresses arrive with and without the prefix, so the generator must leave "
                "its own output unchanged (apply the prefix only when it is missing)"
            )
        return name
