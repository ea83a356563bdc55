"""The HTTP request in a Lambda proxy event, read the same from payload 1.0 (REST API) and 2.0
(function URL, HTTP API) events; a request SNS would never send is an error with its 4xx."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from cross_account_runtime.sns_endpoint.http_request import (
    MAX_BODY_BYTES,
    HttpRequestError,
    read_request,
)
from tests.runtime.sns_endpoint.conftest import function_url_event


def rest_api_event(**fields: Any) -> dict[str, Any]:
    """An API Gateway REST API proxy event (payload 1.0)."""
    return {"resource": "/", "path": "/", "httpMethod": "post", **fields}


def base64_event(body: str) -> dict[str, Any]:
    """A function URL event whose ``body`` is given as is, flagged as base64."""
    return {**function_url_event(""), "body": body, "isBase64Encoded": True}


def test_the_method_is_read_from_either_payload_version_in_upper_case() -> None:
    assert read_request(rest_api_event()).method == "POST"
    assert read_request(function_url_event("{}", method="get")).method == "GET"


def test_an_event_without_a_method_is_a_400_naming_where_the_method_is_read() -> None:
    with pytest.raises(HttpRequestError, match=r"no requestContext\.http\.method") as raised:
        read_request({"body": "{}"})
    assert raised.value.status == 400


def test_header_names_are_lower_cased_as_http_compares_them() -> None:
    event = rest_api_event(headers={"X-Amz-Sns-Message-Type": "Notification"})
    assert read_request(event).headers == {"x-amz-sns-message-type": "Notification"}
    assert read_request(rest_api_event(headers=None)).headers == {}


@pytest.mark.parametrize("base64_encoded", [False, True], ids=["text", "base64"])
def test_the_body_is_one_json_object(base64_encoded: bool) -> None:
    event = function_url_event({"Type": "Notification"}, base64_encoded=base64_encoded)
    assert read_request(event).json_body() == {"Type": "Notification"}


def test_a_body_of_exactly_the_bound_is_read() -> None:
    document = json.dumps({"Message": ""})
    body = document[:-1] + " " * (MAX_BODY_BYTES - len(document)) + "}"
    assert read_request(function_url_event(body)).json_body() == {"Message": ""}


@pytest.mark.parametrize(
    ("event", "status", "reason"),
    [
        (function_url_event(""), 400, "body: empty; SNS posts a JSON message"),
        (
            function_url_event(" " * (MAX_BODY_BYTES + 1)),
            413,
            f"body: larger than {MAX_BODY_BYTES} bytes",
        ),
        (
            function_url_event("é" * (MAX_BODY_BYTES // 2 + 1)),
            413,
            f"body: larger than {MAX_BODY_BYTES} bytes",
        ),
        (
            base64_event("x" * (2 * MAX_BODY_BYTES)),
            413,
            f"body: larger than {MAX_BODY_BYTES} bytes",
        ),
        (
            base64_event("not*base64"),
            400,
            "body: isBase64Encoded is true but the body is not base64",
        ),
        (
            base64_event(base64.b64encode(b'{"Type": "\xff"}').decode()),
            400,
            "body: not a JSON document in UTF-8",
        ),
        (
            function_url_event('{"Type": "Notification", "Type": "Notification"}'),
            400,
            "the name 'Type' appears twice in one object",
        ),
        (function_url_event("[1, 2]"), 400, "body: a JSON list, not an object"),
    ],
    ids=[
        "empty",
        "too-long",
        "too-many-bytes",
        "too-long-in-base64",
        "not-base64",
        "not-utf-8",
        "repeated-name",
        "not-an-object",
    ],
)
def test_a_body_sns_would_never_send_is_refused_with_its_status(
    event: dict[str, Any], status: int, reason: str
) -> None:
    with pytest.raises(HttpRequestError) as raised:
        read_request(event).json_body()
    assert raised.value.status == status
    assert reason in raised.value.reason
