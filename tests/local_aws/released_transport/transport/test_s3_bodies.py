"""Bodies in S3 (NServiceBus.AmazonSQS 9.1.1 ``Configure/S3Settings.cs``, the encryption
classes, ``Administration/QueueCreator.cs``, ``Receiving/TransportMessageExtensions.cs``,
``Receiving/InputQueuePump.cs``): no upstream unit test covers the settings' checks, the
installers' bucket or the download, so these are what the code says — the checks and their
messages in order, the requests, the lifecycle rule, and what a receiver does with a key."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from local_aws.released_transport.core.incoming import MessageContext
from local_aws.released_transport.transport.queues.naming import get_sqs_queue_name
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.queue_creator import QueueCreator
from local_aws.released_transport.transport.receiving.extraction import S3BodyNotConfiguredError
from local_aws.released_transport.transport.receiving.input_pump import (
    InputQueuePump,
    MessageFate,
)
from local_aws.released_transport.transport.s3_settings import (
    S3EncryptionWithCustomerProvidedKey,
    S3EncryptionWithManagedKey,
    S3Settings,
    S3SettingsError,
)
from tests.local_aws.released_transport.fake_s3 import FakeS3
from tests.local_aws.released_transport.fake_sqs import FakeSqs, client_error


@pytest.mark.parametrize(
    ("bucket", "message"),
    [
        ("ab", "S3 Bucket names must be between 3 and 63 characters in length."),
        ("a" * 64, "S3 Bucket names must be between 3 and 63 characters in length."),
        ("my_bucket", "S3 Bucket names must only contain letters, numbers, hyphens and periods."),
        ("my bucket", "S3 Bucket names must only contain letters, numbers, hyphens and periods."),
        ("my-bucket-", "S3 Bucket names must not end with a hyphen."),
        ("my..bucket", "S3 Bucket names must not contain two adjacent periods."),
        ("my-.bucket", "S3 Bucket names must not contain hyphens adjacent to periods."),
        ("my.-bucket", "S3 Bucket names must not contain hyphens adjacent to periods."),
        # The length is checked first, then the characters, then the ending.
        ("a_", "S3 Bucket names must be between 3 and 63 characters in length."),
        ("a_-", "S3 Bucket names must only contain letters, numbers, hyphens and periods."),
    ],
)
def test_a_bucket_name_is_refused_with_the_transports_message(bucket: str, message: str) -> None:
    with pytest.raises(S3SettingsError) as refused:
        S3Settings(bucket, "prefix", FakeS3())

    assert str(refused.value) == message


@pytest.mark.parametrize("bucket", ["abc", "a" * 63, "My.Bucket-1", "bücket"])
def test_what_dotnet_accepts_passes_even_where_s3_would_refuse(bucket: str) -> None:
    assert S3Settings(bucket, "prefix", FakeS3()).bucket_name == bucket


@pytest.mark.parametrize("prefix", ["", " ", "\t"])
def test_an_empty_key_prefix_is_refused_before_the_bucket_name(prefix: str) -> None:
    with pytest.raises(S3SettingsError) as refused:
        S3Settings("x", prefix, FakeS3())

    assert str(refused.value) == (
        "The value cannot be an empty string or composed entirely of whitespace."
        " (Parameter 'keyPrefix')"
    )


def test_a_customer_key_is_sent_on_upload_and_download() -> None:
    s3 = FakeS3()
    key = base64.b64encode(b"k" * 32).decode()
    settings = S3Settings(
        "bucket", "prefix", s3, S3EncryptionWithCustomerProvidedKey("AES256", key)
    )

    settings.upload("prefix/id", b"body")
    assert settings.download("prefix/id") == b"body"

    upload, download = s3.calls("put_object")[0], s3.calls("get_object")[0]
    for request in (upload, download):
        assert request["SSECustomerAlgorithm"] == "AES256"
        assert request["SSECustomerKey"] == b"k" * 32
        assert "SSECustomerKeyMD5" not in request


def test_a_customer_key_with_its_md5_is_passed_as_the_base64_text() -> None:
    s3 = FakeS3()
    key = base64.b64encode(b"k" * 32).decode()
    md5 = base64.b64encode(hashlib.md5(b"k" * 32).digest()).decode()
    settings = S3Settings(
        "bucket", "prefix", s3, S3EncryptionWithCustomerProvidedKey("AES256", key, md5)
    )

    settings.upload("prefix/id", b"body")

    (upload,) = s3.calls("put_object")
    assert upload["SSECustomerKey"] == key
    assert upload["SSECustomerKeyMD5"] == md5


def test_a_managed_key_changes_the_upload_only() -> None:
    s3 = FakeS3()
    settings = S3Settings("bucket", "prefix", s3, S3EncryptionWithManagedKey("AES256"))

    settings.upload("prefix/id", b"body")
    settings.download("prefix/id")

    assert s3.calls("put_object")[0]["ServerSideEncryption"] == "AES256"
    assert "SSEKMSKeyId" not in s3.calls("put_object")[0]
    assert s3.calls("get_object") == [{"Bucket": "bucket", "Key": "prefix/id"}]


def _creator(sqs: FakeSqs, s3: FakeS3, *, ttl_seconds: int = 4 * 86_400) -> QueueCreator:
    return QueueCreator(
        sqs,
        QueueCache(sqs, get_sqs_queue_name, ""),
        s3=S3Settings("my-bucket", "bodies", s3),
        max_time_to_live_seconds=ttl_seconds,
        sleep=lambda _seconds: None,
    )


def test_installers_create_the_bucket_and_its_lifecycle_rule() -> None:
    sqs, s3 = FakeSqs(), FakeS3()
    creator = _creator(sqs, s3, ttl_seconds=4 * 86_400 + 1)

    creator.create_queue_if_necessary("error", create_delay_queue=False)
    creator.create_queue_if_necessary("Sales", create_delay_queue=True)

    assert s3.calls("create_bucket") == [{"Bucket": "my-bucket"}]
    assert s3.calls("put_bucket_lifecycle_configuration") == [
        {
            "Bucket": "my-bucket",
            "LifecycleConfiguration": {
                "Rules": [
                    {
                        "ID": "NServiceBus.SQS.DeleteMessageBodies",
                        "Filter": {"Prefix": "bodies"},
                        "Status": "Enabled",
                        "Expiration": {"Days": 5},
                    }
                ]
            },
        }
    ]
    assert len(s3.calls("list_buckets")) == 2


def test_an_existing_bucket_of_any_case_is_kept_and_a_foreign_rule_set_is_replaced() -> None:
    sqs, s3 = FakeSqs(), FakeS3("MY-BUCKET", region="eu-west-1")
    s3.lifecycle_rules["my-bucket"] = [{"ID": "keep-logs", "Status": "Enabled"}]

    _creator(sqs, s3).create_queue_if_necessary("Sales", create_delay_queue=False)

    assert s3.calls("create_bucket") == []
    (put,) = s3.calls("put_bucket_lifecycle_configuration")
    assert [rule["ID"] for rule in put["LifecycleConfiguration"]["Rules"]] == [
        "NServiceBus.SQS.DeleteMessageBodies"
    ]


def test_outside_us_east_1_the_bucket_is_created_in_the_clients_region() -> None:
    sqs, s3 = FakeSqs(), FakeS3(region="eu-west-1")

    _creator(sqs, s3).create_queue_if_necessary("Sales", create_delay_queue=False)

    assert s3.calls("create_bucket") == [
        {"Bucket": "my-bucket", "CreateBucketConfiguration": {"LocationConstraint": "eu-west-1"}}
    ]


def test_a_conflicting_bucket_creation_is_tried_five_times() -> None:
    sqs, s3 = FakeSqs(), FakeS3()
    sleeps: list[float] = []
    calls: list[dict[str, Any]] = []

    def conflicting(**kwargs: Any) -> dict[str, Any]:
        calls.append(kwargs)
        raise client_error("OperationAborted", "A conflicting operation", 409)

    s3.create_bucket = conflicting  # type: ignore[method-assign]
    creator = QueueCreator(
        sqs,
        QueueCache(sqs, get_sqs_queue_name, ""),
        s3=S3Settings("my-bucket", "bodies", s3),
        sleep=sleeps.append,
    )

    with pytest.raises(Exception, match="conflicting operation"):
        creator.create_queue_if_necessary("Sales", create_delay_queue=False)

    assert len(calls) == 5
    assert sleeps == [2.0, 4.0, 6.0, 8.0]


def _pump(sqs: FakeSqs, s3: S3Settings | None) -> InputQueuePump:
    cache = QueueCache(sqs, get_sqs_queue_name, "")
    cache.set_queue_url("queue", "queueUrl")
    pump = InputQueuePump(
        sqs,
        cache,
        "queue",
        "error",
        max_concurrency=1,
        visibility_timeout_seconds=30,
        s3=s3,
        clock=lambda: datetime.now(UTC),
    )
    pump.initialize()
    return pump


def _s3_message(*, wrapped: bool) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "NServiceBus.MessageId": {"DataType": "String", "StringValue": "id"},
        "S3BodyKey": {"DataType": "String", "StringValue": "prefix/id"},
    }
    if wrapped:
        body = json.dumps(
            {"Body": "", "S3BodyKey": "prefix/id", "Headers": {"NServiceBus.MessageId": "id"}}
        )
    else:
        body = "empty message"
        attributes["NServiceBus.AmazonSQS.Headers"] = {
            "DataType": "String",
            "StringValue": '{"NServiceBus.MessageId":"id"}',
        }
    return {
        "MessageId": "native",
        "ReceiptHandle": "receipt",
        "Body": body,
        "MessageAttributes": attributes,
        "Attributes": {"SentTimestamp": "1", "ApproximateReceiveCount": "1"},
    }


@pytest.mark.parametrize("wrapped", [True, False])
def test_the_receiver_reads_the_body_from_its_own_bucket(wrapped: bool) -> None:
    sqs, s3 = FakeSqs(), FakeS3()
    s3.objects["receivers-bucket", "prefix/id"] = b"\x00raw body"
    seen: list[MessageContext] = []

    result = _pump(sqs, S3Settings("receivers-bucket", "other", s3)).process(
        _s3_message(wrapped=wrapped), seen.append, lambda _context: pytest.fail("no error")
    )

    assert result.fate is MessageFate.PROCESSED
    assert seen[0].body == b"\x00raw body"
    assert s3.calls("get_object") == [{"Bucket": "receivers-bucket", "Key": "prefix/id"}]
    assert ("S3BodyKey" in seen[0].headers) is not wrapped


def test_without_s3_settings_a_body_in_s3_is_poison() -> None:
    sqs = FakeSqs()

    result = _pump(sqs, None).process(
        _s3_message(wrapped=True), lambda _c: None, lambda _c: pytest.fail("no error")
    )

    assert result.fate is MessageFate.POISON
    assert isinstance(result.error, S3BodyNotConfiguredError)
    assert str(result.error) == (
        "The message id contains the ID of the body stored in S3 but this endpoint is not"
        " configured to use S3 for body storage."
    )
    (moved,) = sqs.calls("send_message")
    assert moved["QueueUrl"] == "error"
    assert moved["MessageBody"] == _s3_message(wrapped=True)["Body"]


def test_a_missing_object_is_poison_without_retries() -> None:
    sqs, s3 = FakeSqs(), FakeS3()

    result = _pump(sqs, S3Settings("bucket", "prefix", s3)).process(
        _s3_message(wrapped=True), lambda _c: None, lambda _c: pytest.fail("no error")
    )

    assert result.fate is MessageFate.POISON
    assert "NoSuchKey" in str(result.error)
    assert [call["QueueUrl"] for call in sqs.calls("send_message")] == ["error"]
    assert sqs.calls("change_message_visibility") == []
