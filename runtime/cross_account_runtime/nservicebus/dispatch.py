"""SQS messages built byte for byte as NServiceBus.AmazonSQS's dispatcher builds them.

For tests that need a message a real endpoint would send, and for Python code that sends to
NServiceBus endpoints. ``MessageDispatcher`` (9.1.1) gives every message the String attribute
``NServiceBus.MessageId`` (the outgoing message's id, which may differ from the header) and
then either

* **wraps** it (the default): the body is ``{"Body":<base64 or "empty message">,
  "S3BodyKey":null,"Headers":{...}}``, compact, with System.Text.Json's default escaping
  (``ReducedPayloadSerializerConverter``); a missing or empty ``NServiceBus.MessageId`` header
  becomes a random GUID, and a time to be received becomes the header
  ``NServiceBus.AmazonSQS.TimeToBeReceived`` (``TransportMessage``'s constructor); or
* leaves it **unwrapped** (``DoNotWrapOutgoingMessages``): the body is the payload as text, or
  base64 when the text has a character outside XML's (a control character, a character beyond
  U+FFFF), ``empty message`` when there is none; the headers go, as they are, to the attribute
  ``NServiceBus.AmazonSQS.Headers``. A time to be received is not applied in this form.

Each function returns the ``MessageBody`` and ``MessageAttributes`` of a ``SendMessage``
request. Delays, S3 offloading and batching are not modelled.
"""

from __future__ import annotations

import base64
import uuid

from cross_account_runtime.nservicebus.dotnet_text import json_string, utf8_text
from cross_account_runtime.nservicebus.wire_format import (
    EMPTY_MESSAGE,
    HEADERS_ATTRIBUTE,
    MESSAGE_ID_HEADER,
    TIME_TO_BE_RECEIVED_HEADER,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

# The dispatcher's test for text it may send unwrapped: XML's characters, in UTF-16 code units
# (its pattern's "\u10000-\u10FFFF" reads as U+1000 and a range of ASCII, so no surrogates).
_FIRST_TEXT_CHARACTER: Final = 0x20
_TEXT_CONTROLS: Final = frozenset("\t\n\r")
_SURROGATES: Final = range(0xD800, 0xE000)
_LAST_TEXT_CHARACTER: Final = 0xFFFD


def wrapped_message(
    message_id: str,
    headers: Mapping[str, str | None],
    body: bytes,
    *,
    time_to_be_received: str | None = None,
) -> dict[str, object]:
    """The default form. ``time_to_be_received`` is .NET's ``TimeSpan`` text (``1.00:00:00``),
    what ``DiscardIfNotReceivedBefore`` becomes. ``headers`` is not changed (.NET changes the
    outgoing message's own dictionary)."""
    headers = dict(headers)
    if not headers.get(MESSAGE_ID_HEADER):
        headers[MESSAGE_ID_HEADER] = str(uuid.uuid4())
    if time_to_be_received is not None:
        headers[TIME_TO_BE_RECEIVED_HEADER] = time_to_be_received
    text = base64.b64encode(body).decode("ascii") if body else EMPTY_MESSAGE
    return {
        "MessageBody": f'{{"Body":{json_string(text)},"S3BodyKey":null,"Headers":{_json_object(headers)}}}',
        "MessageAttributes": _attributes(message_id),
    }


def unwrapped_message(
    message_id: str, headers: Mapping[str, str | None], body: bytes
) -> dict[str, object]:
    """The ``DoNotWrapOutgoingMessages`` form."""
    attributes = _attributes(message_id)
    attributes[HEADERS_ATTRIBUTE] = {"DataType": "String", "StringValue": _json_object(headers)}
    return {"MessageBody": _unwrapped_body(body), "MessageAttributes": attributes}


def _attributes(message_id: str) -> dict[str, dict[str, str]]:
    return {MESSAGE_ID_HEADER: {"DataType": "String", "StringValue": message_id}}


def _json_object(headers: Mapping[str, str | None]) -> str:
    """``JsonSerializer.Serialize`` of a ``Dictionary<string, string>``: compact, in order."""
    entries = (
        f"{json_string(name)}:{'null' if value is None else json_string(value)}"
        for name, value in headers.items()
    )
    return "{" + ",".join(entries) + "}"


def _unwrapped_body(body: bytes) -> str:
    """``GetMessageBodyAndHeaders``: the UTF-8 text when every UTF-16 code unit of it is one
    XML allows, else base64."""
    if not body:
        return EMPTY_MESSAGE
    text = utf8_text(body)
    for character in text:
        code = ord(character)
        if code < _FIRST_TEXT_CHARACTER:
            if character not in _TEXT_CONTROLS:
                return base64.b64encode(body).decode("ascii")
        elif code > _LAST_TEXT_CHARACTER or code in _SURROGATES:
            return base64.b64encode(body).decode("ascii")
    return text
