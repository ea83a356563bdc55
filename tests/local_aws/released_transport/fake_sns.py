"""An SNS client double for the unit tests, in the spirit of the upstream tests' MockSnsClient
(``src/NServiceBus.Transport.SQS.Tests/MockSnsClient.cs``): topics are ARNs in account
``123456789012`` of ``us-west-2`` (``CreateTopic`` answers that ARN for any name), every request
is recorded, and responses can be scripted."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

ACCOUNT_ARN = "arn:aws:sns:us-west-2:123456789012"


def topic_arn(name: str) -> str:
    """The ARN the double gives a topic named ``name``."""
    return f"{ACCOUNT_ARN}:{name}"


class FakeSns:
    """Records every call as ``(operation, keyword arguments)``; ``topics`` are what
    ``ListTopics`` answers, ``subscriptions`` what ``ListSubscriptionsByTopic`` answers per topic
    ARN."""

    def __init__(self, *topic_names: str) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.topics: list[str] = [topic_arn(name) for name in topic_names]
        self.subscriptions: dict[str, list[dict[str, str]]] = {}
        self.failures: dict[str, BaseException] = {}
        self.fail_batch_entry: Callable[[dict[str, Any]], bool] = lambda _entry: False

    def calls(self, operation: str) -> list[dict[str, Any]]:
        """The keyword arguments of every call of ``operation``, in order."""
        return [kwargs for name, kwargs in self.requests if name == operation]

    def _record(self, operation: str, kwargs: dict[str, Any]) -> None:
        self.requests.append((operation, kwargs))
        if operation in self.failures:
            raise self.failures[operation]

    def list_topics(self, **kwargs: Any) -> dict[str, Any]:
        self._record("list_topics", kwargs)
        return {"Topics": [{"TopicArn": arn} for arn in self.topics]}

    def create_topic(self, **kwargs: Any) -> dict[str, Any]:
        self._record("create_topic", kwargs)
        return {"TopicArn": topic_arn(kwargs["Name"])}

    def subscribe(self, **kwargs: Any) -> dict[str, Any]:
        self._record("subscribe", kwargs)
        return {"SubscriptionArn": "arn:fakeQueue"}

    def unsubscribe(self, **kwargs: Any) -> dict[str, Any]:
        self._record("unsubscribe", kwargs)
        return {}

    def list_subscriptions_by_topic(self, **kwargs: Any) -> dict[str, Any]:
        self._record("list_subscriptions_by_topic", kwargs)
        return {"Subscriptions": list(self.subscriptions.get(kwargs["TopicArn"], []))}

    def publish(self, **kwargs: Any) -> dict[str, Any]:
        self._record("publish", kwargs)
        return {"MessageId": str(uuid.uuid4())}

    def publish_batch(self, **kwargs: Any) -> dict[str, Any]:
        self._record("publish_batch", kwargs)
        entries = kwargs["PublishBatchRequestEntries"]
        return {
            "Successful": [{"Id": e["Id"]} for e in entries if not self.fail_batch_entry(e)],
            "Failed": [
                {"Id": e["Id"], "SenderFault": True, "Code": "x", "Message": "You know why"}
                for e in entries
                if self.fail_batch_entry(e)
            ],
        }
