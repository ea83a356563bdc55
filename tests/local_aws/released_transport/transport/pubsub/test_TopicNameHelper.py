# ruff: noqa: N802, N999 -- module and test names are the upstream code's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/TopicNameHelper.cs`` and
``src/CommandLine/TopicSanitization.cs``: no upstream unit test covers them directly, so these are
the topic names embedded in ``Sending/MessageDispatcherTests.cs``,
``Receiving/SubscriptionManagerTests.cs``, the ``PolicyExtensionsTests`` approval files and
``src/CommandLineTests/CommandLineTests.cs``, then what the code implies (the 256 limit and its
message, generics, characters beyond the BMP)."""

from __future__ import annotations

import pytest

from local_aws.released_transport.transport.pubsub.topic_name_helper import (
    TopicNameError,
    full_name,
    get_sanitized_topic_name,
    get_sns_topic_name,
)

TESTS = "NServiceBus.Transport.SQS.Tests"


@pytest.mark.parametrize(
    ("event_type", "prefix", "topic_name"),
    [
        # MessageDispatcherTests: Should_dispatch_isolated_multicast_operations and others.
        (
            f"{TESTS}.MessageDispatcherTests+Event",
            "",
            f"{TESTS.replace('.', '-')}-MessageDispatcherTests-Event",
        ),
        (
            f"{TESTS}.MessageDispatcherTests+AnotherEvent",
            "",
            "NServiceBus-Transport-SQS-Tests-MessageDispatcherTests-AnotherEvent",
        ),
        # SubscriptionManagerTests.
        (
            f"{TESTS}.SubscriptionManagerTests+Event",
            "",
            "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-Event",
        ),
        (
            f"{TESTS}.SubscriptionManagerTests+AnotherEvent",
            "",
            "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-AnotherEvent",
        ),
        (
            f"{TESTS}.SubscriptionManagerTests+IEvent",
            "",
            "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-IEvent",
        ),
        (
            f"{TESTS}.SubscriptionManagerTests+YetAnotherEvent",
            "",
            "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-YetAnotherEvent",
        ),
        (
            f"{TESTS}.SubscriptionManagerTests+YetYetAnotherEvent",
            "",
            "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-YetYetAnotherEvent",
        ),
        # Subscribe_object_should_work / Should_not_dispatch_multicast_operation_if_event_type_is_object.
        ("System.Object", "", "System-Object"),
        # PolicyExtensionsTests approvals with topicNamePrefix "DEV-".
        (
            f"{TESTS}.SubscriptionManagerTests+Event",
            "DEV-",
            "DEV-NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-Event",
        ),
        # An unset prefix (null) reads as empty.
        ("MyNamespace.MyMessage1", None, "MyNamespace-MyMessage1"),
        # A prefix is sanitized with the name and added even when already there.
        ("DEV.Sales.OrderPlaced", "DEV.", "DEV-DEV-Sales-OrderPlaced"),
    ],
)
def test_GetSnsTopicName(event_type: str, prefix: str | None, topic_name: str) -> None:
    assert get_sns_topic_name(event_type, prefix) == topic_name


@pytest.mark.parametrize(
    ("topic_name", "sanitized"),
    [
        # CommandLineTests: TopicSanitization.GetSanitizedTopicName($"{prefix}{eventType}").
        ("MyNamespace.MyMessage1", "MyNamespace-MyMessage1"),
        ("MyNamespace.MyMessage2", "MyNamespace-MyMessage2"),
        (
            "cli-abcdefghijklmnopqrstuv-MyNamespace.MyMessage1",
            "cli-abcdefghijklmnopqrstuv-MyNamespace-MyMessage1",
        ),
        # Derived: letters of any script and digits stay, as do - and _.
        ("Café_Événement-1", "Café_Événement-1"),
        (
            "Ns.Wrapper`1[[Ns.Inner, Asm, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null]]",
            "Ns-Wrapper-1--Ns-Inner--Asm--Version-1-0-0-0--Culture-neutral--PublicKeyToken-null--",
        ),
        # A character beyond the BMP is two UTF-16 code units, neither a letter: two hyphens.
        ("Ns.\U0001d400vent", "Ns---vent"),
    ],
)
def test_GetSanitizedTopicName(topic_name: str, sanitized: str) -> None:
    assert get_sanitized_topic_name(topic_name) == sanitized


def test_a_topic_name_of_256_code_units_is_accepted() -> None:
    assert len(get_sns_topic_name("N." + "x" * 250, "DEV-")) == 256


def test_a_topic_name_over_256_code_units_is_refused_with_the_transports_message() -> None:
    event_type = "N." + "x" * 251

    with pytest.raises(TopicNameError) as refused:
        get_sns_topic_name(event_type, "DEV-")

    assert str(refused.value) == (
        f"Address {event_type} with configured prefix DEV- is longer than 256 characters and"
        " therefore cannot be used to create an SNS topic. Use a shorter topic name."
    )


def test_the_limit_counts_utf16_code_units_before_sanitizing() -> None:
    with pytest.raises(TopicNameError):
        get_sns_topic_name("N." + "\U0001d400" * 128, "")


@pytest.mark.parametrize(
    ("event_type", "name"),
    [
        (
            "Sales.Events.OrderPlaced, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
            "Sales.Events.OrderPlaced",
        ),
        ("Sales.Events.OrderPlaced", "Sales.Events.OrderPlaced"),
        ("Ns.Outer+Inner, Asm", "Ns.Outer+Inner"),
        (
            "Ns.Wrapper`1[[Ns.Inner, Asm, Version=1.0.0.0]], Asm, Version=1.0.0.0",
            "Ns.Wrapper`1[[Ns.Inner, Asm, Version=1.0.0.0]]",
        ),
    ],
)
def test_the_full_name_of_an_assembly_qualified_name(event_type: str, name: str) -> None:
    assert full_name(event_type) == name
