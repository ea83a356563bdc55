"""Publish/subscribe between released endpoints against the local AWS (moto in server mode), in
one account: native publish to a subscribed queue (raw delivery), a type without a topic, a
subscribe without installers, and the message-driven compatibility mode — subscribe requests
taken by the publisher's storage, a copy per subscriber and the hybrid de-duplication, so every
subscriber gets an event once. Receives use ``WaitTimeSeconds`` 0."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local_aws.released_transport.core.subscription_storage import MessageType, Subscriber
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import (
    EndpointSettings,
    MessageDrivenPubSubCompatibility,
)
from local_aws.released_transport.transport.pubsub.queue_policy import PolicySettings
from local_aws.released_transport.transport.pubsub.subscription_manager import TopicNotFoundError
from local_aws.released_transport.transport.receiving.extraction import WireForm
from local_aws.released_transport.transport.receiving.input_pump import MessageFate

pytestmark = pytest.mark.moto

EVENT = (
    "Sales.Events.OrderPlaced, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
)
OTHER = "Sales.Events.OrderCancelled, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
TOPIC = "Sales-Events-OrderPlaced"
INSTALLERS = EndpointSettings(wait_time_seconds=0, max_concurrency=10, enable_installers=True)
HYBRID = EndpointSettings(
    wait_time_seconds=0,
    max_concurrency=10,
    enable_installers=True,
    message_driven_pub_sub=MessageDrivenPubSubCompatibility(publishers={EVENT: "Sales"}),
)


def _started(
    name: str, sqs: Any, sns: Any, settings: EndpointSettings = INSTALLERS
) -> ReleasedEndpoint:
    endpoint = ReleasedEndpoint(name, sqs, settings, sns=sns)
    endpoint.install()
    endpoint.start()
    return endpoint


class _Handled:
    """A handler that remembers the bodies it saw."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def __call__(self, context: MessageHandlerContext) -> None:
        self.bodies.append(context.message.body)


def _topic_arn(sns: Any, name: str = TOPIC) -> str:
    (arn,) = [
        t["TopicArn"] for t in sns.list_topics()["Topics"] if t["TopicArn"].endswith(f":{name}")
    ]
    return str(arn)


def test_a_published_event_reaches_the_subscribed_queue_raw(sqs: Any, sns: Any) -> None:
    sales, billing = _started("Sales", sqs, sns), _started("Billing", sqs, sns)
    billing.subscribe(EVENT)

    published = sales.publish(EVENT, b'{"OrderId":1}')
    (outcome,) = billing.process(lambda _context: None)

    assert outcome.pump.fate is MessageFate.PROCESSED
    assert outcome.pump.form is WireForm.WRAPPED
    assert outcome.message is not None
    assert outcome.message.message_id == published.message_id
    assert outcome.message.body == b'{"OrderId":1}'
    headers = outcome.message.headers
    assert headers["NServiceBus.MessageIntent"] == "Publish"
    assert headers["NServiceBus.EnclosedMessageTypes"] == EVENT
    assert headers["NServiceBus.ReplyToAddress"] == "Sales"
    assert headers["NServiceBus.OpenTelemetry.StartNewTrace"] == "True"
    (subscription,) = sns.list_subscriptions_by_topic(TopicArn=_topic_arn(sns))["Subscriptions"]
    attributes = sns.get_subscription_attributes(SubscriptionArn=subscription["SubscriptionArn"])
    assert attributes["Attributes"]["RawMessageDelivery"] == "true"
    url = sqs.get_queue_url(QueueName="Billing")["QueueUrl"]
    policy = json.loads(
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"]
    )
    (statement,) = policy["Statement"]
    assert statement["Condition"] == {"ArnLike": {"aws:SourceArn": _topic_arn(sns)}}


def test_events_published_from_a_handler_are_dispatched_after_it(sqs: Any, sns: Any) -> None:
    sales, billing = _started("Sales", sqs, sns), _started("Billing", sqs, sns)
    billing.subscribe(EVENT, OTHER)
    command = sales.send("Sales", "Sales.Commands.PlaceOrder, Sales", b"{}")
    handled = _Handled()

    def publish_two(context: MessageHandlerContext) -> None:
        context.publish(EVENT, b'{"n":1}')
        context.publish(OTHER, b'{"n":2}')

    sales.process(publish_two)
    outcomes = billing.process(handled)

    assert sorted(handled.bodies) == [b'{"n":1}', b'{"n":2}']
    assert {o.message.headers["NServiceBus.RelatedTo"] for o in outcomes if o.message} == {
        command.message_id
    }


def test_an_event_type_without_a_topic_is_not_published_and_no_error_is_raised(
    sqs: Any, sns: Any
) -> None:
    sales, billing = _started("Sales", sqs, sns), _started("Billing", sqs, sns)

    sales.publish(EVENT, b"{}")

    assert sns.list_topics()["Topics"] == []
    assert billing.process(lambda _context: None) == []


