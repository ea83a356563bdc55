"""Reading a received SQS message: which form it is in, its headers, and its body.

``InputQueuePump.ExtractTransportMessage`` tries, in order:

1. **unwrapped** — an ``NServiceBus.AmazonSQS.Headers`` attribute: headers from its JSON, then
   every other attribute copied over them, then the message id only if still missing;
2. **native with type** — a ``MessageTypeFullName`` attribute: attributes as headers, the
   message id always set, ``NServiceBus.EnclosedMessageTypes`` from the attribute;
3. **wrapped** — the body parses as an envelope that could not be a native message: its
   headers as they are (attributes are *not* copied), the message id only if missing;
4. **native** — anything else, including every parse failure: attributes as headers and the
   message id set to the native SQS ``MessageId``.

The message id supplied in steps 1-3 is a parameter: production passes the native SQS
``MessageId`` (``ProcessMessage``), while the upstream unit tests pass ``ExtractMessageId`` (the
``NServiceBus.MessageId`` attribute). The two disagree in eight of the 88 upstream vectors.

The body (``TransportMessageExtensions.RetrieveBody``): ``empty message`` is empty; a body is
decoded as base64 whenever it is valid base64 (whitespace ignored) — even in the unwrapped form,
so an unwrapped text body that happens to be base64 arrives corrupted — except on the wrapped
path when the envelope's headers contain ``NServiceBus.AmazonSQS.Headers``. A body in S3 (an
``S3BodyKey`` in the envelope, or a header from the attribute or the headers JSON) is read from
the *receiving* endpoint's own bucket with that key, raw; an endpoint without S3 settings
refuses it, and so does a failed download (a missing object): both make the message poison.

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Receiving/InputQueuePump.cs``
(``ExtractMessageId``, ``ExtractTransportMessage``, ``CouldBeNativeMessage``),
``Receiving/TransportMessageExtensions.cs`` (``CopyMessageAttributes``, ``RetrieveBody``),
``Configure/S3Settings.cs``;
vectors in ``src/NServiceBus.Transport.SQS.Tests/Receiving/MessageExtractionTests.cs`` and
``TransportMessageExtensionsTests.cs``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from local_aws.released_transport.dotnet.system_text_json import (
    DotnetJsonError,
    parse_ordered,
    read_string_dictionary,
)
from local_aws.released_transport.dotnet.text import try_from_base64, utf8_bytes
from local_aws.released_transport.headers import (
    DELAY_SECONDS,
    EMPTY_MESSAGE,
    ENCLOSED_MESSAGE_TYPES,
    HEADERS_ATTRIBUTE,
    MESSAGE_ID,
    MESSAGE_TYPE_FULL_NAME,
    S3_BODY_KEY,
    TIME_TO_BE_RECEIVED,
    HeaderDict,
)
from local_aws.released_transport.transport.envelope import (
    NullReferenceError,
    TransportMessage,
    could_be_native_message,
    deserialize,
)
from local_aws.released_transport.transport.queues.sqs_shapes import (
    MessageAttributeValue,
    ReceivedMessage,
    body_of,
    message_attributes,
    string_value,
)
from local_aws.released_transport.transport.s3_settings import S3Settings

_REMOVED_AFTER_COPY: Final = (HEADERS_ATTRIBUTE, DELAY_SECONDS, TIME_TO_BE_RECEIVED)


class WireForm(enum.Enum):
    """Which branch of ``ExtractTransportMessage`` read the message."""

    UNWRAPPED = "unwrapped"
    NATIVE_WITH_TYPE = "native with type"
    WRAPPED = "wrapped"
    NATIVE = "native"


class S3BodyNotConfiguredError(Exception):
    """The message's body is in S3 and this endpoint has no S3 settings."""


@dataclass(frozen=True)
class ExtractedMessage:
    """The result of the extraction: the form, and the transport message (headers not null)."""

    form: WireForm
    transport_message: TransportMessage

    @property
    def headers(self) -> HeaderDict:
        """The headers the pipeline will see (before TTBR handling removes that header)."""
        headers = self.transport_message.headers
        if headers is None:
            raise NullReferenceError
        return headers


