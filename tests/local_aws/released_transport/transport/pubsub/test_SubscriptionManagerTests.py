# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Receiving/
SubscriptionManagerTests.cs``: the 11 vectors without custom ``MapEvent`` mappings (the other 7
need them; the model has none), with the upstream set-up — queue ``fakeQueue`` whose ARN is
``arn:fakeQueue`` and whose attributes read back what was set, no prefix, installers on — then
what the released manager does that no upstream test pins (no installers, the policy left alone,
a failed type)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local_aws.released_transport.transport.pubsub.queue_policy import PolicySettings
from local_aws.released_transport.transport.pubsub.subscription_manager import (
    SubscriptionManager,
    TopicNotFoundError,
)
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.pubsub.topic_name_helper import get_sns_topic_name
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from tests.local_aws.released_transport.fake_sns import FakeSns, topic_arn
from tests.local_aws.released_transport.fake_sqs import FakeSqs

TESTS = "NServiceBus.Transport.SQS.Tests.SubscriptionManagerTests"
EVENT = f"{TESTS}+Event"
EVENT_TOPIC = "NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-Event"


class _PolicySqs(FakeSqs):
    """``EnableGetAttributeReturnsWhatWasSet``; ``answer_without_policy`` reads before the
    stored attributes are answered."""

    def __init__(self, answer_without_policy: int = 0) -> None:
        super().__init__()
        self.queue_attributes["fakeQueue"] = {"QueueArn": "arn:fakeQueue"}
        self.answer_without_policy = answer_without_policy

    def get_queue_attributes(self, **kwargs: Any) -> dict[str, Any]:
        response = super().get_queue_attributes(**kwargs)
        if len(self.calls("get_queue_attributes")) <= self.answer_without_policy:
            return {"Attributes": {"QueueArn": "arn:fakeQueue"}}
        return response

    def set_queue_attributes(self, **kwargs: Any) -> dict[str, Any]:
        self.queue_attributes[kwargs["QueueUrl"]].update(kwargs["Attributes"])
        return super().set_queue_attributes(**kwargs)


def _manager(
    sqs: FakeSqs,
    sns: FakeSns,
    *,
    installers: bool = True,
    policies: PolicySettings | None = None,
    sleeps: list[float] | None = None,
) -> SubscriptionManager:
    return SubscriptionManager(
        sqs,
        QueueCache(sqs, get_sqs_queue_name, ""),
        TopicCache(sns, get_sns_topic_name, ""),
        "fakeQueue",
        policy_settings=policies or PolicySettings(),
        topic_name_prefix="",
        setup_infrastructure=installers,
        sleep=(sleeps if sleeps is not None else []).append,
    )


def test_Subscribe_object_should_work() -> None:
    sns = FakeSns()

    _manager(_PolicySqs(), sns).subscribe_all(["System.Object"])

    assert sns.calls("subscribe")


def test_Subscribe_again_should_ignore_because_cached() -> None:
    sns = FakeSns()
    manager = _manager(_PolicySqs(), sns)

    manager.subscribe_all([EVENT])
    initial = sns.calls("subscribe")
    sns.requests.clear()
    manager.subscribe_all([EVENT])

    assert initial
    assert sns.calls("subscribe") == []


def test_Subscribe_Unsubscribe_and_Subscribe_again() -> None:
    sns = FakeSns()
    manager = _manager(_PolicySqs(), sns)

    manager.subscribe_all([EVENT])
    manager.unsubscribe(EVENT)
    manager.subscribe_all([EVENT])

    assert len(sns.calls("subscribe")) == 2


def test_Subscribe_always_creates_topic() -> None:
    sns = FakeSns()

    _manager(_PolicySqs(), sns).subscribe_all([EVENT])

    assert sns.calls("create_topic") == [{"Name": EVENT_TOPIC}]
    assert sns.calls("list_topics") == []


def test_Subscribe_creates_subscription_with_raw_message_mode() -> None:
    sns = FakeSns()

    _manager(_PolicySqs(), sns).subscribe_all([EVENT])

    assert sns.calls("subscribe") == [
        {
            "TopicArn": topic_arn(EVENT_TOPIC),
            "Protocol": "sqs",
            "Endpoint": "arn:fakeQueue",
            "ReturnSubscriptionArn": True,
            "Attributes": {"RawMessageDelivery": "true"},
        }
    ]


def test_Subscribe_retries_setting_policies_eight_times_with_linear_delays_and_gives_up() -> None:
    sleeps: list[float] = []

    _manager(_PolicySqs(answer_without_policy=1000), FakeSns(), sleeps=sleeps).subscribe_all(
        [EVENT]
    )

    assert len(sleeps) == 8
    assert sum(sleeps) == 44


