"""What a released endpoint does with each message its input pump hands over: core's receive
pipeline and its recoverability.

Receiving: the message's ``NServiceBus.TimeSent``, when it has one, is parsed first
(``ProcessingStatisticsBehavior``): one core cannot read fails the message into recoverability. A
control message (``NServiceBus.ControlMessage`` ``True``, any case) reaches no handler; in the
message-driven compatibility mode a subscribe or unsubscribe request is taken by the subscription
storage instead (:mod:`~local_aws.released_transport.core.message_driven`). Any other message
goes to the handler with a
:class:`~local_aws.released_transport.endpoint.handler_context.MessageHandlerContext`, then to
saga audit. What the handler sent, replied, forwarded or published and the audit copy
(:mod:`~local_aws.released_transport.core.audit`) are dispatched in one batch after the physical
stage; then a message retried from ServiceControl is acknowledged, and the metrics observe the
completed receive.

Failing: an exception from the handler or from that dispatch goes to core's default
recoverability (:mod:`~local_aws.released_transport.core.recoverability`): the decision, then
what it sends dispatched at once; the metrics observe every retry.

Facts: NServiceBus 10.2.5 ``src/NServiceBus.Core/Pipeline/Incoming/DeserializeMessageConnector.cs``
(control messages), ``Performance/Statistics/ProcessingStatisticsBehavior.cs`` (the time sent),
``Pipeline/Incoming/TransportReceiveToPhysicalMessageConnector.cs`` (the batched dispatch after
the physical stage), ``Pipeline/MainPipelineExecutor.cs`` (the completed receive the metrics
probes observe); the plugins' files are cited in their modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from local_aws.released_transport.core.audit import ProcessingTimes, audit_operation
from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.incoming import (
    ErrorContext,
    ErrorHandleResult,
    IncomingMessage,
    MessageContext,
)
from local_aws.released_transport.core.message_driven import (
    is_subscription_message,
    receive_subscription_message,
)
from local_aws.released_transport.core.outgoing import OutgoingMessage, TransportOperation
from local_aws.released_transport.core.pipeline_headers import (
    apply_routing_headers,
    new_message_id,
    retry_acknowledgement_headers,
)
from local_aws.released_transport.core.recoverability import (
    DelayedRetry,
    ImmediateRetry,
    RecoverabilityAction,
    default_recoverability_policy,
    delayed_retry_message,
    move_to_error_message,
)
from local_aws.released_transport.core.subscription_storage import NonDurableSubscriptionStorage
from local_aws.released_transport.dotnet.time_formats import from_wire_format
from local_aws.released_transport.endpoint.handler_context import Handler, MessageHandlerContext
from local_aws.released_transport.endpoint.operations import MessageOperations
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.headers import (
    CONTROL_MESSAGE,
    ENCLOSED_MESSAGE_TYPES,
    RETRY_ACKNOWLEDGEMENT_QUEUE,
    RETRY_UNIQUE_MESSAGE_ID,
    TIME_SENT,
    TRUE_STRING,
)
from local_aws.released_transport.plugins.metrics import MetricsReporter
from local_aws.released_transport.plugins.saga_audit import (
    SagaAuditBackend,
    add_invoked_saga,
    add_saga_state_change,
    saga_change_initiator,
    saga_updated_body,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import full_name
from local_aws.released_transport.transport.queues.sqs_shapes import ReceivedMessage
from local_aws.released_transport.transport.receiving.input_pump import InputQueuePump, PumpResult
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher, Operation


@dataclass(frozen=True)
class ProcessingOutcome:
    """What one :meth:`ReceivePipeline.process` step did with one received message."""

    pump: PumpResult
    action: RecoverabilityAction | None = None
    """The recoverability action taken, when the handler failed."""
    message: IncomingMessage | None = None
    """The message as the pipeline saw it (the handler, or the subscription storage for a
    subscription message), when it got that far."""


class ReceivePipeline:
    """Core's receive pipeline and recoverability of one endpoint, over its parts: the
    handlers' operations, the transport's dispatcher, the subscription storage (compatibility
    mode) and the plugins that observe a receive."""

    def __init__(
        self,
        endpoint_name: str,
        settings: EndpointSettings,
        host: HostInformation,
        dispatcher: MessageDispatcher,
        operations: MessageOperations,
        *,
        subscription_storage: NonDurableSubscriptionStorage | None,
        metrics: MetricsReporter | None,
        saga_audit: SagaAuditBackend | None,
    ) -> None:
        self._endpoint_name = endpoint_name
        self._settings = settings
        self._host = host
        self._dispatcher = dispatcher
        self._operations = operations
        self._subscription_storage = subscription_storage
        self._metrics = metrics
        self._saga_audit = saga_audit

    def process(
        self, pump: InputQueuePump, handler: Handler, received: ReceivedMessage
    ) -> ProcessingOutcome:
        """One received message through ``pump``, with ``handler`` as its handler."""
        seen: list[IncomingMessage] = []
        actions: list[RecoverabilityAction] = []
        result = pump.process(
            received,
            lambda context: self._on_message(handler, context, seen),
            lambda context: self._on_error(context, actions),
        )
        return ProcessingOutcome(
            result, actions[-1] if actions else None, seen[-1] if seen else None
        )

    def _on_message(
        self, handler: Handler, context: MessageContext, seen: list[IncomingMessage]
    ) -> None:
        """Core's receive pipeline: the time sent read, the subscription storage or the handler
        (none for a control message) and saga audit, the audit copy, the batched operations,
        the retry acknowledgement (``RetryAcknowledgementBehavior``), then the completed
        receive the metrics observe."""
        started = self._settings.clock()
        incoming = IncomingMessage.of(context)
        seen.append(incoming)
        if TIME_SENT in incoming.headers:
            from_wire_format(str(incoming.headers[TIME_SENT]))
        pending: list[Operation] = []
        if self._subscription_storage is not None and is_subscription_message(incoming.headers):
            receive_subscription_message(incoming.headers, self._subscription_storage)
        elif not _is_control_message(incoming.headers):
            handler_context = MessageHandlerContext(
                self._operations,
                incoming,
                clock=self._settings.clock,
                saga_audit=self._saga_audit is not None,
                sagas=self._settings.sagas,
            )
            handler(handler_context)
            self._audit_saga(handler_context, started)
            pending = handler_context.pending
        acknowledged = self._is_acknowledged_retry(incoming)
        if self._settings.audit is not None:
            times = ProcessingTimes(started, self._settings.clock())
            pending = [
                *pending,
                audit_operation(
                    self._settings.audit,
                    incoming.message_id,
                    incoming.headers,
                    incoming.body,
                    host=self._host,
                    times=times,
                    retry_acknowledged=acknowledged,
                ),
            ]
        self._dispatcher.dispatch(pending, context.transport_transaction)
        if acknowledged:
            self._acknowledge_retry(incoming)
        if self._metrics is not None:
            self._metrics.record_completed(incoming.headers, started, self._settings.clock())

    def _audit_saga(self, handler_context: MessageHandlerContext, started: datetime) -> None:
        """``CaptureSagaStateBehavior`` and ``AuditInvokedSagaBehavior`` after a handler that ran
        as a saga: the incoming headers, then the ``SagaUpdatedMessage`` sent at once."""
        saga = handler_context.saga
        if self._saga_audit is None or saga is None:
            return
        incoming = handler_context.message
        add_invoked_saga(incoming.headers, saga.saga_type, saga.saga_id)
        enclosed = incoming.headers.get(ENCLOSED_MESSAGE_TYPES) or ""
        initiator = saga_change_initiator(
            incoming.headers, incoming.message_id, full_name(enclosed.split(";")[0])
        )
        add_saga_state_change(incoming.headers, saga)
        body = saga_updated_body(
            saga,
            initiator,
            handler_context.saga_outputs,
            endpoint=self._endpoint_name,
            start_time=started,
            finish_time=self._settings.clock(),
        )
        self._saga_audit.send(body, incoming.transport_transaction)

    @staticmethod
    def _is_acknowledged_retry(incoming: IncomingMessage) -> bool:
        """``RetryAcknowledgementBehavior.IsRetriedMessage``: a retry from ServiceControl that
        names the queue to acknowledge to."""
        return (
            RETRY_UNIQUE_MESSAGE_ID in incoming.headers
            and incoming.headers.get(RETRY_ACKNOWLEDGEMENT_QUEUE) is not None
        )

    def _acknowledge_retry(self, incoming: IncomingMessage) -> None:
        """After a message retried by ServiceControl succeeded: the acknowledgement control
        message to ``ServiceControl.Retry.AcknowledgementQueue`` (by name, own account)."""
        unique_id = incoming.headers.get(RETRY_UNIQUE_MESSAGE_ID)
        queue = str(incoming.headers.get(RETRY_ACKNOWLEDGEMENT_QUEUE))
        now = self._settings.clock()
        headers = retry_acknowledgement_headers(str(unique_id), now)
        apply_routing_headers(headers, now)
        acknowledgement = OutgoingMessage(new_message_id(), headers, b"")
        self._dispatcher.dispatch(
            [TransportOperation(acknowledgement, queue)], incoming.transport_transaction
        )

    def _on_error(
        self, context: ErrorContext, actions: list[RecoverabilityAction]
    ) -> ErrorHandleResult:
        """Core's recoverability: decide, then dispatch what the decision sends."""
        now = self._settings.clock()
        action = default_recoverability_policy(
            self._settings.recoverability, self._settings.error_queue, context, now
        )
        actions.append(action)
        if isinstance(action, ImmediateRetry):
            self._signal_retry(context)
            return ErrorHandleResult.RETRY_REQUIRED
        if isinstance(action, DelayedRetry):
            message, properties = delayed_retry_message(context, action.delay, now)
            apply_routing_headers(message.headers, now, action.delay)
            operation = TransportOperation(message, context.receive_address, properties)
        else:
            message = move_to_error_message(context, self._host, now)
            apply_routing_headers(message.headers, now)
            operation = TransportOperation(message, action.error_queue)
        self._dispatcher.dispatch([operation], context.transport_transaction)
        if isinstance(action, DelayedRetry):
            self._signal_retry(context)
        return ErrorHandleResult.HANDLED

    def _signal_retry(self, context: ErrorContext) -> None:
        """The retry notification (after the action's dispatch) the metrics observe."""
        if self._metrics is not None:
            self._metrics.signal_retry(context.headers)


def _is_control_message(headers: Mapping[str, str | None]) -> bool:
    """``DeserializeMessageConnector.IsControlMessage``: no logical message, so no handler."""
    return (headers.get(CONTROL_MESSAGE) or "").upper() == TRUE_STRING.upper()
