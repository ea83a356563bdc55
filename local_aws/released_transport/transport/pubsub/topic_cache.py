"""Topic ARNs by event type, found by name in the client's own account: ``TopicCache``.

The publisher's dispatcher and the hybrid de-duplication ask for the topic of an event type. The
topic name comes from the generator (called once per type, then cached); the topic is looked up
with ``FindTopic`` (``ListTopics`` of the endpoint's own account and region). A found topic is
cached for the life of the endpoint — a topic deleted later is still published to. A topic not
found is cached as "none" for ``NotFoundTopicsCacheTTL`` (5 s by default; the migration mode's
``TopicCacheTTL`` sets it), counted from when the lookup finished; after that the next request
looks again, so a subscriber that creates the topic is seen within that time. A lookup that
throws is not cached: the next request looks again.

The model keys types by their ``FullName`` (two assemblies' types of one full name share a
topic anyway) and has no custom ``MapEvent`` mappings.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/TopicCache.cs``,
``AsyncCacheLazy.cs``, ``Configure/SettingsKeys.cs``,
``Configure/SqsSubscriptionMigrationModeSettings.cs``; vectors in
``src/NServiceBus.Transport.SQS.Tests/TopicCacheTests.cs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from local_aws.released_transport.dotnet.time_formats import Clock, system_clock
from local_aws.released_transport.transport.pubsub.sns_lookups import find_topic
from local_aws.released_transport.transport.pubsub.topic_name_helper import TopicNameGenerator

DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL: Final = timedelta(seconds=5)


@dataclass(frozen=True)
class _CachedTopic:
    """``TopicCacheItem``: the topic (or none) and when the lookup finished."""

    topic_arn: str | None
    created_on: datetime


class TopicCache:
    """The topics of one endpoint's SNS client, by event type ``FullName``."""

    def __init__(
        self,
        sns: Any,
        generator: TopicNameGenerator,
        prefix: str | None,
        *,
        not_found_topics_cache_ttl: timedelta = DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL,
        clock: Clock = system_clock,
    ) -> None:
        self.sns = sns
        """The SNS client of the endpoint's account (the dispatcher publishes through it)."""
        self._generator = generator
        self._prefix = prefix
        self._not_found_ttl = not_found_topics_cache_ttl
        self._clock = clock
        self._names: dict[str, str] = {}
        self._topics: dict[str, _CachedTopic] = {}

    def topic_name(self, event_type_full_name: str) -> str:
        """``GetTopicName``: the generator's result, cached (a refusal is not)."""
        if event_type_full_name not in self._names:
            self._names[event_type_full_name] = self._generator(event_type_full_name, self._prefix)
        return self._names[event_type_full_name]

    def topic_arn(self, event_type_full_name: str) -> str | None:
        """``GetTopicArn`` / ``GetTopic``: the ARN of the type's topic, ``None`` when there is
        none in the account; a failing lookup raises and is tried again next time."""
        cached = self._topics.get(event_type_full_name)
        if cached is not None and (
            cached.topic_arn is not None or cached.created_on + self._not_found_ttl >= self._clock()
        ):
            return cached.topic_arn
        topic_arn = find_topic(self.sns, self.topic_name(event_type_full_name))
        self._topics[event_type_full_name] = _CachedTopic(topic_arn, self._clock())
        return topic_arn
