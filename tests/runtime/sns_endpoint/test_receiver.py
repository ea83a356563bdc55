"""The receiver: confirmations, acknowledgements, and every forgery refused with the status that
stops SNS from retrying it (4xx) and a reason naming what is wrong."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.sns_endpoint.http_request import MAX_BODY_BYTES
from cross_account_runtime.sns_endpoint.receiver import Answer, AnswerOutcome, SnsHttpsReceiver
from cross_account_runtime.sns_endpoint.signature import FetchError
from tests.runtime.sns_endpoint.conftest import (
    NOW,
    OTHER_ALLOWED_TOPIC_ARN,
    SUBSCRIBE_URL,
    TOPIC_ARN,
    UNLISTED_TOPIC_ARN,
    VALID_ENVIRONMENT,
    CertificateHost,
    Harness,
    Pki,
    Signer,
    function_url_event,
    pem,
    response_body,
)

# --- confirmations and acknowledgements ----------------------------------------------------


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_subscription_confirmation_for_an_allowed_topic_is_confirmed(
    harness: Harness, signer: Signer, version: str
) -> None:
    message = signer.confirmation(version=version)
    response = harness.receiver()(function_url_event(message))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "confirmed"
    assert harness.confirmer.confirmed == [SUBSCRIBE_URL]


@pytest.mark.parametrize("version", ["1", "2"])
def test_an_unsubscribe_confirmation_is_acknowledged_and_nothing_is_fetched(
    harness: Harness, signer: Signer, version: str
) -> None:
    message = signer.confirmation("UnsubscribeConfirmation", version=version)
    response = harness.receiver()(function_url_event(message))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "unsubscribed"
    assert harness.confirmer.confirmed == []


def test_a_subscription_confirmation_for_an_unlisted_topic_is_not_confirmed(
    harness: Harness, signer: Signer
) -> None:
    message = signer.confirmation(topic_arn=UNLISTED_TOPIC_ARN)
    response = harness.receiver()(function_url_event(message))
    assert response["statusCode"] == 403
    assert "TopicArn" in response_body(response)["reason"]
    assert harness.confirmer.confirmed == []


def test_a_signed_confirmation_whose_subscribe_url_leaves_sns_is_not_followed(
    harness: Harness, signer: Signer
) -> None:
    message = signer.confirmation(subscribe_url="https://evil.example/?Action=ConfirmSubscription")
    response = harness.receiver()(function_url_event(message))
    assert response["statusCode"] == 403
    assert response_body(response)["reason"].startswith("SubscribeURL: host 'evil.example'")
    assert harness.confirmer.confirmed == []


@pytest.mark.parametrize(
    ("failure", "status"),
    [
        (FetchError(SUBSCRIBE_URL, "HTTP status 503", retryable=True), 502),
        (TimeoutError("timed out"), 502),
        (FetchError(SUBSCRIBE_URL, "HTTP status 403", retryable=False), 400),
    ],
)
def test_a_failed_confirmation_is_retried_only_when_a_retry_can_succeed(
    harness: Harness, signer: Signer, failure: Exception, status: int
) -> None:
    harness.confirmer.failure = failure
    response = harness.receiver()(function_url_event(signer.confirmation()))
    assert response["statusCode"] == status


def test_an_api_gateway_rest_event_with_mixed_case_headers_is_understood(
    harness: Harness, signer: Signer
) -> None:
    message = signer.confirmation()
    event = {
        "resource": "/sns",
        "httpMethod": "POST",
        "headers": {
            "Content-Type": "text/plain; charset=UTF-8",
            "X-Amz-Sns-Message-Type": "SubscriptionConfirmation",
            "x-amz-sns-TOPIC-arn": TOPIC_ARN,
        },
        "multiValueHeaders": {},
        "body": json.dumps(message),
        "isBase64Encoded": False,
    }
    assert harness.receiver()(event)["statusCode"] == 200


def test_a_base64_encoded_body_is_decoded(harness: Harness, signer: Signer) -> None:
    event = function_url_event(signer.confirmation(), base64_encoded=True)
    assert harness.receiver()(event)["statusCode"] == 200


def test_the_answer_is_json_with_outcome_and_reason(harness: Harness, signer: Signer) -> None:
    response = harness.receiver()(function_url_event(signer.confirmation()))
    assert response["headers"] == {"content-type": "application/json"}
    assert response_body(response) == {"outcome": "confirmed", "reason": "subscription confirmed"}


@pytest.mark.parametrize("outcome", list(AnswerOutcome))
def test_every_answer_outcome_is_written_as_its_plain_text(outcome: AnswerOutcome) -> None:
    """Metrics filters match the outcome's text in the body and the log line."""
    response = Answer(503, outcome, "why").response()
    assert response["body"] == f'{{"outcome": "{outcome.value}", "reason": "why"}}'


