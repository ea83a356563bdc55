"""Core's message-driven publish/subscribe in the compatibility ("hybrid") mode: what a publisher
does with a subscribe request, and where a publish's unicast copies go.

Receiving (``SubscriptionReceiverBehavior``, before the handlers): a message with a
``SubscriptionMessageType`` or a ``Subscribe`` / ``Unsubscribe`` intent never reaches a handler.
Without a type it fails (``Message intent is Subscribe, but the subscription message type header
is missing.``), so does a type with another intent; the subscriber is the
``NServiceBus.SubscriberAddress`` header — then ``NServiceBus.SubscriberEndpoint`` must be there
too — else the reply-to address; none fails (``Subscription message arrived without a valid
ReplyToAddress.``). Failures go to recoverability like any handler's. The subscriber is stored
or removed for the type (:mod:`~local_aws.released_transport.core.subscription_storage`). Every
subscribe is authorized (core's default).

Publishing (``UnicastPublishRouter``): the subscribers of every type of the event's hierarchy;
those without an endpoint name are sent to as they are, those with one are grouped by name and
one address per endpoint is chosen round-robin across publishes
(``SingleInstanceRoundRobinDistributionStrategy``, per endpoint name, first choice the first
entry) — so a subscriber stored twice, by queue name and by queue ARN, gets one copy per publish,
alternately at each address; each address once.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Routing/MessageDrivenSubscriptions/
SubscriptionReceiverBehavior.cs``, ``Routing/UnicastPublishRouter.cs``,
``Routing/DistributionPolicy.cs``, ``Routing/SingleInstanceRoundRobinDistributionStrategy.cs``,
``Transports/IncomingMessageExtensions.cs``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from local_aws.released_transport.core.pipeline_headers import MessageIntent, parse_message_intent
from local_aws.released_transport.core.subscription_storage import (
    MessageType,
    NonDurableSubscriptionStorage,
    Subscriber,
)
from local_aws.released_transport.headers import (
    MESSAGE_INTENT,
    REPLY_TO_ADDRESS,
    SUBSCRIBER_ADDRESS,
    SUBSCRIBER_ENDPOINT,
    SUBSCRIPTION_MESSAGE_TYPE,
)

_SUBSCRIPTION_INTENTS = (MessageIntent.SUBSCRIBE, MessageIntent.UNSUBSCRIBE)


class SubscriptionMessageError(Exception):
    """``InvalidOperationException`` (or ``KeyNotFoundException``) of the receiver behavior."""


def is_subscription_message(headers: Mapping[str, str | None]) -> bool:
    """Whether the receiver behavior takes the message instead of the handlers."""
    return bool(headers.get(SUBSCRIPTION_MESSAGE_TYPE)) or (
        parse_message_intent(headers.get(MESSAGE_INTENT)) in _SUBSCRIPTION_INTENTS
    )


def receive_subscription_message(
    headers: Mapping[str, str | None], storage: NonDurableSubscriptionStorage
) -> None:
    """``SubscriptionReceiverBehavior.Invoke`` for a subscription message."""
    message_type = headers.get(SUBSCRIPTION_MESSAGE_TYPE)
    intent = parse_message_intent(headers.get(MESSAGE_INTENT))
    if not message_type:
        raise SubscriptionMessageError(
            "Message intent is Subscribe, but the subscription message type header is missing."
        )
    if intent not in _SUBSCRIPTION_INTENTS:
        raise SubscriptionMessageError(
            "Subscription messages need to have intent set to Subscribe/Unsubscribe."
        )
    endpoint = None
    if SUBSCRIBER_ADDRESS in headers:
        address = headers[SUBSCRIBER_ADDRESS]
        if SUBSCRIBER_ENDPOINT not in headers:
            raise SubscriptionMessageError(
                f"The given key '{SUBSCRIBER_ENDPOINT}' was not present in the dictionary."
            )
        endpoint = headers[SUBSCRIBER_ENDPOINT]
    else:
        address = headers.get(REPLY_TO_ADDRESS)
    if address is None:
        raise SubscriptionMessageError(
            "Subscription message arrived without a valid ReplyToAddress."
        )
    subscriber = Subscriber(address, endpoint)
    if intent is MessageIntent.SUBSCRIBE:
        storage.subscribe(subscriber, MessageType.parse(message_type))
    else:
        storage.unsubscribe(subscriber, MessageType.parse(message_type))


class PublishRouter:
    """``UnicastPublishRouter`` with the default distribution policy of one endpoint."""

    def __init__(self, storage: NonDurableSubscriptionStorage) -> None:
        self._storage = storage
        self._next_index: dict[str, int] = {}

    def destinations(self, hierarchy: Sequence[str]) -> list[str]:
        """The transport addresses a publish of an event whose type hierarchy (``FullName``s,
        the event's own first) is ``hierarchy`` is sent to, each once."""
        subscribers = self._storage.subscribers(MessageType(name) for name in hierarchy)
        addresses: dict[str, None] = {}
        groups: dict[str, list[str]] = {}
        for subscriber in subscribers:
            if subscriber.endpoint is None:
                addresses.setdefault(subscriber.transport_address)
            else:
                groups.setdefault(subscriber.endpoint, []).append(subscriber.transport_address)
        for endpoint, instances in groups.items():
            index = self._next_index.get(endpoint, 0)
            self._next_index[endpoint] = index + 1
            addresses.setdefault(instances[index % len(instances)])
        return list(addresses)
