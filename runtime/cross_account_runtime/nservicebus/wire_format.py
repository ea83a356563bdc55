"""The wire format of an NServiceBus message on SQS: where the transport reads its headers and
body from, and the names it reads them by.

NServiceBus.AmazonSQS (9.1.1, ``InputQueuePump.ExtractTransportMessage``) tries, in order:

1. **attribute** (the transport's "unwrapped" form, ``DoNotWrapOutgoingMessages``): a message
   attribute ``NServiceBus.AmazonSQS.Headers`` holds the headers as a JSON object; every other
   attribute except ``NServiceBus.MessageId`` is copied over them (an attribute wins over the
   JSON); the body is the payload. A broken attribute makes the message poison.
2. a **native message with a type**: a ``MessageTypeFullName`` attribute; the attributes are the
   headers, ``NServiceBus.EnclosedMessageTypes`` is that type, ``NServiceBus.MessageId`` is the
   message-id override.
3. **wrapped** (the default): the body is the JSON ``{"Body": ..., "S3BodyKey": ...,
   "Headers": {...}}``, read with System.Text.Json's rules (case-sensitive names, last member
   wins, transport 6's top-level ``TimeToBeReceived`` and ``ReplyToAddress.Queue`` folded into
   the headers), unless the headers could be a native message's (no ``NServiceBus.MessageId``,
   no ``NServiceBus.EnclosedMessageTypes``, not a control message). Attributes are not read.
4. otherwise **native**: the attributes are the headers and ``NServiceBus.MessageId`` is the
   SQS message id.

After copying attributes the transport drops ``NServiceBus.AmazonSQS.Headers``,
``…DelaySeconds`` and ``…TimeToBeReceived`` from the headers, and in forms 1 and 3 it adds
``NServiceBus.MessageId`` from the override only when the headers lack it. In production the
override is the SQS message id (the transport's unit tests pass the ``NServiceBus.MessageId``
attribute instead).

A header may be null in .NET: a ``Binary`` attribute (it has no ``StringValue``) or a JSON
``null``.

Reading a message as the transport does is
:mod:`~cross_account_runtime.nservicebus.wire_reading`; writing changed headers back where it
reads them, :mod:`~cross_account_runtime.nservicebus.wire_writing`; the JSON both scan,
:mod:`~cross_account_runtime.nservicebus.json_spans`; a message's fields in boto3's, Lambda's
and ``send_message``'s spellings, :mod:`~cross_account_runtime.nservicebus.message_fields`.
This module holds what they share: the names and the error.
"""

from __future__ import annotations

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Literal

    WireForm = Literal["attribute", "wrapped", "native"]
    Headers = dict[str, str | None]

HEADERS_ATTRIBUTE: Final = "NServiceBus.AmazonSQS.Headers"
DELAY_SECONDS_HEADER: Final = "NServiceBus.AmazonSQS.DelaySeconds"
TIME_TO_BE_RECEIVED_HEADER: Final = "NServiceBus.AmazonSQS.TimeToBeReceived"
MESSAGE_TYPE_ATTRIBUTE: Final = "MessageTypeFullName"
S3_BODY_KEY: Final = "S3BodyKey"
MESSAGE_ID_HEADER: Final = "NServiceBus.MessageId"
ENCLOSED_MESSAGE_TYPES_HEADER: Final = "NServiceBus.EnclosedMessageTypes"
CONTROL_MESSAGE_HEADER: Final = "NServiceBus.ControlMessage"
EMPTY_MESSAGE: Final = "empty message"
"""The body the transport sends for an empty payload (SQS refuses an empty body)."""
MAX_TIME_TO_BE_RECEIVED: Final = "10675199.02:48:05.4775807"
"""``TimeSpan.MaxValue`` as .NET writes it: the time to be received of a message without one."""

TRANSPORT_HEADERS: Final = (HEADERS_ATTRIBUTE, DELAY_SECONDS_HEADER, TIME_TO_BE_RECEIVED_HEADER)
"""Removed from the headers after the attributes are copied in, wherever they came from."""

WRAPPED_HEADERS_KEY: Final = "Headers"


class WireFormatError(ValueError):
    """A message whose NServiceBus headers cannot be read or written."""