def extract_message_id(message: ReceivedMessage) -> str | None:
    """``ExtractMessageId``: the ``NServiceBus.MessageId`` attribute, else the native id."""
    attributes = message_attributes(message)
    if MESSAGE_ID in attributes:
        return string_value(attributes[MESSAGE_ID])
    native_id = message.get("MessageId")
    return native_id if isinstance(native_id, str) else None


def copy_message_attributes(
    headers: HeaderDict, attributes: dict[str, MessageAttributeValue]
) -> None:
    """``CopyMessageAttributes``: every attribute but ``NServiceBus.MessageId`` over the
    headers (a Binary attribute as null), then the three transport headers removed."""
    for name, attribute in attributes.items():
        if name != MESSAGE_ID:
            headers[name] = string_value(attribute)
    for name in _REMOVED_AFTER_COPY:
        headers.pop(name, None)


def extract_transport_message(
    message: ReceivedMessage, message_id_override: str | None
) -> ExtractedMessage:
    """``ExtractTransportMessage(receivedMessage, messageIdOverride)``.

    Raises for a headers attribute that is not a JSON dictionary of text (the pump's poison
    case); never for the body.
    """
    attributes = message_attributes(message)
    body = body_of(message)
    if HEADERS_ATTRIBUTE in attributes:
        headers_text = string_value(attributes[HEADERS_ATTRIBUTE])
        if headers_text is None:
            raise DotnetJsonError("Value cannot be null. (Parameter 'json')")
        headers = read_string_dictionary(parse_ordered(headers_text)) or {}
        copy_message_attributes(headers, attributes)
        headers.setdefault(MESSAGE_ID, message_id_override)
        envelope = TransportMessage(headers, body, headers.get(S3_BODY_KEY))
        return ExtractedMessage(WireForm.UNWRAPPED, envelope)
    if MESSAGE_TYPE_FULL_NAME in attributes:
        headers = {}
        copy_message_attributes(headers, attributes)
        headers[MESSAGE_ID] = message_id_override
        headers[ENCLOSED_MESSAGE_TYPES] = string_value(attributes[MESSAGE_TYPE_FULL_NAME])
        envelope = TransportMessage(headers, body, headers.get(S3_BODY_KEY))
        return ExtractedMessage(WireForm.NATIVE_WITH_TYPE, envelope)
    try:
        parsed = deserialize(body)
        if parsed is None:
            raise NullReferenceError
        if not could_be_native_message(parsed):
            extracted = ExtractedMessage(WireForm.WRAPPED, parsed)
            extracted.headers.setdefault(MESSAGE_ID, message_id_override)
            return extracted
    except (DotnetJsonError, NullReferenceError):
        pass
    headers = {}
    copy_message_attributes(headers, attributes)
    native_id = message.get("MessageId")
    headers[MESSAGE_ID] = native_id if isinstance(native_id, str) else None
    return ExtractedMessage(WireForm.NATIVE, TransportMessage(headers, body))


def retrieve_body(
    extracted: ExtractedMessage, message_id: str | None, s3: S3Settings | None = None
) -> bytes:
    """``RetrieveBody``: from S3 when the message names a key, else from the body text.

    Raises :class:`S3BodyNotConfiguredError` for a body in S3 without S3 settings, the client's
    error for a failed download and :class:`NullReferenceError` for a null body (all poison).
    """
    envelope = extracted.transport_message
    if envelope.s3_body_key:
        if s3 is None:
            raise S3BodyNotConfiguredError(
                f"The message {message_id} contains the ID of the body stored in S3 but this"
                " endpoint is not configured to use S3 for body storage."
            )
        return s3.download(envelope.s3_body_key)
    if envelope.body == EMPTY_MESSAGE:
        return b""
    if envelope.body is None:
        raise NullReferenceError
    if HEADERS_ATTRIBUTE not in extracted.headers:
        decoded = try_from_base64(envelope.body)
        if decoded is not None:
            return decoded
    return utf8_bytes(envelope.body)
