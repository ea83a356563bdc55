# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/QueueNameGeneratorTests.cs``:
the start-up guard that the queue name generator is idempotent."""

from __future__ import annotations

import pytest

from local_aws.released_transport.transport.queues.naming import (
    QueueNameError,
    assert_queue_name_generator_idempotent,
    get_sqs_queue_name,
)


def test_Default_queue_name_generator_is_idempotent() -> None:
    once = get_sqs_queue_name("Destination", "Prefix")

    assert once == "PrefixDestination"
    assert get_sqs_queue_name(once, "Prefix") == once


def test_Idempotent_custom_queue_name_generator_is_accepted() -> None:
    def generator(destination: str, prefix: str | None) -> str:
        return destination if destination.startswith(prefix or "") else f"{prefix}{destination}"

    assert_queue_name_generator_idempotent(generator)


def test_Non_idempotent_custom_queue_name_generator_throws() -> None:
    with pytest.raises(QueueNameError) as refused:
        assert_queue_name_generator_idempotent(lambda destination, prefix: f"{prefix}{destination}")

    assert str(refused.value) == (
        "The queue name generator function needs to return the same result when it is applied"
        " multiple times (idempotent). Result of applying once is PrefixDestination and twice"
        " -- PrefixPrefixDestination."
    )
