"""What a send, reply, forward or publish becomes before the dispatcher takes it: core's outgoing
pipelines of one endpoint, alike from a session and from a handler.

A send starts from the caller's headers and a new message id: the ``Send`` intent and the logical
headers (:func:`~local_aws.released_transport.core.pipeline_headers.logical_message_headers`, the
reply-to address being the endpoint's receive address), a time to be received as
``NServiceBus.TimeToBeReceived``, the outgoing message mutators (the metrics plugin's instance id),
the routing stage's headers, then one unicast operation to the destination as the endpoint routes
it — the released endpoint takes it as it is, a name resolved in its own account. A reply goes to
the incoming ``NServiceBus.ReplyToAddress`` (without one it fails with core's message); a forward
(``ForwardCurrentMessageTo``) is an exact copy, same id, headers and body, with the routing
stage's headers where missing.

Publishing: the ``Publish`` intent, ``StartNewTrace = True``, the logical headers of a send,
``NServiceBus.EnclosedMessageTypes`` the event's hierarchy (``;``); one multicast operation to
the event type's topic and, in the message-driven compatibility mode, one unicast operation per
subscriber address (:mod:`~local_aws.released_transport.core.message_driven`), all sharing the
message.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Unicast/MessageOperations.cs``,
``Routing/Routers/MulticastPublishConnector.cs``,
``Routing/SubscriptionMigrationMode/MigrationModePublishConnector.cs``,
``Pipeline/Outgoing/SerializeMessageConnector.cs`` (the hierarchy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.incoming import IncomingMessage
from local_aws.released_transport.core.message_driven import PublishRouter
from local_aws.released_transport.core.outgoing import (
    DispatchProperties,
    MulticastTransportOperation,
    OutgoingMessage,
    TransportOperation,
)
from local_aws.released_transport.core.pipeline_headers import (
    MessageIntent,
    apply_routing_headers,
    logical_message_headers,
    new_message_id,
)
from local_aws.released_transport.dotnet.time_formats import Clock, TimeSpan
from local_aws.released_transport.headers import (
    CORE_TIME_TO_BE_RECEIVED,
    REPLY_TO_ADDRESS,
    HeaderDict,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import full_name
from local_aws.released_transport.transport.sending.dispatcher import Operation


class ReplyWithoutReplyToAddressError(Exception):
    """The message being replied to has no ``NServiceBus.ReplyToAddress``."""


class MessageOperations:
    """The transport operations one endpoint's sends, replies, forwards and publishes become.

    ``route`` is the endpoint's rule for a send's destination, ``publish_router`` its
    message-driven subscribers (compatibility mode only), ``mutate_outgoing`` its outgoing message
    mutator (the metrics plugin's, when configured)."""

    def __init__(
        self,
        receive_address: str,
        host: HostInformation,
        clock: Clock,
        *,
        route: Callable[[str], str],
        publish_router: PublishRouter | None,
        mutate_outgoing: Callable[[HeaderDict], None] | None,
    ) -> None:
        self._receive_address = receive_address
        self._host = host
        self._clock = clock
        self._route = route
        self._publish_router = publish_router
        self._mutate_outgoing = mutate_outgoing

    def send_operation(
        self,
        destination: str,
        message_type: str,
        body: bytes,
        *,
        delay: timedelta | None = None,
        headers: Mapping[str, str | None] | None = None,
        time_to_be_received: timedelta | None = None,
        incoming: IncomingMessage | None = None,
    ) -> TransportOperation:
        """The transport operation a send becomes (core's send pipeline)."""
        message_id = new_message_id()
        outgoing_headers = logical_message_headers(
            intent=MessageIntent.SEND,
            message_id=message_id,
            message_type=message_type,
            reply_to_address=self._receive_address,
            host=self._host,
            headers=headers,
            incoming=None if incoming is None else incoming.headers,
        )
        ttbr = None if time_to_be_received is None else TimeSpan.of(time_to_be_received)
        if ttbr is not None:
            outgoing_headers[CORE_TIME_TO_BE_RECEIVED] = str(ttbr)
        self._mutate(outgoing_headers)
        apply_routing_headers(outgoing_headers, self._clock(), delay)
        return TransportOperation(
            OutgoingMessage(message_id, outgoing_headers, body),
            self._route(destination),
            DispatchProperties(delay_deliver_with=delay, discard_if_not_received_before=ttbr),
        )

    def reply_operation(
        self,
        incoming: IncomingMessage,
        message_type: str,
        body: bytes,
        headers: Mapping[str, str | None] | None = None,
    ) -> TransportOperation:
        """The transport operation a reply becomes: to the incoming reply-to address."""
        if REPLY_TO_ADDRESS not in incoming.headers:
            raise ReplyWithoutReplyToAddressError(
                f"No `ReplyToAddress` found on the {message_type} being processed"
            )
        destination = incoming.headers[REPLY_TO_ADDRESS]
        message_id = new_message_id()
        outgoing_headers = logical_message_headers(
            intent=MessageIntent.REPLY,
            message_id=message_id,
            message_type=message_type,
            reply_to_address=self._receive_address,
            host=self._host,
            headers=headers,
            incoming=incoming.headers,
        )
        self._mutate(outgoing_headers)
        apply_routing_headers(outgoing_headers, self._clock())
        return TransportOperation(
            OutgoingMessage(message_id, outgoing_headers, body), str(destination)
        )

    def forward_operation(self, incoming: IncomingMessage, destination: str) -> TransportOperation:
        """The transport operation of ``ForwardCurrentMessageTo``: same id, headers, body."""
        headers = dict(incoming.headers)
        apply_routing_headers(headers, self._clock())
        return TransportOperation(
            OutgoingMessage(incoming.message_id, headers, incoming.body), destination
        )

    def publish_operations(
        self,
        event_type: str,
        body: bytes,
        *,
        hierarchy: Sequence[str] = (),
        headers: Mapping[str, str | None] | None = None,
        incoming: IncomingMessage | None = None,
    ) -> list[Operation]:
        """The transport operations a publish becomes: the topic's, then (compatibility mode)
        one per subscriber address. ``event_type`` and ``hierarchy`` (its base types and
        interfaces) are assembly-qualified names."""
        message_id = new_message_id()
        types = [event_type, *hierarchy]
        outgoing_headers = logical_message_headers(
            intent=MessageIntent.PUBLISH,
            message_id=message_id,
            message_type=";".join(types),
            reply_to_address=self._receive_address,
            host=self._host,
            headers=headers,
            incoming=None if incoming is None else incoming.headers,
        )
        self._mutate(outgoing_headers)
        apply_routing_headers(outgoing_headers, self._clock())
        message = OutgoingMessage(message_id, outgoing_headers, body)
        operations: list[Operation] = [MulticastTransportOperation(message, full_name(event_type))]
        if self._publish_router is not None:
            destinations = self._publish_router.destinations([full_name(t) for t in types])
            operations.extend(TransportOperation(message, address) for address in destinations)
        return operations

    def _mutate(self, headers: HeaderDict) -> None:
        """The outgoing message mutators of a send, reply or publish (the metrics plugin's)."""
        if self._mutate_outgoing is not None:
            self._mutate_outgoing(headers)
