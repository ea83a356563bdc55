# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Sending/
SnsPreparedMessageBatcherTests.cs``: batches per topic ARN, at most ten, at most 256 KiB, none
for a message without a topic; then the empty batch the size rule makes of a first message that
is alone over 256 KiB."""

from __future__ import annotations

import uuid

from local_aws.released_transport.transport.queues.sqs_shapes import MessageAttributeValue
from local_aws.released_transport.transport.sending.sns_prepared_message import (
    SnsPreparedMessage,
    batch,
)

KB = 1024
SNS_MAXIMUM = 256 * KB
MAXIMUM_ITEMS_IN_BATCH = 10


def _message(
    destination: str | None = "destination1", body_kb: int | None = None, *, with_id: bool = True
) -> SnsPreparedMessage:
    message = SnsPreparedMessage(
        destination=destination, body=None if body_kb is None else "b" * body_kb * KB
    )
    if with_id:
        message.set_message_id(str(uuid.uuid4()))
    message.calculate_size()
    return message


def _entry_counts(messages: list[SnsPreparedMessage]) -> list[int]:
    return [len(entry.request()["PublishBatchRequestEntries"]) for entry in batch(messages)]


def test_NoBatchesIfNothingToBatch() -> None:
    assert batch([]) == []


def test_NotInBatchIfDestinationEmpty() -> None:
    batches = batch(
        [_message("destination1"), _message(None), _message(""), _message("destination2")]
    )

    assert [entry.destination for entry in batches] == ["destination1", "destination2"]


def test_BatchPerDestination() -> None:
    batches = batch([_message(f"destination{n}") for n in (1, 2, 3)])

    assert [entry.request()["TopicArn"] for entry in batches] == [
        "destination1",
        "destination2",
        "destination3",
    ]


def test_BatchPerDestination_case_sensitive() -> None:
    batches = batch([_message("Destination1"), _message("destination1")])

    assert [entry.destination for entry in batches] == ["Destination1", "destination1"]


def test_SingleBatchForLessOrEqual10Entries() -> None:
    assert _entry_counts([_message() for _ in range(10)]) == [10]


def test_MultipleBatchesForGreaterThan10Entries() -> None:
    assert _entry_counts([_message() for _ in range(13)]) == [10, 3]


SIZES_KB = [256, 256, 64, 64, 64, 64, 200] + [10] * 35
IDS_SIZES_KB = [252, 252, 63, 63, 63, 63, 200] + [10] * 35


def test_MultipleBatchesForMessagesNotFittingIntoBatchDueToMessageSize() -> None:
    messages = [_message(body_kb=size, with_id=False) for size in SIZES_KB]

    assert _entry_counts(messages) == [1, 1, 4, 6, 10, 10, 10]


def test_MultipleBatchesForMessagesWithMessageIdNotFittingIntoBatchDueToMessageSize() -> None:
    messages = [_message(body_kb=size) for size in IDS_SIZES_KB]

    assert _entry_counts(messages) == [1, 1, 4, 6, 10, 10, 10]


def test_BatchPerDestination_MultipleBatchesForGreaterThan10Entries() -> None:
    messages = [_message(f"destination{1 + n % 2}") for n in range(26)]

    assert _entry_counts(messages) == [10, 3, 10, 3]


def test_DoesntUseMessageIdentityAsBatchIdentity() -> None:
    message = _message()

    (entry,) = batch([message])

    (request_entry,) = entry.request()["PublishBatchRequestEntries"]
    assert request_entry["Id"] != message.message_id


def test_AppliesAttributes() -> None:
    message = _message()
    message.message_attributes["SomeKey"] = MessageAttributeValue(StringValue="SomeValue")
    message.calculate_size()

    (entry,) = batch([message])

    (request_entry,) = entry.request()["PublishBatchRequestEntries"]
    assert request_entry["MessageAttributes"]["SomeKey"]["StringValue"] == "SomeValue"


def _tenth_of_maximum(*, with_id: bool) -> SnsPreparedMessage:
    message = SnsPreparedMessage(
        destination="destination", body="x" * (SNS_MAXIMUM // MAXIMUM_ITEMS_IN_BATCH)
    )
    if with_id:
        message.set_message_id(str(uuid.uuid4()))
    message.calculate_size()
    return message


def test_PutsAsManyMessagesInBatchAsPossible() -> None:
    messages = [_tenth_of_maximum(with_id=False) for _ in range(2 * MAXIMUM_ITEMS_IN_BATCH)]

    assert _entry_counts(messages) == [10, 10]


def test_PutsAsManyMessagesWithMessageIdsInBatchAsPossible() -> None:
    messages = [_tenth_of_maximum(with_id=True) for _ in range(2 * MAXIMUM_ITEMS_IN_BATCH)]

    assert _entry_counts(messages) == [9, 9, 2]


def test_a_first_message_alone_over_256_kibibytes_leaves_an_empty_batch_before_it() -> None:
    oversized = SnsPreparedMessage(destination="destination1", body="b")
    oversized.message_attributes["NServiceBus.MessageId"] = MessageAttributeValue(
        DataType="String", StringValue="x" * SNS_MAXIMUM
    )
    oversized.calculate_size()

    assert _entry_counts([oversized, _message()]) == [0, 1, 1]
