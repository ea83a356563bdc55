# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/QueueCacheTests.cs``:
every vector, against :mod:`local_aws.released_transport.transport.queues.naming` and
:mod:`local_aws.released_transport.transport.queues.queue_cache`.

The ``*WithPreTruncate`` / ``DoesNotThrowWithPretruncation`` vectors use the upstream tests' own
pre-truncating helper (``TestNameHelper.GetSqsQueueName``, not production code), reproduced here
as the test does: keep ``prefix +`` the last ``80 - len(prefix)`` characters, then the production
generator."""

from __future__ import annotations

import pytest

from local_aws.released_transport.transport.queues.naming import QueueNameError, get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from tests.local_aws.released_transport.fake_sqs import FakeSqs

REALLY_LONG = "really-" * 15 + "really"


def pre_truncated(destination: str, prefix: str) -> str:
    """``TestNameHelper.GetSqsQueueName`` of the upstream tests."""
    name = destination if prefix and destination.startswith(prefix) else prefix + destination
    if len(name) > 80:
        name = prefix + name[-(80 - len(prefix)) :]
    return get_sqs_queue_name(name, prefix)


@pytest.mark.parametrize(
    ("destination", "prefix"), [(REALLY_LONG, ""), ("PREFIX" + REALLY_LONG, "PREFIX")]
)
def test_ThrowsWhenLongerThanEightyChars(destination: str, prefix: str) -> None:
    with pytest.raises(QueueNameError, match="is longer than 80 characters"):
        get_sqs_queue_name(destination, prefix)


def test_ThrowsWhenLongerThanEightyChars_message_is_the_transports() -> None:
    with pytest.raises(QueueNameError) as refused:
        get_sqs_queue_name(REALLY_LONG, None)
    assert str(refused.value) == (
        f"Address {REALLY_LONG} with configured prefix  is longer than 80 characters and"
        " therefore cannot be used to create an SQS queue. Use a shorter queue name."
    )


@pytest.mark.parametrize(
    ("destination", "prefix", "expected"),
    [
        (REALLY_LONG, "", "lly" + "-really" * 11),
        ("PREFIX" + REALLY_LONG, "PREFIX", "PREFIXally" + "-really" * 10),
    ],
)
def test_DoesNotThrowWithPretruncation(destination: str, prefix: str, expected: str) -> None:
    assert pre_truncated(destination, prefix) == expected


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("destination-delay.fifo", "destination-delay.fifo"),
        ("destination-delay.blurb", "destination-delay-blurb"),
        ("destination-delay.blurb.fifo", "destination-delay-blurb.fifo"),
        ("destination-delay.fifo.fifo", "destination-delay-fifo.fifo"),
    ],
)
def test_Preserves_FifoQueue(destination: str, expected: str) -> None:
    cache = QueueCache(FakeSqs(), get_sqs_queue_name, "")
    assert cache.physical_queue_name(destination) == expected
    assert cache.physical_queue_name(expected) == expected


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        (REALLY_LONG + "-delay.fifo", "really" + "-really" * 9 + "-delay.fifo"),
        (REALLY_LONG + "-delay.blurb", "eally" + "-really" * 9 + "-delay-blurb"),
        (REALLY_LONG + "-delay.blurb.fifo", "-really" * 9 + "-delay-blurb.fifo"),
        (REALLY_LONG + "-delay.fifo.fifo", "y" + "-really" * 9 + "-delay-fifo.fifo"),
    ],
)
def test_Preserves_FifoQueue_WithPreTruncate(destination: str, expected: str) -> None:
    assert pre_truncated(destination, "") == expected
    assert pre_truncated(expected, "") == expected


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("destination-1", "destination-1"),
        ("destination.1", "destination-1"),
        ("destination!1", "destination-1"),
        ("destination?1", "destination-1"),
        ("destination@1", "destination-1"),
        ("destination$1", "destination-1"),
        ("destination%1", "destination-1"),
        ("destination^1", "destination-1"),
        ("destination&1", "destination-1"),
        ("destination*1", "destination-1"),
        ("destination_1", "destination_1"),
    ],
)
def test_ReplacesNonDigitsWithDash(destination: str, expected: str) -> None:
    assert get_sqs_queue_name(destination, "") == expected


def test_GetQueueUrl_caches() -> None:
    sqs = FakeSqs()
    cache = QueueCache(sqs, get_sqs_queue_name, "PREFIX")

    cache.queue_url("fakeQueueName")
    cache.queue_url("fakeQueueName")

    assert sqs.calls("get_queue_url") == [{"QueueName": "PREFIXfakeQueueName"}]


def test_GetQueueArn_caches() -> None:
    sqs = FakeSqs()
    sqs.queue_attributes["fakeQueueUrl"] = {"QueueArn": "arn:aws:sqs:us-east-1:1:fake"}
    cache = QueueCache(sqs, get_sqs_queue_name, "PREFIX")

    cache.queue_arn("fakeQueueUrl")
    assert cache.queue_arn("fakeQueueUrl") == "arn:aws:sqs:us-east-1:1:fake"

    assert sqs.calls("get_queue_attributes") == [
        {"QueueUrl": "fakeQueueUrl", "AttributeNames": ["QueueArn"]}
    ]


def test_SetQueueUrl_caches() -> None:
    sqs = FakeSqs()
    cache = QueueCache(sqs, get_sqs_queue_name, "PREFIX")

    cache.set_queue_url("fakeQueueName", "http://fakeQueueName")

    assert cache.queue_url("fakeQueueName") == "http://fakeQueueName"
    assert sqs.calls("get_queue_url") == []
