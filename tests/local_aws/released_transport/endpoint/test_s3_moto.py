"""Bodies in S3 between released endpoints against the local AWS (moto in server mode), in one
account with one bucket: installers create the bucket and its lifecycle rule, a large send and a
large publish arrive whole, and a receiver without S3 settings moves such a message to the error
queue unchanged."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.transport.receiving.extraction import S3BodyNotConfiguredError
from local_aws.released_transport.transport.receiving.input_pump import MessageFate
from local_aws.released_transport.transport.s3_settings import (
    S3EncryptionWithManagedKey,
    S3Settings,
)

pytestmark = pytest.mark.moto

ORDER = "Sales.Messages.PlaceOrder, Sales.Messages, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
EVENT = (
    "Sales.Events.OrderPlaced, Sales.Events, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
)
LARGE = b"x" * (1024 * 1024 + 1)


@pytest.fixture
def bucket() -> str:
    """A bucket name of the test's own (bucket names are global in S3, and in moto)."""
    return f"nsb-bodies-{uuid.uuid4().hex[:12]}"


def _settings(s3: Any, bucket: str, **overrides: Any) -> EndpointSettings:
    return EndpointSettings(
        wait_time_seconds=0,
        enable_installers=True,
        s3=S3Settings(bucket, "bodies", s3, S3EncryptionWithManagedKey("AES256")),
        **overrides,
    )


def _started(name: str, sqs: Any, settings: EndpointSettings, sns: Any = None) -> ReleasedEndpoint:
    endpoint = ReleasedEndpoint(name, sqs, settings, sns=sns)
    endpoint.install()
    endpoint.start()
    return endpoint


def test_installers_create_the_bucket_with_its_lifecycle_rule(
    sqs: Any, s3: Any, bucket: str
) -> None:
    _started("Sales", sqs, _settings(s3, bucket))

    assert [bucket["Name"] for bucket in s3.list_buckets()["Buckets"]] == [bucket]
    (rule,) = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert rule["ID"] == "NServiceBus.SQS.DeleteMessageBodies"
    assert rule["Filter"] == {"Prefix": "bodies"}
    assert rule["Status"] == "Enabled"
    assert rule["Expiration"]["Days"] == 4


@pytest.mark.parametrize("wrap", [True, False])
def test_a_large_send_goes_through_the_bucket_and_arrives_whole(
    sqs: Any, s3: Any, bucket: str, wrap: bool
) -> None:
    sales = _started("Sales", sqs, _settings(s3, bucket, wrap_outgoing_messages=wrap))
    billing = _started("Billing", sqs, _settings(s3, bucket))

    sent = sales.send("Billing", ORDER, LARGE)
    (outcome,) = billing.process(lambda _context: None)

    assert outcome.pump.fate is MessageFate.PROCESSED
    assert outcome.message is not None
    assert outcome.message.body == LARGE
    stored = s3.get_object(Bucket=bucket, Key=f"bodies/{sent.message_id}")
    assert stored["Body"].read() == LARGE
    assert stored["ServerSideEncryption"] == "AES256"


def test_a_publish_over_256_kibibytes_goes_through_the_bucket(
    sqs: Any, sns: Any, s3: Any, bucket: str
) -> None:
    sales = _started("Sales", sqs, _settings(s3, bucket), sns)
    billing = _started("Billing", sqs, _settings(s3, bucket), sns)
    billing.subscribe(EVENT)
    body = b"y" * (256 * 1024)

    published = sales.publish(EVENT, body)
    (outcome,) = billing.process(lambda _context: None)

    assert outcome.message is not None
    assert outcome.message.body == body
    assert s3.get_object(Bucket=bucket, Key=f"bodies/{published.message_id}")["Body"].read() == body


def test_a_receiver_without_s3_settings_moves_the_message_to_the_error_queue_unchanged(
    sqs: Any, s3: Any, bucket: str
) -> None:
    sales = _started("Sales", sqs, _settings(s3, bucket))
    billing = _started("Billing", sqs, EndpointSettings(wait_time_seconds=0))
    sales.send("Billing", ORDER, LARGE)

    (outcome,) = billing.process(lambda _context: pytest.fail("no handler"))

    assert outcome.pump.fate is MessageFate.POISON
    assert isinstance(outcome.pump.error, S3BodyNotConfiguredError)
    url = sqs.get_queue_url(QueueName="error")["QueueUrl"]
    (moved,) = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    assert '"Body":"","S3BodyKey":"bodies/' in moved["Body"]
    assert moved["MessageAttributes"]["S3BodyKey"]["StringValue"].startswith("bodies/")
    assert "NServiceBus.FailedQ" not in moved["Body"]


def test_a_missing_object_is_poison(sqs: Any, s3: Any, bucket: str) -> None:
    sales = _started("Sales", sqs, _settings(s3, bucket))
    billing = _started("Billing", sqs, _settings(s3, bucket))
    sent = sales.send("Billing", ORDER, LARGE)
    s3.delete_object(Bucket=bucket, Key=f"bodies/{sent.message_id}")

    (outcome,) = billing.process(lambda _context: pytest.fail("no handler"))

    assert outcome.pump.fate is MessageFate.POISON
    assert "NoSuchKey" in str(outcome.pump.error)


def test_without_s3_settings_a_large_send_is_refused(sqs: Any) -> None:
    sales = _started("Sales", sqs, EndpointSettings(wait_time_seconds=0))
    _started("Billing", sqs, EndpointSettings(wait_time_seconds=0))

    with pytest.raises(Exception, match="no S3 bucket was configured"):
        sales.send("Billing", ORDER, LARGE)
