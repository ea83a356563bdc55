"""Events that carry no request SNS could have sent: each is answered 400 with a reason naming
the field, and logged as a rejection without a traceback.

A 500 would tell the caller to retry, and no retry of a malformed event can succeed. The events
are the real shapes a Lambda function URL (payload 2.0) and an API Gateway REST API (payload
1.0) send for an SNS delivery, each with one field broken.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
from dataclasses import dataclass
from typing import Any

import pytest

from cross_account_runtime.common.json_log import JsonLogger
from tests.runtime.sns_endpoint.conftest import (
    NOW,
    SNS_CERT_URL,
    TOPIC_ARN,
    UNSUBSCRIBE_URL,
    Harness,
    Signer,
    response_body,
    sns_time,
)

NOTIFICATION: dict[str, Any] = {
    "Type": "Notification",
    "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
    "TopicArn": TOPIC_ARN,
    "Subject": "Order placed",
    "Message": '{"orderId": 42}',
    "Timestamp": sns_time(NOW - dt.timedelta(seconds=5)),
    "SignatureVersion": "2",
    "Signature": base64.b64encode(bytes(256)).decode(),
    "SigningCertURL": SNS_CERT_URL,
    "UnsubscribeURL": UNSUBSCRIBE_URL,
}
"""An SNS notification as posted; unsigned, as no event below gets as far as its signature."""

SNS_HEADERS = {
    "content-type": "text/plain; charset=UTF-8",
    "user-agent": "Amazon Simple Notification Service Agent",
    "x-amz-sns-message-id": NOTIFICATION["MessageId"],
    "x-amz-sns-message-type": "Notification",
    "x-amz-sns-topic-arn": TOPIC_ARN,
}


def function_url(body: object = json.dumps(NOTIFICATION), **changes: object) -> dict[str, Any]:
    """A Lambda function URL event (payload 2.0) of SNS posting ``body`` (text, unless the
    test breaks it), with ``changes`` to its top-level fields."""
    host = "abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws"
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/",
        "rawQueryString": "",
        "headers": {**SNS_HEADERS, "host": host, "x-forwarded-proto": "https"},
        "requestContext": {
            "accountId": "anonymous",
            "apiId": host.partition(".")[0],
            "domainName": host,
            "domainPrefix": host.partition(".")[0],
            "http": {
                "method": "POST",
                "path": "/",
                "protocol": "HTTP/1.1",
                "sourceIp": "54.240.197.233",
                "userAgent": SNS_HEADERS["user-agent"],
            },
            "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jun/2026:11:59:55 +0000",
            "timeEpoch": int(NOW.timestamp() * 1000) - 5000,
        },
        "body": body,
        "isBase64Encoded": False,
    }
    return {**event, **changes}


def rest_api(body: str = json.dumps(NOTIFICATION), **changes: object) -> dict[str, Any]:
    """An API Gateway REST API proxy event (payload 1.0) of SNS posting ``body``, with
    ``changes`` to its top-level fields; header names keep the sender's case."""
    headers = {
        "Content-Type": SNS_HEADERS["content-type"],
        "Host": "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
        "User-Agent": SNS_HEADERS["user-agent"],
        "x-amz-sns-message-id": NOTIFICATION["MessageId"],
        "x-amz-sns-message-type": json.loads(body)["Type"],
        "x-amz-sns-topic-arn": TOPIC_ARN,
    }
    event: dict[str, Any] = {
        "resource": "/",
        "path": "/",
        "httpMethod": "POST",
        "headers": headers,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "accountId": "111111111111",
            "apiId": "a1b2c3d4e5",
            "httpMethod": "POST",
            "identity": {"sourceIp": "54.240.197.233", "userAgent": SNS_HEADERS["user-agent"]},
            "path": "/prod/",
            "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
            "resourcePath": "/",
            "stage": "prod",
        },
        "body": body,
        "isBase64Encoded": False,
    }
    return {**event, **changes}


