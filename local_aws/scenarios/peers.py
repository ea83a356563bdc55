"""The NServiceBus side of a deployed topology, played by the model of the released transport.

Each endpoint of the topology runs as
:class:`~local_aws.released_transport.endpoint.released_endpoint.ReleasedEndpoint` (or,
``arnAware``, as the seed's
:class:`~local_aws.released_transport.arn_aware.endpoint.ArnAwareEndpoint`) with SQS, SNS and S3
clients of its own account, configured as its team would configure it after the README's "What the
endpoints configure": its name, its queue-name prefix, its immediate retries, the error queue's
name, no installers, topic policies left to the platform, the topic name prefix of its event topics,
its account's body bucket (``largeMessages``), and the compatibility mode as a publisher to
message-driven subscribers (which stores them) or as one (``RegisterPublisher`` for each event).
With ServiceControl's other queues declared, every endpoint audits to the audit queue, sends
heartbeats and custom check results (its dead-letter queue stays empty) to ``serviceControlQueue``,
metrics to ``monitoringQueue`` and saga audit to the audit queue, where ServiceControl 6 stores it
(else to ``serviceControlQueue``), each by the name it is configured with, as the README tells its
team; saga audit runs only on the endpoints that register sagas (``sagas``: which endpoint hosts
which saga types is the deployment's choice, declared, not found at run time). Each endpoint runs
as a process of its own, started from a directory of its own (:func:`endpoint_command_line`), so
each has a host id of its own, as separately deployed endpoints on one machine do.
ServiceControl's primary instance runs on the error queue's account (its own queue, when declared,
is there too), its audit and monitoring instances on their queues' accounts. Nothing here knows
the bridge: every peer resolves names in its own account as the released transport does, and
an ARN-aware sender is told, as its team would tell it (``UseAccountForEndpoint``), the account of
each endpoint it routes to directly.

:meth:`Peers.settle` plays the background work of every peer and relay (input pumps, delayed
messages pumps, ServiceControl's ingestion and retries, the relays' event source mappings)
round after round until nothing moves; :meth:`Peers.advance` lets the local AWS's time pass
first (:mod:`local_aws.moto.time_travel`), so retries and delays of minutes take a second.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import DEFAULT_MAX_ROUNDS, LambdaPoller, PumpResult
from local_aws.moto.time_travel import age_sqs_messages
from local_aws.released_transport.arn_aware.endpoint import ArnAwareEndpoint
from local_aws.released_transport.core.audit import AuditSettings
from local_aws.released_transport.core.recoverability import RecoverabilitySettings
from local_aws.released_transport.endpoint.handler_context import (
    MessageHandlerContext,
)
from local_aws.released_transport.endpoint.receive_pipeline import (
    ProcessingOutcome,
)
from local_aws.released_transport.endpoint.released_endpoint import (
    ReleasedEndpoint,
)
from local_aws.released_transport.endpoint.settings import (
    EndpointSettings,
    MessageDrivenPubSubCompatibility,
)
from local_aws.released_transport.plugins.custom_checks import (
    PASS,
    CheckResult,
    CustomCheck,
    CustomCheckSettings,
)
from local_aws.released_transport.plugins.heartbeats import HeartbeatSettings
from local_aws.released_transport.plugins.metrics import MetricsSettings
from local_aws.released_transport.plugins.saga_audit import SagaAuditSettings
from local_aws.released_transport.plugins.service_platform import SendAttempt
from local_aws.released_transport.service_control.audit import (
    AuditInstanceSettings,
    ServiceControlAudit,
)
from local_aws.released_transport.service_control.main_instance import (
    ServiceControl,
    ServiceControlSettings,
)
from local_aws.released_transport.service_control.monitoring import (
    MonitoringSettings,
    ServiceControlMonitoring,
)
from local_aws.released_transport.service_control.view import (
    EndpointView,
    endpoint_views,
)
from local_aws.released_transport.transport.pubsub.queue_policy import PolicySettings
from local_aws.released_transport.transport.queues.queue_creator import QueueCreator
from local_aws.released_transport.transport.s3_settings import S3Settings
from stacks.topology import Endpoint, PlatformQueueKind, Topology

BODY_KEY_PREFIX: Final = "bodies"
"""The ``S3Settings`` key prefix every peer configures: any prefix serves, since the relay
copies a body under its own key."""
EVENT_ASSEMBLY_VERSION: Final = "Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
METRICS_INTERVAL: Final = timedelta(seconds=10)
"""How often each endpoint reports its metrics: what the monitoring instance's own documentation
suggests, and the model reports only when :meth:`Peers.tick_platform` says so anyway."""
DEAD_LETTER_CHECK_CATEGORY: Final = "Messaging"
DEAD_LETTER_CHECK_INTERVAL: Final = timedelta(minutes=5)
"""The custom check every endpoint runs: its queue's dead-letter queue holds nothing, checked as
often as the stacks' alarms evaluate it."""
ENDPOINT_PROGRAM: Final = "/opt/endpoints/{name}/{name}"
"""Where each endpoint's process starts from: its published program in a directory of its own."""
DEFAULT_MAX_SETTLE_ROUNDS: Final = 50
"""Rounds of :meth:`Peers.settle` before it gives up: a conversation of the demo settles in a
handful; a message bouncing between two queues never would."""


