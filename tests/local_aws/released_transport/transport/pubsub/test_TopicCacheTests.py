# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/TopicCacheTests.cs``.

Upstream's ``GetTopic`` and ``GetTopicArn`` share one cache and one lookup; the model has one
method, so each ``GetTopic_*`` vector is its ``GetTopicArn_*`` twin and both names are listed on
one test. The upstream generator is ``$"{prefix}{eventType.Name}"`` (``Name`` is the type name
without namespace or declaring type); TTLs pass on a fake clock instead of ``Task.Delay``. The
mock's ``FindTopicAsync`` is played by ``ListTopics`` answering the topic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from tests.local_aws.released_transport.fake_sns import FakeSns, topic_arn

EVENT = "NServiceBus.Transport.SQS.Tests.TopicCacheTests+Event"
EXPECTED_ARN = "arn:aws:sns:us-west-2:123456789012:PREFIXEvent"


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _name(event_type: str, prefix: str | None) -> str:
    return f"{prefix}{event_type.replace('+', '.').rsplit('.', 1)[-1]}"


def _cache(sns: FakeSns, clock: _Clock, ttl: timedelta = timedelta(seconds=5)) -> TopicCache:
    return TopicCache(sns, _name, "PREFIX", not_found_topics_cache_ttl=ttl, clock=clock)


def test_GetTopicArn_caches_and_GetTopic_caches() -> None:
    sns = FakeSns("PREFIXEvent")
    cache = _cache(sns, _Clock())

    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert cache.topic_arn(EVENT) == EXPECTED_ARN

    assert len(sns.calls("list_topics")) == 1
    assert cache.topic_name(EVENT) == "PREFIXEvent"


def test_GetTopicArn_does_not_cache_exceptions_and_GetTopic_does_not_cache_exceptions() -> None:
    sns = FakeSns("PREFIXEvent")
    cache = _cache(sns, _Clock())
    sns.failures["list_topics"] = RuntimeError("InvalidOperationException")

    with pytest.raises(RuntimeError):
        cache.topic_arn(EVENT)

    del sns.failures["list_topics"]
    sns.requests.clear()
    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert len(sns.calls("list_topics")) == 1


def test_GetTopicArn_evicts_after_not_found_ttl_and_GetTopic_evicts_after_not_found_ttl() -> None:
    sns = FakeSns()
    clock = _Clock()
    cache = _cache(sns, clock, timedelta(milliseconds=250))

    assert cache.topic_arn(EVENT) is None
    assert cache.topic_arn(EVENT) is None
    assert len(sns.calls("list_topics")) == 1
    sns.requests.clear()

    clock.now += timedelta(milliseconds=500)
    sns.topics.append(topic_arn("PREFIXEvent"))

    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert len(sns.calls("list_topics")) == 1


def test_GetTopicArn_does_not_evict_found_topics_and_GetTopic_does_not_evict_found_topics() -> None:
    sns = FakeSns("PREFIXEvent")
    clock = _Clock()
    cache = _cache(sns, clock, timedelta(milliseconds=100))

    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert len(sns.calls("list_topics")) == 1
    sns.requests.clear()

    clock.now += timedelta(milliseconds=200)

    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert sns.calls("list_topics") == []


def test_GetTopicName_caches() -> None:
    called: list[str] = []

    def generator(event_type: str, prefix: str | None) -> str:
        called.append(event_type)
        return _name(event_type, prefix)

    cache = TopicCache(None, generator, "PREFIX")
    cache.topic_name(EVENT)
    cache.topic_name(EVENT)

    assert called == [EVENT]


def test_a_not_found_topic_is_cached_for_five_seconds_by_default() -> None:
    sns = FakeSns()
    clock = _Clock()
    cache = TopicCache(sns, _name, "PREFIX", clock=clock)
    cache.topic_arn(EVENT)
    sns.topics.append(topic_arn("PREFIXEvent"))

    clock.now += timedelta(seconds=5)
    assert cache.topic_arn(EVENT) is None
    clock.now += timedelta(microseconds=1)
    assert cache.topic_arn(EVENT) == EXPECTED_ARN
    assert len(sns.calls("list_topics")) == 2


class _PagedSns(FakeSns):
    def __init__(self, *pages: dict[str, Any]) -> None:
        super().__init__()
        self.pages = list(pages)

    def list_topics(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("list_topics", kwargs))
        return self.pages.pop(0)


def test_find_topic_pages_and_matches_the_name_after_the_last_colon_exactly() -> None:
    sns = _PagedSns(
        {
            "Topics": [
                {"TopicArn": topic_arn("PREFIXEvent2")},
                {"TopicArn": topic_arn("prefixevent")},
            ],
            "NextToken": "t1",
        },
        {"Topics": [{"TopicArn": "arn:aws:sns:eu-west-1:222222222222:PREFIXEvent"}]},
    )

    found = TopicCache(sns, _name, "PREFIX").topic_arn(EVENT)

    assert found == "arn:aws:sns:eu-west-1:222222222222:PREFIXEvent"
    assert sns.calls("list_topics") == [{}, {"NextToken": "t1"}]
