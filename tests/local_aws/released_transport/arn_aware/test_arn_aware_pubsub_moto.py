"""The seed's "Hybrid mode message-driven pub-sub" with the ARN-aware ("New") endpoint against the
local AWS (moto in server mode), in one account.

A New subscriber's subscribe request carries the ARN header for the headers holding its address
(``NServiceBus.ReplyToAddress`` and ``NServiceBus.SubscriberAddress``); an Old publisher ignores
it and stores the name, a New one stores the substituted queue ARN and sends its copies there.
The seed's remark: a subscription stored by name before the publisher was upgraded stays, so the
storage holds two entries for one queue; with one endpoint name they are one group and each
publish goes to one of them, round-robin. The model also shows where the remark does not hold:
without a queue name prefix the endpoint name is stamped and substituted too, so the entries are
two groups and the subscriber gets every event twice; and the released de-duplication never
matches an ARN destination, so a subscriber also subscribed natively gets the ARN rounds twice.
The subscribers' native subscriptions are removed where only the message-driven copies are
counted."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from local_aws.released_transport.arn_aware.endpoint import ArnAwareEndpoint
from local_aws.released_transport.core.outgoing import TransportOperation
from local_aws.released_transport.core.subscription_storage import MessageType, Subscriber
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import (
    EndpointSettings,
    MessageDrivenPubSubCompatibility,
)

pytestmark = pytest.mark.moto

EVENT = (
    "Sales.Events.OrderPlaced, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
)
ORDER_PLACED = MessageType("Sales.Events.OrderPlaced")
ARN_HEADER = "NServiceBus.Transport.Sqs.ARN"


def _settings(prefix: str | None) -> EndpointSettings:
    return EndpointSettings(
        queue_name_prefix=prefix,
        wait_time_seconds=0,
        max_concurrency=10,
        enable_installers=True,
        message_driven_pub_sub=MessageDrivenPubSubCompatibility(publishers={EVENT: "MyPublisher"}),
    )


EndpointType = TypeVar("EndpointType", bound=ReleasedEndpoint)


def _start(endpoint: EndpointType) -> EndpointType:
    endpoint.install()
    endpoint.start()
    return endpoint


def _without_native_subscriptions(sns: Any) -> None:
    for topic in sns.list_topics()["Topics"]:
        for subscription in sns.list_subscriptions_by_topic(TopicArn=topic["TopicArn"])[
            "Subscriptions"
        ]:
            sns.unsubscribe(SubscriptionArn=subscription["SubscriptionArn"])


def _received(endpoint: ReleasedEndpoint) -> list[str]:
    return [o.message.message_id for o in endpoint.process(lambda _context: None) if o.message]


def _publish_to(publisher: ReleasedEndpoint) -> tuple[str, list[str]]:
    """Publish once; the message id and the unicast destinations the router chose."""
    operations = publisher.publish_operations(EVENT, b"{}")
    publisher.dispatcher.dispatch(operations)
    destinations = [op.destination for op in operations if isinstance(op, TransportOperation)]
    return operations[0].message.message_id, destinations


def test_new_to_old_the_old_publisher_stores_the_name_and_ignores_the_arn_header(
    sqs: Any, sns: Any
) -> None:
    settings = _settings("DEV-")
    publisher = _start(ReleasedEndpoint("MyPublisher", sqs, settings, sns=sns))
    subscriber = _start(ArnAwareEndpoint("MySubscriber", sqs, settings, sns=sns))
    arn = subscriber.queue_arn

    (request,) = subscriber.subscribe(EVENT)
    (received,) = publisher.process(lambda _context: pytest.fail("no handler"))
    _without_native_subscriptions(sns)
    message_id, destinations = _publish_to(publisher)

    assert request.headers[ARN_HEADER] == (
        f"NServiceBus.ReplyToAddress={arn};NServiceBus.SubscriberAddress={arn}"
    )
    assert received.message is not None
    assert received.message.headers["NServiceBus.SubscriberAddress"] == "DEV-MySubscriber"
    assert publisher.subscription_storage is not None
    assert publisher.subscription_storage.subscribers([ORDER_PLACED]) == [
        Subscriber("DEV-MySubscriber", "MySubscriber")
    ]
    assert destinations == ["DEV-MySubscriber"]
    assert _received(subscriber) == [message_id]


def test_new_to_new_stores_the_arn_and_round_robins_with_an_earlier_entry_by_name(
    sqs: Any, sns: Any
) -> None:
    settings = _settings("DEV-")
    publisher = _start(ArnAwareEndpoint("MyPublisher", sqs, settings, sns=sns))
    subscriber = ArnAwareEndpoint("MySubscriber", sqs, settings, sns=sns)
    _start(subscriber)
    subscriber.use_account_for_endpoint("MyPublisher", publisher.queue_arn.split(":")[4])
    arn = subscriber.queue_arn
    assert publisher.subscription_storage is not None
    publisher.subscription_storage.subscribe(
        Subscriber("DEV-MySubscriber", "MySubscriber"), ORDER_PLACED
    )

    subscriber.subscribe(EVENT)
    (received,) = publisher.process(lambda _context: pytest.fail("no handler"))
    _without_native_subscriptions(sns)
    first_id, first = _publish_to(publisher)
    first_received = _received(subscriber)
    second_id, second = _publish_to(publisher)
    second_received = _received(subscriber)

    assert subscriber.publisher_address("MyPublisher") == publisher.queue_arn
    assert received.message is not None
    assert received.message.headers["NServiceBus.SubscriberAddress"] == arn
    assert publisher.subscription_storage.subscribers([ORDER_PLACED]) == [
        Subscriber("DEV-MySubscriber", "MySubscriber"),
        Subscriber(arn, "MySubscriber"),
    ]
    assert (first, second) == (["DEV-MySubscriber"], [arn])
    assert (first_received, second_received) == ([first_id], [second_id])


def test_without_a_prefix_the_endpoint_name_is_substituted_too_and_every_event_arrives_twice(
    sqs: Any, sns: Any
) -> None:
    settings = _settings(None)
    publisher = _start(ArnAwareEndpoint("MyPublisher", sqs, settings, sns=sns))
    subscriber = _start(ArnAwareEndpoint("MySubscriber", sqs, settings, sns=sns))
    arn = subscriber.queue_arn
    assert publisher.subscription_storage is not None
    publisher.subscription_storage.subscribe(
        Subscriber("MySubscriber", "MySubscriber"), ORDER_PLACED
    )

    (request,) = subscriber.subscribe(EVENT)
    publisher.process(lambda _context: pytest.fail("no handler"))
    _without_native_subscriptions(sns)
    message_id, destinations = _publish_to(publisher)

    assert request.headers[ARN_HEADER] == (
        f"NServiceBus.ReplyToAddress={arn};NServiceBus.SubscriberAddress={arn};"
        f"NServiceBus.SubscriberEndpoint={arn}"
    )
    assert publisher.subscription_storage.subscribers([ORDER_PLACED]) == [
        Subscriber("MySubscriber", "MySubscriber"),
        Subscriber(arn, arn),
    ]
    assert destinations == ["MySubscriber", arn]
    assert _received(subscriber) == [message_id, message_id]


def test_a_natively_subscribed_subscriber_stored_by_arn_gets_the_arn_rounds_twice(
    sqs: Any, sns: Any
) -> None:
    settings = _settings("DEV-")
    publisher = _start(ArnAwareEndpoint("MyPublisher", sqs, settings, sns=sns))
    subscriber = _start(ArnAwareEndpoint("MySubscriber", sqs, settings, sns=sns))
    assert publisher.subscription_storage is not None
    publisher.subscription_storage.subscribe(
        Subscriber("DEV-MySubscriber", "MySubscriber"), ORDER_PLACED
    )
    subscriber.subscribe(EVENT)
    publisher.process(lambda _context: pytest.fail("no handler"))

    first_id, _ = _publish_to(publisher)
    first_received = _received(subscriber)
    second_id, _ = _publish_to(publisher)
    second_received = sorted(_received(subscriber) + _received(subscriber))

    assert first_received == [first_id]
    assert second_received == [second_id, second_id]


def test_old_to_new_the_new_publisher_stores_the_name_and_sends_by_name(sqs: Any, sns: Any) -> None:
    settings = _settings("DEV-")
    publisher = _start(ArnAwareEndpoint("MyPublisher", sqs, settings, sns=sns))
    subscriber = _start(ReleasedEndpoint("MySubscriber", sqs, settings, sns=sns))

    (request,) = subscriber.subscribe(EVENT)
    publisher.process(lambda _context: pytest.fail("no handler"))
    _without_native_subscriptions(sns)
    message_id, destinations = _publish_to(publisher)

    assert ARN_HEADER not in request.headers
    assert publisher.subscription_storage is not None
    assert publisher.subscription_storage.subscribers([ORDER_PLACED]) == [
        Subscriber("DEV-MySubscriber", "MySubscriber")
    ]
    assert destinations == ["DEV-MySubscriber"]
    assert _received(subscriber) == [message_id]
