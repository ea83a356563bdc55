"""The vectors of NServiceBus.AmazonSQS 9.1.1's ``QueueNameGeneratorTests``: the default generator
is idempotent for the probe prefix, and a generator that is not is refused when configured
(the transport's ``AssertQueueNameGeneratorIdempotent``, here :class:`QueueNaming`)."""

from __future__ import annotations

import pytest

from cross_account_runtime.nservicebus.queue_name_generator import (
    NonIdempotentGeneratorError,
    QueueNaming,
    default_queue_name,
)


def test_Default_queue_name_generator_is_idempotent() -> None:
    once = default_queue_name("Destination", "Prefix")
    assert once == "PrefixDestination"
    assert default_queue_name(once, "Prefix") == once


def test_Idempotent_custom_queue_name_generator_is_accepted() -> None:
    def generator(destination: str, prefix: str) -> str:
        return destination if destination.startswith(prefix) else prefix + destination

    # The transport probes with ("Destination", "Prefix"); QueueNaming with its own probes
    # ("MyEndpoint", "Sales.Orders", "error"), which this generator keeps dots in: only their
    # idempotence counts, as only the transport's probe's does.
    naming = QueueNaming("Prefix", generator)
    assert naming.queue_name("Destination") == "PrefixDestination"


def test_Non_idempotent_custom_queue_name_generator_throws() -> None:
    def generator(destination: str, prefix: str) -> str:
        return prefix + destination

    with pytest.raises(NonIdempotentGeneratorError, match="'PrefixPrefixDestination'"):
        QueueNaming("Prefix", generator, probes=("Destination",))
