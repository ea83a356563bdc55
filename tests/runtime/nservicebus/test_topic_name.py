"""The topic a released endpoint publishes an event type to: ``TopicNameHelper`` exactly.

Vectors are the topic names the transport's own tests (9.1.1) expect from event types:
``MessageDispatcherTests``, ``SubscriptionManagerTests``, ``PolicyExtensionsTests`` and the
command line's ``TopicSanitization``.
"""

from __future__ import annotations

import pytest

from cross_account_runtime.nservicebus.topic_name import (
    TopicNameError,
    check_sns_topic_name,
    sns_topic_name,
)


@pytest.mark.parametrize(
    ("event_type", "prefix", "topic"),
    [
        (
            "NServiceBus.Transport.SQS.Tests.MessageDispatcherTests+Event",
            "",
            "NServiceBus-Transport-SQS-Tests-MessageDispatcherTests-Event",
        ),
        (
            "NServiceBus.Transport.SQS.Tests.SubscriptionManagerTests+AnotherEvent",
            "",
            "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-AnotherEvent",
        ),
        (
            "NServiceBus.Transport.SQS.Tests.SubscriptionManagerTests+Event",
            "DEV-",
            "DEV-NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-Event",
        ),
        ("MyNamespace.MyMessage1", "", "MyNamespace-MyMessage1"),
        ("MyCompany.Messages.OrderBilled", "", "MyCompany-Messages-OrderBilled"),
    ],
)
def test_the_transports_own_vectors(event_type: str, prefix: str, topic: str) -> None:
    assert sns_topic_name(event_type, prefix) == topic


def test_the_prefix_is_sanitized_with_the_type_name_and_never_skipped() -> None:
    # Unlike queue names, topic names get the prefix even when the type already starts with it.
    assert sns_topic_name("DEV.Sales.Ordered", "DEV.") == "DEV-DEV-Sales-Ordered"


def test_a_generic_type_becomes_one_long_dashed_name() -> None:
    full_name = (
        "Ns.Envelope`1[[System.String, System.Private.CoreLib, Version=9.0.0.0, "
        "Culture=neutral, PublicKeyToken=7cec85d7bea7798e]]"
    )
    assert sns_topic_name(full_name) == (
        "Ns-Envelope-1--System-String--System-Private-CoreLib--Version-9-0-0-0--"
        "Culture-neutral--PublicKeyToken-7cec85d7bea7798e--"
    )


def test_more_than_256_characters_with_the_prefix_is_refused_with_the_transports_message() -> None:
    assert len(sns_topic_name("E" * 252, "DEV-")) == 256
    with pytest.raises(TopicNameError, match="is longer than 256 characters"):
        sns_topic_name("E" * 253, "DEV-")


def test_length_counts_utf16_code_units_before_replacement() -> None:
    # An emoji is two UTF-16 code units and becomes two dashes.
    assert sns_topic_name("Ns.Party\U0001f389") == "Ns-Party--"
    with pytest.raises(TopicNameError):
        sns_topic_name("\U0001f389" * 128 + "x")


def test_an_empty_type_name_is_no_event() -> None:
    with pytest.raises(TopicNameError, match="full name"):
        sns_topic_name("")


def test_letters_the_transport_keeps_but_sns_refuses_are_named() -> None:
    topic = sns_topic_name("Café.Ordered")
    assert topic == "Café-Ordered"
    with pytest.raises(TopicNameError, match="'é'"):
        check_sns_topic_name(topic)
    assert (
        check_sns_topic_name("MyCompany-Messages-OrderBilled") == "MyCompany-Messages-OrderBilled"
    )