@dataclass(frozen=True)
class BadEvent:
    """An event with one malformed part, the status to answer and a piece of the reason."""

    name: str
    event: object
    status: int
    reason: str


BAD_EVENTS = [
    BadEvent("no event", None, 400, "event: null, not an object"),
    BadEvent("event is an array", [function_url()], 400, "event: an array, not an object"),
    BadEvent(
        "event is JSON text", json.dumps(function_url()), 400, "event: a string, not an object"
    ),
    BadEvent(
        "headers are name-value pairs",
        function_url(headers=[[name, value] for name, value in SNS_HEADERS.items()]),
        400,
        "headers: an array, not an object of header names to values",
    ),
    BadEvent(
        "header value is a list",
        function_url(headers={**SNS_HEADERS, "x-amz-sns-message-type": ["Notification"]}),
        400,
        "headers.x-amz-sns-message-type: an array, not a string",
    ),
    BadEvent(
        "requestContext is JSON text",
        function_url(requestContext=json.dumps(function_url()["requestContext"])),
        400,
        "requestContext: a string, not an object",
    ),
    BadEvent(
        "requestContext.http is the method",
        function_url(requestContext={"http": "POST"}),
        400,
        "requestContext.http: a string, not an object",
    ),
    BadEvent(
        "requestContext.http.method is a list",
        function_url(requestContext={"http": {"method": ["POST"], "path": "/"}}),
        400,
        "requestContext.http.method: an array, not a string",
    ),
    BadEvent(
        "httpMethod is a list",
        rest_api(httpMethod=["POST"]),
        400,
        "httpMethod: an array, not a string",
    ),
    BadEvent(
        "body is the parsed message",
        function_url(body=NOTIFICATION),
        400,
        "body: an object, not a string",
    ),
    BadEvent(
        "isBase64Encoded is text",
        function_url(isBase64Encoded="false"),
        400,
        "isBase64Encoded: a string, not true or false",
    ),
    BadEvent(
        "base64 body is plain text",
        function_url(
            json.dumps({**NOTIFICATION, "Subject": "Commande passée"}, ensure_ascii=False),
            isBase64Encoded=True,
        ),
        400,
        "body: isBase64Encoded is true but the body is not base64",
    ),
    BadEvent(
        "body nests too deeply",
        function_url("[" * 100_000),
        400,
        "body: JSON nested too deeply to read",
    ),
    BadEvent(
        "body escapes a lone surrogate",
        function_url(json.dumps({**NOTIFICATION, "Message": "\ud800"})),
        400,
        "body: a JSON string escapes a lone surrogate",
    ),
    BadEvent(
        "Signature is not ASCII",
        function_url(json.dumps({**NOTIFICATION, "Signature": "Zm9vYmFy…"})),
        400,
        "Signature: is not valid base64",
    ),
]


@pytest.mark.parametrize("bad", BAD_EVENTS, ids=[bad.name for bad in BAD_EVENTS])
def test_a_malformed_event_is_refused_naming_the_field_and_logged_without_a_traceback(
    harness: Harness, bad: BadEvent
) -> None:
    stream = io.StringIO()
    receiver = harness.receiver(logger=JsonLogger("sns-https-endpoint", stream=stream))
    response = receiver(bad.event)
    body = response_body(response)
    assert (response["statusCode"], body["outcome"]) == (bad.status, "rejected")
    assert bad.reason in body["reason"]
    [line] = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert (line["level"], line["reason"]) == ("WARNING", body["reason"])
    assert "exception" not in line
    assert harness.recorder.received == []


def test_a_rest_api_event_is_read_like_a_function_url_event(
    harness: Harness, signer: Signer
) -> None:
    """The checks refuse no genuine shape: payload 1.0 has no ``requestContext.http``, header
    names in the sender's case and ``null`` fields."""
    response = harness.receiver()(rest_api(json.dumps(signer.confirmation())))
    assert response["statusCode"] == 200
    assert response_body(response)["outcome"] == "confirmed"
