"""An NServiceBus message written in the wire form its receiver's own dispatcher writes.

Endpoints of one organisation disagree on ``DoNotWrapOutgoingMessages``. A wrapping receiver
(NServiceBus.AmazonSQS 9.1.1) that handles an unwrapped message keeps its native attributes on
the transport transaction, and every copy it sends with the incoming message id (a delayed
retry, the copy to the error queue, the audit copy) takes them over
(``MessageDispatcher.GetNativeMessageAttributes``, ``SqsPreparedMessage.CopyMessageAttributes``),
its ``NServiceBus.AmazonSQS.Headers`` attribute included. That copy is then read in the attribute
form, from the *original* headers: the retry counter never grows, so retries never end, and
the error copy has no ``NServiceBus.FailedQ``, so ServiceControl cannot retry it. The inbound
relay removes the hazard by delivering every NServiceBus message in its route's ``form``:

* **attribute to wrapped**: the headers are what the receiver would read from the attribute
  form (the headers JSON with every other attribute but ``NServiceBus.MessageId`` copied over
  it, without the transport's own ``NServiceBus.AmazonSQS.Headers``, ``…DelaySeconds`` and
  ``…TimeToBeReceived``), the ``Body`` member is the base64 of the bytes the receiver would
  have decoded from the body (``empty message`` for none), and the headers attribute is
  dropped; every other attribute stays;
* **wrapped to attribute**: the body is the payload as the receiver's own dispatcher writes it
  (``MessageDispatcher.GetMessageBodyAndHeaders``): UTF-8 text when the bytes are valid UTF-8,
  made only of characters the dispatcher sends as text, and not text that
  ``TransportMessageExtensions.RetrieveBody`` would take for base64 (an unwrapped text body such
  as ``abcd`` is decoded as base64 by a released receiver); base64 otherwise, ``empty message``
  for none. The headers go, as the wrapped message carries them, to the headers attribute.

Either way the receiver reads the same headers and body bytes as it would have from the
original, with two differences the attribute form cannot avoid: in the attribute form, the
receiver reads every attribute of the message (but the message id) as a header, so a wrapped
message's other attributes become headers there, and a body in S3 shows its ``S3BodyKey``
attribute as a header, as the transport's own unwrapped large messages do. A body in S3 keeps
its key; the message id each receiver derives from its SQS message id (where the headers have
none) is left for it to derive. The time to be received is carried in both forms (see
:mod:`cross_account_runtime.relay.expiry`). A message the other form would read differently (in
the wrapped form, headers without ``NServiceBus.MessageId`` or
``NServiceBus.EnclosedMessageTypes`` are a native message; the attribute form drops the
transport's own headers and takes an ``S3BodyKey`` header for the body's key) is delivered in its
own form. Native messages are never touched.

:func:`write_message` also writes a body moved to S3 (:mod:`cross_account_runtime.relay.bodies`)
the way the transport does (``MessageDispatcher.PrepareSqsMessageBasedOnBodySize``): wrapped, an
empty ``Body`` and the ``S3BodyKey`` member; in the attribute form, the body ``empty message``;
in both, the ``S3BodyKey`` attribute.
"""

from __future__ import annotations

import base64
import functools
import re

