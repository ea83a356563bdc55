"""A publisher's message-driven subscriptions, in memory: ``NonDurableSubscriptionStorage``.

Subscriptions are kept per message type, and a message type is its ``TypeName`` only — the
version is parsed (and must parse) but never compared. The type of a subscribe request is its
``SubscriptionMessageType`` up to the first comma (core's naive split: a generic type's name is
cut inside its argument list, so it never equals the ``FullName`` a publish looks up); a
publish looks up the ``FullName`` of each type of the event's hierarchy.

Within a type, subscribers are keyed by transport address ignoring case: subscribing again from
the same address replaces the entry (its endpoint name too), unsubscribing removes it whatever
the endpoint. Reading flattens the types asked for and keeps the first subscriber of each
(address, endpoint) pair, ordinal — so one queue stored under two spellings, or under its name
and its ARN, is two subscribers. Entries are kept in the order they were first stored.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Routing/MessageDrivenSubscriptions/
MessageType.cs``, ``Subscriber.cs``, ``ISubscriptionStorage.cs``; NServiceBus.Persistence.NonDurable
``src/NServiceBus.Persistence.NonDurable/SubscriptionStorage/NonDurableSubscriptionStorage.cs``
(vector ``NonDurableSubscriptionStorageTests.Should_ignore_message_version_on_subscriptions``);
.NET's ``Version.Parse``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from local_aws.released_transport.dotnet.text import is_null_or_whitespace, try_parse_integer

_VERSION_PREFIX: Final = "Version="
_MINIMUM_VERSION_PARTS: Final = 2
_MAXIMUM_VERSION_PARTS: Final = 4


class MessageTypeError(ValueError):
    """``MessageType`` refused its text (``ArgumentException`` or ``Version.Parse``'s
    ``FormatException`` / ``ArgumentException``)."""


def parse_version(text: str) -> tuple[int, ...]:
    """``Version.Parse``: two to four ``.``-separated non-negative ``int`` components (each read
    as ``int.TryParse`` does, white space and sign allowed)."""
    parts = text.split(".")
    if not _MINIMUM_VERSION_PARTS <= len(parts) <= _MAXIMUM_VERSION_PARTS:
        raise MessageTypeError(f"Version string portion was too short or too long. ({text})")
    components = [try_parse_integer(part) for part in parts]
    if any(component is None or component < 0 for component in components):
        raise MessageTypeError(f"Input string was not in a correct format. ({text})")
    return tuple(component or 0 for component in components)


@dataclass(frozen=True)
class MessageType:
    """``MessageType``: equal when the type names are (ordinal); the version is carried only."""

    type_name: str
    version: tuple[int, ...] = field(compare=False, default=())

    @classmethod
    def parse(cls, message_type: str) -> MessageType:
        """``new MessageType(string)``: the version from ``Version=`` (or the whole text), the
        name up to the first comma."""
        if is_null_or_whitespace(message_type):
            raise MessageTypeError(
                "The value cannot be an empty string or composed entirely of whitespace."
                " (Parameter 'messageTypeString')"
            )
        version_text = message_type
        if _VERSION_PREFIX in version_text:
            version_text = version_text[
                version_text.index(_VERSION_PREFIX) + len(_VERSION_PREFIX) :
            ]
            version_text = version_text.split(",", 1)[0]
        return cls(message_type.split(",", 1)[0], parse_version(version_text))


@dataclass(frozen=True)
class Subscriber:
    """``Subscriber``: a transport address and, from core 6 on, the endpoint's name."""

    transport_address: str
    endpoint: str | None


class NonDurableSubscriptionStorage:
    """The publisher's subscriptions for the life of the endpoint."""

    def __init__(self) -> None:
        self._subscribers: dict[MessageType, dict[str, Subscriber]] = {}

    def subscribe(self, subscriber: Subscriber, message_type: MessageType) -> None:
        """``Subscribe``: store, or replace the entry of the same address (any case)."""
        entries = self._subscribers.setdefault(message_type, {})
        entries[subscriber.transport_address.upper()] = subscriber

    def unsubscribe(self, subscriber: Subscriber, message_type: MessageType) -> None:
        """``Unsubscribe``: drop the entry of that address (any case), if any."""
        self._subscribers.get(message_type, {}).pop(subscriber.transport_address.upper(), None)

    def subscribers(self, message_types: Iterable[MessageType]) -> list[Subscriber]:
        """``GetSubscriberAddressesForMessage``: one per (address, endpoint)."""
        distinct: dict[tuple[str, str | None], Subscriber] = {}
        for message_type in message_types:
            for subscriber in self._subscribers.get(message_type, {}).values():
                distinct.setdefault((subscriber.transport_address, subscriber.endpoint), subscriber)
        return list(distinct.values())
