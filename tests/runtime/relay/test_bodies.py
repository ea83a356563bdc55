"""Bodies the transport put in S3 cross accounts with the message: the outbound relay copies
each one into the receiving account's body bucket before forwarding, and a body that is gone
sends its message to the dead-letter queue with the reason."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import boto3
import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE
from cross_account_runtime.nservicebus.wire_reading import read_message
from cross_account_runtime.nservicebus.wire_writing import HeadersUpdate
from cross_account_runtime.relay.bodies import BodyStore, body_key
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.core import relay_message
from cross_account_runtime.relay.decision import DecisionKind
from cross_account_runtime.relay.processor import Relay
from cross_account_runtime.relay.send_requests import (
    MAX_MESSAGE_BYTES,
    REJECTION_ATTRIBUTE,
    message_size,
)
from local_aws.accounts import MOTO_ACCOUNT_HEADER
from local_aws.released_transport.transport.receiving.extraction import (
    extract_transport_message,
    retrieve_body,
)
from local_aws.released_transport.transport.s3_settings import S3Settings
from tests.runtime.relay.conftest import (
    BILLING_ACCOUNT,
    BILLING_ARN,
    BILLING_INGRESS_ARN,
    BILLING_INGRESS_DLQ_ARN,
    BILLING_SHADOW_ARN,
    BILLING_SHADOW_DLQ_ARN,
    REGION,
    SALES_ACCOUNT,
    LambdaContext,
    RecordingSend,
    as_boto3_message,
    failed_ids,
    headers_attribute,
    lambda_attribute,
    message_lines,
    record_as_received,
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

    def relay(self, send: RecordingSend, metrics: list[dict[str, int]] | None = None) -> Relay:
        bodies = BodyStore(SALES_BUCKET, SALES_ACCOUNT, create=lambda _region: s3_as(SALES_ACCOUNT))
        written = metrics if metrics is not None else []
        return Relay(
            outbound_config(),
            send_batch=send,
            bodies=bodies,
            metrics=lambda _dimensions, counts: written.append(dict(counts)),
        )

    @pytest.mark.parametrize("form", ["wrapped", "attribute"])
    def test_the_body_is_in_the_receivers_bucket_before_the_message_is_sent(
        self, form: str
    ) -> None:
        key = f"bodies/{uuid.uuid4()}"
        s3_as(SALES_ACCOUNT).put_object(Bucket=SALES_BUCKET, Key=key, Body=BODY)
        send = RecordingSend()
        metrics: list[dict[str, int]] = []
        response = self.relay(send, metrics)(sqs_event(s3_record(key, form=form)), LambdaContext())
        assert failed_ids(response) == []
        assert [m.get("BodiesCopied") for m in metrics] == [1]
        [request] = send.requests
        assert request["QueueUrl"].endswith(f"/{BILLING_ACCOUNT}/Billing-ingress")
        # Under the sending account's own prefix, the only keys its relay may write there; the
        # message names the copy, which the receiver's transport reads from its own bucket.
        copy = f"relay/{SALES_ACCOUNT}/{key}"
        copied = s3_as(BILLING_ACCOUNT).get_object(Bucket=BILLING_BUCKET, Key=copy)
        assert copied["Body"].read() == BODY
        receiver_bucket = S3Settings(BILLING_BUCKET, "billing", s3_as(BILLING_ACCOUNT))
        received = as_boto3_message(request, str(uuid.uuid4()))
        extracted = extract_transport_message(received, received["MessageId"])
        assert retrieve_body(extracted, received["MessageId"], receiver_bucket) == BODY

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

    @pytest.mark.parametrize("form", ["wrapped", "attribute"])
    def test_a_body_pushed_over_the_limit_is_read_by_the_receiver_from_its_own_bucket(
        self, form: str
    ) -> None:
        record, payload = near_the_limit(form)
        send = RecordingSend()

        response = self.relay(send)(sqs_event(record), LambdaContext())

        assert failed_ids(response) == []
        [request] = send.requests
        receiver_bucket = S3Settings(BILLING_BUCKET, "billing", s3_as(BILLING_ACCOUNT))
        received = as_boto3_message(request, str(uuid.uuid4()))
        extracted = extract_transport_message(received, received["MessageId"])
        assert extracted.headers["NServiceBus.ReplyToAddress"] == "Sales"
        assert retrieve_body(extracted, received["MessageId"], receiver_bucket) == payload

    def test_a_failed_upload_is_retried_and_nothing_is_sent(self, capsys: Any) -> None:
        record, _ = near_the_limit("wrapped")
        config = RelayConfig(
            "outbound",
            {
                BILLING_SHADOW_ARN: {
                    "destination": BILLING_INGRESS_ARN,
                    "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
                    "bodyBucket": "no-such-bucket-anywhere",
                }
            },
            ["Sales"],
            body_bucket=SALES_BUCKET,
        )
        send = RecordingSend()
        bodies = BodyStore(SALES_BUCKET, SALES_ACCOUNT, create=lambda _region: s3_as(SALES_ACCOUNT))

        response = Relay(config, send_batch=send, bodies=bodies)(sqs_event(record), None)

        assert failed_ids(response) == [record["messageId"]]
        assert send.requests == []
        [line] = message_lines(capsys.readouterr().out, record["messageId"])
        assert line["outcome"] == "body_upload_failed"
        assert line["body_key"] == f"relay/{SALES_ACCOUNT}/Billing/{record['messageId']}"

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


# Bodies that no longer fit inline once rewritten -------------------------------------------


def near_the_limit(form: str, *, source: str = BILLING_SHADOW_ARN, **headers: str) -> Any:
    """A request from Sales the transport kept inline: within 40 bytes of SQS's limit, so
    that the ARN header (or a conversion) pushes it over; and its payload."""
    message_headers = request_headers(**headers)
    attributes = {"NServiceBus.MessageId": lambda_attribute("String", str(uuid.uuid4()))}
    if form == "wrapped":
        overhead = len(json.dumps({"Body": "", "S3BodyKey": None, "Headers": message_headers}))
        room = MAX_MESSAGE_BYTES - 40 - overhead - message_size("", as_send(attributes))
        length = room // 4 * 3
        payload = (bytes(range(256)) * (length // 256 + 1))[:length]
        body = json.dumps(
            {
                "Body": base64.b64encode(payload).decode(),
                "S3BodyKey": None,
                "Headers": message_headers,
            }
        )
    else:
        attributes[HEADERS_ATTRIBUTE] = headers_attribute(message_headers)
        room = MAX_MESSAGE_BYTES - 40 - message_size("", as_send(attributes))
        payload = b"{" + b"x" * (room - 2) + b"}"
        body = payload.decode()
    record = sqs_record(body, source=source, message_attributes=attributes)
    assert message_size(record["body"], as_send(attributes)) <= MAX_MESSAGE_BYTES
    return record, payload


def as_send(attributes: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {"DataType": a["dataType"], "StringValue": a["stringValue"]}
        for name, a in attributes.items()
    }


@pytest.mark.parametrize("form", ["wrapped", "attribute"])
def test_a_message_pushed_over_the_limit_by_stamping_goes_through_the_receivers_bucket(
    form: str,
) -> None:
    record, payload = near_the_limit(form)

    decision = relay_message(record, outbound_config())

    assert decision.kind == DecisionKind.FORWARDED
    upload = decision.upload
    assert upload is not None
    key = f"relay/{SALES_ACCOUNT}/Billing/{record['messageId']}"
    assert (upload.bucket, upload.key, upload.account, upload.region) == (
        BILLING_BUCKET,
        key,
        BILLING_ACCOUNT,
        REGION,
    )
    assert upload.payload == payload
    assert decision.request is not None
    request = decision.request
    assert request["MessageAttributes"]["S3BodyKey"]["StringValue"] == key
    assert message_size(request["MessageBody"], request["MessageAttributes"]) < 10_000
    received = record_as_received(request, BILLING_INGRESS_ARN)
    view = read_message(received)
    assert view.form == form
    assert view.s3_body_key == key
    assert view.headers["NServiceBus.ReplyToAddress"] == "Sales"
    assert ARN_HEADER in view.headers
    if form == "wrapped":
        assert json.loads(request["MessageBody"])["Body"] == ""
    else:
        assert request["MessageBody"] == "empty message"


def test_a_retried_upload_uses_the_same_key() -> None:
    record, _ = near_the_limit("wrapped")
    first = relay_message(record, outbound_config()).upload
    again = relay_message(record, outbound_config()).upload
    assert first is not None
    assert again is not None
    assert first.key == again.key


def inbound_with_bucket(bucket: str | None) -> RelayConfig:
    route: dict[str, Any] = {
        "destination": BILLING_ARN,
        "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
        "receiver": "arn",
        "form": "wrapped",
    }
    if bucket is not None:
        route["bodyBucket"] = bucket
    return RelayConfig("inbound", {BILLING_INGRESS_ARN: route})


def test_a_conversion_that_no_longer_fits_goes_through_the_receivers_own_bucket() -> None:
    """Base64 makes an unwrapped text body a third larger once wrapped."""
    record, payload = near_the_limit("attribute", source=BILLING_INGRESS_ARN)

    decision = relay_message(record, inbound_with_bucket(BILLING_BUCKET))

    upload = decision.upload
    assert upload is not None
    assert (upload.bucket, upload.account, upload.payload) == (
        BILLING_BUCKET,
        BILLING_ACCOUNT,
        payload,
    )
    assert decision.request is not None
    envelope = json.loads(decision.request["MessageBody"])
    assert (envelope["Body"], envelope["S3BodyKey"]) == ("", upload.key)


def test_without_a_bucket_a_conversion_that_no_longer_fits_is_refused_with_the_fix() -> None:
    record, _ = near_the_limit("attribute", source=BILLING_INGRESS_ARN)
    decision = relay_message(record, inbound_with_bucket(None))
    assert decision.kind == DecisionKind.OVERSIZE
    assert "(the receiver's wire form, the translated addresses)" in decision.reason
    assert "ReserveBytesInMessageSizeCalculation of at least" in decision.reason
    assert decision.upload is None


def test_a_body_already_in_s3_is_never_uploaded() -> None:
    record = s3_record("bodies/abc")
    decision = relay_message(record, outbound_config())
    assert (decision.upload, decision.body_copy) == (
        None,
        ("bodies/abc", f"relay/{SALES_ACCOUNT}/bodies/abc"),
    )
