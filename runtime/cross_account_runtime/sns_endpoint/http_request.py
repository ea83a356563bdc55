"""The HTTP request in a Lambda proxy event: its method, its headers and its body, bounded.

A function URL and an API Gateway HTTP API send payload 2.0 events, an API Gateway REST API
with proxy integration payload 1.0; both carry the same request in different places. This
module reads either, so the receiver never looks at the event's shape.

The body is bounded before anything parses it (:data:`MAX_BODY_BYTES`) and read as one JSON
object in UTF-8 without repeated names: the endpoint is public, so a flood of large or
ambiguous bodies must cost nothing. Every problem is an :class:`HttpRequestError` carrying the
4xx status to answer, because no retry of such a request can succeed.
"""

from __future__ import annotations

import base64
import binascii
import json

from cross_account_runtime.common.strict_json import object_without_duplicates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

# SNS messages are at most 256 KiB. In the JSON envelope the Message is a JSON string, where a
# control character takes 6 bytes (\u001f); with 64 KiB for the other fields and the message
# attributes, no genuine delivery exceeds this. Lambda function URLs accept 6 MB.
MAX_SNS_MESSAGE_BYTES: Final = 256 * 1024
MAX_BODY_BYTES: Final = 6 * MAX_SNS_MESSAGE_BYTES + 64 * 1024


class HttpRequestError(ValueError):
    """The request is not one SNS sends; ``status`` is the 4xx to answer, ``reason`` says
    which part of the request is wrong and how."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def http_method(event: Mapping[str, Any]) -> str:
    """The HTTP method of a function URL / HTTP API (2.0) or REST API (1.0) event."""
    if isinstance(event.get("httpMethod"), str):
        method: str = event["httpMethod"]
        return method.upper()
    http = (event.get("requestContext") or {}).get("http") or {}
    if isinstance(http.get("method"), str):
        method = http["method"]
        return method.upper()
    raise HttpRequestError(
        400,
        "event: no requestContext.http.method (function URL, HTTP API) nor httpMethod "
        "(REST API); invoke this handler through one of them",
    )


def http_headers(event: Mapping[str, Any]) -> dict[str, str]:
    """The request headers with lower-case names (REST API events keep the sender's case)."""
    headers = event.get("headers") or {}
    return {str(name).lower(): str(value) for name, value in headers.items()}


def json_body(event: Mapping[str, Any]) -> dict[str, object]:
    """The body as a JSON object, within :data:`MAX_BODY_BYTES`, without repeated names."""
    body = event.get("body")
    if not isinstance(body, str) or not body:
        raise HttpRequestError(400, "body: empty; SNS posts a JSON message")
    if event.get("isBase64Encoded"):
        if len(body) > (MAX_BODY_BYTES + 2) // 3 * 4:
            raise HttpRequestError(413, f"body: larger than {MAX_BODY_BYTES} bytes")
        try:
            raw = base64.b64decode(body, validate=True)
        except binascii.Error as error:
            raise HttpRequestError(
                400, f"body: isBase64Encoded is true but the body is not base64 ({error})"
            ) from error
    else:
        if len(body) > MAX_BODY_BYTES:
            raise HttpRequestError(413, f"body: larger than {MAX_BODY_BYTES} bytes")
        raw = body.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_BODY_BYTES:
        raise HttpRequestError(413, f"body: larger than {MAX_BODY_BYTES} bytes")
    try:
        message = json.loads(raw.decode("utf-8"), object_pairs_hook=object_without_duplicates)
    except (UnicodeDecodeError, ValueError) as error:
        raise HttpRequestError(400, f"body: not a JSON document in UTF-8 ({error})") from error
    if not isinstance(message, dict):
        raise HttpRequestError(400, f"body: a JSON {type(message).__name__}, not an object")
    return message
