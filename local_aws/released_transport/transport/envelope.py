"""The wrapped form: ``TransportMessage``, the JSON envelope in the SQS body.

Writing (the dispatcher's default): ``{"Body":…,"S3BodyKey":…,"Headers":{…}}`` in that order,
compact, System.Text.Json escaping; ``Body`` is the base64 of the payload or ``empty message``.
Building the envelope from an outgoing message *adds to the caller's header dictionary*: a new
random GUID ``NServiceBus.MessageId`` header when there is none (not the outgoing message id),
and the ``NServiceBus.AmazonSQS.TimeToBeReceived`` header when a time to be received is set.

Reading (the input pump): the source-generated deserializer with default options — property
names case-sensitive, unknown properties skipped, properties applied through their setters in
document order. The two computed properties exist so that transport 6.x ("v1") envelopes, with a
top-level ``TimeToBeReceived`` and ``ReplyToAddress {Queue, Machine}``, fold into headers; a v1
document that names either before ``Headers`` fails with a null reference, which the pump
treats as "not an envelope".

Facts: NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/TransportMessage.cs``,
``Sending/ReducedPayloadSerializerConverter.cs``, ``TransportMessageSerializerContext.cs``,
``Receiving/InputQueuePump.cs`` (``CouldBeNativeMessage``); vectors in
``src/NServiceBus.Transport.SQS.Tests/TransportMessageTests.cs`` and the approval file
``ApprovalFiles/MessageDispatcherTests.Does_not_send_extra_properties_in_payload_by_default.approved.txt``.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from typing import Any, Final

from local_aws.released_transport.core.outgoing import OutgoingMessage
from local_aws.released_transport.dotnet.system_text_json import (
    DotnetJsonError,
    JsonObject,
    parse_ordered,
    read_string,
    read_string_dictionary,
    write_string,
    write_string_dictionary,
)
from local_aws.released_transport.dotnet.text import is_null_or_whitespace
from local_aws.released_transport.dotnet.time_formats import TIMESPAN_MAX, TimeSpan
from local_aws.released_transport.headers import (
    CONTROL_MESSAGE,
    EMPTY_MESSAGE,
    ENCLOSED_MESSAGE_TYPES,
    MESSAGE_ID,
    REPLY_TO_ADDRESS,
    TIME_TO_BE_RECEIVED,
    TRUE_STRING,
    HeaderDict,
)

NULL_REFERENCE: Final = "Object reference not set to an instance of an object."

_HEADERS: Final = "Headers"
_BODY: Final = "Body"
_S3_BODY_KEY: Final = "S3BodyKey"
_TIME_TO_BE_RECEIVED: Final = "TimeToBeReceived"
_REPLY_TO_ADDRESS: Final = "ReplyToAddress"
_ADDRESS_QUEUE: Final = "Queue"
_ADDRESS_MACHINE: Final = "Machine"


class NullReferenceError(Exception):
    """.NET's ``NullReferenceException``: a setter ran before ``Headers`` had a dictionary."""

    def __init__(self) -> None:
        super().__init__(NULL_REFERENCE)


@dataclass
class TransportMessage:
    """``TransportMessage``: headers (which can be null after reading), body text, S3 key."""

    headers: HeaderDict | None
    body: str | None = None
    s3_body_key: str | None = None

    def _headers_or_fail(self) -> HeaderDict:
        if self.headers is None:
            raise NullReferenceError
        return self.headers

    @property
    def time_to_be_received(self) -> str | None:
        """The TTBR header (which may hold null), else ``TimeSpan.MaxValue`` as text."""
        headers = self._headers_or_fail()
        return headers[TIME_TO_BE_RECEIVED] if TIME_TO_BE_RECEIVED in headers else str(TIMESPAN_MAX)

    def set_time_to_be_received(self, value: str | None) -> None:
        """The setter: a non-null value becomes the TTBR header."""
        if value is not None:
            self._headers_or_fail()[TIME_TO_BE_RECEIVED] = value

    @property
    def reply_to_address(self) -> str | None:
        """``ReplyToAddress.Queue``: the reply-to header, else none."""
        headers = self._headers_or_fail()
        return headers.get(REPLY_TO_ADDRESS)

    def set_reply_to_address(self, queue: str | None) -> None:
        """The setter: a queue that is not null or whitespace becomes the reply-to header; the
        machine is ignored."""
        if not is_null_or_whitespace(queue):
            self._headers_or_fail()[REPLY_TO_ADDRESS] = queue


