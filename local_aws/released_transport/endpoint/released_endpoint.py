"""A released NServiceBus endpoint on SQS, for tests to drive step by step.

``ReleasedEndpoint`` composes the model's parts the way NServiceBus 10 with NServiceBus.AmazonSQS
9.1.1 composes them: its receive address (transport address) is its name through the queue
name generator; it sends, replies and forwards with the core headers and the released
dispatcher, always *by name in its own account*; it publishes to its event types' topics found
by name in its own account (and, in the message-driven compatibility mode, to every stored
subscriber); it subscribes its input queue to topics of its own account and, in that mode,
sends subscribe requests to the registered publishers; it receives with the released input pump
and runs core's default recoverability; and it moves its delay queue with the delayed messages
pump. Its parts: the settings (:mod:`~local_aws.released_transport.endpoint.settings`), what its
sends, replies, forwards and publishes become
(:mod:`~local_aws.released_transport.endpoint.operations`), what a handler may do
(:mod:`~local_aws.released_transport.endpoint.handler_context`), what becomes of a received
message (:mod:`~local_aws.released_transport.endpoint.receive_pipeline`) and the platform's
plugins (:mod:`~local_aws.released_transport.endpoint.plugin_wiring`).

Nothing runs in the background: :meth:`ReleasedEndpoint.process` receives one batch from the
input queue and handles it, :meth:`ReleasedEndpoint.process_delayed` one batch from the delay
queue. A handler's sends, replies, forwards and publishes are dispatched (batched) only after it
returned, and an exception from the handler or from that dispatch goes to recoverability. A
message retried from ServiceControl is acknowledged after it succeeded.

Subscribing: the native subscription
(:mod:`~local_aws.released_transport.transport.pubsub.subscription_manager`) then, in the
compatibility mode, a subscribe request to the transport address of each publisher registered
for the type, sent by the dispatcher directly (no pipeline). Core retries a subscribe request
only on its own ``QueueNotFoundException``, which the SQS dispatcher never raises: a missing
publisher queue fails the subscribe at once.

:meth:`ReleasedEndpoint.start` runs the plugins' startup tasks at once, and their timers are
steps: :meth:`ReleasedEndpoint.send_heartbeat`,
:meth:`ReleasedEndpoint.retry_heartbeat_registration`, :meth:`ReleasedEndpoint.run_custom_checks`,
:meth:`ReleasedEndpoint.report_metrics`, :meth:`ReleasedEndpoint.report_endpoint_metadata`.

Not modelled (see ``docs/released_transport.md``): sagas (a handler declares the saga it ran
as, for saga audit), outbox, visibility renewal, concurrency, ``MapEvent``, auto-subscribe at
start-up (call :meth:`ReleasedEndpoint.subscribe`).

Facts: see the modules composed here; the start-up order (input pump, then delayed messages
pump) is NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS/Receiving/MessagePump.cs``,
the transport address ``Configure/SqsTransportInfrastructure.cs`` (``ToTransportAddressCore``),
the idempotence guard ``Configure/SqsTransport.cs``, the subscribe pipelines NServiceBus 10.2.5
``src/NServiceBus.Core/Unicast/MessageOperations.cs``, ``Routing/NativeSubscribeTerminator.cs``,
``Routing/NativeUnsubscribeTerminator.cs``, ``Routing/SubscriptionMigrationMode/``
(``MigrationSubscribeTerminator.cs``, ``MigrationUnsubscribeTerminator.cs``,
``SubscriptionMigrationMode.cs``), ``Routing/MessageDrivenSubscriptions/SubscriptionRouter.cs``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from local_aws.released_transport.core.host import HostInformation
from local_aws.released_transport.core.incoming import IncomingMessage
from local_aws.released_transport.core.message_driven import PublishRouter
from local_aws.released_transport.core.outgoing import OutgoingMessage, TransportOperation
from local_aws.released_transport.core.pipeline_headers import (
    MessageIntent,
    new_message_id,
    subscription_control_headers,
)
from local_aws.released_transport.core.subscription_storage import NonDurableSubscriptionStorage
from local_aws.released_transport.endpoint.handler_context import Handler
from local_aws.released_transport.endpoint.operations import MessageOperations
from local_aws.released_transport.endpoint.plugin_wiring import (
    CUSTOM_CHECKS,
    HEARTBEATS,
    METRICS,
    SAGA_AUDIT,
    EndpointPlugins,
    PluginParts,
    PluginT,
    PluginWiring,
)
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
    ReceivePipeline,
)
from local_aws.released_transport.endpoint.settings import EndpointSettings
from local_aws.released_transport.plugins.custom_checks import CustomChecksRunner
from local_aws.released_transport.plugins.heartbeats import HeartbeatSender
from local_aws.released_transport.plugins.metrics import MetricsReporter
from local_aws.released_transport.plugins.saga_audit import SagaAuditBackend
from local_aws.released_transport.plugins.service_platform import SendAttempt
from local_aws.released_transport.transport.pubsub.subscription_manager import SubscriptionManager
from local_aws.released_transport.transport.pubsub.topic_cache import (
    DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL,
    TopicCache,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import full_name
from local_aws.released_transport.transport.queues.naming import (
    assert_queue_name_generator_idempotent,
)
from local_aws.released_transport.transport.queues.queue_cache import QueueCache
from local_aws.released_transport.transport.queues.queue_creator import QueueCreator
from local_aws.released_transport.transport.receiving.delayed_pump import DelayedMessagesPump
from local_aws.released_transport.transport.receiving.input_pump import InputQueuePump
from local_aws.released_transport.transport.sending.dispatcher import MessageDispatcher, Operation
from local_aws.released_transport.transport.sending.hybrid_pubsub import (
    DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
)
from local_aws.released_transport.transport.sending.prepared_message import SqsPreparedMessage


class EndpointNotStartedError(RuntimeError):
    """The endpoint was asked to receive before :meth:`ReleasedEndpoint.start`."""


class NoSnsClientError(RuntimeError):
    """The endpoint was asked to publish or subscribe without an SNS client (the model's guard:
    the released transport builds a default client)."""


class PluginNotConfiguredError(RuntimeError):
    """A plugin's step was asked of an endpoint whose settings do not enable the plugin, or
    before :meth:`ReleasedEndpoint.start`."""


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
        self.host = HostInformation.of(
            endpoint_name, self.settings.machine_name, self.settings.command_line
        )
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
        self.plugins = EndpointPlugins(
            self.settings,
            PluginParts(self.dispatcher, self.host, self.receive_address, self.settings.clock),
        )
        """The platform's plugins its settings enable."""
        metrics = self.metrics
        self.operations = MessageOperations(
            self.receive_address,
            self.host,
            self.settings.clock,
            route=self.route,
            publish_router=(
                None
                if self.subscription_storage is None
                else PublishRouter(self.subscription_storage)
            ),
            mutate_outgoing=None if metrics is None else metrics.mutate_outgoing,
        )
        """What its sends, replies, forwards and publishes become."""
        self._pipeline = ReceivePipeline(
            endpoint_name,
            self.settings,
            self.host,
            self.dispatcher,
            self.operations,
            subscription_storage=self.subscription_storage,
            metrics=metrics,
            saga_audit=self.saga_audit,
        )

    # The plugins.

    @property
    def heartbeats(self) -> HeartbeatSender | None:
        """The heartbeat plugin (``None`` unless configured)."""
        return self.plugins.get(HEARTBEATS)

    @property
    def custom_checks(self) -> CustomChecksRunner | None:
        """The custom checks plugin (``None`` unless configured)."""
        return self.plugins.get(CUSTOM_CHECKS)

    @property
    def metrics(self) -> MetricsReporter | None:
        """The metrics plugin (``None`` unless configured)."""
        return self.plugins.get(METRICS)

    @property
    def saga_audit(self) -> SagaAuditBackend | None:
        """The saga audit plugin (``None`` unless configured)."""
        return self.plugins.get(SAGA_AUDIT)

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
        plugins' other startup tasks: the heartbeat registration, every custom check once, the
        first endpoint metadata report (their failures are kept, not raised)."""
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
        self.plugins.run_startup_tasks(can_stop_the_start=True)
        self._input_pump = input_pump
        self.plugins.run_startup_tasks(can_stop_the_start=False)

    # The plugins' timers.

    def send_heartbeat(self) -> SendAttempt:
        """One ``EndpointHeartbeat`` (the heartbeat timer's tick)."""
        return self._started(HEARTBEATS).send_heartbeat()

    def retry_heartbeat_registration(self) -> SendAttempt:
        """The one retry of a failed start-up registration (due a minute after the start)."""
        return self._started(HEARTBEATS).retry_registration()

    def run_custom_checks(self) -> list[SendAttempt]:
        """One tick of every periodic custom check."""
        return self._started(CUSTOM_CHECKS).run_periodic_checks()

    def report_metrics(self) -> list[SendAttempt]:
        """One flush of every metric with values (the reporters' tick)."""
        return self._started(METRICS).report()

    def report_endpoint_metadata(self) -> SendAttempt:
        """One endpoint metadata report (the metadata reporter's tick)."""
        return self._started(METRICS).report_endpoint_metadata()

    def _started(self, wiring: PluginWiring[Any, PluginT]) -> PluginT:
        plugin = self.plugins.get(wiring)
        if plugin is None:
            raise PluginNotConfiguredError(
                f"endpoint {self.endpoint_name} has no {wiring.setting}:"
                f" set EndpointSettings.{wiring.setting}"
            )
        if self._input_pump is None:
            raise PluginNotConfiguredError(f"endpoint {self.endpoint_name} has not been started")
        return plugin

    # Sending.

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
        operation = self.operations.send_operation(
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
        operation = self.operations.reply_operation(incoming, message_type, body, headers)
        self.dispatcher.dispatch([operation], incoming.transport_transaction)
        return operation.message

    def forward(self, incoming: IncomingMessage, destination: str) -> OutgoingMessage:
        """An exact copy of ``incoming`` to ``destination``, dispatched at once."""
        operation = self.operations.forward_operation(incoming, destination)
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
    ) -> list[Operation]:
        """The transport operations a publish from the session becomes: the topic's, then
        (compatibility mode) one per subscriber address."""
        return self.operations.publish_operations(
            event_type, body, hierarchy=hierarchy, headers=headers
        )

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
        pump = self._input_pump
        messages = self._sqs.receive_message(**pump.receive_request()).get("Messages") or []
        return [self._pipeline.process(pump, handler, message) for message in messages]

    def process_delayed(self) -> list[SqsPreparedMessage]:
        """Receive one batch from the delay queue and move each message on."""
        if self._delayed_pump is None:
            raise EndpointNotStartedError(
                f"endpoint {self.endpoint_name} has no started delayed messages pump"
            )
        return self._delayed_pump.poll()
