"""The Lambda handler: confirmations, acknowledgements, and every forgery refused with the status
that stops SNS from retrying it (4xx) and a reason naming what is wrong."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.sns_endpoint import receiver as sns_https_endpoint
from cross_account_runtime.sns_endpoint.receiver import (
    MAX_BODY_BYTES,
    ConfigurationError,
    EndpointConfig,
    SnsHttpsEndpoint,
    load_handler,
)
from cross_account_runtime.sns_endpoint.signature import FetchError
from tests.runtime.sns_endpoint.conftest import (
    NOW,
    OTHER_ALLOWED_TOPIC_ARN,
    SUBSCRIBE_URL,
    TOPIC_ARN,
    UNLISTED_TOPIC_ARN,
    CertificateHost,
    Harness,
    Pki,
    Signer,
    function_url_event,
    pem,
    record_notification,
    response_body,
)

# --- confirmations and acknowledgements ----------------------------------------------------


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_subscription_confirmation_for_an_allowed_topic_is_confirmed(
    harness: Harness, signer: Signer, version: str
) -> None:
    message = signer.confirmation(version=version)
    response = harness.endpoint()(function_url_event(message))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "confirmed"
    assert harness.confirmer.confirmed == [SUBSCRIBE_URL]


@pytest.mark.parametrize("version", ["1", "2"])
def test_an_unsubscribe_confirmation_is_acknowledged_and_nothing_is_fetched(
    harness: Harness, signer: Signer, version: str
) -> None:
    message = signer.confirmation("UnsubscribeConfirmation", version=version)
    response = harness.endpoint()(function_url_event(message))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "unsubscribed"
    assert harness.confirmer.confirmed == []


def test_a_subscription_confirmation_for_an_unlisted_topic_is_not_confirmed(
    harness: Harness, signer: Signer
) -> None:
    message = signer.confirmation(topic_arn=UNLISTED_TOPIC_ARN)
    response = harness.endpoint()(function_url_event(message))
    assert response["statusCode"] == 403
    assert "TopicArn" in response_body(response)["reason"]
    assert harness.confirmer.confirmed == []


def test_a_signed_confirmation_whose_subscribe_url_leaves_sns_is_not_followed(
    harness: Harness, signer: Signer
) -> None:
    message = signer.confirmation(subscribe_url="https://evil.example/?Action=ConfirmSubscription")
    response = harness.endpoint()(function_url_event(message))
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
    response = harness.endpoint()(function_url_event(signer.confirmation()))
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
    assert harness.endpoint()(event)["statusCode"] == 200


def test_a_base64_encoded_body_is_decoded(harness: Harness, signer: Signer) -> None:
    event = function_url_event(signer.confirmation(), base64_encoded=True)
    assert harness.endpoint()(event)["statusCode"] == 200


def test_the_answer_is_json_with_outcome_and_reason(harness: Harness, signer: Signer) -> None:
    response = harness.endpoint()(function_url_event(signer.confirmation()))
    assert response["headers"] == {"content-type": "application/json"}
    assert response_body(response) == {"outcome": "confirmed", "reason": "subscription confirmed"}


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
    response = harness.endpoint()(event)
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
    response = harness.endpoint(replay_window_seconds=60)(function_url_event(message))
    assert response["statusCode"] == 403
    assert "beyond the replay window of 60 s" in response_body(response)["reason"]


def test_an_unreachable_certificate_asks_sns_to_retry(harness: Harness, signer: Signer) -> None:
    harness.certificate_host.failure = TimeoutError("timed out")
    response = harness.endpoint()(function_url_event(signer.confirmation()))
    assert response["statusCode"] == 503
    assert response_body(response)["outcome"] == "retry"
    assert harness.confirmer.confirmed == []


def test_an_unexpected_error_answers_500_so_that_sns_retries(
    harness: Harness, signer: Signer
) -> None:
    harness.certificate_host.failure = RuntimeError("bug")
    response = harness.endpoint()(function_url_event(signer.confirmation()))
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
    endpoint = harness.endpoint(logger=JsonLogger("orders-endpoint", stream=stream))
    accepted = signer.confirmation()
    refused = signer.confirmation(topic_arn=UNLISTED_TOPIC_ARN)
    endpoint(function_url_event(accepted))
    endpoint(function_url_event(refused))
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
    endpoint = harness.endpoint(logger=JsonLogger("orders-endpoint", stream=stream))
    endpoint(function_url_event(signer.confirmation()), LambdaContext())
    assert json.loads(stream.getvalue())["function_request_id"] == LambdaContext.aws_request_id


# --- configuration -------------------------------------------------------------------------

VALID_ENVIRONMENT = {
    "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": f"{TOPIC_ARN}, {OTHER_ALLOWED_TOPIC_ARN}",
    "SNS_ENDPOINT_DEDUPE_TABLE": "sns-dedupe",
    "SNS_ENDPOINT_HANDLER": "tests.runtime.sns_endpoint.conftest:record_notification",
}


def test_the_configuration_is_read_from_the_environment() -> None:
    config = EndpointConfig.from_environment(
        {
            **VALID_ENVIRONMENT,
            "SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "600",
            "SNS_ENDPOINT_LEASE_SECONDS": "20",
        }
    )
    assert config == EndpointConfig(
        allowed_topic_arns=frozenset({TOPIC_ARN, OTHER_ALLOWED_TOPIC_ARN}),
        dedupe_table="sns-dedupe",
        handler_path="tests.runtime.sns_endpoint.conftest:record_notification",
        replay_window_seconds=600.0,
        lease_seconds=20.0,
    )


def test_unset_durations_take_their_defaults() -> None:
    config = EndpointConfig.from_environment(VALID_ENVIRONMENT)
    assert config.replay_window_seconds == 3900.0
    assert config.lease_seconds == 30.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": ""}, "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS) is empty"),
        (
            {"SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": "arn:aws:sns:us-east-1:111111111111:*"},
            "is not an SNS topic ARN",
        ),
        (
            {"SNS_ENDPOINT_ALLOWED_TOPIC_ARNS": "arn:aws:sqs:us-east-1:111111111111:Orders"},
            "is not an SNS topic ARN",
        ),
        ({"SNS_ENDPOINT_DEDUPE_TABLE": ""}, "SNS_ENDPOINT_DEDUPE_TABLE is not set"),
        ({"SNS_ENDPOINT_DEDUPE_TABLE": "a b"}, "is not a DynamoDB table name"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "1h"}, "must be a number of seconds, got '1h'"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "-5"}, "must be a positive, finite number"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "inf"}, "must be a positive, finite number"),
        ({"SNS_ENDPOINT_REPLAY_WINDOW_SECONDS": "nan"}, "must be a positive, finite number"),
        ({"SNS_ENDPOINT_LEASE_SECONDS": "0"}, "lease_seconds (SNS_ENDPOINT_LEASE_SECONDS)"),
    ],
)
def test_a_bad_setting_is_named_with_its_fix(change: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        EndpointConfig.from_environment({**VALID_ENVIRONMENT, **change})
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("tests.runtime.sns_endpoint.conftest", "is not 'package.module:function'"),
        (":record_notification", "is not 'package.module:function'"),
        ("tests.runtime.sns_endpoint.no_such_module:handle", "cannot import module"),
        ("tests.runtime.sns_endpoint.conftest:no_such_function", "has no 'no_such_function'"),
        ("tests.runtime.sns_endpoint.conftest:TOPIC_ARN", "is not callable"),
    ],
)
def test_a_bad_handler_path_is_named_with_its_fix(path: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match="SNS_ENDPOINT_HANDLER") as raised:
        load_handler(path)
    assert message in str(raised.value)


def test_a_handler_path_may_name_an_attribute_of_an_attribute() -> None:
    loaded: object = load_handler("json:JSONDecoder.decode")
    assert loaded is json.JSONDecoder.decode


def test_building_from_the_environment_needs_a_handler() -> None:
    environment = {k: v for k, v in VALID_ENVIRONMENT.items() if k != "SNS_ENDPOINT_HANDLER"}
    with pytest.raises(ConfigurationError, match="SNS_ENDPOINT_HANDLER is not set"):
        SnsHttpsEndpoint.from_environment(environment)


@pytest.fixture
def fresh_default_endpoint() -> Iterator[None]:
    """The Lambda entry point builds its endpoint once per container; start and end clean."""
    sns_https_endpoint._default_endpoint.cache_clear()
    yield
    sns_https_endpoint._default_endpoint.cache_clear()


@pytest.mark.usefixtures("fresh_default_endpoint")
def test_the_entry_point_answers_500_while_misconfigured_and_logs_the_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signer: Signer
) -> None:
    monkeypatch.delenv("SNS_ENDPOINT_ALLOWED_TOPIC_ARNS", raising=False)
    monkeypatch.setenv("SNS_ENDPOINT_DEDUPE_TABLE", "sns-dedupe")
    monkeypatch.setenv("SNS_ENDPOINT_HANDLER", VALID_ENVIRONMENT["SNS_ENDPOINT_HANDLER"])
    response = sns_https_endpoint.handler(function_url_event(signer.confirmation()), None)
    assert response["statusCode"] == 500
    assert response_body(response)["outcome"] == "misconfigured"
    log = json.loads(capsys.readouterr().out)
    assert log["level"] == "ERROR"
    assert "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS" in log["reason"]


@pytest.mark.usefixtures("fresh_default_endpoint")
def test_the_entry_point_builds_its_endpoint_from_the_environment_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in VALID_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SNS_ENDPOINT_REPLAY_WINDOW_SECONDS", "60")
    event = function_url_event("{}", message_type="Notification", method="GET")
    assert sns_https_endpoint.handler(event, None)["statusCode"] == 405
    endpoint = sns_https_endpoint._default_endpoint()
    assert endpoint.config.replay_window_seconds == 60.0
    assert endpoint.process is record_notification
    monkeypatch.setenv("SNS_ENDPOINT_REPLAY_WINDOW_SECONDS", "120")
    assert sns_https_endpoint._default_endpoint() is endpoint
