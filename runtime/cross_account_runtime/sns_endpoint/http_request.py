"""The HTTP request in a Lambda proxy event: its method, its headers and its body, bounded.

The endpoint is invoked with one of two event shapes, which carry the same request in
different places, and reads these fields of them and nothing else:

- payload 2.0, from a Lambda function URL or an API Gateway HTTP API:
  ``requestContext.http.method``, ``headers`` (names in lower case), ``body`` (absent when
  empty) and ``isBase64Encoded``;
- payload 1.0, from an API Gateway REST API with proxy integration (or an HTTP API set to 1.0):
  ``httpMethod``, ``headers`` (names in the sender's case, ``null`` when none), ``body``
  (``null`` when empty) and ``isBase64Encoded``.

An event with ``httpMethod`` is read as 1.0, any other as 2.0, and a ``null`` field as an absent
one. :func:`read_request` checks the type of every field it reads, in this one place: an event
of another shape (a direct invocation with a hand-made or empty event, another trigger) is no
request at all, and answering it 500 would have it retried in vain.

The body is bounded before anything parses it (:data:`MAX_BODY_BYTES`) and read as one JSON
object in UTF-8 without repeated names, nested no deeper than the parser can go, and holding
Unicode text only: the endpoint is public, so a flood of large, ambiguous or hostile bodies
must cost nothing and crash nothing. Every problem is an :class:`HttpRequestError` carrying the
4xx status to answer, because no retry of such a request can succeed.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from cross_account_runtime.common.strict_json import object_without_duplicates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# SNS messages are at most 256 KiB. In the JSON envelope the Message is a JSON string, where a
# control character takes 6 bytes (\u001f); with 64 KiB for the other fields and the message
# attributes, no genuine delivery exceeds this. Lambda function URLs accept 6 MB.
MAX_SNS_MESSAGE_BYTES: Final = 256 * 1024
MAX_BODY_BYTES: Final = 6 * MAX_SNS_MESSAGE_BYTES + 64 * 1024

_PROXY_EVENT: Final = (
    "invoke this handler through a Lambda function URL or an API Gateway proxy integration, "
    "or give it an event of their shape (payload 1.0 or 2.0)"
)
# JSON may escape a lone surrogate (\ud800), which Python keeps in a string but no UTF-8
# encoder accepts: the signature check encodes every signed field.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_NO_METHOD: Final = (
    "event: no requestContext.http.method (function URL, HTTP API) nor httpMethod "
    "(REST API); invoke this handler through one of them"
)
# JSON's names for what Lambda decoded the event from; a reason in Python's words
# ("NoneType", "dict") would not match what the sender wrote.
_JSON_KINDS: Final[Mapping[type, str]] = {
    type(None): "null",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
}


class HttpRequestError(ValueError):
    """The request is not one SNS sends; ``status`` is the 4xx to answer, ``reason`` says
    which part of the request is wrong and how."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class HttpRequest:
    """The parts of the request the endpoint reads, with their types checked.

    ``method`` is in upper case and ``headers`` have lower-case names, as HTTP compares them.
    ``body`` is the text the event carries (``None`` when there is none), in base64 when
    ``base64_encoded``: it is decoded and parsed only by :meth:`json_body`, once the method is
    known to be one that has a body.
    """

    method: str
    headers: Mapping[str, str]
    body: str | None
    base64_encoded: bool

    def json_body(self) -> dict[str, object]:
        """The body as a JSON object, within :data:`MAX_BODY_BYTES`, without repeated names."""
        if not self.body:
            raise HttpRequestError(400, "body: empty; SNS posts a JSON message")
        if self.base64_encoded:
            if len(self.body) > (MAX_BODY_BYTES + 2) // 3 * 4:
                raise HttpRequestError(413, f"body: larger than {MAX_BODY_BYTES} bytes")
            try:
                raw = base64.b64decode(self.body, validate=True)
            except ValueError as error:  # binascii.Error, or not ASCII
                raise HttpRequestError(
                    400, f"body: isBase64Encoded is true but the body is not base64 ({error})"
                ) from error
        else:
            if len(self.body) > MAX_BODY_BYTES:
                raise HttpRequestError(413, f"body: larger than {MAX_BODY_BYTES} bytes")
            raw = self.body.encode("utf-8", "surrogatepass")
        if len(raw) > MAX_BODY_BYTES:
            raise HttpRequestError(413, f"body: larger than {MAX_BODY_BYTES} bytes")
        try:
            message = json.loads(raw.decode("utf-8"), object_pairs_hook=object_without_duplicates)
        except (UnicodeDecodeError, ValueError) as error:
            raise HttpRequestError(400, f"body: not a JSON document in UTF-8 ({error})") from error
        except RecursionError as error:
            raise HttpRequestError(
                400, "body: JSON nested too deeply to read; SNS nests objects three deep"
            ) from error
        if not isinstance(message, dict):
            raise HttpRequestError(400, f"body: a JSON {type(message).__name__}, not an object")
        if _has_lone_surrogate(message):
            raise HttpRequestError(
                400,
                "body: a JSON string escapes a lone surrogate (such as \\ud800), which is not "
                "Unicode text; SNS sends only Unicode text",
            )
        return message


