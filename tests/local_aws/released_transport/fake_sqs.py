"""An SQS client double for the unit tests, in the spirit of the upstream tests' MockSqsClient
(``src/NServiceBus.Transport.SQS.Tests/MockSqsClient.cs``): ``GetQueueUrl`` answers the queue
name itself as the URL, every request is recorded, and responses can be scripted."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError


def client_error(code: str, message: str = "Problem", status: int = 400) -> ClientError:
    """A botocore error as the service would raise it."""
    return ClientError(
        {
            "Error": {"Code": code, "Message": message, "Type": "Sender"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        "Operation",
    )


class FakeSqs:
    """Records every call as ``(operation, keyword arguments)``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.missing_queues: set[str] = set()
        self.queue_attributes: dict[str, dict[str, str]] = {}
        self.received: list[list[dict[str, Any]]] = []
        self.fail_batch_entry: Callable[[dict[str, Any]], bool] = lambda _entry: False
        self.fail_delete_batch_entry: Callable[[dict[str, Any]], bool] = lambda _entry: False
        self.failures: dict[str, BaseException] = {}

    def calls(self, operation: str) -> list[dict[str, Any]]:
        """The keyword arguments of every call of ``operation``, in order."""
        return [kwargs for name, kwargs in self.requests if name == operation]

    def _record(self, operation: str, kwargs: dict[str, Any]) -> None:
        self.requests.append((operation, kwargs))
        if operation in self.failures:
            raise self.failures[operation]

    def get_queue_url(self, **kwargs: Any) -> dict[str, Any]:
        self._record("get_queue_url", kwargs)
        if kwargs["QueueName"] in self.missing_queues:
            raise client_error(
                "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist."
            )
        return {"QueueUrl": kwargs["QueueName"]}

    def get_queue_attributes(self, **kwargs: Any) -> dict[str, Any]:
        self._record("get_queue_attributes", kwargs)
        return {"Attributes": dict(self.queue_attributes.get(kwargs["QueueUrl"], {}))}

    def create_queue(self, **kwargs: Any) -> dict[str, Any]:
        self._record("create_queue", kwargs)
        return {"QueueUrl": f"https://queues/{kwargs['QueueName']}"}

    def set_queue_attributes(self, **kwargs: Any) -> dict[str, Any]:
        self._record("set_queue_attributes", kwargs)
        return {}

    def receive_message(self, **kwargs: Any) -> dict[str, Any]:
        self._record("receive_message", kwargs)
        return {"Messages": self.received.pop(0) if self.received else []}

    def send_message(self, **kwargs: Any) -> dict[str, Any]:
        self._record("send_message", kwargs)
        return {"MessageId": str(uuid.uuid4())}

    def send_message_batch(self, **kwargs: Any) -> dict[str, Any]:
        self._record("send_message_batch", kwargs)
        entries = kwargs["Entries"]
        return {
            "Successful": [{"Id": e["Id"]} for e in entries if not self.fail_batch_entry(e)],
            "Failed": [
                {"Id": e["Id"], "SenderFault": True, "Code": "x", "Message": "You know why"}
                for e in entries
                if self.fail_batch_entry(e)
            ],
        }

    def delete_message(self, **kwargs: Any) -> dict[str, Any]:
        self._record("delete_message", kwargs)
        return {}

    def delete_message_batch(self, **kwargs: Any) -> dict[str, Any]:
        self._record("delete_message_batch", kwargs)
        entries = kwargs["Entries"]
        return {
            "Successful": [{"Id": e["Id"]} for e in entries if not self.fail_delete_batch_entry(e)],
            "Failed": [
                {"Id": e["Id"], "SenderFault": True, "Code": "x", "Message": "no"}
                for e in entries
                if self.fail_delete_batch_entry(e)
            ],
        }

    def change_message_visibility(self, **kwargs: Any) -> dict[str, Any]:
        self._record("change_message_visibility", kwargs)
        return {}

    def change_message_visibility_batch(self, **kwargs: Any) -> dict[str, Any]:
        self._record("change_message_visibility_batch", kwargs)
        return {"Successful": [], "Failed": []}
