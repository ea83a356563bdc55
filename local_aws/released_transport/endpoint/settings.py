"""An endpoint's configuration, with the released defaults: what the endpoint's configuration
API, the transport's settings and the plugins' configuration methods set.

Each setting is read where its behaviour is modelled, and that module cites the upstream file it
comes from; the compatibility mode's settings are NServiceBus.AmazonSQS 9.1.1
``src/NServiceBus.Transport.SQS/Configure/SqsSubscriptionMigrationModeSettings.cs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from local_aws.released_transport.core.audit import AuditSettings
from local_aws.released_transport.core.recoverability import RecoverabilitySettings
from local_aws.released_transport.dotnet.time_formats import Clock, system_clock
from local_aws.released_transport.plugins.custom_checks import CustomCheckSettings
from local_aws.released_transport.plugins.heartbeats import HeartbeatSettings
from local_aws.released_transport.plugins.metrics import MetricsSettings
from local_aws.released_transport.plugins.saga_audit import SagaAuditSettings
from local_aws.released_transport.transport.pubsub.queue_policy import PolicySettings
from local_aws.released_transport.transport.pubsub.topic_cache import (
    DEFAULT_NOT_FOUND_TOPICS_CACHE_TTL,
)
from local_aws.released_transport.transport.pubsub.topic_name_helper import (
    TopicNameGenerator,
    get_sns_topic_name,
)
from local_aws.released_transport.transport.queues.naming import (
    QueueNameGenerator,
    get_sqs_queue_name,
)
from local_aws.released_transport.transport.queues.queue_creator import (
    DEFAULT_MAX_TIME_TO_LIVE_SECONDS,
)
from local_aws.released_transport.transport.receiving.input_pump import DEFAULT_WAIT_TIME_SECONDS
from local_aws.released_transport.transport.s3_settings import S3Settings
from local_aws.released_transport.transport.sending.hybrid_pubsub import (
    DEFAULT_SUBSCRIPTIONS_CACHE_TTL,
)

DEFAULT_ERROR_QUEUE: Final = "error"


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
    :meth:`~local_aws.released_transport.endpoint.released_endpoint.ReleasedEndpoint.install`
    to create queues (and the S3 bucket). ``topic_name_prefix`` and ``topic_name_generator``
    are ``TopicNamePrefix`` and ``TopicNameGenerator`` (its first argument the event type's
    ``FullName``); ``s3`` is ``transport.S3``; ``policies`` is ``transport.Policies``;
    ``max_time_to_live`` is ``MaxTimeToLive`` (queue retention and the bodies' expiry);
    ``message_driven_pub_sub`` enables the compatibility mode. The platform's plugins, all off by
    default: ``audit`` (``AuditProcessedMessagesTo``), ``heartbeats`` (``SendHeartbeatTo``),
    ``custom_checks`` (``ReportCustomChecksTo`` and the checks), ``metrics``
    (``EnableMetrics().SendMetricDataToServiceControl``) and ``saga_audit``
    (``AuditSagaStateChanges``; it runs only with ``sagas``). ``sagas`` are the saga types the
    endpoint registers (their ``FullName``; by assembly scanning or ``AddSaga<TSaga>()``):
    core's ``Sagas`` feature, on which saga audit depends, needs one (NServiceBus 10.2.5
    ``src/NServiceBus.Core/Sagas/Sagas.cs``, its ``Prerequisite`` "No sagas were found"), and a
    handler can run only as one of them. ``command_line`` is the endpoint process's
    ``Environment.CommandLine``, whose program path gives the default host id
    (:meth:`~local_aws.released_transport.core.host.HostInformation.of`; ``None``: this Python
    program's). ``clock`` and ``sleep`` replace the real ones in tests.
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
    command_line: str | None = None
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
    sagas: tuple[str, ...] = ()
    clock: Clock = system_clock
    sleep: Callable[[float], None] = time.sleep