def read_request(event: object) -> HttpRequest:
    """The request in a payload 1.0 or 2.0 ``event``; :class:`HttpRequestError` (400) naming
    the first field that is not of the type those payloads give it."""
    if not isinstance(event, Mapping):
        raise _wrong_type("event", event, "an object")
    method = _method(event)
    headers = _headers(event.get("headers"))
    body = event.get("body")
    if body is not None and not isinstance(body, str):
        raise _wrong_type("body", body, "a string (the request body's text)")
    base64_encoded = event.get("isBase64Encoded")
    if base64_encoded is not None and not isinstance(base64_encoded, bool):
        raise _wrong_type("isBase64Encoded", base64_encoded, "true or false")
    return HttpRequest(method, headers, body, base64_encoded is True)


def _method(event: Mapping[str, object]) -> str:
    """``httpMethod`` (1.0) or ``requestContext.http.method`` (2.0), in upper case."""
    if "httpMethod" in event:
        method, field = event["httpMethod"], "httpMethod"
    else:
        context = _object(event.get("requestContext"), "requestContext")
        http = _object(context.get("http"), "requestContext.http")
        method, field = http.get("method"), "requestContext.http.method"
    if method is None:
        raise HttpRequestError(400, _NO_METHOD)
    if not isinstance(method, str):
        raise _wrong_type(field, method, "a string")
    return method.upper()


def _headers(value: object) -> dict[str, str]:
    """The headers with lower-case names (REST API events keep the sender's case)."""
    headers = _object(value, "headers", "an object of header names to values")
    lowered: dict[str, str] = {}
    for name, text in headers.items():
        if not isinstance(text, str):
            raise _wrong_type(f"headers.{name}", text, "a string")
        lowered[str(name).lower()] = text
    return lowered


def _object(value: object, field: str, expected: str = "an object") -> Mapping[str, object]:
    """``value`` if it is an object, empty if it is absent (the caller reports what it misses)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _wrong_type(field, value, expected)
    return value


def _has_lone_surrogate(document: object) -> bool:
    """Whether a name or a string anywhere in ``document`` holds a lone surrogate; iterative,
    as the document may nest as deep as the parser went."""
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return True
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _wrong_type(field: str, value: object, expected: str) -> HttpRequestError:
    """The 400 for a ``field`` of the event that holds ``value`` where ``expected`` belongs."""
    kind = _JSON_KINDS.get(type(value), type(value).__name__)
    return HttpRequestError(400, f"{field}: {kind}, not {expected}; {_PROXY_EVENT}")
