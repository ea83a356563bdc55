"""Event topics: an event type is written as ``Type.FullName`` writes it, or the topic made for it
is one the released transport never derives (``TopicNameHelper.GetSnsTopicName``)."""

from __future__ import annotations

import pytest
from aws_cdk import App, Stack

from constructs_lib import DeliveryLoggedTopic
from constructs_lib.topic_naming import (
    GENERIC_FULL_NAME_EXAMPLE,
    TopicNameError,
    check_event_type,
    event_topic_name,
    topic_name_problem,
)


@pytest.mark.parametrize(
    ("event_type", "topic"),
    [
        ("MyCompany.Messages.OrderBilled", "MyCompany-Messages-OrderBilled"),
        ("OrderBilled", "OrderBilled"),
        ("MyCompany.Messages.Outer+OrderBilled", "MyCompany-Messages-Outer-OrderBilled"),
        (
            GENERIC_FULL_NAME_EXAMPLE,
            "MyCompany-Messages-Envelope-1--MyCompany-Messages-OrderBilled--MyCompany-Messages--"
            "Version-1-0-0-0--Culture-neutral--PublicKeyToken-null--",
        ),
        (
            "Ns.Pair`2[[System.Int32[], System.Private.CoreLib, Version=9.0.0.0, "
            "Culture=neutral, PublicKeyToken=7cec85d7bea7798e],[Ns.Box`1[[Ns.A, Ns]], Ns]]",
            None,
        ),
        ("Ns.Outer`1+Inner[[Ns.A, Ns]]", "Ns-Outer-1-Inner--Ns-A--Ns--"),
    ],
)
def test_full_names_as_the_clr_writes_them_name_the_transports_topic(
    event_type: str, topic: str | None
) -> None:
    assert check_event_type(event_type) == event_type
    if topic is not None:
        assert event_topic_name(event_type) == topic


@pytest.mark.parametrize(
    ("event_type", "problem"),
    [
        ("Envelope<OrderBilled>", "written as C# writes a generic type"),
        ("MyCompany.Messages.Envelope<MyCompany.Messages.OrderBilled>", "as C# writes"),
        ("Foo[]", "an array is never an event's type"),
        ("MyCompany.Order Billed", "no spaces"),
        (" MyCompany.OrderBilled", "a name is expected at ' '"),
        ("int", "C# syntax"),
        ("global::MyCompany.OrderBilled", "C# syntax"),
        ("MyCompany.Envelope`1", "an open generic type is never an event's type"),
        ("MyCompany.Envelope`1[[MyCompany.OrderBilled]]", "', ' is expected"),
        ("MyCompany.Envelope`2[[A, X]]", "takes 2 type argument(s), 1 given"),
        ("MyCompany.Envelope[[A, X]]", "no generic arity"),
        ("MyCompany..OrderBilled", "a name is expected at '.'"),
        ("MyCompany.1OrderBilled", "a name is expected"),
        ("MyCompany.Outer+Inner.Deeper", "cannot follow the type's name"),
        ("MyCompany.Envelope`0[[A, X]]", "generic arity"),
        ("MyCompany.Envelope`1[[A, Version=1.0]]", "assembly-qualified"),
        ("", "is empty"),
    ],
)
def test_what_the_clr_never_writes_is_refused_saying_what_to_write(
    event_type: str, problem: str
) -> None:
    with pytest.raises(TopicNameError) as caught:
        check_event_type(event_type)
    message = str(caught.value)
    assert problem in message
    assert "typeof(T).FullName" in message


def test_the_prefix_and_snss_alphabet_apply_after_the_full_name() -> None:
    assert event_topic_name("Sales.Ordered", "DEV-") == "DEV-Sales-Ordered"
    with pytest.raises(TopicNameError, match="SNS refuses"):
        event_topic_name("Café.Ordered")


@pytest.mark.parametrize(
    ("name", "fifo", "accepted"),
    [
        ("OrderBilled", False, True),
        ("Order_Billed-2", False, True),
        ("T" * 256, False, True),
        ("T" * 251 + ".fifo", True, True),
        ("T" * 252 + ".fifo", True, False),
        ("T" * 257, False, False),
        ("", False, False),
        (".fifo", True, False),
        ("Order Billed", False, False),
        ("Order.Billed", False, False),
        ("Café", False, False),
    ],
)
def test_topic_names_are_what_sns_accepts(name: str, fifo: bool, accepted: bool) -> None:
    assert (topic_name_problem(name, fifo=fifo) is None) is accepted


def test_a_topic_sns_would_refuse_by_name_is_refused_at_synth() -> None:
    with pytest.raises(ValueError, match=r"^topic_name: 'Order Billed': SNS topic names use"):
        DeliveryLoggedTopic(Stack(App(), "S"), "T", topic_name="Order Billed")
