"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/HybridPubSubChecker.cs``
beyond the two upstream dispatcher vectors: which intents count as a publish, the topic lookup,
the ordinal suffix match, and the subscriptions cache TTL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from local_aws.released_transport.core.outgoing import OutgoingMessage, TransportOperation
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.pubsub.topic_name_helper import get_sns_topic_name
from local_aws.released_transport.transport.queues.naming import QueueNameError, get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.sending.hybrid_pubsub import HybridPubSubChecker
from tests.local_aws.released_transport.fake_sns import FakeSns, topic_arn
from tests.local_aws.released_transport.fake_sqs import FakeSqs

EVENT = "Sales.Events.OrderPlaced"
TOPIC = "Sales-Events-OrderPlaced"


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2024, 1, 2, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _checker(sns: FakeSns, clock: _Clock, prefix: str = "") -> HybridPubSubChecker:
    sqs = FakeSqs()
    return HybridPubSubChecker(
        TopicCache(sns, get_sns_topic_name, None, clock=clock),
        QueueCache(sqs, get_sqs_queue_name, prefix),
        clock=clock,
    )


def _copy(destination: str, intent: str | None = "Publish") -> TransportOperation:
    headers: dict[str, str | None] = {} if intent is None else {"NServiceBus.MessageIntent": intent}
    return TransportOperation(OutgoingMessage("id", headers, b"{}"), destination)


def _subscribed(sns: FakeSns, *endpoints: str) -> None:
    sns.subscriptions[topic_arn(TOPIC)] = [
        {"Endpoint": endpoint, "SubscriptionArn": f"arn:sub:{n}"}
        for n, endpoint in enumerate(endpoints)
    ]


@pytest.mark.parametrize(
    ("intent", "dropped"),
    [
        ("Publish", True),
        ("publish", True),
        (" PUBLISH ", True),
        ("2", True),
        ("Send", False),
        ("Send, Publish", False),
        ("Reply", False),
        (None, False),
        ("", False),
    ],
)
def test_only_a_publish_intent_is_de_duplicated(intent: str | None, dropped: bool) -> None:
    sns = FakeSns(TOPIC)
    _subscribed(sns, "arn:aws:sqs:us-west-2:123456789012:Billing")

    result = _checker(sns, _Clock()).is_published_natively_to(
        _copy("Billing", intent), {"id": EVENT}
    )

    assert result is dropped


def test_an_operation_without_a_multicast_twin_is_never_de_duplicated() -> None:
    sns = FakeSns(TOPIC)
    _subscribed(sns, "arn:aws:sqs:us-west-2:123456789012:Billing")

    assert not _checker(sns, _Clock()).is_published_natively_to(_copy("Billing"), {"other": EVENT})
    assert sns.requests == []


def test_without_a_topic_the_copy_is_sent() -> None:
    sns = FakeSns()

    assert not _checker(sns, _Clock()).is_published_natively_to(_copy("Billing"), {"id": EVENT})
    assert sns.calls("list_subscriptions_by_topic") == []


def test_the_endpoint_must_end_with_colon_and_the_physical_name_ordinally() -> None:
    sns = FakeSns(TOPIC)
    _subscribed(
        sns, "arn:aws:sqs:us-west-2:123456789012:DEV-billing", "arn:aws:sqs:x:1:XDEV-Billing"
    )
    checker = _checker(sns, _Clock(), prefix="DEV-")

    assert not checker.is_published_natively_to(_copy("Billing"), {"id": EVENT})

    _subscribed(sns, "arn:aws:sqs:eu-west-1:222222222222:DEV-Billing")
    assert _checker(sns, _Clock(), prefix="DEV-").is_published_natively_to(
        _copy("Billing"), {"id": EVENT}
    )


def test_a_queue_arn_destination_is_sanitized_into_a_name_no_subscription_has() -> None:
    sns = FakeSns(TOPIC)
    _subscribed(sns, "arn:aws:sqs:us-west-2:123456789012:Billing")
    destination = "arn:aws:sqs:us-west-2:123456789012:Billing"

    assert not _checker(sns, _Clock()).is_published_natively_to(_copy(destination), {"id": EVENT})


def test_the_answer_is_cached_per_topic_and_destination_for_five_seconds() -> None:
    sns = FakeSns(TOPIC)
    clock = _Clock()
    checker = _checker(sns, clock)

    assert not checker.is_published_natively_to(_copy("Billing"), {"id": EVENT})
    _subscribed(sns, "arn:aws:sqs:us-west-2:123456789012:Billing")
    clock.now += timedelta(seconds=5)
    assert not checker.is_published_natively_to(_copy("Billing"), {"id": EVENT})
    clock.now += timedelta(microseconds=1)
    assert checker.is_published_natively_to(_copy("Billing"), {"id": EVENT})

    assert len(sns.calls("list_subscriptions_by_topic")) == 2


def test_a_queue_arn_over_80_characters_makes_the_name_derivation_throw() -> None:
    sns = FakeSns(TOPIC)
    destination = "arn:aws:sqs:us-west-2:123456789012:" + "Billing" * 7

    with pytest.raises(QueueNameError, match="is longer than 80 characters"):
        _checker(sns, _Clock()).is_published_natively_to(_copy(destination), {"id": EVENT})