def test_without_installers_subscribing_to_a_missing_topic_fails_and_an_existing_one_works(
    sqs: Any, sns: Any
) -> None:
    no_installers = EndpointSettings(wait_time_seconds=0)
    billing = ReleasedEndpoint("Billing", sqs, no_installers, sns=sns)
    billing.install()
    billing.start()

    with pytest.raises(TopicNotFoundError) as refused:
        billing.subscribe(EVENT)
    assert str(refused.value) == (
        f"Topic {TOPIC} not found. Call endpointConfiguration.EnableInstallers() to create the"
        " topic at startup, or create them manually."
    )

    sns.create_topic(Name=TOPIC)
    billing.subscribe(EVENT)
    assert len(sns.list_subscriptions_by_topic(TopicArn=_topic_arn(sns))["Subscriptions"]) == 1


def test_without_policy_setup_the_queue_policy_is_left_alone(sqs: Any, sns: Any) -> None:
    policies = PolicySettings()
    policies.setup_topic_policies_when_subscribing = False
    settings = EndpointSettings(wait_time_seconds=0, enable_installers=True, policies=policies)
    sales, billing = _started("Sales", sqs, sns), _started("Billing", sqs, sns, settings)

    billing.subscribe(EVENT)
    sales.publish(EVENT, b"{}")

    url = sqs.get_queue_url(QueueName="Billing")["QueueUrl"]
    assert (
        "Policy" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    )
    # moto delivers without checking the policy; AWS would refuse the topic.
    assert len(billing.process(lambda _context: None)) == 1


def test_an_unsubscribed_queue_gets_no_more_events(sqs: Any, sns: Any) -> None:
    sales, billing = _started("Sales", sqs, sns), _started("Billing", sqs, sns)
    billing.subscribe(EVENT)
    billing.unsubscribe(EVENT)

    sales.publish(EVENT, b"{}")

    assert billing.process(lambda _context: None) == []
    assert sns.list_subscriptions_by_topic(TopicArn=_topic_arn(sns))["Subscriptions"] == []


def test_subscribe_requests_are_stored_by_the_publisher_and_reach_no_handler(
    sqs: Any, sns: Any
) -> None:
    sales, billing = _started("Sales", sqs, sns, HYBRID), _started("Billing", sqs, sns, HYBRID)
    handled = _Handled()

    (request,) = billing.subscribe(EVENT)
    (outcome,) = sales.process(handled)

    assert handled.bodies == []
    assert outcome.pump.fate is MessageFate.PROCESSED
    assert outcome.message is not None
    assert outcome.message.headers["SubscriptionMessageType"] == EVENT
    assert outcome.message.headers["NServiceBus.SubscriberAddress"] == "Billing"
    assert outcome.message.headers["NServiceBus.ControlMessage"] == "True"
    assert request.headers["NServiceBus.MessageIntent"] == "Subscribe"
    assert sales.subscription_storage is not None
    assert sales.subscription_storage.subscribers([MessageType("Sales.Events.OrderPlaced")]) == [
        Subscriber("Billing", "Billing")
    ]


def test_in_the_compatibility_mode_every_subscriber_gets_an_event_once(sqs: Any, sns: Any) -> None:
    """Billing is subscribed both ways: the unicast copy is dropped. Shipping's native
    subscription is gone: it gets the copy."""
    sales = _started("Sales", sqs, sns, HYBRID)
    billing, shipping = (
        _started("Billing", sqs, sns, HYBRID),
        _started("Shipping", sqs, sns, HYBRID),
    )
    billing.subscribe(EVENT)
    shipping.subscribe(EVENT)
    sales.process(lambda _context: None)
    for subscription in sns.list_subscriptions_by_topic(TopicArn=_topic_arn(sns))["Subscriptions"]:
        if subscription["Endpoint"].endswith(":Shipping"):
            sns.unsubscribe(SubscriptionArn=subscription["SubscriptionArn"])

    published = sales.publish(EVENT, b'{"OrderId":7}')
    billing_outcomes = billing.process(lambda _context: None)
    shipping_outcomes = shipping.process(lambda _context: None)

    assert [o.message.message_id for o in billing_outcomes if o.message] == [published.message_id]
    assert [o.message.message_id for o in shipping_outcomes if o.message] == [published.message_id]
    assert billing.process(lambda _context: None) == shipping.process(lambda _context: None) == []


def test_a_message_driven_unsubscribe_removes_the_subscriber(sqs: Any, sns: Any) -> None:
    sales, billing = _started("Sales", sqs, sns, HYBRID), _started("Billing", sqs, sns, HYBRID)
    billing.subscribe(EVENT)
    sales.process(lambda _context: None)

    (request,) = billing.unsubscribe(EVENT)
    sales.process(lambda _context: None)
    sales.publish(EVENT, b"{}")

    assert request.headers["NServiceBus.MessageIntent"] == "Unsubscribe"
    assert sales.subscription_storage is not None
    assert sales.subscription_storage.subscribers([MessageType("Sales.Events.OrderPlaced")]) == []
    assert billing.process(lambda _context: None) == []


def test_a_subscribe_request_to_a_missing_publisher_queue_fails_the_subscribe(
    sqs: Any, sns: Any
) -> None:
    billing = _started("Billing", sqs, sns, HYBRID)

    with pytest.raises(Exception, match="Queue `Sales` doesn't exist"):
        billing.subscribe(EVENT)
