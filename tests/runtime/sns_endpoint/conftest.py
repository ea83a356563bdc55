"""A test PKI standing in for SNS, a signer for SNS messages, and receivers wired to them.

The PKI is a test CA and a 2048-bit RSA certificate issued by it (what SNS signs with), plus an
attacker's key and certificate. The certificate fetcher serves both, at whatever URL a test
registers: so a forged message pointing at an attacker's certificate is refused only if the
certificate URL rules refuse it, never because the test could not fetch it.

The string to sign is written out here independently of the runtime, from AWS's documentation.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID

from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.sns_endpoint import lambda_handler
from cross_account_runtime.sns_endpoint.config import EndpointConfig
from cross_account_runtime.sns_endpoint.dedupe import DynamoDbDedupe
from cross_account_runtime.sns_endpoint.notification import Notification
from cross_account_runtime.sns_endpoint.receiver import SnsHttpsReceiver
from cross_account_runtime.sns_endpoint.signature import CertificateCache, FetchError, verify

NOW = dt.datetime(2026, 6, 1, 12, 0, 0, tzinfo=dt.UTC)
TOPIC_ARN = "arn:aws:sns:us-east-1:111111111111:Orders"
OTHER_ALLOWED_TOPIC_ARN = "arn:aws:sns:us-east-1:111111111111:Invoices"
UNLISTED_TOPIC_ARN = "arn:aws:sns:us-east-1:999999999999:Orders"
SNS_CERT_URL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem"
SUBSCRIBE_URL = (
    "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription"
    f"&TopicArn={TOPIC_ARN}&Token=2336412f37fb687f5d51e6e2425c464de12884"
)
UNSUBSCRIBE_URL = (
    "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe"
    f"&SubscriptionArn={TOPIC_ARN}:6b0e71bd-7e97-4d97-80ce-4a0994e55286"
)

RECORDED_NOTIFICATIONS: list[Notification] = []

VALID_ENVIRONMENT = {
    "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": f"{TOPIC_ARN}, {OTHER_ALLOWED_TOPIC_ARN}",
    "SNS_ENDPOINT_DEDUPE_TABLE": "sns-dedupe",
    "SNS_ENDPOINT_HANDLER": "tests.runtime.sns_endpoint.conftest:record_notification",
}
"""An environment the endpoint accepts, naming :func:`record_notification` as its handler."""


def record_notification(notification: Notification) -> None:
    """A handler named by ``SNS_ENDPOINT_HANDLER`` in the tests that configure from it."""
    RECORDED_NOTIFICATIONS.append(notification)


def now() -> float:
    """The tests' fixed clock."""
    return NOW.timestamp()


def sns_time(moment: dt.datetime) -> str:
    """A time as SNS writes it: UTC, milliseconds, ``Z``."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment.microsecond // 1000:03d}Z"
    )


def documented_string_to_sign(message: dict[str, Any]) -> bytes:
    """``name\\nvalue\\n`` for the signed fields of the type, in AWS's documented order."""
    if message["Type"] == "Notification":
        names = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
    else:
        names = ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
    return "".join(
        f"{name}\n{message[name]}\n" for name in names if message.get(name) is not None
    ).encode()


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def issue_certificate(
    subject_key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey,
    issuer_key: rsa.RSAPrivateKey,
    *,
    common_name: str = "sns.amazonaws.com",
    issuer_name: str = "Test SNS CA",
    not_before: dt.datetime = NOW - dt.timedelta(days=30),
    not_after: dt.datetime = NOW + dt.timedelta(days=365),
    digital_signature: bool = True,
    is_ca: bool = False,
    san_ip: str | None = None,
) -> x509.Certificate:
    """A certificate for ``subject_key`` signed by ``issuer_key``."""
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(issuer_name))
        .public_key(subject_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=digital_signature,
                content_commitment=False,
                key_encipherment=not digital_signature,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=is_ca,
                crl_sign=is_ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if san_ip is not None:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(san_ip))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def pem(certificate: x509.Certificate) -> bytes:
    """The certificate in PEM, as SNS serves it."""
    return certificate.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class Pki:
    """The test CA, the SNS signing key and certificate, and an attacker's."""

    ca_key: rsa.RSAPrivateKey
    ca_certificate: x509.Certificate
    sns_key: rsa.RSAPrivateKey
    sns_certificate: x509.Certificate
    attacker_key: rsa.RSAPrivateKey
    attacker_certificate: x509.Certificate


@pytest.fixture(scope="session")
def pki() -> Pki:
    """Keys are 2048-bit RSA, the size of SNS's signing certificates."""
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_certificate = issue_certificate(
        ca_key, ca_key, common_name="Test SNS CA", digital_signature=False, is_ca=True
    )
    sns_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    attacker_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return Pki(
        ca_key=ca_key,
        ca_certificate=ca_certificate,
        sns_key=sns_key,
        sns_certificate=issue_certificate(sns_key, ca_key),
        attacker_key=attacker_key,
        attacker_certificate=issue_certificate(
            attacker_key, attacker_key, issuer_name="sns.amazonaws.com"
        ),
    )


