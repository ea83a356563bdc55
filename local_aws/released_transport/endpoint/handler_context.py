"""What a handler may do with the message it handles (``IMessageHandlerContext``).

Its sends, replies, forwards and publishes become transport operations at once
(:mod:`~local_aws.released_transport.endpoint.operations`, with the message being handled as the
incoming one) but are dispatched only after the handler returned, batched with the audit copy, as
core's batched dispatch does (:mod:`~local_aws.released_transport.endpoint.receive_pipeline`).
With saga audit on, each logical message it sends, replies or publishes is noted as the plugin's
``CaptureSagaResultingMessagesBehavior`` notes it, and the handler declares the saga it ran as
(:meth:`MessageHandlerContext.handled_by_saga`): the model's stand-in for core's sagas, which only
saga audit observes (:mod:`~local_aws.released_transport.plugins.saga_audit` cites its files).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import timedelta

from local_aws.released_transport.core.incoming import IncomingMessage
from local_aws.released_transport.core.outgoing import TransportOperation
from local_aws.released_transport.dotnet.time_formats import Clock
from local_aws.released_transport.endpoint.operations import MessageOperations
from local_aws.released_transport.headers import MESSAGE_INTENT
from local_aws.released_transport.plugins.saga_audit import SagaChangeOutput, SagaInvocation
from local_aws.released_transport.transport.pubsub.topic_name_helper import full_name
from local_aws.released_transport.transport.sending.dispatcher import Operation


class SagaNotRegisteredError(RuntimeError):
    """A handler declared it ran as a saga its endpoint does not register
    (:attr:`~local_aws.released_transport.endpoint.settings.EndpointSettings.sagas`): core only
    invokes the sagas it found, so the endpoint's settings and its handlers disagree."""


class MessageHandlerContext:
    """What a handler may do; its operations are dispatched after it returned. ``saga_audit``
    says whether the endpoint runs saga audit, the only reader of the noted outputs; ``sagas``
    are the saga types the endpoint registers, the only ones a handler can run as."""

    def __init__(
        self,
        operations: MessageOperations,
        message: IncomingMessage,
        *,
        clock: Clock,
        saga_audit: bool,
        sagas: Collection[str] = (),
    ) -> None:
        self.message = message
        self._sagas = sagas
        self._operations = operations
        self._clock = clock
        self._saga_audit = saga_audit
        self.pending: list[Operation] = []
        self.saga: SagaInvocation | None = None
        """The saga the handler ran as (:meth:`handled_by_saga`)."""
        self.saga_outputs: list[SagaChangeOutput] = []
        """What the handler sent, replied and published, as saga audit notes it."""

    def handled_by_saga(
        self,
        saga_type: str,
        saga_id: str,
        state: str,
        *,
        is_new: bool = False,
        is_completed: bool = False,
    ) -> None:
        """Declare that this handler ran as the saga ``saga_type`` (its class's ``FullName``)
        on the saga data ``saga_id`` (a GUID), leaving ``state`` (the data as its serializer
        writes it): the model's stand-in for core's sagas, which only saga audit observes. The
        endpoint must register ``saga_type``."""
        if saga_type not in self._sagas:
            raise SagaNotRegisteredError(
                f"the handler ran as the saga {saga_type}, which its endpoint does not register "
                f"(its sagas: {', '.join(self._sagas) or 'none'})"
            )
        self.saga = SagaInvocation(saga_type, saga_id, state, is_new, is_completed)

    def _note_output(
        self, operations: Sequence[Operation], message_type: str, delay: timedelta | None
    ) -> None:
        """``CaptureSagaResultingMessagesBehavior``: with saga audit on, each logical message."""
        if not self._saga_audit:
            return
        message = operations[0].message
        unicast = [op.destination for op in operations if isinstance(op, TransportOperation)]
        self.saga_outputs.append(
            SagaChangeOutput(
                full_name(message_type),
                self._clock(),
                delay,
                unicast[0] if len(unicast) == 1 else None,
                message.message_id,
                message.headers.get(MESSAGE_INTENT),
            )
        )

    def send(
        self,
        destination: str,
        message_type: str,
        body: bytes,
        *,
        delay: timedelta | None = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> str:
        """``context.Send``: returns the new message id."""
        operation = self._operations.send_operation(
            destination, message_type, body, delay=delay, headers=headers, incoming=self.message
        )
        self._note_output([operation], message_type, delay)
        self.pending.append(operation)
        return operation.message.message_id

    def reply(
        self, message_type: str, body: bytes, *, headers: Mapping[str, str | None] | None = None
    ) -> str:
        """``context.Reply``: to the incoming ``NServiceBus.ReplyToAddress``."""
        operation = self._operations.reply_operation(self.message, message_type, body, headers)
        self._note_output([operation], message_type, None)
        self.pending.append(operation)
        return operation.message.message_id

    def forward(self, destination: str) -> None:
        """``context.ForwardCurrentMessageTo``: an exact copy of the message being handled."""
        self.pending.append(self._operations.forward_operation(self.message, destination))

    def publish(
        self,
        event_type: str,
        body: bytes,
        *,
        hierarchy: Sequence[str] = (),
        headers: Mapping[str, str | None] | None = None,
    ) -> str:
        """``context.Publish``: returns the new message id."""
        operations = self._operations.publish_operations(
            event_type, body, hierarchy=hierarchy, headers=headers, incoming=self.message
        )
        self._note_output(operations, event_type, None)
        self.pending.extend(operations)
        return operations[0].message.message_id


Handler = Callable[[MessageHandlerContext], object]
"""A message handler; what it returns is ignored, what it raises goes to recoverability."""