def from_outgoing(
    message: OutgoingMessage, discard_if_not_received_before: TimeSpan | None
) -> TransportMessage:
    """``new TransportMessage(outgoingMessage, properties)``; mutates ``message.headers``."""
    envelope = TransportMessage(headers=message.headers)
    if not message.headers.get(MESSAGE_ID):
        message.headers[MESSAGE_ID] = str(uuid.uuid4())
    if discard_if_not_received_before is not None:
        envelope.set_time_to_be_received(str(discard_if_not_received_before))
    envelope.body = (
        base64.b64encode(message.body).decode("ascii") if message.body else EMPTY_MESSAGE
    )
    return envelope


def serialize(envelope: TransportMessage) -> str:
    """``ReducedPayloadSerializerConverter.Write``: Body, S3BodyKey, Headers, nothing else."""
    headers = "null" if envelope.headers is None else write_string_dictionary(envelope.headers)
    return (
        f'{{"{_BODY}":{write_string(envelope.body)},'
        f'"{_S3_BODY_KEY}":{write_string(envelope.s3_body_key)},'
        f'"{_HEADERS}":{headers}}}'
    )


def deserialize(text: str | None) -> TransportMessage | None:
    """``JsonSerializer.Deserialize<TransportMessage>``: ``None`` for the document ``null``.

    Raises :class:`~local_aws.released_transport.dotnet.system_text_json.DotnetJsonError` for text
    the deserializer refuses and :class:`NullReferenceError` for a v1 property before ``Headers``. A
    null ``text`` is .NET's ``ArgumentNullException``, raised as ``DotnetJsonError``.
    """
    if text is None:
        raise DotnetJsonError("Value cannot be null. (Parameter 'json')")
    document = parse_ordered(text)
    if document is None:
        return None
    if not isinstance(document, JsonObject):
        raise DotnetJsonError(
            "The JSON value could not be converted to NServiceBus.Transport.SQS.TransportMessage."
        )
    envelope = TransportMessage(headers=None)
    for name, value in document:
        _apply_property(envelope, name, value)
    return envelope


def _apply_property(envelope: TransportMessage, name: str, value: Any) -> None:
    """One property through its setter; unknown names are skipped."""
    if name == _HEADERS:
        envelope.headers = read_string_dictionary(value)
    elif name == _BODY:
        envelope.body = read_string(value)
    elif name == _S3_BODY_KEY:
        envelope.s3_body_key = read_string(value)
    elif name == _TIME_TO_BE_RECEIVED:
        envelope.set_time_to_be_received(read_string(value))
    elif name == _REPLY_TO_ADDRESS:
        envelope.set_reply_to_address(_read_address_queue(value))


def _read_address_queue(value: Any) -> str | None:
    """The nullable ``Address`` struct: ``null``, or an object whose ``Queue`` and ``Machine``
    are text or null."""
    if value is None:
        return None
    if not isinstance(value, JsonObject):
        raise DotnetJsonError(
            "The JSON value could not be converted to NServiceBus.Transport.SQS.TransportMessage"
            "+Address."
        )
    queue: str | None = None
    for name, member in value:
        if name == _ADDRESS_QUEUE:
            queue = read_string(member)
        elif name == _ADDRESS_MACHINE:
            read_string(member)
    return queue


def could_be_native_message(envelope: TransportMessage) -> bool:
    """``CouldBeNativeMessage``: no headers, or neither a message id nor enclosed types — unless
    it is a control message (``NServiceBus.ControlMessage`` exactly ``True``)."""
    if envelope.headers is None:
        return True
    if envelope.headers.get(CONTROL_MESSAGE) == TRUE_STRING:
        return False
    return MESSAGE_ID not in envelope.headers and ENCLOSED_MESSAGE_TYPES not in envelope.headers
