# ruff: noqa: N802, N999 -- test names are the upstream test's, for traceability
"""NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/Sending/
MessageDispatcherTests.cs``: the multicast (publish), hybrid de-duplication and S3 cases (the
unicast ones are in ``test_MessageDispatcherTests.py``); then what the released dispatcher does
that no upstream unit test pins (the published attributes, unwrapped publishes, the SNS 256 KiB
rule, the encryption on the upload, a failed preparation).

The upstream SNS mock finds a topic for any name; here the double answers the topics it is
given. Event types are the upstream test's nested classes (``MessageDispatcherTests+Event``)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from local_aws.released_transport.core.outgoing import (
    DispatchConsistency,
    MulticastTransportOperation,
    OutgoingMessage,
    TransportOperation,
)
from local_aws.released_transport.transport.pubsub.topic_cache import TopicCache
from local_aws.released_transport.transport.pubsub.topic_name_helper import get_sns_topic_name
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.s3_settings import (
    S3EncryptionWithManagedKey,
    S3Settings,
)
from local_aws.released_transport.transport.sending.dispatcher import (
    LargeMessageError,
    MessageDispatcher,
    PublishNotConfiguredError,
)
from tests.local_aws.released_transport.fake_s3 import FakeS3
from tests.local_aws.released_transport.fake_sns import FakeSns, topic_arn
from tests.local_aws.released_transport.fake_sqs import FakeSqs

TESTS = "NServiceBus.Transport.SQS.Tests.MessageDispatcherTests"
EVENT = f"{TESTS}+Event"
ANOTHER_EVENT = f"{TESTS}+AnotherEvent"
EVENT_TOPIC = "NServiceBus-Transport-SQS-Tests-MessageDispatcherTests-Event"
ANOTHER_EVENT_TOPIC = "NServiceBus-Transport-SQS-Tests-MessageDispatcherTests-AnotherEvent"
ISOLATED = DispatchConsistency.ISOLATED
SQS_MAXIMUM = 1024 * 1024
SNS_MAXIMUM = 256 * 1024


def _dispatcher(
    sqs: FakeSqs | None = None,
    sns: FakeSns | None = None,
    *,
    s3: S3Settings | None = None,
    wrap: bool = True,
    reserve: int = 0,
) -> MessageDispatcher:
    sqs = sqs or FakeSqs()
    return MessageDispatcher(
        sqs,
        QueueCache(sqs, get_sqs_queue_name, ""),
        topic_cache=None if sns is None else TopicCache(sns, get_sns_topic_name, ""),
        s3=s3,
        wrap_outgoing_messages=wrap,
        reserve_bytes_in_message_size_calculation=reserve,
    )


def _event(
    message_type: str = EVENT,
    message_id: str | None = None,
    body: bytes = b"{}",
    headers: dict[str, str | None] | None = None,
    consistency: DispatchConsistency = DispatchConsistency.DEFAULT,
) -> MulticastTransportOperation:
    return MulticastTransportOperation(
        OutgoingMessage(message_id or str(uuid.uuid4()), headers or {}, body),
        message_type,
        consistency=consistency,
    )


def _send(
    destination: str,
    message_id: str | None = None,
    body: bytes = b"{}",
    consistency: DispatchConsistency = DispatchConsistency.DEFAULT,
) -> TransportOperation:
    message = OutgoingMessage(message_id or str(uuid.uuid4()), {}, body)
    return TransportOperation(message, destination, consistency=consistency)


def _ids(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["MessageAttributes"]["NServiceBus.MessageId"]["StringValue"] for entry in entries]


def test_Should_dispatch_isolated_multicast_operations() -> None:
    sns = FakeSns(EVENT_TOPIC, ANOTHER_EVENT_TOPIC)

    _dispatcher(sns=sns).dispatch(
        [_event(EVENT, consistency=ISOLATED), _event(ANOTHER_EVENT, consistency=ISOLATED)]
    )

    assert sns.calls("publish_batch") == []
    assert {request["TopicArn"] for request in sns.calls("publish")} == {
        topic_arn(EVENT_TOPIC),
        topic_arn(ANOTHER_EVENT_TOPIC),
    }


def _publish_headers() -> dict[str, str | None]:
    return {
        "NServiceBus.EnclosedMessageTypes": f"{EVENT}, NServiceBus.Transport.SQS.Tests",
        "NServiceBus.MessageIntent": "Publish",
    }


def test_Should_deduplicate_if_compatibility_mode_is_enabled_and_subscription_found() -> None:
    sqs, sns = FakeSqs(), FakeSns(EVENT_TOPIC)
    sns.subscriptions[topic_arn(EVENT_TOPIC)] = [
        {"Endpoint": "arn:abc", "SubscriptionArn": "arn:subscription"}
    ]
    message = OutgoingMessage(str(uuid.uuid4()), _publish_headers(), b"{}")

    _dispatcher(sqs, sns).dispatch(
        [MulticastTransportOperation(message, EVENT), TransportOperation(message, "abc")]
    )

    assert len(sns.calls("publish_batch")) == 1
    assert sqs.calls("send_message") == []
    assert sqs.calls("send_message_batch") == []
    assert sqs.calls("get_queue_url") == []


def test_Should_not_deduplicate_if_compatibility_mode_is_enabled_and_no_subscription_found() -> (
    None
):
    sqs, sns = FakeSqs(), FakeSns(EVENT_TOPIC)
    headers = _publish_headers()
    del headers["NServiceBus.MessageIntent"]
    message = OutgoingMessage(str(uuid.uuid4()), headers, b"{}")

    _dispatcher(sqs, sns).dispatch(
        [MulticastTransportOperation(message, EVENT), TransportOperation(message, "abc")]
    )

    assert len(sns.calls("publish_batch")) == 1
    assert len(sqs.calls("send_message_batch")) == 1


def test_Should_not_dispatch_multicast_operation_if_topic_doesnt_exist() -> None:
    sns = FakeSns()

    _dispatcher(sns=sns).dispatch([_event()])

    assert sns.calls("publish") == []
    assert sns.calls("publish_batch") == []
    assert sns.calls("create_topic") == []


def test_Should_not_dispatch_multicast_operation_if_event_type_is_object() -> None:
    sns = FakeSns()

    _dispatcher(sns=sns).dispatch([_event("System.Object")])

    assert sns.calls("publish") == []
    assert sns.calls("publish_batch") == []


@pytest.mark.parametrize("wrap", [True, False])
def test_Should_upload_large_multicast_operations_request_to_s3(wrap: bool) -> None:
    sns, s3 = FakeSns(EVENT_TOPIC, ANOTHER_EVENT_TOPIC), FakeS3()
    long_body_id = str(uuid.uuid4())
    crazy_long_id = "x" * SNS_MAXIMUM

    _dispatcher(sns=sns, s3=S3Settings("someBucket", "somePrefix", s3), wrap=wrap).dispatch(
        [
            _event(EVENT, long_body_id, b"x" * SNS_MAXIMUM, consistency=ISOLATED),
            _event(ANOTHER_EVENT, crazy_long_id, consistency=ISOLATED),
        ]
    )

    published = {_ids([request])[0]: request for request in sns.calls("publish")}
    assert len(published) == 2
    uploads = {request["Key"]: request for request in s3.calls("put_object")}
    assert set(uploads) == {f"somePrefix/{long_body_id}", f"somePrefix/{crazy_long_id}"}
    assert {request["Bucket"] for request in uploads.values()} == {"someBucket"}
    for message_id in (long_body_id, crazy_long_id):
        request = published[message_id]
        if wrap:
            assert f'"Body":"","S3BodyKey":"somePrefix/{message_id}"' in request["Message"]
        else:
            assert request["MessageAttributes"]["S3BodyKey"]["StringValue"] == (
                f"somePrefix/{message_id}"
            )


def test_Should_batch_non_isolated_multicast_operations() -> None:
    sns = FakeSns(EVENT_TOPIC, ANOTHER_EVENT_TOPIC)

    _dispatcher(sns=sns).dispatch([_event(EVENT), _event(ANOTHER_EVENT)])

    assert sns.calls("publish") == []
    assert [batch["TopicArn"] for batch in sns.calls("publish_batch")] == [
        topic_arn(EVENT_TOPIC),
        topic_arn(ANOTHER_EVENT_TOPIC),
    ]


def test_Should_dispatch_non_batched_all_multicast_operations_that_failed_in_batch() -> None:
    sns = FakeSns(EVENT_TOPIC, ANOTHER_EVENT_TOPIC)
    sns.fail_batch_entry = lambda entry: _ids([entry])[0] in {"F1", "F2"}

    _dispatcher(sns=sns).dispatch(
        [
            _event(EVENT, "F1"),
            _event(EVENT, "S1"),
            _event(ANOTHER_EVENT, "S2"),
            _event(ANOTHER_EVENT, "F2"),
        ]
    )

    assert _ids(sns.calls("publish")) == ["F1", "F2"]
    batches = sns.calls("publish_batch")
    assert [set(_ids(batch["PublishBatchRequestEntries"])) for batch in batches] == [
        {"F1", "S1"},
        {"F2", "S2"},
    ]


@pytest.mark.parametrize("wrap", [True, False])
@pytest.mark.parametrize("consistency", [DispatchConsistency.DEFAULT, ISOLATED])
def test_Should_upload_large_non_isolated_and_isolated_operations_to_s3(
    wrap: bool, consistency: DispatchConsistency
) -> None:
    """``Should_upload_large_non_isolated_operations_to_s3`` and
    ``Should_upload_large_isolated_operations_request_to_s3``."""
    sqs, s3 = FakeSqs(), FakeS3()

    _dispatcher(sqs, s3=S3Settings("someBucket", "somePrefix", s3), wrap=wrap).dispatch(
        [
            _send("address1", body=b"x" * SQS_MAXIMUM, consistency=consistency),
            _send("address2", body=b"x" * SQS_MAXIMUM, consistency=consistency),
            _send("address2", "x" * SQS_MAXIMUM, consistency=consistency),
        ]
    )

    if consistency is ISOLATED:
        requests = sqs.calls("send_message")
    else:
        batches = sqs.calls("send_message_batch")
        assert len(batches) == 3
        requests = [batch["Entries"][0] for batch in batches]
    uploads = s3.calls("put_object")
    assert len(requests) == len(uploads) == 3
    assert {upload["Bucket"] for upload in uploads} == {"someBucket"}
    for request, upload in zip(requests, uploads, strict=True):
        if wrap:
            assert f'"Body":"","S3BodyKey":"{upload["Key"]}"' in request["MessageBody"]
        else:
            assert request["MessageAttributes"]["S3BodyKey"]["StringValue"] == upload["Key"]


def test_Does_upload_to_S3_when_payload_reserved_bytes_are_set() -> None:
    sqs, sns, s3 = FakeSqs(), FakeSns(EVENT_TOPIC), FakeS3()
    headers = {
        "NServiceBus.AmazonSQS.TimeToBeReceived": "10675199.01:48:05.4775807",
        "NServiceBus.ReplyToAddress": "TestReplyToAddress",
    }

    _dispatcher(sqs, sns, s3=S3Settings("bucketname", "keyprefix", s3), reserve=50).dispatch(
        [
            TransportOperation(
                OutgoingMessage("1234", dict(headers), b"x" * SQS_MAXIMUM),
                "address",
                consistency=ISOLATED,
            ),
            MulticastTransportOperation(
                OutgoingMessage("5678", dict(headers), b"x" * SNS_MAXIMUM),
                EVENT,
                consistency=ISOLATED,
            ),
        ]
    )

    assert sqs.calls("send_message")
    assert sns.calls("publish")
    assert s3.calls("put_object")
    assert len(s3.calls("put_object")[0]["Body"]) > 0


def test_a_published_event_carries_the_message_id_attribute_and_the_wrapped_body() -> None:
    sns = FakeSns(EVENT_TOPIC)
    headers: dict[str, str | None] = {"NServiceBus.MessageIntent": "Publish"}

    _dispatcher(sns=sns).dispatch([_event(EVENT, "the-id", b"{}", headers, ISOLATED)])

    (request,) = sns.calls("publish")
    assert request["MessageAttributes"] == {
        "NServiceBus.MessageId": {"DataType": "String", "StringValue": "the-id"}
    }
    envelope = json.loads(request["Message"])
    assert envelope["Body"] == "e30="
    assert envelope["S3BodyKey"] is None
    assert envelope["Headers"]["NServiceBus.MessageIntent"] == "Publish"


def test_an_unwrapped_publish_carries_the_headers_attribute() -> None:
    sns = FakeSns(EVENT_TOPIC)
    headers: dict[str, str | None] = {"NServiceBus.MessageId": "the-id"}

    _dispatcher(sns=sns, wrap=False).dispatch(
        [_event(EVENT, "the-id", b'{"a":1}', headers, ISOLATED)]
    )

    (request,) = sns.calls("publish")
    assert request["Message"] == '{"a":1}'
    assert request["MessageAttributes"]["NServiceBus.AmazonSQS.Headers"]["StringValue"] == (
        '{"NServiceBus.MessageId":"the-id"}'
    )


def test_a_publish_over_256_kibibytes_needs_s3_where_a_send_of_the_same_size_does_not() -> None:
    sqs, sns = FakeSqs(), FakeSns(EVENT_TOPIC)
    body = b"x" * 200_000

    _dispatcher(sqs, sns).dispatch([_send("address", body=body, consistency=ISOLATED)])
    with pytest.raises(LargeMessageError, match="no S3 bucket was configured"):
        _dispatcher(sqs, sns).dispatch([_event(EVENT, body=body, consistency=ISOLATED)])

    assert len(sqs.calls("send_message")) == 1
    assert sns.calls("publish") == []


def test_the_upload_carries_the_managed_key_encryption() -> None:
    sqs, s3 = FakeSqs(), FakeS3()
    settings = S3Settings(
        "bucket", "prefix", s3, S3EncryptionWithManagedKey("aws:kms", "the-key-id")
    )

    _dispatcher(sqs, s3=settings).dispatch([_send("address", "id", b"x" * SQS_MAXIMUM, ISOLATED)])

    (upload,) = s3.calls("put_object")
    assert upload == {
        "Bucket": "bucket",
        "Key": "prefix/id",
        "Body": b"x" * SQS_MAXIMUM,
        "ServerSideEncryption": "aws:kms",
        "SSEKMSKeyId": "the-key-id",
    }


def test_a_failed_preparation_publishes_none_of_its_group() -> None:
    sns = FakeSns(EVENT_TOPIC)

    with pytest.raises(LargeMessageError):
        _dispatcher(sns=sns).dispatch([_event(EVENT), _event(EVENT, body=b"x" * SNS_MAXIMUM)])

    assert sns.calls("publish_batch") == []


def test_a_dispatcher_without_sns_refuses_a_multicast_operation() -> None:
    with pytest.raises(PublishNotConfiguredError):
        _dispatcher().dispatch([_event(consistency=ISOLATED)])