@dataclass
class CertificateHost:
    """Serves PEM documents by URL, like the web would; records every fetch.

    Unknown URLs fail like an HTTP 404; ``failure`` makes every fetch raise it instead.
    """

    documents: dict[str, bytes] = field(default_factory=dict)
    fetched: list[str] = field(default_factory=list)
    failure: Exception | None = None

    def __call__(self, url: str) -> bytes:
        self.fetched.append(url)
        if self.failure is not None:
            raise self.failure
        if url not in self.documents:
            raise FetchError(url, "HTTP status 404", retryable=False)
        return self.documents[url]


@pytest.fixture
def certificate_host(pki: Pki) -> CertificateHost:
    """SNS's certificate at :data:`SNS_CERT_URL`; tests add the attacker's where they need."""
    return CertificateHost({SNS_CERT_URL: pem(pki.sns_certificate)})


@pytest.fixture
def certificate_cache() -> CertificateCache:
    """A cache of its own per test, on the fixed clock."""
    return CertificateCache(clock=now)


@dataclass
class Signer:
    """Builds and signs SNS messages the way SNS does."""

    pki: Pki

    def sign(
        self,
        message: dict[str, Any],
        *,
        version: str = "2",
        key: rsa.RSAPrivateKey | None = None,
        cert_url: str = SNS_CERT_URL,
    ) -> dict[str, Any]:
        """``message`` with ``SignatureVersion``, ``SigningCertURL`` and ``Signature`` set."""
        digest = hashes.SHA1() if version == "1" else hashes.SHA256()
        signing_key = key if key is not None else self.pki.sns_key
        signature = signing_key.sign(documented_string_to_sign(message), padding.PKCS1v15(), digest)
        return {
            **message,
            "SignatureVersion": version,
            "Signature": base64.b64encode(signature).decode(),
            "SigningCertURL": cert_url,
        }

    def notification(
        self,
        *,
        subject: str | None = "Order placed",
        message: str = '{"orderId": 42}',
        topic_arn: str = TOPIC_ARN,
        timestamp: dt.datetime = NOW - dt.timedelta(seconds=5),
        message_id: str | None = None,
        version: str = "2",
        **signing: Any,
    ) -> dict[str, Any]:
        """A signed Notification (with ``Subject`` unless it is ``None``)."""
        body: dict[str, Any] = {
            "Type": "Notification",
            "MessageId": message_id or str(uuid.uuid4()),
            "TopicArn": topic_arn,
            "Message": message,
            "Timestamp": sns_time(timestamp),
            "UnsubscribeURL": UNSUBSCRIBE_URL,
            "MessageAttributes": {
                "NServiceBus.EnclosedMessageTypes": {"Type": "String", "Value": "OrderPlaced"}
            },
        }
        if subject is not None:
            body["Subject"] = subject
        return self.sign(body, version=version, **signing)

    def confirmation(
        self,
        message_type: str = "SubscriptionConfirmation",
        *,
        topic_arn: str = TOPIC_ARN,
        subscribe_url: str = SUBSCRIBE_URL,
        version: str = "2",
        **signing: Any,
    ) -> dict[str, Any]:
        """A signed SubscriptionConfirmation or UnsubscribeConfirmation."""
        body = {
            "Type": message_type,
            "MessageId": str(uuid.uuid4()),
            "Token": "2336412f37fb687f5d51e6e2425c464de12884",
            "TopicArn": topic_arn,
            "Message": f"You have chosen to subscribe to the topic {topic_arn}.",
            "SubscribeURL": subscribe_url,
            "Timestamp": sns_time(NOW - dt.timedelta(seconds=5)),
        }
        return self.sign(body, version=version, **signing)


@dataclass
class Check:
    """``verify`` with the test's certificate host and cache."""

    host: CertificateHost
    cache: CertificateCache

    def __call__(self, message: dict[str, Any]) -> None:
        verify(message, fetch_certificate=self.host, cache=self.cache)


@pytest.fixture
def check(certificate_host: CertificateHost, certificate_cache: CertificateCache) -> Check:
    """Verifies against the test's own certificate host and cache."""
    return Check(certificate_host, certificate_cache)


@pytest.fixture
def signer(pki: Pki) -> Signer:
    """Signs with the SNS test key unless told otherwise."""
    return Signer(pki)