# --- forgeries and malformed deliveries ----------------------------------------------------


@dataclass(frozen=True)
class Forgery:
    """A delivery that must be refused, the status SNS must get, and a piece of the reason."""

    name: str
    make: Callable[[Signer, Pki, CertificateHost], dict[str, Any]]
    status: int
    reason: str


def _altered(field: str, value: object) -> Callable[[Signer, Pki, CertificateHost], dict[str, Any]]:
    def make(signer: Signer, _pki: Pki, _host: CertificateHost) -> dict[str, Any]:
        message = signer.notification()
        message[field] = value
        return function_url_event(message)

    return make


def _confirmation_altered(
    field: str, value: str
) -> Callable[[Signer, Pki, CertificateHost], dict[str, Any]]:
    def make(signer: Signer, _pki: Pki, _host: CertificateHost) -> dict[str, Any]:
        message = signer.confirmation()
        message[field] = value
        return function_url_event(message)

    return make


def _attacker_certificate_at(url: str) -> Callable[[Signer, Pki, CertificateHost], dict[str, Any]]:
    """Signed by the attacker, whose certificate really is served at ``url``."""

    def make(signer: Signer, pki: Pki, host: CertificateHost) -> dict[str, Any]:
        host.documents[url] = pem(pki.attacker_certificate)
        return function_url_event(signer.notification(key=pki.attacker_key, cert_url=url))

    return make


def _event_of(
    transform: Callable[[dict[str, Any]], dict[str, Any]],
) -> Callable[[Signer, Pki, CertificateHost], dict[str, Any]]:
    def make(signer: Signer, _pki: Pki, _host: CertificateHost) -> dict[str, Any]:
        return transform(function_url_event(signer.notification()))

    return make


def _without(field: str) -> Callable[[Signer, Pki, CertificateHost], dict[str, Any]]:
    def make(signer: Signer, _pki: Pki, _host: CertificateHost) -> dict[str, Any]:
        message = signer.notification()
        del message[field]
        return function_url_event(message, message_type="Notification")

    return make


def _body(text: str, message_type: str = "Notification") -> Callable[..., dict[str, Any]]:
    return lambda *_: function_url_event(text, message_type=message_type)


