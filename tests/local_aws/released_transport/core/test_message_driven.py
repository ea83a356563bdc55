"""Core's message-driven pieces of the compatibility mode (NServiceBus 10.2.5
``SubscriptionReceiverBehavior.cs``, ``UnicastPublishRouter.cs``,
``SingleInstanceRoundRobinDistributionStrategy.cs``, ``MessageType.cs``) and the in-memory
storage (NServiceBus.Persistence.NonDurable ``NonDurableSubscriptionStorage.cs`` and its one
test vector), plus the subscribe request's headers (``MigrationSubscribeTerminator.cs``,
``ControlMessageFactory.cs``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from local_aws.released_transport.core.message_driven import (
    PublishRouter,
    SubscriptionMessageError,
    is_subscription_message,
    receive_subscription_message,
)
from local_aws.released_transport.core.pipeline_headers import (
    MessageIntent,
    subscription_control_headers,
)
from local_aws.released_transport.core.subscription_storage import (
    MessageType,
    MessageTypeError,
    NonDurableSubscriptionStorage,
    Subscriber,
)

EVENT = (
    "Sales.Events.OrderPlaced, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
)
EVENT_NAME = "Sales.Events.OrderPlaced"


def test_the_storage_ignores_the_message_version() -> None:
    """``NonDurableSubscriptionStorageTests.Should_ignore_message_version_on_subscriptions``."""
    storage = NonDurableSubscriptionStorage()
    storage.subscribe(
        Subscriber("subscriberA@server1", "subscriberA"), MessageType("SomeMessage", (1, 0, 0))
    )

    (subscriber,) = storage.subscribers([MessageType("SomeMessage", (2, 0, 0))])

    assert subscriber.endpoint == "subscriberA"


def test_the_subscribe_request_carries_cores_headers_in_cores_order() -> None:
    now = datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)

    headers = subscription_control_headers(
        MessageIntent.SUBSCRIBE, EVENT, "DEV-Billing", "Billing", now
    )

    assert headers == {
        "NServiceBus.ControlMessage": "True",
        "NServiceBus.MessageIntent": "Subscribe",
        "SubscriptionMessageType": EVENT,
        "NServiceBus.ReplyToAddress": "DEV-Billing",
        "NServiceBus.SubscriberAddress": "DEV-Billing",
        "NServiceBus.SubscriberEndpoint": "Billing",
        "NServiceBus.TimeSent": "2024-01-02 03:04:05:123456 Z",
        "NServiceBus.Version": "10.2.5",
    }
    assert list(headers) == list(dict.fromkeys(headers))


@pytest.mark.parametrize(
    ("text", "name", "version"),
    [
        (EVENT, EVENT_NAME, (1, 0, 0, 0)),
        ("Ns.E, Asm, Version=2.1, Culture=neutral", "Ns.E", (2, 1)),
        ("Ns.E, Asm, Version= 3 . 4 ", "Ns.E", (3, 4)),
        ("1.2.3", "1.2.3", (1, 2, 3)),
        (
            "Ns.W`1[[Ns.I, A, Version=1.0.0.0, Culture=neutral]], A, Version=5.0.0.0",
            "Ns.W`1[[Ns.I",
            (1, 0, 0, 0),
        ),
    ],
)
def test_a_message_type_is_its_text_up_to_the_first_comma(
    text: str, name: str, version: tuple[int, ...]
) -> None:
    message_type = MessageType.parse(text)

    assert (message_type.type_name, message_type.version) == (name, version)


@pytest.mark.parametrize(
    "text", ["Ns.E, Asm", "Ns.E, Asm, Version=1", "Ns.E, Asm, Version=1.-1", " "]
)
def test_a_message_type_without_a_parsable_version_is_refused(text: str) -> None:
    with pytest.raises(MessageTypeError):
        MessageType.parse(text)


def _request(intent: str = "Subscribe", **extra: str | None) -> dict[str, str | None]:
    headers: dict[str, str | None] = {
        "NServiceBus.ControlMessage": "True",
        "NServiceBus.MessageIntent": intent,
        "SubscriptionMessageType": EVENT,
        "NServiceBus.ReplyToAddress": "Billing",
        "NServiceBus.SubscriberAddress": "Billing",
        "NServiceBus.SubscriberEndpoint": "Billing",
    }
    headers.update(extra)
    return {name: value for name, value in headers.items() if value != "<absent>"}


def test_a_subscribe_is_stored_and_an_unsubscribe_removes_it_whatever_the_case() -> None:
    storage = NonDurableSubscriptionStorage()

    receive_subscription_message(_request(), storage)
    receive_subscription_message(_request(**{"NServiceBus.SubscriberEndpoint": "Renamed"}), storage)
    assert storage.subscribers([MessageType(EVENT_NAME)]) == [Subscriber("Billing", "Renamed")]

    receive_subscription_message(
        _request("unsubscribe", **{"NServiceBus.SubscriberAddress": "BILLING"}), storage
    )
    assert storage.subscribers([MessageType(EVENT_NAME)]) == []


def test_without_a_subscriber_address_the_reply_to_address_is_stored_without_endpoint() -> None:
    storage = NonDurableSubscriptionStorage()

    receive_subscription_message(
        _request(
            **{
                "NServiceBus.SubscriberAddress": "<absent>",
                "NServiceBus.SubscriberEndpoint": "<absent>",
            }
        ),
        storage,
    )

    assert storage.subscribers([MessageType(EVENT_NAME)]) == [Subscriber("Billing", None)]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        (
            _request(SubscriptionMessageType="<absent>"),
            "Message intent is Subscribe, but the subscription message type header is missing.",
        ),
        (
            _request("Send"),
            "Subscription messages need to have intent set to Subscribe/Unsubscribe.",
        ),
        (
            _request(**{"NServiceBus.SubscriberEndpoint": "<absent>"}),
            "The given key 'NServiceBus.SubscriberEndpoint' was not present in the dictionary.",
        ),
        (
            _request(
                **{
                    "NServiceBus.SubscriberAddress": "<absent>",
                    "NServiceBus.ReplyToAddress": "<absent>",
                }
            ),
            "Subscription message arrived without a valid ReplyToAddress.",
        ),
    ],
)
def test_a_malformed_request_fails_with_cores_message(
    headers: dict[str, str | None], message: str
) -> None:
    with pytest.raises(SubscriptionMessageError) as refused:
        receive_subscription_message(headers, NonDurableSubscriptionStorage())

    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("headers", "taken"),
    [
        ({"SubscriptionMessageType": EVENT}, True),
        ({"NServiceBus.MessageIntent": "unsubscribe"}, True),
        ({"NServiceBus.MessageIntent": "3"}, True),
        ({"NServiceBus.MessageIntent": "Publish"}, False),
        ({"SubscriptionMessageType": ""}, False),
        ({}, False),
    ],
)
def test_which_messages_the_receiver_behavior_takes(
    headers: dict[str, str | None], taken: bool
) -> None:
    assert is_subscription_message(headers) is taken


def test_the_router_sends_once_per_address_and_round_robins_within_an_endpoint() -> None:
    storage = NonDurableSubscriptionStorage()
    interface = MessageType("Sales.Events.IOrderEvent")
    storage.subscribe(Subscriber("Billing", "Billing"), MessageType(EVENT_NAME))
    storage.subscribe(
        Subscriber("arn:aws:sqs:us-east-1:111111111111:Billing", "Billing"), MessageType(EVENT_NAME)
    )
    storage.subscribe(Subscriber("Legacy", None), MessageType(EVENT_NAME))
    storage.subscribe(Subscriber("Legacy", None), interface)
    storage.subscribe(Subscriber("Shipping", "Shipping"), interface)
    router = PublishRouter(storage)
    hierarchy = [EVENT_NAME, "Sales.Events.IOrderEvent"]

    first, second, third = (router.destinations(hierarchy) for _ in range(3))

    assert first == ["Legacy", "Billing", "Shipping"]
    assert second == ["Legacy", "arn:aws:sqs:us-east-1:111111111111:Billing", "Shipping"]
    assert third == first
    assert router.destinations(["Other.Event"]) == []
