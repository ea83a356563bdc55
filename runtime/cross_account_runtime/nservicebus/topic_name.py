"""SNS topic names as NServiceBus's SQS transport derives them from an event type.

A released endpoint publishes ``MyCompany.Messages.OrderBilled`` to the topic
``MyCompany-Messages-OrderBilled`` *in its own account*, found by name
(``TopicNameHelper.GetSnsTopicName``, ``TopicCache``); a topic with any other name receives
nothing, and the transport skips a missing topic without an error. So a topology that carries
events for such endpoints must name each topic exactly as the transport does, which this module
computes: the configured ``TopicNamePrefix`` and the type's .NET ``FullName``, at most 256
UTF-16 code units, then every code unit that is not a letter or digit (``char.IsLetterOrDigit``),
``-`` or ``_`` replaced with ``-`` (so ``+`` of a nested type and the backtick of a generic
become ``-``).

The transport keeps non-ASCII letters, which SNS refuses in a topic name;
:func:`check_sns_topic_name` tells the two apart.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.dotnet_text import is_letter_or_digit, utf16_length

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

MAX_TOPIC_NAME_LENGTH: Final = 256
_SNS_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)


class TopicNameError(ValueError):
    """An event type or prefix from which no usable topic name can be made."""


def sns_topic_name(event_type_full_name: str, topic_name_prefix: str = "") -> str:
    """``TopicNameHelper.GetSnsTopicName``: the topic a released endpoint publishes the event
    type to and subscribes its queue to.

    Raises :class:`TopicNameError` where the transport throws (more than 256 characters with
    the prefix, counted before replacement, in UTF-16 code units) and for an empty type name,
    which is no .NET type.
    """
    if not event_type_full_name or not isinstance(event_type_full_name, str):
        raise TopicNameError(
            f"event type {event_type_full_name!r} is empty; give the event's .NET full name, "
            "e.g. 'MyCompany.Messages.OrderBilled'"
        )
    name = topic_name_prefix + event_type_full_name
    if utf16_length(name) > MAX_TOPIC_NAME_LENGTH:
        raise TopicNameError(
            f"Address {event_type_full_name} with configured prefix {topic_name_prefix} is longer "
            f"than {MAX_TOPIC_NAME_LENGTH} characters and therefore cannot be used to create an "
            "SNS topic. Use a shorter topic name."
        )
    return "".join(_sanitized(character) for character in name)


def _sanitized(character: str) -> str:
    """One character as ``GetSanitizedTopicName`` writes it; a character beyond U+FFFF is two
    UTF-16 code units, neither a letter, so two ``-``."""
    if character in _SNS_CHARACTERS:
        return character
    if ord(character) > 0xFFFF:
        return "--"
    return character if is_letter_or_digit(character) else "-"


def check_sns_topic_name(name: str) -> str:
    """Return ``name`` if SNS accepts it as a standard topic's name; raise otherwise. The
    transport's sanitizer keeps letters such as ``é``, which SNS refuses."""
    refused = sorted({character for character in name if character not in _SNS_CHARACTERS})
    if not name or refused:
        raise TopicNameError(
            f"topic name {name!r} has characters SNS refuses ({''.join(refused)!r}): SNS topic "
            "names use only ASCII letters, digits, '-' and '_'; rename the event type or map "
            "it to a topic with an ASCII name"
        )
    return name
