"""An SQS send as the transport prepares it, its size, and how sends are batched.

``SqsPreparedMessage`` carries everything of one ``SendMessage`` request: the URL, the body
text, the attributes (``NServiceBus.MessageId`` always, since setting the message id sets that
attribute), ``DelaySeconds`` (0 when not delayed; always sent), and the FIFO group and
deduplication ids for the delay queue. Its size is what the transport compares with 1 MiB:
UTF-16 length of the body, plus per attribute the lengths of name, data type and text value and
the binary length, plus the reserved bytes.

The batcher groups by queue URL (ordinal, first-seen order), keeps order within a group, starts
a new batch when the running size would pass 1 MiB or the batch holds ten entries, and gives
every entry a fresh GUID as its batch entry id.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Sending/SqsPreparedMessage.cs``,
``SqsPreparedMessageExtensions.cs``, ``SqsPreparedMessageBatcher.cs``, ``SqsBatchEntry.cs``,
``Receiving/SqsReceivedDelayedMessage.cs``; vectors in ``src/NServiceBus.Transport.SQS.Tests/
Sending/SqsPreparedMessageTests.cs`` and ``SqsPreparedMessageBatcherTests.cs``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from local_aws.released_transport.dotnet.text import utf16_length
from local_aws.released_transport.headers import (
    MAXIMUM_ITEMS_IN_BATCH,
    MESSAGE_ID,
    MESSAGE_TYPE_FULL_NAME,
    S3_BODY_KEY,
    SQS_MAXIMUM_MESSAGE_SIZE,
)
from local_aws.released_transport.transport.queues.sqs_shapes import (
    MessageAttributeValue,
    string_attribute,
    string_value,
)
from local_aws.released_transport.transport.sending.batch_entry import BatchEntry


def message_size(
    body: str | None, attributes: Mapping[str, MessageAttributeValue], reserve_bytes: int
) -> int:
    """``CalculateSize`` of a prepared SQS or SNS message: the body's UTF-16 length, per
    attribute the lengths of name, data type and text value and the binary length, plus the
    reserved bytes."""
    size = 0 if body is None else utf16_length(body)
    for name, attribute in attributes.items():
        size += utf16_length(name)
        size += utf16_length(attribute.get("DataType", ""))
        size += utf16_length(attribute.get("StringValue", ""))
        size += len(attribute.get("BinaryValue", b""))
    return size + reserve_bytes


@dataclass
class PreparedMessage:
    """What ``SqsPreparedMessage`` and ``SnsPreparedMessage`` both carry, each upstream class
    writing it out again: the body, the destination, the attributes with the
    ``NServiceBus.MessageId`` one, and the size (``CalculateSize``)."""

    body: str | None = None
    destination: str | None = None
    message_attributes: dict[str, MessageAttributeValue] = field(default_factory=dict)
    reserve_bytes: int = 0
    size: int = 0

    @property
    def message_id(self) -> str | None:
        """The ``NServiceBus.MessageId`` attribute."""
        attribute = self.message_attributes.get(MESSAGE_ID)
        return None if attribute is None else string_value(attribute)

    def set_message_id(self, message_id: str) -> None:
        """Set the ``NServiceBus.MessageId`` attribute (a String attribute): attributes count
        towards the size, so it is set for every message alike."""
        self.message_attributes[MESSAGE_ID] = string_attribute(message_id)

    def calculate_size(self) -> None:
        """``CalculateSize``."""
        self.size = message_size(self.body, self.message_attributes, self.reserve_bytes)


@dataclass
class SqsPreparedMessage(PreparedMessage):
    """One message ready to send; ``receipt_handle`` is set only for what the delayed messages
    pump re-sends (``SqsReceivedDelayedMessage``), so it can delete the original after."""

    queue_url: str = ""
    original_destination: str | None = None
    delay_seconds: int = 0
    message_group_id: str | None = None
    message_deduplication_id: str | None = None
    receipt_handle: str | None = None

    def copy_message_attributes(self, attributes: Mapping[str, MessageAttributeValue]) -> None:
        """``CopyMessageAttributes``: add the attributes not already present."""
        for name, attribute in attributes.items():
            self.message_attributes.setdefault(name, attribute)

    def remove_native_headers(self) -> None:
        """``RemoveNativeHeaders``: ``MessageTypeFullName`` and ``S3BodyKey`` are dropped."""
        self.message_attributes.pop(MESSAGE_TYPE_FULL_NAME, None)
        self.message_attributes.pop(S3_BODY_KEY, None)

    def _fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"MessageBody": self.body}
        fields["DelaySeconds"] = self.delay_seconds
        fields["MessageAttributes"] = dict(self.message_attributes)
        if self.message_group_id is not None:
            fields["MessageGroupId"] = self.message_group_id
        if self.message_deduplication_id is not None:
            fields["MessageDeduplicationId"] = self.message_deduplication_id
        return fields

    def send_message_request(self) -> dict[str, Any]:
        """``ToRequest``: the keyword arguments of boto3's ``send_message``."""
        return {"QueueUrl": self.queue_url, **self._fields()}

    def batch_request_entry(self, entry_id: str) -> dict[str, Any]:
        """``ToBatchEntry``: one entry of ``send_message_batch``."""
        return {"Id": entry_id, **self._fields()}


class SqsBatch(BatchEntry[SqsPreparedMessage]):
    """``SqsBatchEntry``: one ``SendMessageBatch`` request to a queue URL."""

    DESTINATION_KEY = "QueueUrl"
    ENTRIES_KEY = "Entries"


def batch(messages: Iterable[SqsPreparedMessage]) -> list[SqsBatch]:
    """``SqsPreparedMessageBatcher.Batch`` (sizes must have been calculated)."""
    groups: dict[str, list[SqsPreparedMessage]] = {}
    for message in messages:
        groups.setdefault(message.queue_url, []).append(message)
    batches: list[SqsBatch] = []
    for queue_url, group in groups.items():
        current: dict[str, SqsPreparedMessage] = {}
        current_size = 0
        for message in group:
            if current_size + message.size > SQS_MAXIMUM_MESSAGE_SIZE:
                if current:
                    batches.append(SqsBatch(queue_url, current))
                    current = {}
                current_size = message.size
            else:
                current_size += message.size
            current[str(uuid.uuid4())] = message
            if len(current) == MAXIMUM_ITEMS_IN_BATCH:
                batches.append(SqsBatch(queue_url, current))
                current = {}
                current_size = 0
        if current:
            batches.append(SqsBatch(queue_url, current))
    return batches
