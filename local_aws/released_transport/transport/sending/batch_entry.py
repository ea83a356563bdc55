"""What a batched send and a batched publish share: one request to one destination with its
messages by entry id, and the entries the service reports as failed, sent again alone.

The two batchers themselves stay apart, as upstream keeps them: they compare sizes differently
(:mod:`~local_aws.released_transport.transport.sending.sns_prepared_message` says how).

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/SqsBatchEntry.cs``,
``SnsBatchEntry.cs``, and ``MessageDispatcher.cs`` (``SendBatch``, for SQS and SNS alike: the
batch, then each failed entry alone, the first failure of those rethrown once all were tried).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar


class BatchedMessage(Protocol):
    """A prepared message that can be one entry of a batch request."""

    def batch_request_entry(self, entry_id: str) -> dict[str, Any]: ...


MessageT = TypeVar("MessageT", bound=BatchedMessage)


@dataclass(frozen=True)
class BatchEntry(Generic[MessageT]):
    """One batch request (``SqsBatchEntry``, ``SnsBatchEntry``): its destination and its
    messages by entry id; each kind names the request's two keys."""

    DESTINATION_KEY: ClassVar[str]
    ENTRIES_KEY: ClassVar[str]

    destination: str
    messages_by_entry_id: dict[str, MessageT]

    def request(self) -> dict[str, Any]:
        """The keyword arguments of boto3's batch call."""
        return {
            self.DESTINATION_KEY: self.destination,
            self.ENTRIES_KEY: [
                message.batch_request_entry(entry_id)
                for entry_id, message in self.messages_by_entry_id.items()
            ],
        }

    def resend_failed(self, result: Mapping[str, Any], send: Callable[[MessageT], None]) -> None:
        """``SendBatch``'s second half: each entry ``result`` reports as failed, sent alone with
        ``send``; the first failure of those is raised once every one was tried."""
        retry_failures: list[BaseException] = []
        for failed in result.get("Failed") or []:
            try:
                send(self.messages_by_entry_id[failed["Id"]])
            except Exception as failure:
                retry_failures.append(failure)
        if retry_failures:
            raise retry_failures[0]
