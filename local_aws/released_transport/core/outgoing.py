"""What NServiceBus core hands the transport to send, and what it passes along from a receive.

These mirror the transport seam of NServiceBus 10 (``src/NServiceBus.Core/Transports/``):
``OutgoingMessage`` (an id, a *mutable* header dictionary the transport may add to — the wrapped
form adds a ``NServiceBus.MessageId`` header to the caller's dictionary — and the body),
``DispatchProperties`` (delay and time to be received), a unicast ``TransportOperation`` (to a
queue) or a ``MulticastTransportOperation`` (to the event type's topic) with its
``DispatchConsistency``, and the ``TransportTransaction`` through which the SQS input pump lets
the dispatcher see the message being processed (``src/NServiceBus.Transport.SQS/Receiving/
InputQueuePump.cs``, ``InnerProcessMessage``). A publish in the message-driven compatibility
mode is one multicast operation and a unicast one per subscriber, all sharing one
``OutgoingMessage`` (``src/NServiceBus.Core/Routing/SubscriptionMigrationMode/
MigrationModePublishConnector.cs``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from local_aws.released_transport.dotnet.time_formats import TimeSpan
from local_aws.released_transport.headers import HeaderDict


@dataclass
class OutgoingMessage:
    """``OutgoingMessage``: ``message_id`` becomes the ``NServiceBus.MessageId`` attribute;
    the header dictionary is shared with whoever built it, as in .NET."""

    message_id: str
    headers: HeaderDict
    body: bytes


@dataclass(frozen=True)
class DispatchProperties:
    """``DispatchProperties``: at most one of the two delays is honoured, ``delay_deliver_with``
    first (``MessageDispatcher.CalculateDelayedDeliverySeconds``)."""

    delay_deliver_with: timedelta | None = None
    do_not_deliver_before: datetime | None = None
    discard_if_not_received_before: TimeSpan | None = None


class DispatchConsistency(enum.Enum):
    """``DispatchConsistency``: ``DEFAULT`` operations are batched (``SendMessageBatch``),
    ``ISOLATED`` ones are sent one by one (``SendMessage``)."""

    DEFAULT = "Default"
    ISOLATED = "Isolated"


@dataclass(frozen=True)
class TransportOperation:
    """A unicast ``TransportOperation``: ``destination`` is a transport address (a queue name,
    which the dispatcher passes through the generator again)."""

    message: OutgoingMessage
    destination: str
    properties: DispatchProperties = field(default_factory=DispatchProperties)
    consistency: DispatchConsistency = DispatchConsistency.DEFAULT


@dataclass(frozen=True)
class MulticastTransportOperation:
    """A multicast ``TransportOperation`` (``MulticastAddressTag``): ``message_type`` is the event
    type's ``FullName``, which names its topic."""

    message: OutgoingMessage
    message_type: str
    properties: DispatchProperties = field(default_factory=DispatchProperties)
    consistency: DispatchConsistency = DispatchConsistency.DEFAULT


@dataclass(frozen=True)
class TransportTransaction:
    """What the input pump puts in the ``TransportTransaction``: the received native message
    and ``IncomingMessageId`` (the ``NServiceBus.MessageId`` header it extracted). Core carries
    the native message without reading it (upstream the transaction is a bag of the transport's
    values), so it is typed here as the mapping boto3 hands over, not as the transport's shape."""

    native_message: Mapping[str, Any]
    incoming_message_id: str | None
