"""The hybrid de-duplication: ``HybridPubSubChecker``.

In the message-driven compatibility mode a publish is a multicast operation (the topic) and a
unicast copy to every subscriber in the subscription storage. A subscriber that is subscribed
both ways would get the event twice, so the dispatcher drops a unicast operation when all of
these hold:

* a multicast operation with the same message id is part of the same ``Dispatch`` call;
* its ``NServiceBus.MessageIntent`` parses (ignoring case) to ``Publish``;
* the multicast event type has a topic in the publisher's account (the topic cache);
* some subscription of that topic has an endpoint ending in ``:`` and the physical name of the
  unicast destination (``FindMatchingSubscription``; the destination goes through the queue
  name generator, so a queue ARN destination is sanitized into a name no subscription has, or
  refused when over 80 characters, which fails the dispatch).

The answer is cached per topic ARN and destination for ``SubscriptionsCacheTTL`` (5 s by
default), counted from when the lookup finished; a failing lookup is not cached.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/
HybridPubSubChecker.cs``, ``Sending/OutgoingMessageExtensions.cs``, ``Extensions/
SnsClientExtensions.cs``, ``Configure/SqsSubscriptionMigrationModeSettings.cs``; vectors in
``src/NServiceBus.Transport.SQS.Tests/Sending/MessageDispatcherTests.cs``
(``Should_deduplicate_if_compatibility_mode_is_enabled_and_subscription_found``,
``Should_not_deduplicate_if_compatibility_mode_is_enabled_and_no_subscription_found``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from local_aws.released_transport.core.outgoing import TransportOperation
from local_aws.released_transport.core.pipeline_headers import MessageIntent, parse_message_intent
from local_aws.released_transport.dotnet.time_formats import Clock, system_clock
from local_aws.released_transport.headers import MESSAGE_INTENT
from local_aws.released_transport.transport.pubsub.sns_lookups import find_matching_subscription
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.queues.queue_cache import QueueCache

DEFAULT_SUBSCRIPTIONS_CACHE_TTL: Final = timedelta(seconds=5)


@dataclass(frozen=True)
class _CachedAnswer:
    """``SubscriptionsCacheItem``."""

    subscribed: bool
    age: datetime


class HybridPubSubChecker:
    """The de-duplication of one endpoint's dispatcher."""

    def __init__(
        self,
        topic_cache: TopicCache,
        queue_cache: QueueCache,
        *,
        subscriptions_cache_ttl: timedelta = DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
        clock: Clock = system_clock,
    ) -> None:
        self._topic_cache = topic_cache
        self._queue_cache = queue_cache
        self._ttl = subscriptions_cache_ttl
        self._clock = clock
        self._answers: dict[str, _CachedAnswer] = {}

    def is_published_natively_to(
        self, operation: TransportOperation, multicast_message_types: Mapping[str, str]
    ) -> bool:
        """``ThisIsAPublishMessageNotUsingMessageDrivenPubSub``: whether the unicast copy is
        dropped. ``multicast_message_types`` maps the message ids of the dispatch's multicast
        operations to their event type ``FullName``."""
        message = operation.message
        event_type = multicast_message_types.get(message.message_id)
        if event_type is None:
            return False
        if parse_message_intent(message.headers.get(MESSAGE_INTENT)) is not MessageIntent.PUBLISH:
            return False
        topic_arn = self._topic_cache.topic_arn(event_type)
        if topic_arn is None:
            return False
        key = topic_arn + operation.destination
        cached = self._answers.get(key)
        if cached is None or cached.age + self._ttl < self._clock():
            subscription = find_matching_subscription(
                self._topic_cache.sns, self._queue_cache, topic_arn, operation.destination
            )
            cached = _CachedAnswer(subscription is not None, self._clock())
            self._answers[key] = cached
        return cached.subscribed