FORGERIES = [
    Forgery(
        "message altered", _altered("Message", '{"orderId": 43}'), 403, "Signature: does not match"
    ),
    Forgery(
        "message id altered", _altered("MessageId", "another-id"), 403, "Signature: does not match"
    ),
    Forgery(
        "subject altered", _altered("Subject", "Refund issued"), 403, "Signature: does not match"
    ),
    Forgery(
        "timestamp altered",
        _altered("Timestamp", "2026-06-01T11:59:56.000Z"),
        403,
        "Signature: does not match",
    ),
    Forgery(
        "topic altered to another allowed topic",
        _altered("TopicArn", OTHER_ALLOWED_TOPIC_ARN),
        403,
        "Signature: does not match",
    ),
    Forgery(
        "token altered",
        _confirmation_altered("Token", "attacker-token"),
        403,
        "Signature: does not match",
    ),
    Forgery(
        "subscribe url altered",
        _confirmation_altered(
            "SubscribeURL", "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&x=1"
        ),
        403,
        "Signature: does not match",
    ),
    Forgery(
        "signed by another key",
        lambda signer, pki, _host: function_url_event(signer.notification(key=pki.attacker_key)),
        403,
        "Signature: does not match",
    ),
    Forgery(
        "signature version swapped",
        _altered("SignatureVersion", "1"),
        403,
        "Signature: does not match",
    ),
    Forgery(
        "certificate over http",
        _attacker_certificate_at(
            "http://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem"
        ),
        403,
        "SigningCertURL: must use https",
    ),
    Forgery(
        "certificate on a non-SNS host",
        _attacker_certificate_at("https://evil.example/SimpleNotificationService-1.pem"),
        403,
        "SigningCertURL: host 'evil.example' is not SNS",
    ),
    Forgery(
        "certificate on a look-alike host",
        _attacker_certificate_at("https://sns.us-east-1.amazonaws.com.evil.example/cert.pem"),
        403,
        "is not SNS",
    ),
    Forgery(
        "certificate behind userinfo",
        _attacker_certificate_at("https://sns.us-east-1.amazonaws.com@evil.example/cert.pem"),
        403,
        "SigningCertURL: must not carry userinfo",
    ),
    Forgery(
        "certificate behind a port and userinfo",
        _attacker_certificate_at("https://sns.us-east-1.amazonaws.com:443@evil.example/cert.pem"),
        403,
        "SigningCertURL: must not carry userinfo",
    ),
    Forgery(
        "certificate on another port",
        _attacker_certificate_at("https://sns.us-east-1.amazonaws.com:8443/cert.pem"),
        403,
        "SigningCertURL: must not name a port",
    ),
    Forgery(
        "certificate not a .pem",
        _attacker_certificate_at("https://sns.us-east-1.amazonaws.com/cert.txt"),
        403,
        "SigningCertURL: path must end with .pem",
    ),
    Forgery(
        "certificate url missing on the SNS host",
        lambda signer, _pki, _host: function_url_event(
            signer.notification(cert_url="https://sns.us-east-1.amazonaws.com/missing.pem")
        ),
        403,
        "SigningCertURL: fetching the certificate failed: HTTP status 404",
    ),
    Forgery(
        "unknown signature version",
        _altered("SignatureVersion", "3"),
        400,
        "SignatureVersion: unsupported",
    ),
    Forgery(
        "signature not base64", _altered("Signature", "%%%"), 400, "Signature: is not valid base64"
    ),
    Forgery(
        "stale timestamp",
        lambda signer, _pki, _host: function_url_event(
            signer.notification(timestamp=NOW - dt.timedelta(seconds=3901))
        ),
        403,
        "beyond the replay window of 3900 s",
    ),
    Forgery(
        "timestamp from the future",
        lambda signer, _pki, _host: function_url_event(
            signer.notification(timestamp=NOW + dt.timedelta(seconds=301))
        ),
        403,
        "in the future",
    ),
    Forgery(
        "timestamp unreadable",
        _altered("Timestamp", "yesterday"),
        400,
        "Timestamp: 'yesterday' is not an ISO 8601",
    ),
    Forgery(
        "timestamp without a zone",
        _altered("Timestamp", "2026-06-01T11:59:55"),
        400,
        "is not an ISO 8601 time with a zone",
    ),
    Forgery(
        "topic not allowed",
        lambda signer, _pki, _host: function_url_event(
            signer.notification(topic_arn=UNLISTED_TOPIC_ARN)
        ),
        403,
        "is not on the allow-list",
    ),
    Forgery(
        "header type not matching the body",
        lambda signer, _pki, _host: function_url_event(
            signer.notification(), message_type="SubscriptionConfirmation"
        ),
        400,
        "header x-amz-sns-message-type is 'SubscriptionConfirmation' but the body's Type is 'Notification'",
    ),
    Forgery(
        "header type missing",
        _event_of(lambda event: {**event, "headers": {"content-type": "text/plain"}}),
        400,
        "header x-amz-sns-message-type is missing",
    ),
    Forgery(
        "header topic not matching the body",
        lambda signer, _pki, _host: function_url_event(
            signer.notification(), headers={"x-amz-sns-topic-arn": OTHER_ALLOWED_TOPIC_ARN}
        ),
        400,
        "header x-amz-sns-topic-arn",
    ),
    Forgery("malformed JSON", _body('{"Type": "Notification",'), 400, "body: not a JSON document"),
    Forgery("JSON array", _body('["Notification"]'), 400, "body: a JSON list, not an object"),
    Forgery(
        "duplicate JSON keys",
        _body('{"Type": "Notification", "Type": "Notification"}'),
        400,
        "'Type' appears twice",
    ),
    Forgery("empty body", _body(""), 400, "body: empty"),
    Forgery(
        "oversized body",
        _body(" " * (MAX_BODY_BYTES + 1)),
        413,
        f"larger than {MAX_BODY_BYTES} bytes",
    ),
    Forgery(
        "oversized base64 body",
        lambda *_: function_url_event(
            "x" * (2 * MAX_BODY_BYTES), base64_encoded=True, message_type="Notification"
        ),
        413,
        "larger than",
    ),
    Forgery(
        "bad base64 body",
        _event_of(lambda event: {**event, "body": "not*base64", "isBase64Encoded": True}),
        400,
        "isBase64Encoded is true but the body is not base64",
    ),
    Forgery(
        "body not UTF-8",
        _event_of(
            lambda event: {
                **event,
                "body": base64.b64encode(b'{"Type": "\xff"}').decode(),
                "isBase64Encoded": True,
            }
        ),
        400,
        "not a JSON document in UTF-8",
    ),
    Forgery("message missing", _without("Message"), 400, "Message: is missing"),
    Forgery("message id missing", _without("MessageId"), 400, "MessageId: is missing"),
    Forgery("signature missing", _without("Signature"), 400, "Signature: is missing"),
    Forgery(
        "certificate url missing", _without("SigningCertURL"), 400, "SigningCertURL: is missing"
    ),
    Forgery("topic missing", _without("TopicArn"), 400, "TopicArn: is missing"),
    Forgery("timestamp missing", _without("Timestamp"), 400, "Timestamp: is missing"),
    Forgery("type missing", _without("Type"), 400, "Type: is missing"),
    Forgery(
        "message not a string",
        _altered("Message", 42),
        400,
        "Message: must be a JSON string, got int",
    ),
    Forgery(
        "GET instead of POST",
        lambda signer, _pki, _host: function_url_event(signer.notification(), method="GET"),
        405,
        "method GET not allowed",
    ),
    Forgery(
        "not an HTTP event",
        lambda signer, _pki, _host: {"Records": [{"Sns": signer.notification()}]},
        400,
        "event: no requestContext.http.method",
    ),
]


