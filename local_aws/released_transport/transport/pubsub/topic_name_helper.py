"""SNS topic names as the released transport derives them: ``TopicNameHelper.GetSnsTopicName``.

An event type's topic is the configured ``TopicNamePrefix`` followed by the type's .NET
``FullName`` (namespace, ``.``, type name; a nested type joined to its parent with ``+``), with
every UTF-16 code unit that is not a letter or digit (``char.IsLetterOrDigit``), ``-`` or ``_``
replaced by ``-``. Unlike queue names there is no "already prefixed" rule and no ``.fifo``
exception: topic names are derived from types, never passed through the generator twice. More
than 256 code units (prefix included, counted before sanitizing) is refused. A null prefix (the
default, ``TopicNamePrefix`` unset) reads as empty. The command-line tool sanitizes the same
way (``TopicSanitization.GetSanitizedTopicName``).

The model names an event type by its assembly-qualified name, as core writes it in
``NServiceBus.EnclosedMessageTypes`` and ``SubscriptionMessageType``; :func:`full_name` takes the
``FullName`` out of it.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/TopicNameHelper.cs``,
``Configure/SqsTransport.cs`` (``TopicNamePrefix``, ``TopicNameGenerator``),
``src/CommandLine/TopicSanitization.cs``; vectors in ``src/NServiceBus.Transport.SQS.Tests/
Sending/MessageDispatcherTests.cs``, ``Receiving/SubscriptionManagerTests.cs``,
``TopicCacheTests.cs`` and ``src/CommandLineTests/CommandLineTests.cs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from local_aws.released_transport.dotnet.text import is_letter_or_digit, utf16_length, utf16_units

TopicNameGenerator = Callable[[str, str | None], str]
"""``Func<Type, string, string>``: (event type ``FullName``, prefix) to topic name."""

MAXIMUM_TOPIC_NAME_LENGTH: Final = 256
_KEPT_PUNCTUATION: Final = frozenset(map(ord, "-_"))
_REPLACEMENT: Final = ord("-")
_ASSEMBLY_SEPARATOR: Final = ","
_GENERIC_OPEN: Final = "["
_GENERIC_CLOSE: Final = "]"


class TopicNameError(Exception):
    """The generator refused a name (.NET ``Exception``); the message is the transport's."""


def full_name(event_type: str) -> str:
    """A type's ``FullName`` from its assembly-qualified name: the text before the first comma
    outside the brackets of generic arguments (``Ns.Wrapper`1[[Ns.Inner, Asm]], Asm`` keeps its
    argument list)."""
    depth = 0
    for index, character in enumerate(event_type):
        if character == _GENERIC_OPEN:
            depth += 1
        elif character == _GENERIC_CLOSE:
            depth -= 1
        elif character == _ASSEMBLY_SEPARATOR and depth == 0:
            return event_type[:index].strip()
    return event_type.strip()


def get_sanitized_topic_name(topic_name: str) -> str:
    """``GetSanitizedTopicName``: one output code unit per input code unit."""
    sanitized = [
        unit if is_letter_or_digit(unit) or unit in _KEPT_PUNCTUATION else _REPLACEMENT
        for unit in utf16_units(topic_name)
    ]
    return b"".join(unit.to_bytes(2, "little") for unit in sanitized).decode("utf-16-le")


def get_sns_topic_name(event_type_full_name: str, topic_name_prefix: str | None) -> str:
    """The default topic name generator (``TopicNameHelper.GetSnsTopicName``)."""
    prefix = topic_name_prefix or ""
    topic_name = prefix + event_type_full_name
    if utf16_length(topic_name) > MAXIMUM_TOPIC_NAME_LENGTH:
        raise TopicNameError(
            f"Address {event_type_full_name} with configured prefix {prefix} is longer than 256"
            " characters and therefore cannot be used to create an SNS topic. Use a shorter"
            " topic name."
        )
    return get_sanitized_topic_name(topic_name)
