"""Bodies the transport put in S3 cross accounts with the message: the outbound relay copies
each one into the receiving account's body bucket before forwarding, and a body that is gone
sends its message to the dead-letter queue with the reason."""

from __future__ import annotations

import json
import uuid
from typing import Any

import boto3
import pytest

from cross_account_runtime.nservicebus.wire_format import HeadersUpdate
from cross_account_runtime.relay.batch import Relay
from cross_account_runtime.relay.bodies import BodyCopier, body_key
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.decision import REJECTION_ATTRIBUTE
from local_aws.accounts import MOTO_ACCOUNT_HEADER
from tests.runtime.relay.conftest import (
    BILLING_ACCOUNT,
    BILLING_INGRESS_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    REGION,
    SALES_ACCOUNT,
    LambdaContext,
    RecordingSend,
    failed_ids,
    headers_attribute,
    lambda_attribute,
    request_headers,
    sqs_event,
    sqs_record,
)

SALES_BUCKET = f"messaging-bodies-{SALES_ACCOUNT}-{REGION}"
BILLING_BUCKET = f"messaging-bodies-{BILLING_ACCOUNT}-{REGION}"
BODY = b"x" * (1_572_864)  # 1.5 MiB, over SQS's limit


def s3_as(account: str) -> Any:
    """An S3 client acting as ``account`` of the local AWS."""
    client = boto3.client("s3", region_name=REGION)

    def address(request: Any, **_: Any) -> None:
        request.headers[MOTO_ACCOUNT_HEADER] = account

    client.meta.events.register("before-sign.s3.*", address)
    return client


def s3_record(key: str, *, form: str = "wrapped") -> dict[str, Any]:
    """A message whose body the transport stored in S3 under ``key``."""
    headers = request_headers()
    if form == "wrapped":
        body = json.dumps({"Body": "", "S3BodyKey": key, "Headers": headers})
        return sqs_record(body)
    attributes = {
        "NServiceBus.AmazonSQS.Headers": headers_attribute(headers),
        "S3BodyKey": lambda_attribute("String", key),
    }
    return sqs_record("empty message", message_attributes=attributes)


def outbound_config() -> RelayConfig:
    return RelayConfig(
        "outbound",
        {
            BILLING_SHADOW_ARN: {
                "destination": BILLING_INGRESS_ARN,
                "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                "bodyBucket": BILLING_BUCKET,
            }
        },
        ["Sales"],
        body_bucket=SALES_BUCKET,
    )


@pytest.mark.parametrize("form", ["wrapped", "attribute"])
def test_the_key_is_read_where_the_transport_reads_it(form: str) -> None:
    record = s3_record("bodies/abc", form=form)
    assert body_key(record, HeadersUpdate(record)) == "bodies/abc"


def test_a_typed_native_message_names_its_key_in_an_attribute() -> None:
    attributes = {
        "MessageTypeFullName": lambda_attribute("String", "Ns.Ordered"),
        "S3BodyKey": lambda_attribute("String", "bodies/typed"),
    }
    assert body_key(sqs_record("", message_attributes=attributes), None) == "bodies/typed"


def test_a_plain_native_message_has_a_body_of_its_own() -> None:
    attributes = {"S3BodyKey": lambda_attribute("String", "not/read")}
    assert body_key(sqs_record("hello", message_attributes=attributes), None) is None


def test_a_body_bucket_needs_the_relays_own_bucket() -> None:
    with pytest.raises(ValueError, match="RELAY_BODY_BUCKET is not set"):
        RelayConfig(
            "outbound",
            {
                BILLING_SHADOW_ARN: {
                    "destination": BILLING_INGRESS_ARN,
                    "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                    "bodyBucket": BILLING_BUCKET,
                }
            },
            ["Sales"],
        )