def test_Subscribe_retries_setting_policies_seven_times_with_linear_delays() -> None:
    sleeps: list[float] = []

    _manager(_PolicySqs(answer_without_policy=9), FakeSns(), sleeps=sleeps).subscribe_all([EVENT])

    assert len(sleeps) == 7
    assert sum(sleeps) == 35


def _subscribed(sns: FakeSns, *endpoints: str) -> None:
    sns.topics.append(topic_arn(EVENT_TOPIC))
    sns.subscriptions[topic_arn(EVENT_TOPIC)] = [
        {"Endpoint": endpoint, "SubscriptionArn": f"arn:{endpoint[4:]}Subscription"}
        for endpoint in endpoints
    ]


def test_Unsubscribe_object_should_ignore() -> None:
    sns = FakeSns()

    _manager(_PolicySqs(), sns).unsubscribe("System.Object")

    assert sns.calls("unsubscribe") == []


def test_Unsubscribe_if_no_subscription_doesnt_unsubscribe() -> None:
    sns = FakeSns()
    _subscribed(sns, "arn:someOtherQueue", "arn:yetAnotherQueue")

    _manager(_PolicySqs(), sns).unsubscribe(EVENT)

    assert sns.calls("unsubscribe") == []


def test_Unsubscribe_should_unsubscribe_matching_subscription() -> None:
    sns = FakeSns()
    _subscribed(sns, "arn:someOtherQueue", "arn:fakeQueue")

    _manager(_PolicySqs(), sns).unsubscribe(EVENT)

    assert sns.calls("unsubscribe") == [{"SubscriptionArn": "arn:fakeQueueSubscription"}]


def test_Unsubscribe_should_not_modify_policy() -> None:
    sqs, sns = _PolicySqs(), FakeSns()
    _subscribed(sns, "arn:fakeQueue")

    _manager(sqs, sns).unsubscribe(EVENT)

    assert sqs.calls("set_queue_attributes") == []


def test_without_installers_a_missing_topic_fails_with_the_transports_message() -> None:
    sqs, sns = _PolicySqs(), FakeSns()

    with pytest.raises(TopicNotFoundError) as refused:
        _manager(sqs, sns, installers=False).subscribe_all([EVENT])

    assert str(refused.value) == (
        f"Topic {EVENT_TOPIC} not found. Call endpointConfiguration.EnableInstallers() to create"
        " the topic at startup, or create them manually."
    )
    assert sns.calls("create_topic") == []
    assert sns.calls("subscribe") == []
    assert sqs.calls("set_queue_attributes") == []


def test_without_installers_an_existing_topic_is_found_and_subscribed() -> None:
    sns = FakeSns(EVENT_TOPIC)

    _manager(_PolicySqs(), sns, installers=False).subscribe_all([EVENT])

    assert sns.calls("create_topic") == []
    assert [call["TopicArn"] for call in sns.calls("subscribe")] == [topic_arn(EVENT_TOPIC)]


def test_one_missing_topic_settles_nothing_for_the_others() -> None:
    sns = FakeSns(EVENT_TOPIC)

    with pytest.raises(TopicNotFoundError):
        _manager(_PolicySqs(), sns, installers=False).subscribe_all([EVENT, f"{TESTS}+Missing"])

    assert sns.calls("subscribe") == []


def test_the_default_policy_admits_every_topic_in_one_statement() -> None:
    sqs = _PolicySqs()

    _manager(sqs, FakeSns()).subscribe_all([EVENT, f"{TESTS}+AnotherEvent"])

    (setting,) = sqs.calls("set_queue_attributes")
    (statement,) = json.loads(setting["Attributes"]["Policy"])["Statement"]
    assert statement["Principal"] == {"AWS": "*"}
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Resource"] == "arn:fakeQueue"
    assert statement["Condition"] == {
        "ArnLike": {
            "aws:SourceArn": [
                topic_arn("NServiceBus-Transport-SQS-Tests-SubscriptionManagerTests-AnotherEvent"),
                topic_arn(EVENT_TOPIC),
            ]
        }
    }


def test_without_policy_setup_the_policy_is_left_alone() -> None:
    sqs, sns = _PolicySqs(), FakeSns()
    policies = PolicySettings()
    policies.setup_topic_policies_when_subscribing = False

    _manager(sqs, sns, policies=policies).subscribe_all([EVENT])

    assert sqs.calls("set_queue_attributes") == []
    assert len(sns.calls("subscribe")) == 1
