"""Lambda SQS events as Lambda builds them, NServiceBus messages in both wire forms, a
recording ``SendMessage`` stand-in, and the plumbing that runs relays against moto.

The record shape follows Lambda's SQS event: ``messageId``, ``receiptHandle``, ``body``,
``attributes`` (``ApproximateReceiveCount``, ``SentTimestamp``, ``SenderId``,
``ApproximateFirstReceiveTimestamp``, and for FIFO ``SequenceNumber``, ``MessageGroupId``,
``MessageDeduplicationId``), ``messageAttributes`` (``stringValue``/``binaryValue`` in base64,
``stringListValues``, ``binaryListValues``, ``dataType``), ``md5OfBody``, ``eventSource``,
``eventSourceARN`` and ``awsRegion``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest

from cross_account_runtime.nservicebus.arn_header import ARN_HEADER
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.nservicebus.wire_format import HEADERS_ATTRIBUTE
from cross_account_runtime.relay import lambda_handler
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.processor import Relay
from cross_account_runtime.relay.sending import BatchResult, SendFailure
from local_aws.accounts import MOTO_ACCOUNT_HEADER, route_sqs_by_queue_url

REGION = "us-east-1"
SALES_ACCOUNT = "111111111111"
BILLING_ACCOUNT = "222222222222"

SALES_ARN = f"arn:aws:sqs:{REGION}:{SALES_ACCOUNT}:Sales"
BILLING_SHADOW_ARN = f"arn:aws:sqs:{REGION}:{SALES_ACCOUNT}:Billing"
BILLING_SHADOW_DLQ_ARN = f"arn:aws:sqs:{REGION}:{SALES_ACCOUNT}:Billing-dlq"
BILLING_INGRESS_ARN = f"arn:aws:sqs:{REGION}:{BILLING_ACCOUNT}:Billing-ingress"
BILLING_INGRESS_DLQ_ARN = f"arn:aws:sqs:{REGION}:{BILLING_ACCOUNT}:Billing-ingress-dlq"
BILLING_ARN = f"arn:aws:sqs:{REGION}:{BILLING_ACCOUNT}:Billing"
FIFO_SHADOW_ARN = f"arn:aws:sqs:{REGION}:{SALES_ACCOUNT}:Billing.fifo"
FIFO_SHADOW_DLQ_ARN = f"arn:aws:sqs:{REGION}:{SALES_ACCOUNT}:Billing-dlq.fifo"
FIFO_INGRESS_ARN = f"arn:aws:sqs:{REGION}:{BILLING_ACCOUNT}:Billing-ingress.fifo"


def outbound_config() -> RelayConfig:
    """Sales' outbound relay: its Billing shadow queues (standard and FIFO) forward to
    Billing's ingress queues; the Sales endpoint's address is stamped with its queue ARN."""
    return RelayConfig(
        "outbound",
        {
            BILLING_SHADOW_ARN: {
                "destination": BILLING_INGRESS_ARN,
                "deadLetterQueue": BILLING_SHADOW_DLQ_ARN,
            },
            FIFO_SHADOW_ARN: {
                "destination": FIFO_INGRESS_ARN,
                "deadLetterQueue": FIFO_SHADOW_DLQ_ARN,
            },
        },
        ["Sales"],
    )


def inbound_config(
    receiver: str = "arn", reachable: tuple[str, ...] | None = None, form: str = "wrapped"
) -> RelayConfig:
    """Billing's inbound relay: its ingress queue delivers to the Billing endpoint queue,
    which is ARN-aware (``receiver="arn"``) or a released endpoint resolving names (``"name"``,
    with the ARNs of the queues it reaches by name (``reachable``); by default Sales, through its shadow in
    Billing's account, and Billing itself), and takes messages in ``form``."""
    route: dict[str, object] = {
        "destination": BILLING_ARN,
        "deadLetterQueue": BILLING_INGRESS_DLQ_ARN,
        "receiver": receiver,
        "form": form,
    }
    if receiver != "name":
        return RelayConfig("inbound", {BILLING_INGRESS_ARN: route})
    book: dict[str, list[str]] = {}
    for arn in reachable if reachable is not None else (SALES_ARN, BILLING_ARN):
        account, _, name = arn.rpartition(":")
        book.setdefault(account, []).append(name)
    route["addressBook"] = "1"
    return RelayConfig("inbound", {BILLING_INGRESS_ARN: route}, address_books={"1": book})


def request_headers(reply_to: str = "Sales", **extra: str) -> dict[str, str]:
    """The headers of a request the Sales endpoint sends to Billing."""
    return {
        "NServiceBus.MessageId": str(uuid.uuid4()),
        "NServiceBus.MessageIntent": "Send",
        "NServiceBus.ReplyToAddress": reply_to,
        "NServiceBus.OriginatingEndpoint": "Sales",
        "NServiceBus.EnclosedMessageTypes": "Billing.Messages.BillOrder",
        "NServiceBus.ContentType": "application/json",
        **extra,
    }


def wrapped_body(headers: dict[str, str], payload: str = '{"OrderId":42}') -> str:
    """A body in NServiceBus's default wrapped form."""
    return json.dumps(
        {
            "Headers": headers,
            "Body": base64.b64encode(payload.encode()).decode(),
            "S3BodyKey": None,
        }
    )


def lambda_attribute(data_type: str, value: str | bytes) -> dict[str, Any]:
    """One entry of a Lambda record's ``messageAttributes``."""
    attribute: dict[str, Any] = {
        "stringListValues": [],
        "binaryListValues": [],
        "dataType": data_type,
    }
    if isinstance(value, bytes):
        attribute["binaryValue"] = base64.b64encode(value).decode()
    else:
        attribute["stringValue"] = value
    return attribute


def headers_attribute(headers: dict[str, str]) -> dict[str, Any]:
    """The ``NServiceBus.AmazonSQS.Headers`` attribute of the unwrapped wire form."""
    return lambda_attribute("String", json.dumps(headers))


def sqs_record(
    body: str,
    *,
    source: str = BILLING_SHADOW_ARN,
    message_attributes: dict[str, Any] | None = None,
    message_id: str | None = None,
    group_id: str | None = None,
    deduplication_id: str | None = None,
    receive_count: int = 1,
    trace_header: str | None = None,
) -> dict[str, Any]:
    """A Lambda SQS record from queue ``source``; FIFO fields when ``group_id`` is given."""
    attributes: dict[str, str] = {
        "ApproximateReceiveCount": str(receive_count),
        "SentTimestamp": "1767225600000",
        "SenderId": "AIDAIENQZJOLO23YVJ4VO",
        "ApproximateFirstReceiveTimestamp": "1767225600012",
    }
    if group_id is not None:
        attributes["SequenceNumber"] = "18849496460467696128"
        attributes["MessageGroupId"] = group_id
    if deduplication_id is not None:
        attributes["MessageDeduplicationId"] = deduplication_id
    if trace_header is not None:
        attributes["AWSTraceHeader"] = trace_header
    return {
        "messageId": message_id or str(uuid.uuid4()),
        "receiptHandle": "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a" + uuid.uuid4().hex,
        "body": body,
        "attributes": attributes,
        "messageAttributes": message_attributes or {},
        "md5OfBody": hashlib.md5(body.encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": source,
        "awsRegion": parse_queue_arn(source).region,
    }


def record_as_received(request: dict[str, Any], source: str, **options: Any) -> dict[str, Any]:
    """The Lambda record for a message sent with ``request`` and received from ``source``."""
    attributes = {
        name: lambda_attribute(
            attribute["DataType"], attribute.get("StringValue", attribute.get("BinaryValue"))
        )
        for name, attribute in request.get("MessageAttributes", {}).items()
    }
    return sqs_record(
        request["MessageBody"], source=source, message_attributes=attributes, **options
    )


def as_boto3_message(request: dict[str, Any], message_id: str) -> dict[str, Any]:
    """A message sent with ``request`` as boto3's ``ReceiveMessage`` returns it, with SQS id
    ``message_id``: what the transport model reads."""
    return {
        "MessageId": message_id,
        "Body": request["MessageBody"],
        "MessageAttributes": dict(request.get("MessageAttributes", {})),
    }


def sqs_event(*records: dict[str, Any]) -> dict[str, Any]:
    """A Lambda SQS event holding ``records``."""
    return {"Records": list(records)}


def good_record(**options: Any) -> dict[str, Any]:
    """A request from Sales to Billing that an outbound relay forwards."""
    return sqs_record(wrapped_body(request_headers()), **options)


def poison_record(**options: Any) -> dict[str, Any]:
    """A request whose ARN header is ambiguous, so every relay refuses it."""
    return sqs_record(wrapped_body(request_headers(**{ARN_HEADER: "a===b"})), **options)


class LambdaContext:
    """The part of Lambda's context object the relay reads."""

    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"


def failed_ids(response: dict[str, list[dict[str, str]]]) -> list[str]:
    """The message ids a partial batch response reports failed, in order."""
    return [item["itemIdentifier"] for item in response["batchItemFailures"]]


@pytest.fixture
def fresh_default_relay() -> Iterator[None]:
    """The entry point builds its relay once per container; start and end clean."""
    lambda_handler._default_relay.cache_clear()
    yield
    lambda_handler._default_relay.cache_clear()


def body_headers(body: str) -> dict[str, str]:
    """The headers of a wrapped body."""
    headers: dict[str, str] = json.loads(body)["Headers"]
    return headers


def attribute_headers(request: dict[str, Any]) -> dict[str, str]:
    """The headers of a ``SendMessage`` request in the unwrapped form."""
    headers: dict[str, str] = json.loads(
        request["MessageAttributes"][HEADERS_ATTRIBUTE]["StringValue"]
    )
    return headers


@dataclass
class Sent:
    """One message the relay sent (an entry of a ``SendMessageBatch``), as the ``SendMessage``
    request it stands for: its ``QueueUrl`` and the entry without its ``Id``."""

    region: str
    request: dict[str, Any]
    message_id: str


@dataclass
class RecordingSend:
    """Stands in for SQS's ``SendMessageBatch``: records each call and each entry it accepts,
    answering a message id; raises the next failure queued for a call's queue URL, or refuses
    the entries whose body contains a text queued with :meth:`refuse_entry`."""

    sent: list[Sent] = field(default_factory=list)
    calls: list[tuple[str, int]] = field(default_factory=list)
    """``(queue URL, entries)`` of each call, in order."""
    failures: dict[str, list[Exception]] = field(default_factory=dict)
    refused: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def fail_next(self, queue_url: str, error: Exception) -> None:
        """Make the next call to ``queue_url`` raise ``error``."""
        self.failures.setdefault(queue_url, []).append(error)

    def refuse_entry(
        self, body_text: str, code: str = "InternalError", queue_url: str | None = None
    ) -> None:
        """Make SQS refuse, inside its batch, every entry whose body contains ``body_text``
        (sent to ``queue_url``, if given)."""
        self.refused[body_text] = (code, queue_url)

    def __call__(
        self, region: str, queue_url: str, entries: Sequence[dict[str, Any]]
    ) -> BatchResult:
        assert 1 <= len(entries) <= 10, entries
        self.calls.append((queue_url, len(entries)))
        pending = self.failures.get(queue_url)
        if pending:
            raise pending.pop(0)
        sent: dict[str, str] = {}
        failed: dict[str, SendFailure] = {}
        for entry in entries:
            request = {"QueueUrl": queue_url, **{k: v for k, v in entry.items() if k != "Id"}}
            code = next(
                (
                    code
                    for text, (code, url) in self.refused.items()
                    if text in entry["MessageBody"] and url in (None, queue_url)
                ),
                None,
            )
            if code is not None:
                failed[entry["Id"]] = SendFailure(code, "refused")
                continue
            message_id = str(uuid.uuid4())
            self.sent.append(Sent(region, request, message_id))
            sent[entry["Id"]] = message_id
        return BatchResult(sent, failed)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every message sent, as its ``SendMessage`` request."""
        return [sent.request for sent in self.sent]

    def to(self, queue_arn: str) -> list[dict[str, Any]]:
        """The requests sent to the queue ``queue_arn``."""
        url = parse_queue_arn(queue_arn).url
        return [sent.request for sent in self.sent if sent.request["QueueUrl"] == url]


def log_lines(text: str) -> list[dict[str, Any]]:
    """The JSON log lines in captured output."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def message_lines(text: str, message_id: str | None = None) -> list[dict[str, Any]]:
    """The log lines about single messages (not the batch summaries), optionally only those
    about ``message_id``."""
    return [
        line
        for line in log_lines(text)
        if "message_id" in line and message_id in (None, line["message_id"])
    ]


class ThrottlingError(Exception):
    """What botocore raises once its retries of a throttled ``SendMessage`` are spent."""


# moto plumbing ------------------------------------------------------------------------------


@pytest.fixture
def moto_aws(monkeypatch: pytest.MonkeyPatch, moto_endpoint: str) -> str:
    """Dummy credentials, the region and moto's endpoint for every boto3 client, and a default
    boto3 session that routes each SQS call to the account in its queue URL.

    Real SQS serves a queue in another account to any caller its policy allows; moto attributes
    a call to one account, given by the ``x-moto-account-id`` request header. A ``before-sign``
    hook on the default session sets that header from the ``QueueUrl`` of each call, so the
    relay's own clients (created from the default session) reach the other account's queues.
    The hook sits outside the relay, which sends exactly what it would send to AWS.
    """
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    session = boto3.session.Session()
    session.events.register("before-sign.sqs", route_sqs_by_queue_url)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", session)
    return moto_endpoint


def account_sqs(account: str) -> Any:
    """An SQS client acting in ``account`` (for calls that name no queue URL, as CreateQueue)."""
    client = boto3.client("sqs")

    def address_account(request: Any, **_: Any) -> None:
        if MOTO_ACCOUNT_HEADER not in request.headers:
            request.headers[MOTO_ACCOUNT_HEADER] = account

    client.meta.events.register("before-sign.sqs", address_account)
    return client


@dataclass(frozen=True)
class Queue:
    """A queue created in moto: its ARN and the URL to call it by."""

    arn: str
    url: str

    @property
    def name(self) -> str:
        return parse_queue_arn(self.arn).name


def create_queue(
    account: str,
    name: str,
    *,
    dead_letter: Queue | None = None,
    max_receive_count: int = 3,
) -> Queue:
    """Create ``name`` in ``account`` (FIFO if it ends with ``.fifo``), allowing 1 MiB messages,
    with a redrive policy to ``dead_letter`` if given."""
    attributes = {"MaximumMessageSize": "1048576", "VisibilityTimeout": "30"}
    if name.endswith(".fifo"):
        attributes["FifoQueue"] = "true"
    if dead_letter is not None:
        attributes["RedrivePolicy"] = json.dumps(
            {"deadLetterTargetArn": dead_letter.arn, "maxReceiveCount": max_receive_count}
        )
    client = account_sqs(account)
    url = client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return Queue(arn, url)


def lambda_event(messages: list[dict[str, Any]], queue: Queue) -> dict[str, Any]:
    """The event Lambda's SQS poller builds from messages it received from ``queue``."""
    records = []
    region = parse_queue_arn(queue.arn).region
    for message in messages:
        attributes = {}
        for name, attribute in message.get("MessageAttributes", {}).items():
            value = attribute.get("StringValue", attribute.get("BinaryValue"))
            attributes[name] = lambda_attribute(attribute["DataType"], value)
        record = {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": dict(message.get("Attributes", {})),
            "messageAttributes": attributes,
            "md5OfBody": message["MD5OfBody"],
            "eventSource": "aws:sqs",
            "eventSourceARN": queue.arn,
            "awsRegion": region,
        }
        if "MD5OfMessageAttributes" in message:
            record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
        records.append(record)
    return {"Records": records}


def receive(queue: Queue, *, wait: bool = False) -> list[dict[str, Any]]:
    """Up to ten messages of ``queue`` with all their attributes, as Lambda's poller asks."""
    response = account_sqs(parse_queue_arn(queue.arn).account).receive_message(
        QueueUrl=queue.url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageAttributeNames=["All"],
        MessageSystemAttributeNames=["All"],
        WaitTimeSeconds=1 if wait else 0,
    )
    messages: list[dict[str, Any]] = response.get("Messages", [])
    return messages


@dataclass
class Invocation:
    """One poll: what was received and what the relay answered."""

    received: list[dict[str, Any]]
    response: dict[str, list[dict[str, str]]]

    @property
    def failed_ids(self) -> list[str]:
        return [item["itemIdentifier"] for item in self.response["batchItemFailures"]]


def poll(queue: Queue, relay: Relay | Any) -> Invocation:
    """What Lambda's SQS event source mapping does once: receive a batch, invoke the handler,
    delete the messages not reported failed, and leave the failed ones in the queue (made
    visible at once, as if their visibility timeout had passed)."""
    messages = receive(queue)
    if not messages:
        return Invocation([], {"batchItemFailures": []})
    response = relay(lambda_event(messages, queue), None)
    failed = {item["itemIdentifier"] for item in response["batchItemFailures"]}
    client = account_sqs(parse_queue_arn(queue.arn).account)
    for message in messages:
        if message["MessageId"] in failed:
            client.change_message_visibility(
                QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
        else:
            client.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    return Invocation(messages, response)


def send_to(queue: Queue, body: str, **parameters: Any) -> str:
    """Send as an endpoint in the queue's account would; returns the message id."""
    client = account_sqs(parse_queue_arn(queue.arn).account)
    message_id: str = client.send_message(QueueUrl=queue.url, MessageBody=body, **parameters)[
        "MessageId"
    ]
    return message_id


def route(destination: Queue, dead_letter: Queue) -> dict[str, object]:
    return {"destination": destination.arn, "deadLetterQueue": dead_letter.arn}


def to_released(destination: Queue, dead_letter: Queue, form: str = "wrapped") -> dict[str, object]:
    """An inbound route to a released endpoint writing ``form``, which reaches the queues of
    address book 1."""
    return {
        **route(destination, dead_letter),
        "receiver": "name",
        "addressBook": "1",
        "form": form,
    }


def with_dead_letter(account: str, name: str, max_receive_count: int = 3) -> tuple[Queue, Queue]:
    """A queue and its dead-letter queue ``<name>-dlq`` (before any ``.fifo``)."""
    base, fifo = name.removesuffix(".fifo"), name.endswith(".fifo")
    dead_letter = create_queue(account, base + "-dlq" + (".fifo" if fifo else ""))
    return (
        create_queue(account, name, dead_letter=dead_letter, max_receive_count=max_receive_count),
        dead_letter,
    )


def relay_document(
    direction: str,
    routes: dict[str, dict[str, object]],
    local: list[str] | None = None,
    reachable: tuple[Queue, ...] = (),
) -> dict[str, object]:
    """What the CDK construct writes into the relay's configuration file (``reachable``: the
    queues of address book 1)."""
    document: dict[str, object] = {"direction": direction, "routes": routes}
    if local is not None:
        document["localEndpoints"] = local
    if reachable:
        book: dict[str, list[str]] = {}
        for queue in reachable:
            account, _, name = queue.arn.rpartition(":")
            book.setdefault(account, []).append(name)
        document["addressBooks"] = {"1": book}
    return document


def relay_config(
    direction: str,
    routes: dict[str, dict[str, object]],
    local: list[str] | None = None,
    reachable: tuple[Queue, ...] = (),
) -> RelayConfig:
    """The relay's configuration read from :func:`relay_document`, with the same checks."""
    document = relay_document(direction, routes, local, reachable)
    return RelayConfig(
        direction, routes, document.get("localEndpoints"), document.get("addressBooks")
    )


def relay_environment(task_root: Path, *arguments: Any) -> dict[str, str]:
    """The function's environment as Lambda gives it, its code (``task_root``) holding the
    configuration file of :func:`relay_document` (``arguments``)."""
    (task_root / "relay-config.json").write_text(
        json.dumps(relay_document(*arguments)), encoding="utf-8"
    )
    return {"RELAY_CONFIGURATION": "relay-config.json", "LAMBDA_TASK_ROOT": str(task_root)}