from cross_account_runtime.nservicebus.dotnet_text import try_from_base64
from cross_account_runtime.nservicebus.json_spans import compact_json
from cross_account_runtime.nservicebus.wire_format import (
    CONTROL_MESSAGE_HEADER,
    DELAY_SECONDS_HEADER,
    EMPTY_MESSAGE,
    ENCLOSED_MESSAGE_TYPES_HEADER,
    HEADERS_ATTRIBUTE,
    MESSAGE_ID_HEADER,
    S3_BODY_KEY,
    TIME_TO_BE_RECEIVED_HEADER,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

    from cross_account_runtime.nservicebus.wire_format import Headers
    from cross_account_runtime.nservicebus.wire_writing import HeadersUpdate

    SendAttributes = dict[str, dict[str, Any]]
    """``MessageAttributes`` as ``SendMessage`` takes them."""

WRAPPED: Final = "wrapped"
ATTRIBUTE: Final = "attribute"
_DROPPED_BY_ATTRIBUTE_FORM: Final = (HEADERS_ATTRIBUTE, DELAY_SECONDS_HEADER)
"""Headers a wrapped message may carry that an attribute form receiver removes."""


def conversion_problem(update: HeadersUpdate, form: str) -> str:
    """Why ``update``'s message cannot be written in ``form`` for the receiver to read as it
    reads the original, or ``""``."""
    if update.form == form:
        return ""
    view = update.view
    if view.body is None and not view.s3_body_key:
        return "its body is null, which the receiver treats as poison in either form"
    headers = view.headers
    if form == WRAPPED:
        carries_id = MESSAGE_ID_HEADER in headers and MESSAGE_ID_HEADER not in update.derived
        if headers.get(CONTROL_MESSAGE_HEADER) != "True" and not (
            carries_id or ENCLOSED_MESSAGE_TYPES_HEADER in headers
        ):
            return (
                f"its headers have neither {MESSAGE_ID_HEADER} nor "
                f"{ENCLOSED_MESSAGE_TYPES_HEADER}, so a wrapping receiver would read it as a "
                "native message"
            )
        return ""
    dropped = [name for name in _DROPPED_BY_ATTRIBUTE_FORM if name in headers]
    if dropped:
        return f"its headers hold {dropped}, which the attribute form's receiver drops"
    if S3_BODY_KEY in headers and headers[S3_BODY_KEY] != view.s3_body_key:
        return (
            f"its headers hold an {S3_BODY_KEY} header that is not its body's key, and the "
            "attribute form's receiver would read its body from S3 under that key"
        )
    return ""


def convert(
    update: HeadersUpdate,
    form: str,
    attributes: SendAttributes,
    *,
    changes: Mapping[str, str],
    time_to_be_received: str | None,
) -> tuple[str, SendAttributes]:
    """The body and attributes of ``update``'s message in ``form`` (which
    :func:`conversion_problem` allows), with the header ``changes`` made and
    ``time_to_be_received`` carried; ``attributes`` are the message's own, as sent."""
    view = update.view
    headers = _headers(update, attributes, changes, time_to_be_received)
    key = view.s3_body_key or None
    payload = None if key else view.body_bytes()
    return write_message(form, headers, attributes, payload=payload, s3_body_key=key)


def moved_to_s3(
    update: HeadersUpdate,
    form: str,
    attributes: SendAttributes,
    *,
    changes: Mapping[str, str],
    time_to_be_received: str | None,
    s3_body_key: str,
) -> tuple[str, SendAttributes]:
    """The body and attributes of ``update``'s message in ``form`` with its payload moved to
    S3 under ``s3_body_key``, the header ``changes`` made and ``time_to_be_received`` carried."""
    headers = _headers(update, attributes, changes, time_to_be_received)
    return write_message(form, headers, attributes, payload=None, s3_body_key=s3_body_key)


def write_message(
    form: str,
    headers: Headers,
    attributes: SendAttributes,
    *,
    payload: bytes | None,
    s3_body_key: str | None,
) -> tuple[str, SendAttributes]:
    """The body and attributes of an NServiceBus message in ``form``, as its dispatcher writes
    it: ``headers`` (nulls allowed), ``payload`` or a body in S3 under ``s3_body_key``, and the
    other ``attributes`` it keeps (a headers attribute among them is replaced or dropped)."""
    written = {name: value for name, value in attributes.items() if name != HEADERS_ATTRIBUTE}
    if s3_body_key is not None:
        written[S3_BODY_KEY] = {"DataType": "String", "StringValue": s3_body_key}
    if form == WRAPPED:
        if s3_body_key is not None:
            text = ""
        elif payload:
            text = base64.b64encode(payload).decode("ascii")
        else:
            text = EMPTY_MESSAGE
        body = (
            f'{{"Body":{compact_json(text)},"S3BodyKey":{compact_json(s3_body_key)},'
            f'"Headers":{compact_json(headers)}}}'
        )
        return body, written
    written[HEADERS_ATTRIBUTE] = {"DataType": "String", "StringValue": compact_json(headers)}
    body = EMPTY_MESSAGE if s3_body_key is not None else attribute_form_body(payload or b"")
    return body, written


def attribute_form_body(payload: bytes) -> str:
    """The body text from which an attribute form receiver decodes exactly ``payload``."""
    if not payload:
        return EMPTY_MESSAGE
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if (
        text
        and text != EMPTY_MESSAGE
        and _dispatcher_text().fullmatch(text)
        and try_from_base64(text) is None
    ):
        return text
    return base64.b64encode(payload).decode("ascii")


@functools.cache
def _dispatcher_text() -> re.Pattern[str]:
    """``MessageDispatcher.ValidSqsCharacters``, as .NET reads its pattern: U+0009, U+000A,
    U+000D, U+0020-U+D7FF and U+E000-U+FFFD (its ``\\u10000-\\u10FFFF`` is U+1000 and ASCII
    ranges, so a character beyond U+FFFF, two UTF-16 surrogates, sends the body as base64).
    Compiled on first use: only conversions to the attribute form need it."""
    return re.compile("[\t\n\r\u0020-\ud7ff\ue000-\ufffd]*")


def _headers(
    update: HeadersUpdate,
    attributes: SendAttributes,
    changes: Mapping[str, str],
    time_to_be_received: str | None,
) -> Headers:
    """The headers to write: as carried, without those of attributes the relay does not send
    on (a ``Relay.Rejection`` from a redrive), with ``changes`` and the time left."""
    dropped = [name for name in update.headers_from_attributes if name not in attributes]
    headers = update.carried_headers(dropped)
    headers.update(changes)
    if time_to_be_received is not None:
        headers[TIME_TO_BE_RECEIVED_HEADER] = time_to_be_received
    return headers
