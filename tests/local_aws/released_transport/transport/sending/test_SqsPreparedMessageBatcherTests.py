# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Sending/
SqsPreparedMessageBatcherTests.cs``: batches per queue URL, at most ten, at most 1 MiB."""

from __future__ import annotations

import uuid

from local_aws.released_transport.transport.sending.prepared_message import (
    SqsPreparedMessage,
    batch,
)

KB = 1024
MAXIMUM_KB = 1024
MESSAGE_ID_BUFFER_KB = 4


def _message(
    url: str = "https://destination1", body_kb: int | None = None, *, with_id: bool = True
) -> SqsPreparedMessage:
    message = SqsPreparedMessage(
        queue_url=url, body=None if body_kb is None else "b" * body_kb * KB
    )
    if with_id:
        message.set_message_id(str(uuid.uuid4()))
    message.calculate_size()
    return message


def _entry_counts(messages: list[SqsPreparedMessage]) -> list[int]:
    return [len(entry.request()["Entries"]) for entry in batch(messages)]


def test_NoBatchesIfNothingToBatch() -> None:
    assert batch([]) == []


def test_BatchPerDestination() -> None:
    batches = batch([_message(f"https://destination{n}") for n in (1, 2, 3)])

    assert [entry.destination for entry in batches] == [
        "https://destination1",
        "https://destination2",
        "https://destination3",
    ]


def test_BatchPerDestination_case_sensitive() -> None:
    batches = batch([_message("https://Destination1"), _message("https://destination1")])

    assert [entry.destination for entry in batches] == [
        "https://Destination1",
        "https://destination1",
    ]


def test_SingleBatchForLessOrEqual10Entries() -> None:
    assert _entry_counts([_message() for _ in range(10)]) == [10]


def test_SingleBatchEvenWhenSingleMessageNotFittingIntoBatchDueToMessageSize() -> None:
    assert _entry_counts([_message(body_kb=MAXIMUM_KB)]) == [1]


def test_BatchPerMessageNotFittingIntoBatchDueToMessageSize() -> None:
    assert _entry_counts([_message(body_kb=MAXIMUM_KB), _message(body_kb=MAXIMUM_KB)]) == [1, 1]


def test_MultipleBatchesForGreaterThan10Entries() -> None:
    assert _entry_counts([_message() for _ in range(13)]) == [10, 3]


def _sized(first_kb: int, small_kb: int, *, with_id: bool) -> list[SqsPreparedMessage]:
    return (
        [_message(body_kb=first_kb, with_id=with_id) for _ in range(2)]
        + [_message(body_kb=small_kb, with_id=with_id) for _ in range(4)]
        + [_message(body_kb=MAXIMUM_KB - 56, with_id=with_id)]
        + [_message(body_kb=10, with_id=with_id) for _ in range(35)]
    )


def test_MultipleBatchesForMessagesNotFittingIntoBatchDueToMessageSize() -> None:
    assert _entry_counts(_sized(MAXIMUM_KB, 64, with_id=False)) == [1, 1, 4, 6, 10, 10, 10]


def test_MultipleBatchesForMessagesWithMessageIdNotFittingIntoBatchDueToMessageSize() -> None:
    messages = _sized(MAXIMUM_KB - MESSAGE_ID_BUFFER_KB, 63, with_id=True)

    assert _entry_counts(messages) == [1, 1, 4, 6, 10, 10, 10]


def test_BatchPerDestination_MultipleBatchesForGreaterThan10Entries() -> None:
    messages = [_message("https://destination1") for _ in range(13)] + [
        _message("https://destination2") for _ in range(13)
    ]

    assert _entry_counts(messages) == [10, 3, 10, 3]


def test_DoesntUseMessageIdentityAsBatchIdentity() -> None:
    message = _message()

    (entry,) = batch([message])[0].request()["Entries"]

    assert entry["Id"] != message.message_id


def test_AppliesAttributes() -> None:
    message = _message()
    message.message_attributes["SomeKey"] = {"StringValue": "SomeValue"}

    (entry,) = batch([message])[0].request()["Entries"]

    assert entry["MessageAttributes"]["SomeKey"]["StringValue"] == "SomeValue"


def test_AppliesGroupIdentityIfNecessary() -> None:
    message = _message()
    message.message_group_id = message.message_deduplication_id = message.message_id

    (entry,) = batch([message])[0].request()["Entries"]

    assert entry["MessageGroupId"] == entry["MessageDeduplicationId"] == message.message_id