def function_url_event(
    body: str | dict[str, Any],
    *,
    message_type: str | None = None,
    headers: dict[str, str] | None = None,
    method: str = "POST",
    base64_encoded: bool = False,
) -> dict[str, Any]:
    """A Lambda function URL (payload 2.0) event carrying ``body`` as SNS posts it."""
    text = body if isinstance(body, str) else json.dumps(body)
    if message_type is None and isinstance(body, dict):
        message_type = body.get("Type")
    all_headers = {
        "content-type": "text/plain; charset=UTF-8",
        "user-agent": "Amazon Simple Notification Service Agent",
    }
    if message_type is not None:
        all_headers["x-amz-sns-message-type"] = message_type
    all_headers.update(headers or {})
    return {
        "version": "2.0",
        "rawPath": "/",
        "headers": all_headers,
        "requestContext": {"http": {"method": method, "path": "/"}},
        "body": base64.b64encode(text.encode()).decode() if base64_encoded else text,
        "isBase64Encoded": base64_encoded,
    }


class NoDynamoDb:
    """A DynamoDB client for tests that must never reach the dedupe store."""

    def __getattr__(self, name: str) -> Any:
        pytest.fail(f"DynamoDB was called ({name}) by a delivery that should have been refused")


@dataclass
class Recorder:
    """A notification handler that records what it is given and can be told to fail."""

    received: list[Notification] = field(default_factory=list)
    failures: list[BaseException] = field(default_factory=list)

    def __call__(self, notification: Notification) -> None:
        self.received.append(notification)
        if self.failures:
            raise self.failures.pop(0)


@dataclass
class Confirmer:
    """Stands in for the GET of a SubscribeURL; records it, or raises ``failure``."""

    confirmed: list[str] = field(default_factory=list)
    failure: Exception | None = None

    def __call__(self, url: str) -> None:
        if self.failure is not None:
            raise self.failure
        self.confirmed.append(url)


@dataclass
class Harness:
    """An endpoint wired to the test PKI, a recorder, a confirmer and a fixed clock."""

    certificate_host: CertificateHost
    certificate_cache: CertificateCache
    recorder: Recorder = field(default_factory=Recorder)
    confirmer: Confirmer = field(default_factory=Confirmer)
    clock: list[float] = field(default_factory=lambda: [now()])

    def receiver(
        self,
        *,
        dedupe: DynamoDbDedupe | None = None,
        replay_window_seconds: float = 3900.0,
        logger: JsonLogger | None = None,
    ) -> SnsHttpsReceiver:
        """A receiver allowing :data:`TOPIC_ARN` and :data:`OTHER_ALLOWED_TOPIC_ARN`;
        without ``dedupe`` it fails the test if it reaches DynamoDB."""
        config = EndpointConfig(
            allowed_topic_arns=frozenset({TOPIC_ARN, OTHER_ALLOWED_TOPIC_ARN}),
            dedupe_table="unused-table",
            replay_window_seconds=replay_window_seconds,
        )
        return SnsHttpsReceiver(
            config,
            self.recorder,
            dedupe=dedupe if dedupe is not None else DynamoDbDedupe("unused", client=NoDynamoDb()),
            fetch_certificate=self.certificate_host,
            confirm_subscription=self.confirmer,
            certificate_cache=self.certificate_cache,
            clock=lambda: self.clock[0],
            logger=logger,
        )


@pytest.fixture
def harness(certificate_host: CertificateHost, certificate_cache: CertificateCache) -> Harness:
    """A fresh harness per test."""
    return Harness(certificate_host, certificate_cache)


def response_body(response: dict[str, object]) -> dict[str, str]:
    """The JSON the endpoint answered with."""
    body = response["body"]
    assert isinstance(body, str)
    parsed: dict[str, str] = json.loads(body)
    return parsed


@pytest.fixture
def aws_environment(monkeypatch: pytest.MonkeyPatch, moto_endpoint: str) -> str:
    """Dummy credentials and the moto endpoint for every boto3 client the test creates; no
    profile or config file can point anywhere else."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    return moto_endpoint


@pytest.fixture
def dedupe_table(aws_environment: str) -> Iterator[str]:
    """A fresh DynamoDB table in moto shaped as the endpoint expects (key ``MessageId``, TTL on
    ``ExpiresAt``); deleted afterwards."""
    client = boto3.client("dynamodb")
    name = f"sns-dedupe-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "MessageId", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "MessageId", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.update_time_to_live(
        TableName=name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": "ExpiresAt"},
    )
    yield name
    client.delete_table(TableName=name)


def dynamodb_item(table: str, message_id: str) -> dict[str, Any] | None:
    """The dedupe item for ``message_id``, read consistently, or ``None``."""
    item: dict[str, Any] | None = (
        boto3.client("dynamodb")
        .get_item(TableName=table, Key={"MessageId": {"S": message_id}}, ConsistentRead=True)
        .get("Item")
    )
    return item


@pytest.fixture
def fresh_default_receiver() -> Iterator[None]:
    """The Lambda entry point builds its receiver once per container; start and end clean."""
    lambda_handler._default_receiver.cache_clear()
    yield
    lambda_handler._default_receiver.cache_clear()