def event_type_name(full_name: str) -> str:
    """The assembly-qualified name core gives ``typeof(<full_name>)``, in an assembly named
    after its namespace (the topic comes from the ``FullName``; a subscribe message carries
    the whole name, which core parses, so it needs its ``Version=``)."""
    assembly = full_name.rsplit(".", 1)[0]
    return f"{full_name}, {assembly}, {EVENT_ASSEMBLY_VERSION}"


def endpoint_command_line(endpoint_name: str) -> str:
    """The command line of ``endpoint_name``'s process, from which core derives its default
    host id (:meth:`~local_aws.released_transport.core.host.HostInformation.of`)."""
    return ENDPOINT_PROGRAM.format(name=endpoint_name)


class PeersError(RuntimeError):
    """The peers could not start, or did not come to rest; the message says which and why."""


@dataclass
class Activity:
    """What one :meth:`Peers.settle` moved."""

    relayed: list[PumpResult] = field(default_factory=list)
    processed: dict[str, list[ProcessingOutcome]] = field(default_factory=dict)
    moved_from_delay_queues: int = 0
    ingested: int = 0
    returned_to_sender: int = 0
    service_control_received: int = 0
    """Messages ServiceControl's instances took from their own queues (heartbeats, custom
    checks, audit copies, saga audit, metrics)."""

    def relay_functions(self) -> tuple[str, ...]:
        """The relay functions invoked, in order."""
        return tuple(
            invocation.mapping.function_name
            for result in self.relayed
            for invocation in result.invocations
        )


@dataclass(frozen=True)
class Subscription:
    """A message-driven subscriber's subscribe message for one event, sent to its publisher."""

    subscriber: str
    event_type: str
    publisher: str
    request_id: str


