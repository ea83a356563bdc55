"""A released NServiceBus endpoint on SQS, for tests to drive step by step.

``ReleasedEndpoint`` composes the model's parts the way NServiceBus 10 with NServiceBus.AmazonSQS
9.1.1 composes them: its receive address (transport address) is its name through the queue
name generator; it sends, replies and forwards with the core headers and the released
dispatcher, always *by name in its own account*; it publishes to its event types' topics found
by name in its own account (and, in the message-driven compatibility mode, to every stored
subscriber); it subscribes its input queue to topics of its own account and, in that mode,
sends subscribe requests to the registered publishers; it receives with the released input pump
and runs core's default recoverability; and it moves its delay queue with the delayed messages
pump.

Nothing runs in the background: :meth:`ReleasedEndpoint.process` receives one batch from the
input queue and handles it, :meth:`ReleasedEndpoint.process_delayed` one batch from the delay
queue. A handler gets a :class:`MessageHandlerContext`; what it sends, replies, forwards or
publishes is dispatched (batched) only after it returned, as core's batched dispatch does, and an
exception from the handler or from that dispatch goes to recoverability. A message retried from
ServiceControl is acknowledged after it succeeded. A control message (``NServiceBus.ControlMessage``
``True``, any case) reaches no handler; in the compatibility mode a subscribe or unsubscribe
request is taken by the subscription storage instead
(:mod:`~local_aws.released_transport.message_driven`).

Publishing, from a session or a handler: the ``Publish`` intent, ``StartNewTrace = True``, the
logical headers of a send, ``NServiceBus.EnclosedMessageTypes`` the event's hierarchy (``;``);
one multicast operation to the event type's topic and, in the compatibility mode, one unicast
operation per subscriber address, all sharing the message. Subscribing: the native subscription
(:mod:`~local_aws.released_transport.subscription_manager`) then, in the compatibility mode, a
subscribe request to the transport address of each publisher registered for the type, sent by
the dispatcher directly (no pipeline). Core retries a subscribe request only on its own
``QueueNotFoundException``, which the SQS dispatcher never raises: a missing publisher queue
fails the subscribe at once.

The platform's plugins, each off unless its settings are given (:class:`EndpointSettings`):
auditing (:mod:`~local_aws.released_transport.audit`: the audit copy joins the handler's batched
dispatch), heartbeats (:mod:`~local_aws.released_transport.heartbeats`), custom checks
(:mod:`~local_aws.released_transport.custom_checks`), metrics
(:mod:`~local_aws.released_transport.metrics`) and saga audit
(:mod:`~local_aws.released_transport.saga_audit`). :meth:`ReleasedEndpoint.start` does what their
startup tasks do at once — saga audit's queue check (which can stop the start), the heartbeat
registration, the first run of every custom check, the first endpoint metadata report — and
their timers are steps: :meth:`ReleasedEndpoint.send_heartbeat`,
:meth:`ReleasedEndpoint.retry_heartbeat_registration`, :meth:`ReleasedEndpoint.run_custom_checks`,
:meth:`ReleasedEndpoint.report_metrics`, :meth:`ReleasedEndpoint.report_endpoint_metadata`. The
order of the startup tasks upstream follows the order the features were enabled in; the model
fixes the one above.

Every received message's ``NServiceBus.TimeSent``, when it has one, is parsed first
(``ProcessingStatisticsBehavior``): one core cannot read fails the message into recoverability.

Not modelled (see ``docs/released_transport.md``): sagas (a handler declares the saga it ran
as, for saga audit), outbox, visibility renewal, concurrency, ``MapEvent``, auto-subscribe at
start-up (call :meth:`ReleasedEndpoint.subscribe`).

Facts: see the modules composed here; the start-up order (input pump, then delayed messages
pump) is NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Receiving/MessagePump.cs``,
the transport address ``Configure/SqsTransportInfrastructure.cs`` (``ToTransportAddressCore``),
the idempotence guard ``Configure/SqsTransport.cs``, the publish and subscribe pipelines
NServiceBus 10.2.5 ``src/NServiceBus.Core/Unicast/MessageOperations.cs``,
``Routing/Routers/MulticastPublishConnector.cs``, ``Routing/NativeSubscribeTerminator.cs``,
``Routing/NativeUnsubscribeTerminator.cs``, ``Routing/SubscriptionMigrationMode/``
(``MigrationModePublishConnector.cs``, ``MigrationSubscribeTerminator.cs``,
``MigrationUnsubscribeTerminator.cs``, ``SubscriptionMigrationMode.cs``),
``Routing/MessageDrivenSubscriptions/SubscriptionRouter.cs``,
``Pipeline/Incoming/DeserializeMessageConnector.cs`` (control messages),
``Pipeline/Outgoing/SerializeMessageConnector.cs`` (the hierarchy),
``Performance/Statistics/ProcessingStatisticsBehavior.cs`` (the time sent),
``Pipeline/Incoming/TransportReceiveToPhysicalMessageConnector.cs`` (the batched dispatch after
the physical stage), ``Pipeline/MainPipelineExecutor.cs`` (the completed receive the metrics
probes observe); the plugins' files are cited in their modules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, TypeVar

from local_aws.released_transport.audit import AuditSettings, ProcessingTimes, audit_operation
from local_aws.released_transport.core_headers import (
    MessageIntent,
    apply_routing_headers,
    logical_message_headers,
    new_message_id,
    retry_acknowledgement_headers,
    subscription_control_headers,
)
from local_aws.released_transport.custom_checks import CustomCheckSettings, CustomChecksRunner
from local_aws.released_transport.delayed_pump import DelayedMessagesPump
from local_aws.released_transport.dispatcher import MessageDispatcher, Operation
from local_aws.released_transport.dotnet_time import Clock, TimeSpan, from_wire_format, system_clock
from local_aws.released_transport.headers import (
    CONTROL_MESSAGE,
    CORE_TIME_TO_BE_RECEIVED,
    ENCLOSED_MESSAGE_TYPES,
    MESSAGE_ID,
    MESSAGE_INTENT,
    REPLY_TO_ADDRESS,
    RETRY_ACKNOWLEDGEMENT_QUEUE,
    RETRY_UNIQUE_MESSAGE_ID,
    TIME_SENT,
    TRUE_STRING,
    HeaderDict,
)
from local_aws.released_transport.heartbeats import HeartbeatSender, HeartbeatSettings
from local_aws.released_transport.host import HostInformation
from local_aws.released_transport.hybrid_pubsub import DEFAULT_SUBSCRIPTIONS_CACHE_TTL
from local_aws.released_transport.input_pump import (
    DEFAULT_WAIT_TIME_SECONDS,
    ErrorContext,
    ErrorHandleResult,
    InputQueuePump,
    MessageContext,
    PumpResult,
)
from local_aws.released_transport.message_driven import (
    PublishRouter,
    is_subscription_message,
    receive_subscription_message,
)
from local_aws.released_transport.metrics import MetricsReporter, MetricsSettings
from local_aws.released_transport.naming import (
    QueueNameGenerator,
    assert_queue_name_generator_idempotent,
    get_sqs_queue_name,
)
from local_aws.released_transport.outgoing import (
    DispatchProperties,
    MulticastTransportOperation,
    OutgoingMessage,
    TransportOperation,
    TransportTransaction,
)
from local_aws.released_transport.prepared_message import SqsPreparedMessage
from local_aws.released_transport.queue_cache import QueueCache
from local_aws.released_transport.queue_creator import (
    DEFAULT_MAX_TIME_TO_LIVE_SECONDS,
    QueueCreator,
)
from local_aws.released_transport.queue_policy import PolicySettings
from local_aws.released_transport.recoverability import (
    DelayedRetry,
    ImmediateRetry,
    RecoverabilityAction,
    RecoverabilitySettings,
    default_recoverability_policy,
    delayed_retry_message,
    move_to_error_message,
)
from local_aws.released_transport.s3_settings import S3Settings
from local_aws.released_transport.saga_audit import (
    SagaAuditBackend,
    SagaAuditSettings,
    SagaChangeOutput,
    SagaInvocation,
    add_invoked_saga,
    add_saga_state_change,
    saga_change_initiator,
    saga_updated_body,
)
from local_aws.released_transport.service_platform import SendAttempt
from local_aws.released_transport.sqs_shapes import ReceivedMessage
from local_aws.released_transport.subscription_manager import SubscriptionManager
from local_aws.released_transport.subscription_storage import NonDurableSubscriptionStorage
from local_aws.released_transport.topic_cache import DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL, TopicCache
from local_aws.released_transport.topic_names import (
    TopicNameGenerator,
    full_name,
    get_sns_topic_name,
)

DEFAULT_ERROR_QUEUE: Final = "error"
_Plugin = TypeVar("_Plugin")


class ReplyWithoutReplyToAddressError(Exception):
    """The message being replied to has no ``NServiceBus.ReplyToAddress``."""


class EndpointNotStartedError(RuntimeError):
    """The endpoint was asked to receive before :meth:`ReleasedEndpoint.start`."""


class NoSnsClientError(RuntimeError):
    """The endpoint was asked to publish or subscribe without an SNS client (the model's guard:
    the released transport builds a default client)."""


class PluginNotConfiguredError(RuntimeError):
    """A plugin's step was asked of an endpoint whose settings do not enable the plugin, or
    before :meth:`ReleasedEndpoint.start`."""


@dataclass(frozen=True)
class MessageDrivenPubSubCompatibility:
    """``EnableMessageDrivenPubSubCompatibilityMode()`` and what it configures.

    ``publishers`` is ``RegisterPublisher(eventType, publisherEndpoint)``: an event type
    (assembly-qualified, matched by ``FullName``) to the publisher's endpoint *name*, whose
    transport address the subscribe request goes to. ``topic_cache_ttl`` and
    ``subscriptions_cache_ttl`` are ``SqsSubscriptionMigrationModeSettings``' ``TopicCacheTTL``
    (the not-found topics TTL) and ``SubscriptionsCacheTTL``.
    """

    publishers: Mapping[str, str] = field(default_factory=dict)
    topic_cache_ttl: timedelta = DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL
    subscriptions_cache_ttl: timedelta = DEFAULT_SUBSCRIPTIONS_CACHE_TTL


@dataclass(frozen=True)
class EndpointSettings:
    """An endpoint's configuration, with the released defaults.

    ``wait_time_seconds`` is the receive long-poll (20 s in the transport; tests use 0-1 s).
    ``enable_installers`` changes the start-up message for a missing input queue and makes a
    subscribe create its topics (without it a missing topic fails the subscribe); call
    :meth:`ReleasedEndpoint.install` to create queues (and the S3 bucket). ``topic_name_prefix``
    and ``topic_name_generator`` are ``TopicNamePrefix`` and ``TopicNameGenerator`` (its first
    argument the event type's ``FullName``); ``s3`` is ``transport.S3``; ``policies`` is
    ``transport.Policies``; ``max_time_to_live`` is ``MaxTimeToLive`` (queue retention and the
    bodies' expiry); ``message_driven_pub_sub`` enables the compatibility mode. The platform's
    plugins, all off by default: ``audit`` (``AuditProcessedMessagesTo``), ``heartbeats``
    (``SendHeartbeatTo``), ``custom_checks`` (``ReportCustomChecksTo`` and the checks),
    ``metrics`` (``EnableMetrics().SendMetricDataToServiceControl``) and ``saga_audit``
    (``AuditSagaStateChanges``). ``clock`` and ``sleep`` replace the real ones in tests.
    """

    queue_name_prefix: str | None = None
    queue_name_generator: QueueNameGenerator = get_sqs_queue_name
    wrap_outgoing_messages: bool = True
    error_queue: str = DEFAULT_ERROR_QUEUE
    recoverability: RecoverabilitySettings = field(default_factory=RecoverabilitySettings)
    disable_unrestricted_delayed_delivery: bool = False
    max_concurrency: int | None = None
    wait_time_seconds: int = DEFAULT_WAIT_TIME_SECONDS
    visibility_timeout_seconds: int | None = None
    enable_installers: bool = False
    machine_name: str | None = None
    topic_name_prefix: str | None = None
    topic_name_generator: TopicNameGenerator = get_sns_topic_name
    s3: S3Settings | None = None
    policies: PolicySettings = field(default_factory=PolicySettings)
    reserve_bytes_in_message_size_calculation: int = 0
    max_time_to_live: timedelta = timedelta(seconds=DEFAULT_MAX_TIME_TO_LIVE_SECONDS)
    message_driven_pub_sub: MessageDrivenPubSubCompatibility | None = None
    audit: AuditSettings | None = None
    heartbeats: HeartbeatSettings | None = None
    custom_checks: CustomCheckSettings | None = None
    metrics: MetricsSettings | None = None
    saga_audit: SagaAuditSettings | None = None
    clock: Clock = system_clock
    sleep: Callable[[float], None] = time.sleep


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


@dataclass(frozen=True)
class ProcessingOutcome:
    """What one :meth:`ReleasedEndpoint.process` step did with one received message."""

    pump: PumpResult
    action: RecoverabilityAction | None = None
    """The recoverability action taken, when the handler failed."""
    message: IncomingMessage | None = None
    """The message as the pipeline saw it (the handler, or the subscription storage for a
    subscription message), when it got that far."""


class MessageHandlerContext:
    """What a handler may do; its operations are dispatched after it returned."""

    def __init__(self, endpoint: ReleasedEndpoint, message: IncomingMessage) -> None:
        self.message = message
        self._endpoint = endpoint
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
        writes it): the model's stand-in for core's sagas, which only saga audit observes."""
        self.saga = SagaInvocation(saga_type, saga_id, state, is_new, is_completed)

    def _note_output(
        self, operations: Sequence[Operation], message_type: str, delay: timedelta | None
    ) -> None:
        """``CaptureSagaResultingMessagesBehavior``: with saga audit on, each logical message."""
        if self._endpoint.settings.saga_audit is None:
            return
        message = operations[0].message
        unicast = [op.destination for op in operations if isinstance(op, TransportOperation)]
        self.saga_outputs.append(
            SagaChangeOutput(
                full_name(message_type),
                self._endpoint.settings.clock(),
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
        operation = self._endpoint.send_operation(
            destination, message_type, body, delay=delay, headers=headers, incoming=self.message
        )
        self._note_output([operation], message_type, delay)
        self.pending.append(operation)
        return operation.message.message_id

    def reply(
        self, message_type: str, body: bytes, *, headers: Mapping[str, str | None] | None = None
    ) -> str:
        """``context.Reply``: to the incoming ``NServiceBus.ReplyToAddress``."""
        operation = self._endpoint.reply_operation(self.message, message_type, body, headers)
        self._note_output([operation], message_type, None)
        self.pending.append(operation)
        return operation.message.message_id

    def forward(self, destination: str) -> None:
        """``context.ForwardCurrentMessageTo``: an exact copy of the message being handled."""
        self.pending.append(self._endpoint.forward_operation(self.message, destination))

    def publish(
        self,
        event_type: str,
        body: bytes,
        *,
        hierarchy: Sequence[str] = (),
        headers: Mapping[str, str | None] | None = None,
    ) -> str:
        """``context.Publish``: returns the new message id."""
        operations = self._endpoint.publish_operations(
            event_type, body, hierarchy=hierarchy, headers=headers, incoming=self.message
        )
        self._note_output(operations, event_type, None)
        self.pending.extend(operations)
        return operations[0].message.message_id


Handler = Callable[[MessageHandlerContext], object]
"""A message handler; what it returns is ignored, what it raises goes to recoverability."""


class ReleasedEndpoint:
    """One endpoint: its name, an SQS client of its own account, and its settings."""

    input_pump_type: type[InputQueuePump] = InputQueuePump
    """The input pump it receives with (a variant may substitute its own)."""

    def __init__(
        self,
        endpoint_name: str,
        sqs: Any,
        settings: EndpointSettings | None = None,
        *,
        sns: Any = None,
    ):
        self.endpoint_name = endpoint_name
        self.settings = settings or EndpointSettings()
        self._sqs = sqs
        self.host = HostInformation.of(endpoint_name, self.settings.machine_name)
        self.queue_cache = QueueCache(
            sqs, self.settings.queue_name_generator, self.settings.queue_name_prefix
        )
        self.receive_address = self.queue_cache.physical_queue_name(endpoint_name)
        """The transport address: what ``ReplyToAddress``, ``FailedQ`` and
        ``SubscriberAddress`` carry."""
        compatibility = self.settings.message_driven_pub_sub
        self.topic_cache = (
            None
            if sns is None
            else TopicCache(
                sns,
                self.settings.topic_name_generator,
                self.settings.topic_name_prefix,
                not_found_topics_cache_ttl=(
                    DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL
                    if compatibility is None
                    else compatibility.topic_cache_ttl
                ),
                clock=self.settings.clock,
            )
        )
        """The topics of the endpoint's own account (none without an SNS client)."""
        self.subscription_storage = (
            None if compatibility is None else NonDurableSubscriptionStorage()
        )
        """The message-driven subscribers, in the compatibility mode."""
        self._publish_router = (
            None if self.subscription_storage is None else PublishRouter(self.subscription_storage)
        )
        self._subscription_manager = (
            None
            if self.topic_cache is None
            else SubscriptionManager(
                sqs,
                self.queue_cache,
                self.topic_cache,
                self.receive_address,
                policy_settings=self.settings.policies,
                topic_name_prefix=self.settings.topic_name_prefix,
                setup_infrastructure=self.settings.enable_installers,
                sleep=self.settings.sleep,
            )
        )
        self.dispatcher = self._create_dispatcher()
        self._input_pump: InputQueuePump | None = None
        self._delayed_pump: DelayedMessagesPump | None = None
        self.heartbeats = (
            None
            if self.settings.heartbeats is None
            else HeartbeatSender(
                self.dispatcher,
                self.host,
                self.receive_address,
                self.settings.heartbeats,
                self.settings.clock,
            )
        )
        """The heartbeat plugin (``None`` unless configured)."""
        self.custom_checks = (
            None
            if self.settings.custom_checks is None
            else CustomChecksRunner(
                self.dispatcher,
                self.host,
                self.receive_address,
                self.settings.custom_checks,
                self.settings.clock,
            )
        )
        """The custom checks plugin (``None`` unless configured)."""
        self.metrics = (
            None
            if self.settings.metrics is None
            else MetricsReporter(
                self.dispatcher,
                self.host,
                self.receive_address,
                self.settings.metrics,
                self.settings.clock,
            )
        )
        """The metrics plugin (``None`` unless configured)."""
        self.saga_audit = (
            None
            if self.settings.saga_audit is None
            else SagaAuditBackend(self.dispatcher, self.receive_address, self.settings.saga_audit)
        )
        """The saga audit plugin (``None`` unless configured)."""

    # Composition points an endpoint variant replaces.

    def _subscriptions_cache_ttl(self) -> timedelta:
        compatibility = self.settings.message_driven_pub_sub
        return (
            DEFAULT_SUBSCRIPTIONS_CACHE_TTL
            if compatibility is None
            else compatibility.subscriptions_cache_ttl
        )

    def _create_dispatcher(self) -> MessageDispatcher:
        return MessageDispatcher(
            self._sqs,
            self.queue_cache,
            topic_cache=self.topic_cache,
            s3=self.settings.s3,
            wrap_outgoing_messages=self.settings.wrap_outgoing_messages,
            reserve_bytes_in_message_size_calculation=(
                self.settings.reserve_bytes_in_message_size_calculation
            ),
            subscriptions_cache_ttl=self._subscriptions_cache_ttl(),
            clock=self.settings.clock,
        )

    def _create_input_pump(self) -> InputQueuePump:
        return self.input_pump_type(
            self._sqs,
            self.queue_cache,
            self.receive_address,
            self.settings.error_queue,
            max_concurrency=self.settings.max_concurrency,
            wait_time_seconds=self.settings.wait_time_seconds,
            visibility_timeout_seconds=self.settings.visibility_timeout_seconds,
            setup_infrastructure=self.settings.enable_installers,
            s3=self.settings.s3,
            clock=self.settings.clock,
        )

    def route(self, destination: str) -> str:
        """The transport address a send to ``destination`` goes to: the released transport
        takes it as it is (a name, resolved in the endpoint's own account)."""
        return destination

    def publisher_address(self, publisher_endpoint: str) -> str:
        """The transport address of a registered publisher (``ToTransportAddress`` of its
        name: the physical queue name, resolved in the endpoint's own account)."""
        return self.queue_cache.physical_queue_name(publisher_endpoint)

    # Lifecycle.

    def install(self) -> None:
        """What ``EnableInstallers()`` creates: the error queue, the input queue and (unless
        unrestricted delayed delivery is disabled) the delay queue; with S3 settings the bucket
        and its lifecycle rule. Topics are created when subscribing."""
        creator = QueueCreator(
            self._sqs,
            self.queue_cache,
            max_time_to_live_seconds=int(self.settings.max_time_to_live.total_seconds()),
            s3=self.settings.s3,
            sleep=self.settings.sleep,
        )
        creator.create_queue_if_necessary(self.settings.error_queue, create_delay_queue=False)
        creator.create_queue_if_necessary(
            self.receive_address,
            create_delay_queue=not self.settings.disable_unrestricted_delayed_delivery,
        )

    def start(self) -> None:
        """Start as the released endpoint does, or refuse with its error: the generator must be
        idempotent, the input queue must exist, the delay queue must exist and pass the
        start-up check, and (with saga audit) the saga audit queue must take a message. Then the
        plugins' startup tasks: the heartbeat registration, every custom check once, the first
        endpoint metadata report (their failures are kept, not raised)."""
        assert_queue_name_generator_idempotent(self.settings.queue_name_generator)
        input_pump = self._create_input_pump()
        input_pump.initialize()
        if not self.settings.disable_unrestricted_delayed_delivery:
            delayed_pump = DelayedMessagesPump(
                self._sqs,
                self.queue_cache,
                self.receive_address,
                wait_time_seconds=self.settings.wait_time_seconds,
                clock=self.settings.clock,
                sleep=self.settings.sleep,
            )
            delayed_pump.initialize()
            self._delayed_pump = delayed_pump
        if self.saga_audit is not None:
            self.saga_audit.start()
        self._input_pump = input_pump
        if self.heartbeats is not None:
            self.heartbeats.start()
        if self.custom_checks is not None:
            self.custom_checks.start()
        if self.metrics is not None:
            self.metrics.report_endpoint_metadata()

    # The plugins' timers.

    def send_heartbeat(self) -> SendAttempt:
        """One ``EndpointHeartbeat`` (the heartbeat timer's tick)."""
        return self._started(self.heartbeats, "heartbeats").send_heartbeat()

    def retry_heartbeat_registration(self) -> SendAttempt:
        """The one retry of a failed start-up registration (due a minute after the start)."""
        return self._started(self.heartbeats, "heartbeats").retry_registration()

    def run_custom_checks(self) -> list[SendAttempt]:
        """One tick of every periodic custom check."""
        return self._started(self.custom_checks, "custom_checks").run_periodic_checks()

    def report_metrics(self) -> list[SendAttempt]:
        """One flush of every metric with values (the reporters' tick)."""
        return self._started(self.metrics, "metrics").report()

    def report_endpoint_metadata(self) -> SendAttempt:
        """One endpoint metadata report (the metadata reporter's tick)."""
        return self._started(self.metrics, "metrics").report_endpoint_metadata()

    def _started(self, plugin: _Plugin | None, setting: str) -> _Plugin:
        if plugin is None:
            raise PluginNotConfiguredError(
                f"endpoint {self.endpoint_name} has no {setting}: set EndpointSettings.{setting}"
            )
        if self._input_pump is None:
            raise PluginNotConfiguredError(f"endpoint {self.endpoint_name} has not been started")
        return plugin

    # Sending.

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
            reply_to_address=self.receive_address,
            host=self.host,
            headers=headers,
            incoming=None if incoming is None else incoming.headers,
        )
        ttbr = None if time_to_be_received is None else TimeSpan.of(time_to_be_received)
        if ttbr is not None:
            outgoing_headers[CORE_TIME_TO_BE_RECEIVED] = str(ttbr)
        self._mutate_outgoing(outgoing_headers)
        apply_routing_headers(outgoing_headers, self.settings.clock(), delay)
        return TransportOperation(
            OutgoingMessage(message_id, outgoing_headers, body),
            self.route(destination),
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
            reply_to_address=self.receive_address,
            host=self.host,
            headers=headers,
            incoming=incoming.headers,
        )
        self._mutate_outgoing(outgoing_headers)
        apply_routing_headers(outgoing_headers, self.settings.clock())
        return TransportOperation(
            OutgoingMessage(message_id, outgoing_headers, body), str(destination)
        )

    def _mutate_outgoing(self, headers: HeaderDict) -> None:
        """The outgoing message mutators of a send, reply or publish (the metrics plugin's)."""
        if self.metrics is not None:
            self.metrics.mutate_outgoing(headers)

    def forward_operation(self, incoming: IncomingMessage, destination: str) -> TransportOperation:
        """The transport operation of ``ForwardCurrentMessageTo``: same id, headers, body."""
        headers = dict(incoming.headers)
        apply_routing_headers(headers, self.settings.clock())
        return TransportOperation(
            OutgoingMessage(incoming.message_id, headers, incoming.body), destination
        )

    def send(
        self,
        destination: str,
        message_type: str,
        body: bytes,
        *,
        delay: timedelta | None = None,
        headers: Mapping[str, str | None] | None = None,
        time_to_be_received: timedelta | None = None,
    ) -> OutgoingMessage:
        """``IMessageSession.Send`` to a destination address; returns what was dispatched."""
        operation = self.send_operation(
            destination,
            message_type,
            body,
            delay=delay,
            headers=headers,
            time_to_be_received=time_to_be_received,
        )
        self.dispatcher.dispatch([operation])
        return operation.message

    def reply(
        self,
        incoming: IncomingMessage,
        message_type: str,
        body: bytes,
        *,
        headers: Mapping[str, str | None] | None = None,
    ) -> OutgoingMessage:
        """A reply to ``incoming``, dispatched at once, to its reply-to address by name."""
        operation = self.reply_operation(incoming, message_type, body, headers)
        self.dispatcher.dispatch([operation], incoming.transport_transaction)
        return operation.message

    def forward(self, incoming: IncomingMessage, destination: str) -> OutgoingMessage:
        """An exact copy of ``incoming`` to ``destination``, dispatched at once."""
        operation = self.forward_operation(incoming, destination)
        self.dispatcher.dispatch([operation], incoming.transport_transaction)
        return operation.message

    # Publishing and subscribing.

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
            reply_to_address=self.receive_address,
            host=self.host,
            headers=headers,
            incoming=None if incoming is None else incoming.headers,
        )
        self._mutate_outgoing(outgoing_headers)
        apply_routing_headers(outgoing_headers, self.settings.clock())
        message = OutgoingMessage(message_id, outgoing_headers, body)
        operations: list[Operation] = [MulticastTransportOperation(message, full_name(event_type))]
        if self._publish_router is not None:
            destinations = self._publish_router.destinations([full_name(t) for t in types])
            operations.extend(TransportOperation(message, address) for address in destinations)
        return operations

    def publish(
        self,
        event_type: str,
        body: bytes,
        *,
        hierarchy: Sequence[str] = (),
        headers: Mapping[str, str | None] | None = None,
    ) -> OutgoingMessage:
        """``IMessageSession.Publish``; returns what was dispatched."""
        operations = self.publish_operations(event_type, body, hierarchy=hierarchy, headers=headers)
        self.dispatcher.dispatch(operations)
        return operations[0].message

    def subscribe(self, *event_types: str) -> list[OutgoingMessage]:
        """``Subscribe`` (``SubscribeAll`` for several): the native subscription, then in the
        compatibility mode the subscribe requests, which are returned."""
        self._native_subscriptions().subscribe_all([full_name(t) for t in event_types])
        return self._send_subscription_requests(MessageIntent.SUBSCRIBE, event_types)

    def unsubscribe(self, event_type: str) -> list[OutgoingMessage]:
        """``Unsubscribe``: the native subscription, then in the compatibility mode the
        unsubscribe requests, which are returned."""
        self._native_subscriptions().unsubscribe(full_name(event_type))
        return self._send_subscription_requests(MessageIntent.UNSUBSCRIBE, (event_type,))

    def _native_subscriptions(self) -> SubscriptionManager:
        if self._subscription_manager is None:
            raise NoSnsClientError(f"endpoint {self.endpoint_name} has no SNS client")
        return self._subscription_manager

    def _send_subscription_requests(
        self, intent: MessageIntent, event_types: Sequence[str]
    ) -> list[OutgoingMessage]:
        """The terminators' requests to each registered publisher; every one is attempted and
        the first failure raised."""
        compatibility = self.settings.message_driven_pub_sub
        if compatibility is None:
            return []
        sent: list[OutgoingMessage] = []
        failures: list[BaseException] = []
        for event_type in event_types:
            for registered, publisher in compatibility.publishers.items():
                if full_name(registered) != full_name(event_type):
                    continue
                headers = subscription_control_headers(
                    intent,
                    event_type,
                    self.receive_address,
                    self.endpoint_name,
                    self.settings.clock(),
                )
                message = OutgoingMessage(new_message_id(), headers, b"")
                try:
                    self.dispatcher.dispatch(
                        [TransportOperation(message, self.publisher_address(publisher))]
                    )
                    sent.append(message)
                except Exception as failure:
                    failures.append(failure)
        if failures:
            raise failures[0]
        return sent

    # Receiving.

    def process(self, handler: Handler) -> list[ProcessingOutcome]:
        """Receive one batch from the input queue and handle each message with ``handler``."""
        if self._input_pump is None:
            raise EndpointNotStartedError(f"endpoint {self.endpoint_name} has not been started")
        request = self._input_pump.receive_request()
        messages = self._sqs.receive_message(**request).get("Messages") or []
        return [self._process_one(self._input_pump, handler, message) for message in messages]

    def _process_one(
        self, pump: InputQueuePump, handler: Handler, received: ReceivedMessage
    ) -> ProcessingOutcome:
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

    def process_delayed(self) -> list[SqsPreparedMessage]:
        """Receive one batch from the delay queue and move each message on."""
        if self._delayed_pump is None:
            raise EndpointNotStartedError(
                f"endpoint {self.endpoint_name} has no started delayed messages pump"
            )
        return self._delayed_pump.poll()

    def _on_message(
        self, handler: Handler, context: MessageContext, seen: list[IncomingMessage]
    ) -> None:
        """Core's receive pipeline: the time sent read, the subscription storage or the handler
        (none for a control message) and saga audit, the audit copy, the batched operations,
        the retry acknowledgement (``RetryAcknowledgementBehavior``), then the completed
        receive the metrics observe."""
        started = self.settings.clock()
        incoming = IncomingMessage.of(context)
        seen.append(incoming)
        if TIME_SENT in incoming.headers:
            from_wire_format(str(incoming.headers[TIME_SENT]))
        pending: list[Operation] = []
        if self.subscription_storage is not None and is_subscription_message(incoming.headers):
            receive_subscription_message(incoming.headers, self.subscription_storage)
        elif not _is_control_message(incoming.headers):
            handler_context = MessageHandlerContext(self, incoming)
            handler(handler_context)
            self._audit_saga(handler_context, started)
            pending = handler_context.pending
        acknowledged = self._is_acknowledged_retry(incoming)
        if self.settings.audit is not None:
            times = ProcessingTimes(started, self.settings.clock())
            pending = [
                *pending,
                audit_operation(
                    self.settings.audit,
                    incoming.message_id,
                    incoming.headers,
                    incoming.body,
                    host=self.host,
                    times=times,
                    retry_acknowledged=acknowledged,
                ),
            ]
        self.dispatcher.dispatch(pending, context.transport_transaction)
        if acknowledged:
            self._acknowledge_retry(incoming)
        if self.metrics is not None:
            self.metrics.record_completed(incoming.headers, started, self.settings.clock())

    def _audit_saga(self, handler_context: MessageHandlerContext, started: datetime) -> None:
        """``CaptureSagaStateBehavior`` and ``AuditInvokedSagaBehavior`` after a handler that ran
        as a saga: the incoming headers, then the ``SagaUpdatedMessage`` sent at once."""
        saga = handler_context.saga
        if self.saga_audit is None or saga is None:
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
            endpoint=self.endpoint_name,
            start_time=started,
            finish_time=self.settings.clock(),
        )
        self.saga_audit.send(body, incoming.transport_transaction)

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
        now = self.settings.clock()
        headers = retry_acknowledgement_headers(str(unique_id), now)
        apply_routing_headers(headers, now)
        acknowledgement = OutgoingMessage(new_message_id(), headers, b"")
        self.dispatcher.dispatch(
            [TransportOperation(acknowledgement, queue)], incoming.transport_transaction
        )

    def _on_error(
        self, context: ErrorContext, actions: list[RecoverabilityAction]
    ) -> ErrorHandleResult:
        """Core's recoverability: decide, then dispatch what the decision sends."""
        now = self.settings.clock()
        action = default_recoverability_policy(
            self.settings.recoverability, self.settings.error_queue, context, now
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
            message = move_to_error_message(context, self.host, now)
            apply_routing_headers(message.headers, now)
            operation = TransportOperation(message, action.error_queue)
        self.dispatcher.dispatch([operation], context.transport_transaction)
        if isinstance(action, DelayedRetry):
            self._signal_retry(context)
        return ErrorHandleResult.HANDLED

    def _signal_retry(self, context: ErrorContext) -> None:
        """The retry notification (after the action's dispatch) the metrics observe."""
        if self.metrics is not None:
            self.metrics.signal_retry(context.headers)


def _is_control_message(headers: Mapping[str, str | None]) -> bool:
    """``DeserializeMessageConnector.IsControlMessage``: no logical message, so no handler."""
    return (headers.get(CONTROL_MESSAGE) or "").upper() == TRUE_STRING.upper()
