"""What the transport hands NServiceBus core from a receive, and the message core makes of it.

These mirror the receive side of core's transport seam (``src/NServiceBus.Core/Transports/``):
the ``MessageContext`` a receiver passes to ``on_message`` (a copy of the headers, the body, the
``TransportTransaction`` and the receive address), the ``ErrorContext`` it passes to ``on_error``
after a failure (with the delivery attempts so far), the ``ErrorHandleResult`` it is answered
with, and core's ``IncomingMessage``. Both the error context and the incoming message set a
missing or empty ``NServiceBus.MessageId`` header to the native id
(``IncomingMessage.GetOrSetMessageIdFromHeaders``). They live here, below the transport, because
core's recoverability reads them as much as the SQS input pump writes them.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Transports/ErrorContext.cs`` and
``IncomingMessage.cs``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from local_aws.released_transport.core.outgoing import TransportTransaction
from local_aws.released_transport.dotnet.text import try_parse_integer
from local_aws.released_transport.headers import DELAYED_RETRIES, MESSAGE_ID, HeaderDict


class ErrorHandleResult(enum.Enum):
    """What ``on_error`` tells the pump."""

    RETRY_REQUIRED = "RetryRequired"
    HANDLED = "Handled"


@dataclass(frozen=True)
class MessageContext:
    """What ``on_message`` gets: a copy of the headers, the body, the receive context."""

    native_message_id: str
    headers: HeaderDict
    body: bytes
    transport_transaction: TransportTransaction
    receive_address: str


@dataclass(frozen=True)
class ErrorContext:
    """``ErrorContext``: on construction a missing or empty ``NServiceBus.MessageId`` header is
    set to the native id (``IncomingMessage.GetOrSetMessageIdFromHeaders``)."""

    exception: BaseException
    headers: HeaderDict
    native_message_id: str
    body: bytes
    transport_transaction: TransportTransaction
    immediate_processing_failures: int
    receive_address: str

    def __post_init__(self) -> None:
        if not self.headers.get(MESSAGE_ID):
            self.headers[MESSAGE_ID] = self.native_message_id

    @property
    def message_id(self) -> str:
        """The NServiceBus message id."""
        return self.headers[MESSAGE_ID] or self.native_message_id

    @property
    def delayed_deliveries_performed(self) -> int:
        """``NServiceBus.Retries`` as an ``int.TryParse``, else 0."""
        return try_parse_integer(self.headers.get(DELAYED_RETRIES)) or 0


@dataclass(frozen=True)
class IncomingMessage:
    """The message being handled, as core's ``IncomingMessage`` holds it: a missing or empty
    ``NServiceBus.MessageId`` header was set to the native id."""

    native_message_id: str
    message_id: str
    headers: HeaderDict
    """Core's ``Dictionary``: a saga handler's headers are added to it, and the audit copy
    takes them."""
    body: bytes
    receive_address: str
    transport_transaction: TransportTransaction

    @classmethod
    def of(cls, context: MessageContext) -> IncomingMessage:
        """From the pump's message context (``IncomingMessage.GetOrSetMessageIdFromHeaders``)."""
        headers = dict(context.headers)
        if not headers.get(MESSAGE_ID):
            headers[MESSAGE_ID] = context.native_message_id
        message_id = headers[MESSAGE_ID] or context.native_message_id
        return cls(
            context.native_message_id,
            message_id,
            headers,
            context.body,
            context.receive_address,
            context.transport_transaction,
        )