class Peers:
    """The deployed topology's endpoints and ServiceControl, over the accounts' clients."""

    def __init__(
        self,
        topology: Topology,
        accounts: Mapping[str, AccountCredentials],
        poller: LambdaPoller,
        handle: Callable[[str, MessageHandlerContext], None],
        sagas: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Start a peer for each endpoint, whose messages ``handle`` handles (given the
        endpoint's name), and ServiceControl. ``sagas`` are the saga types each endpoint (by
        name) registers; an endpoint not named has none, so it runs no saga audit."""
        self.topology = topology
        unknown = sorted(set(sagas or {}) - {e.name for e in topology.endpoints})
        if unknown:
            raise PeersError(f"sagas are given for endpoints the topology lacks: {unknown}")
        self._sagas = {name: tuple(types) for name, types in (sagas or {}).items()}
        self.accounts = dict(accounts)
        self.poller = poller
        self.endpoints: dict[str, ReleasedEndpoint] = {}
        self._handle = handle
        for endpoint in topology.endpoints:
            peer = self._peer(endpoint, accounts)
            try:
                peer.start()
            except Exception as error:
                raise PeersError(f"endpoint {endpoint.name} did not start: {error}") from error
            self.endpoints[endpoint.name] = peer
        self.service_control = self._primary_instance(accounts)
        self.audit = self._audit_instance(accounts)
        """ServiceControl's audit instance, when the topology declares an audit queue."""
        self.monitoring = self._monitoring_instance(accounts)
        """ServiceControl's monitoring instance, when the topology declares its queue."""

    def _primary_instance(self, accounts: Mapping[str, AccountCredentials]) -> ServiceControl:
        """ServiceControl's primary instance on the error queue's account: the error queue,
        its own queue (``serviceControlQueue``, when declared) and, its setup's own, the staging
        and poison queues."""
        error_queue = self.topology.error_queue
        own_queue = self.topology.platform_queue(PlatformQueueKind.SERVICE_CONTROL)
        audit_queue = self.topology.platform_queue(PlatformQueueKind.AUDIT)
        sqs = self._client(accounts, error_queue.account)
        settings = ServiceControlSettings(
            error_queue=error_queue.name,
            wait_time_seconds=0,
            saga_audit_queue=None if audit_queue is None else audit_queue.name,
            s3=self._body_settings(accounts, error_queue.account),
        )
        if own_queue is not None:
            settings = dataclasses.replace(settings, instance_name=own_queue.name)
        service_control = ServiceControl(sqs, settings)
        creator = QueueCreator(sqs, service_control.queue_cache)
        for address in (
            service_control.staging_queue_address,
            f"{service_control.settings.instance_name}.Errors",
        ):
            creator.create_queue_if_necessary(address, create_delay_queue=False)
        try:
            service_control.start()
            if own_queue is not None:
                service_control.start_instance_queue()
        except Exception as error:
            raise PeersError(f"ServiceControl did not start: {error}") from error
        return service_control

    def _audit_instance(
        self, accounts: Mapping[str, AccountCredentials]
    ) -> ServiceControlAudit | None:
        queue = self.topology.platform_queue(PlatformQueueKind.AUDIT)
        if queue is None:
            return None
        sqs = self._client(accounts, queue.account)
        audit = ServiceControlAudit(
            sqs,
            AuditInstanceSettings(
                audit_queue=queue.name,
                wait_time_seconds=0,
                s3=self._body_settings(accounts, queue.account),
            ),
        )
        # Its setup's own poison queue; the audit queue is the topology's.
        QueueCreator(sqs, audit.queue_cache).create_queue_if_necessary(
            f"{audit.settings.instance_name}.Errors", create_delay_queue=False
        )
        try:
            audit.start()
        except Exception as error:
            raise PeersError(f"ServiceControl's audit instance did not start: {error}") from error
        return audit

    def _monitoring_instance(
        self, accounts: Mapping[str, AccountCredentials]
    ) -> ServiceControlMonitoring | None:
        queue = self.topology.platform_queue(PlatformQueueKind.MONITORING)
        if queue is None:
            return None
        error_queue = self.topology.error_queue
        sqs = self._client(accounts, queue.account)
        monitoring = ServiceControlMonitoring(
            sqs,
            MonitoringSettings(
                instance_name=queue.name,
                error_queue=error_queue.name,
                wait_time_seconds=0,
                s3=self._body_settings(accounts, queue.account),
            ),
        )
        if queue.account != error_queue.account:
            # Its setup creates the error queue it sends unreadable reports to; in the error
            # queue's account that is the topology's.
            QueueCreator(sqs, monitoring.endpoint.queue_cache).create_queue_if_necessary(
                error_queue.name, create_delay_queue=False
            )
        try:
            monitoring.start()
        except Exception as error:
            raise PeersError(
                f"ServiceControl's monitoring instance did not start: {error}"
            ) from error
        return monitoring

    def client(self, account: str, service: str = "sqs") -> Any:
        """A client of ``account`` (by topology name): what a program of that account, a
        producer that is no NServiceBus endpoint say, would use."""
        return self._client(self.accounts, account, service)

    def _client(
        self, accounts: Mapping[str, AccountCredentials], account: str, service: str = "sqs"
    ) -> Any:
        if account not in accounts:
            raise PeersError(
                f"no credentials for account {account}; deploy it first (deploy_all returns "
                f"them), have {sorted(accounts)}"
            )
        return self.poller.client(accounts[account], service)

    def _peer(
        self, endpoint: Endpoint, accounts: Mapping[str, AccountCredentials]
    ) -> ReleasedEndpoint:
        sqs = self._client(accounts, endpoint.account)
        sns = self._client(accounts, endpoint.account, "sns")
        policies = PolicySettings()
        policies.setup_topic_policies_when_subscribing = False
        registered = {
            event_type_name(t.event_type): t.publishers[0]
            for t in self.topology.topics
            if t.event_type and endpoint.name in t.message_driven_subscribers
        }
        publishes_to_stored = any(
            t.message_driven_subscribers and endpoint.name in t.publishers
            for t in self.topology.topics
        )
        prefixes = [t.topic_name_prefix for t in self.topology.topics if t.event_type]
        settings = EndpointSettings(
            queue_name_prefix=endpoint.queue_name_prefix or None,
            error_queue=self.topology.error_queue.name,
            recoverability=RecoverabilitySettings(immediate_retries=endpoint.immediate_retries),
            wait_time_seconds=0,
            topic_name_prefix=prefixes[0] if prefixes else None,
            s3=self._body_settings(accounts, endpoint.account),
            policies=policies,
            message_driven_pub_sub=MessageDrivenPubSubCompatibility(registered)
            if registered or publishes_to_stored
            else None,
            wrap_outgoing_messages=endpoint.wrap_outgoing_messages,
            command_line=endpoint_command_line(endpoint.name),
            sagas=self._sagas.get(endpoint.name, ()),
            **self._platform_settings(endpoint, sqs),
        )
        if not endpoint.arn_aware:
            return ReleasedEndpoint(endpoint.name, sqs, settings, sns=sns)
        peer = ArnAwareEndpoint(endpoint.name, sqs, settings, sns=sns)
        for route in self.topology.routes:
            receiver = self.topology.endpoint(route.receiver)
            if route.sender == endpoint.name and not route.relay:
                account = self.topology.account(receiver.account)
                peer.use_account_for_endpoint(receiver.name, account.id)
                peer.use_region_for_endpoint(receiver.name, account.region)
        return peer

    def _body_settings(
        self, accounts: Mapping[str, AccountCredentials], account: str
    ) -> S3Settings | None:
        """``S3Settings`` with the account's body bucket (with ``largeMessages``): what every
        endpoint configures, and ServiceControl's instances as ``S3BucketForLargeMessages``."""
        bucket = self.topology.body_bucket(account)
        if bucket is None:
            return None
        return S3Settings(bucket, BODY_KEY_PREFIX, self._client(accounts, account, "s3"))

    def _platform_settings(self, endpoint: Endpoint, sqs: Any) -> dict[str, Any]:
        """The plugins' settings of an endpoint of an organization that runs ServiceControl's
        queues: each names the queue by its topology name, as a team configures it."""
        audit = self.topology.platform_queue(PlatformQueueKind.AUDIT)
        service_control = self.topology.platform_queue(PlatformQueueKind.SERVICE_CONTROL)
        monitoring = self.topology.platform_queue(PlatformQueueKind.MONITORING)
        settings: dict[str, Any] = {}
        if audit is not None:
            settings["audit"] = AuditSettings(audit.name)
        if service_control is not None:
            settings["heartbeats"] = HeartbeatSettings(service_control.name)
            settings["custom_checks"] = CustomCheckSettings(
                service_control.name,
                checks=(
                    CustomCheck(
                        f"{endpoint.name} dead-letter queue is empty",
                        DEAD_LETTER_CHECK_CATEGORY,
                        functools.partial(_dead_letter_queue_empty, sqs, endpoint),
                        DEAD_LETTER_CHECK_INTERVAL,
                    ),
                ),
            )
        if monitoring is not None:
            settings["metrics"] = MetricsSettings(monitoring.name, METRICS_INTERVAL)
        # Configured on every endpoint, as the README tells teams; it runs only where the
        # endpoint registers sagas (the plugin's wiring decides, as core's features do).
        saga_audit = audit or service_control
        if saga_audit is not None:
            settings["saga_audit"] = SagaAuditSettings(saga_audit.name)
        return settings

    def tick_platform(self) -> list[SendAttempt]:
        """What the plugins' timers do once on every endpoint: a heartbeat, the custom checks,
        a metrics report and an endpoint metadata report (those configured); the next
        :meth:`settle` carries them."""
        attempts: list[SendAttempt] = []
        for peer in self.endpoints.values():
            if peer.heartbeats is not None:
                attempts.append(peer.send_heartbeat())
            if peer.custom_checks is not None:
                attempts.extend(peer.run_custom_checks())
            if peer.metrics is not None:
                attempts.extend(peer.report_metrics())
                attempts.append(peer.report_endpoint_metadata())
        return attempts

    def service_control_view(self) -> dict[str, EndpointView]:
        """What ServiceControl's instances saw, per endpoint, as ServicePulse would show it."""
        return endpoint_views(self.service_control, self.audit, self.monitoring)

    def auto_subscribe(self) -> tuple[Subscription, ...]:
        """What each message-driven subscriber does at start-up (``AutoSubscribe``): subscribe
        to each event it registered a publisher for, natively first (its account's anchor
        topic, already subscribed by the platform), then with a subscribe message to the
        publisher, which the next :meth:`settle` carries."""
        done: list[Subscription] = []
        for name, peer in self.endpoints.items():
            compatibility = peer.settings.message_driven_pub_sub
            if compatibility is None:
                continue
            for event_type, publisher in compatibility.publishers.items():
                try:
                    (request,) = peer.subscribe(event_type)
                except Exception as error:
                    raise PeersError(
                        f"{name} could not subscribe to {event_type}: {error}"
                    ) from error
                done.append(Subscription(name, event_type, publisher, request.message_id))
        return tuple(done)

    def settle(self, max_rounds: int = DEFAULT_MAX_SETTLE_ROUNDS) -> Activity:
        """Play every peer and relay, round after round, until a round moves nothing."""
        activity = Activity()
        for _ in range(max_rounds):
            moved = 0
            relayed = self.poller.pump(DEFAULT_MAX_ROUNDS)
            if relayed.received:
                activity.relayed.append(relayed)
                moved += relayed.received
            for name, peer in self.endpoints.items():
                outcomes = peer.process(functools.partial(self._handle, name))
                activity.processed.setdefault(name, []).extend(outcomes)
                delayed = peer.process_delayed()
                activity.moved_from_delay_queues += len(delayed)
                moved += len(outcomes) + len(delayed)
            ingested = self.service_control.ingest()
            returned = self.service_control.forward_staged()
            activity.ingested += len(ingested)
            activity.returned_to_sender += len(returned)
            moved += len(ingested) + len(returned)
            received = self._service_control_queues()
            activity.service_control_received += received
            moved += received
            if moved == 0:
                return activity
        raise PeersError(
            f"messages were still moving after {max_rounds} rounds of every peer and relay; a "
            "message bouncing between queues keeps them busy"
        )

    def _service_control_queues(self) -> int:
        """One batch from each of ServiceControl's own queues: the primary instance's (then a
        tick of its heartbeat monitor), the audit queue and the monitoring queue (those
        declared)."""
        received = 0
        if self.topology.platform_queue(PlatformQueueKind.SERVICE_CONTROL) is not None:
            received += len(self.service_control.process_instance_queue())
            # The heartbeat monitor's timer (every 5 s in ServiceControl), once a round.
            self.service_control.check_heartbeats()
        if self.audit is not None:
            received += len(self.audit.ingest())
        if self.monitoring is not None:
            received += len(self.monitoring.ingest())
        return received

    def advance(self, seconds: float) -> Activity:
        """Let ``seconds`` pass for every message of the local AWS, then settle."""
        age_sqs_messages(self.poller.endpoint_url, seconds)
        return self.settle()


def _dead_letter_queue_empty(sqs: Any, endpoint: Endpoint) -> CheckResult:
    """The custom check: the endpoint's dead-letter queue, read by its own client, holds no
    message (one there has left the endpoint's recoverability for good)."""
    url = sqs.get_queue_url(QueueName=endpoint.dead_letter_queue_name)["QueueUrl"]
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    waiting = int(attributes["ApproximateNumberOfMessages"])
    if waiting:
        return CheckResult.failed(f"{waiting} message(s) in {endpoint.dead_letter_queue_name}")
    return PASS