@pytest.mark.parametrize("forgery", FORGERIES, ids=[forgery.name for forgery in FORGERIES])
def test_a_forged_or_malformed_delivery_is_refused_and_never_handled(
    harness: Harness, signer: Signer, pki: Pki, forgery: Forgery
) -> None:
    event = forgery.make(signer, pki, harness.certificate_host)
    response = harness.receiver()(event)
    assert response["statusCode"] == forgery.status
    body = response_body(response)
    assert forgery.reason in body["reason"]
    assert body["outcome"] == "rejected"
    assert harness.recorder.received == []
    assert harness.confirmer.confirmed == []


def test_there_are_at_least_twenty_forgeries() -> None:
    assert len(FORGERIES) >= 20


def test_the_replay_window_is_configurable(harness: Harness, signer: Signer) -> None:
    message = signer.confirmation()
    harness.clock[0] += 120
    response = harness.receiver(replay_window_seconds=60)(function_url_event(message))
    assert response["statusCode"] == 403
    assert "beyond the replay window of 60 s" in response_body(response)["reason"]


def test_an_unreachable_certificate_asks_sns_to_retry(harness: Harness, signer: Signer) -> None:
    harness.certificate_host.failure = TimeoutError("timed out")
    response = harness.receiver()(function_url_event(signer.confirmation()))
    assert response["statusCode"] == 503
    assert response_body(response)["outcome"] == "retry"
    assert harness.confirmer.confirmed == []


def test_an_unexpected_error_answers_500_so_that_sns_retries(
    harness: Harness, signer: Signer
) -> None:
    harness.certificate_host.failure = RuntimeError("bug")
    response = harness.receiver()(function_url_event(signer.confirmation()))
    assert response["statusCode"] == 500
    assert response_body(response) == {
        "outcome": "error",
        "reason": "internal error; the delivery will be retried",
    }


# --- logs ----------------------------------------------------------------------------------


def test_each_delivery_writes_one_json_log_line_with_id_topic_outcome_and_reason(
    harness: Harness, signer: Signer
) -> None:
    stream = io.StringIO()
    receiver = harness.receiver(logger=JsonLogger("orders-endpoint", stream=stream))
    accepted = signer.confirmation()
    refused = signer.confirmation(topic_arn=UNLISTED_TOPIC_ARN)
    receiver(function_url_event(accepted))
    receiver(function_url_event(refused))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 2
    assert lines[0]["level"] == "INFO"
    assert lines[0]["service"] == "orders-endpoint"
    assert lines[0]["message_id"] == accepted["MessageId"]
    assert lines[0]["topic_arn"] == TOPIC_ARN
    assert lines[0]["message_type"] == "SubscriptionConfirmation"
    assert lines[0]["outcome"] == "confirmed"
    assert lines[0]["status"] == 200
    assert lines[0]["cold_start"] is True
    assert lines[1]["level"] == "WARNING"
    assert lines[1]["outcome"] == "rejected"
    assert lines[1]["topic_arn"] == UNLISTED_TOPIC_ARN
    assert "allow-list" in lines[1]["reason"]
    assert lines[1]["cold_start"] is False
    assert lines[0]["timestamp"].endswith("Z")
    assert "function_request_id" not in lines[0], "fields without a value are left out"


def test_the_log_line_carries_the_lambda_request_id(harness: Harness, signer: Signer) -> None:
    class LambdaContext:
        aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"

    stream = io.StringIO()
    receiver = harness.receiver(logger=JsonLogger("orders-endpoint", stream=stream))
    receiver(function_url_event(signer.confirmation()), LambdaContext())
    assert json.loads(stream.getvalue())["function_request_id"] == LambdaContext.aws_request_id


# --- building from the environment --------------------------------------------------------


def test_building_from_the_environment_needs_a_handler() -> None:
    environment = {k: v for k, v in VALID_ENVIRONMENT.items() if k != "SNS_ENDPOINT_HANDLER"}
    with pytest.raises(ConfigurationError, match="SNS_ENDPOINT_HANDLER is not set"):
        SnsHttpsReceiver.from_environment(environment)
