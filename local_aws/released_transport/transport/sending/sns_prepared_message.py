"""An SNS publish as the transport prepares it, and how publishes are batched.

``SnsPreparedMessage`` carries everything of one ``Publish`` request: the topic ARN (none when the
event type has no topic in the account — such a message is silently not published), the body
text and the attributes (``NServiceBus.MessageId`` always). Its size is computed as the SQS one
(:func:`~local_aws.released_transport.transport.sending.prepared_message.message_size`) and compared
with 256 KiB.

The batcher groups by topic ARN (ordinal, first-seen order), skips messages without one, keeps
order within a group and gives every entry a fresh GUID as its batch entry id. Unlike the SQS
batcher it adds a message's size *before* comparing: when the running size passes 256 KiB the
batch so far is closed (even when it is empty — only a message whose attributes alone pass
256 KiB can cause that, and the service refuses the empty request) and the message starts the
next; a batch of ten entries is closed and the running size reset.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/SnsPreparedMessage.cs``,
``SnsPreparedMessageExtensions.cs``, ``SnsPreparedMessageBatcher.cs``, ``SnsBatchEntry.cs``,
``TransportConstraints.cs``; vectors in ``src/NServiceBus.Transport.SQS.Tests/Sending/
SnsPreparedMessageTests.cs`` and ``SnsPreparedMessageBatcherTests.cs``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from local_aws.released_transport.headers import (
    MAXIMUM_ITEMS_IN_BATCH,
    SNS_MAXIMUM_MESSAGE_SIZE,
)
from local_aws.released_transport.transport.sending.batch_entry import BatchEntry
from local_aws.released_transport.transport.sending.prepared_message import PreparedMessage


@dataclass
class SnsPreparedMessage(PreparedMessage):
    """One event ready to publish to ``destination``, a topic ARN."""

    def publish_request(self) -> dict[str, Any]:
        """``ToPublishRequest``: the keyword arguments of boto3's ``publish``."""
        return {
            "TopicArn": self.destination,
            "Message": self.body,
            "MessageAttributes": dict(self.message_attributes),
        }

    def batch_request_entry(self, entry_id: str) -> dict[str, Any]:
        """``ToBatchEntry``: one entry of ``publish_batch``."""
        return {
            "Id": entry_id,
            "Message": self.body,
            "MessageAttributes": dict(self.message_attributes),
        }


class SnsBatch(BatchEntry[SnsPreparedMessage]):
    """``SnsBatchEntry``: one ``PublishBatch`` request to a topic ARN."""

    DESTINATION_KEY = "TopicArn"
    ENTRIES_KEY = "PublishBatchRequestEntries"


def batch(messages: Iterable[SnsPreparedMessage]) -> list[SnsBatch]:
    """``SnsPreparedMessageBatcher.Batch`` (sizes must have been calculated)."""
    groups: dict[str | None, list[SnsPreparedMessage]] = {}
    for message in messages:
        groups.setdefault(message.destination, []).append(message)
    batches: list[SnsBatch] = []
    for topic_arn, group in groups.items():
        if not topic_arn:
            continue
        current: dict[str, SnsPreparedMessage] = {}
        payload_size = 0
        for message in group:
            payload_size += message.size
            if payload_size > SNS_MAXIMUM_MESSAGE_SIZE:
                batches.append(SnsBatch(topic_arn, current))
                current = {}
                payload_size = message.size
            current[str(uuid.uuid4())] = message
            if len(current) == MAXIMUM_ITEMS_IN_BATCH:
                batches.append(SnsBatch(topic_arn, current))
                current = {}
                payload_size = 0
        if current:
            batches.append(SnsBatch(topic_arn, current))
    return batches