@pytest.mark.parametrize("name", ["Upper-Case", "ab", "ends-", "a..b", "a.-b"])
def test_bucket_names_s3_refuses_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not an S3 bucket name"):
        RelayConfig(
            "outbound",
            {
                BILLING_SHADOW_ARN: {
                    "destination": BILLING_INGRESS_ARN,
                    "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                    "bodyBucket": name,
                }
            },
            ["Sales"],
            body_bucket=SALES_BUCKET,
        )


@pytest.mark.moto
@pytest.mark.usefixtures("moto_aws")
class TestAgainstTheLocalAws:
    @pytest.fixture(autouse=True)
    def buckets(self, request: pytest.FixtureRequest) -> None:
        """Both accounts' body buckets, once the local AWS is set up."""
        request.getfixturevalue("moto_aws")
        for account, bucket in ((SALES_ACCOUNT, SALES_BUCKET), (BILLING_ACCOUNT, BILLING_BUCKET)):
            s3 = s3_as(account)
            if bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
                s3.create_bucket(Bucket=bucket)

    def relay(self, send: RecordingSend) -> Relay:
        copier = BodyCopier(
            SALES_BUCKET, SALES_ACCOUNT, create=lambda _region: s3_as(SALES_ACCOUNT)
        )
        return Relay(outbound_config(), send_batch=send, copier=copier)

    @pytest.mark.parametrize("form", ["wrapped", "attribute"])
    def test_the_body_is_in_the_receivers_bucket_before_the_message_is_sent(
        self, form: str
    ) -> None:
        key = f"bodies/{uuid.uuid4()}"
        s3_as(SALES_ACCOUNT).put_object(Bucket=SALES_BUCKET, Key=key, Body=BODY)
        send = RecordingSend()
        response = self.relay(send)(sqs_event(s3_record(key, form=form)), LambdaContext())
        assert failed_ids(response) == []
        [request] = send.requests
        assert request["QueueUrl"].endswith(f"/{BILLING_ACCOUNT}/Billing-ingress")
        copied = s3_as(BILLING_ACCOUNT).get_object(Bucket=BILLING_BUCKET, Key=key)
        assert copied["Body"].read() == BODY

    def test_a_message_whose_body_is_gone_goes_to_its_dead_letter_queue_with_the_reason(
        self,
    ) -> None:
        send = RecordingSend()
        record = s3_record("bodies/expired")
        response = self.relay(send)(sqs_event(record), LambdaContext())
        assert failed_ids(response) == []
        [request] = send.requests
        assert request["QueueUrl"].endswith(f"/{SALES_ACCOUNT}/Billing-dlq")
        assert request["MessageBody"] == record["body"]
        rejection = json.loads(request["MessageAttributes"][REJECTION_ATTRIBUTE]["StringValue"])
        assert rejection["kind"] == "body_missing"
        assert "s3://messaging-bodies-111111111111-us-east-1/bodies/expired" in rejection["reason"]

    def test_a_copy_that_fails_otherwise_is_retried_and_nothing_is_sent(self) -> None:
        key = f"bodies/{uuid.uuid4()}"
        s3_as(SALES_ACCOUNT).put_object(Bucket=SALES_BUCKET, Key=key, Body=BODY)
        billing = s3_as(BILLING_ACCOUNT)
        for listed in billing.list_objects_v2(Bucket=BILLING_BUCKET).get("Contents", []):
            billing.delete_object(Bucket=BILLING_BUCKET, Key=listed["Key"])
        billing.delete_bucket(Bucket=BILLING_BUCKET)
        send = RecordingSend()
        record = s3_record(key)
        response = self.relay(send)(sqs_event(record), LambdaContext())
        assert failed_ids(response) == [record["messageId"]]
        assert send.requests == []

    def test_a_message_without_an_s3_body_is_forwarded_without_a_copy(self) -> None:
        send = RecordingSend()
        response = self.relay(send)(
            sqs_event(
                sqs_record(
                    json.dumps({"Body": "e30=", "S3BodyKey": None, "Headers": request_headers()})
                )
            ),
            LambdaContext(),
        )
        assert failed_ids(response) == []
        assert len(send.requests) == 1
