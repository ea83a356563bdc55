"""The validated topology: accounts, endpoints, who may send to whom, topics, analytics.

Everything the stacks, the access report and the local deployment need to know is derived here
from the one document (queue and topic ARNs, who needs a policy grant, which relay reads which
queue), computed without any lookup, so every account's stack agrees with every other's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from constructs_lib import RelayDirection, relay_roles
from constructs_lib.defaults import (
    IMMEDIATE_RETRIES,
    KEY_GRANULARITY,
    MAX_MESSAGE_AGE_SECONDS,
    MAX_RECEIVE_COUNT,
    WRAP_OUTGOING_MESSAGES,
)
from constructs_lib.queue_naming import delay_queue_name
from cross_account_runtime.common.partitions import partition_of
from stacks.topology.analytics import AnalyticsSettings
from stacks.topology.large_messages import LargeMessageSettings, body_bucket_name
from stacks.topology.topics import Topic, TopicSubscription


class TopologyError(ValueError):
    """Every problem found in a topology, each naming the source, the field path and the rule."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = [f"{source}: {path}: {rule}" for path, rule in problems]
        super().__init__(
            f"invalid topology ({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n"
            + "\n".join(lines)
        )


@dataclass(frozen=True)
class Account:
    """An AWS account that hosts one stack of queues."""

    name: str
    id: str
    region: str
    organization_id: str | None = None

    @property
    def partition(self) -> str:
        """The ARN partition, derived from the region so China and GovCloud work unchanged."""
        return partition_of(self.region)


class PlatformQueueKind(enum.StrEnum):
    """The queues of the Particular platform (ServiceControl's instances) that every endpoint
    sends to by a name it is configured with; each is a topology field of the same shape
    (``{"name": ..., "account": ...}``), its value here.

    They differ only in what endpoints send there, and in that ServiceControl sends failed
    messages back from the error queue (its retries): the bridge, the grants and the stacks
    treat the four alike otherwise.
    """

    ERROR = "errorQueue"
    """``SendFailedMessagesTo``: failed messages, and the acknowledgements of retries."""
    AUDIT = "auditQueue"
    """``AuditProcessedMessagesTo``: a copy of every processed message (ServiceControl's audit
    instance)."""
    SERVICE_CONTROL = "serviceControlQueue"
    """``SendHeartbeatTo``, ``ReportCustomChecksTo`` and saga audit: ServiceControl's main
    instance's input queue (``Particular.ServiceControl``)."""
    MONITORING = "monitoringQueue"
    """``SendMetricDataToServiceControl``: metric reports (the monitoring instance,
    ``Particular.Monitoring``)."""

    @property
    def path(self) -> str:
        """The topology field that declares the queue."""
        return f"topology.{self.value}"

    @property
    def label(self) -> str:
        """What the queue is, for messages: ``the audit queue``."""
        return _PLATFORM_LABELS[self]

    @property
    def traffic(self) -> str:
        """What endpoints send there, for messages: ``audit copies``."""
        return _PLATFORM_TRAFFIC[self]


PLATFORM_QUEUE_METADATA = "MessagingPlatformQueue"
"""The queue resource's metadata the stacks write on a platform queue, its
:class:`PlatformQueueKind` (``auditQueue``), for the access report: no policy says which queue
ServiceControl reads."""

_PLATFORM_LABELS = {
    PlatformQueueKind.ERROR: "the error queue",
    PlatformQueueKind.AUDIT: "the audit queue",
    PlatformQueueKind.SERVICE_CONTROL: "ServiceControl's queue",
    PlatformQueueKind.MONITORING: "the monitoring queue",
}
_PLATFORM_TRAFFIC = {
    PlatformQueueKind.ERROR: "failed messages",
    PlatformQueueKind.AUDIT: "audit copies",
    PlatformQueueKind.SERVICE_CONTROL: "heartbeats, custom checks and saga audit",
    PlatformQueueKind.MONITORING: "metric reports",
}


@dataclass(frozen=True)
class Endpoint:
    """An endpoint's input queue; each platform queue (the error queue, ServiceControl's
    others) is one too, with every endpoint as sender.

    ``queue_name`` is also the endpoint's transport address: the released transport puts the
    physical queue name in ``NServiceBus.ReplyToAddress`` and ``NServiceBus.FailedQ``.
    """

    name: str
    account: str
    queue_name: str
    dead_letter_queue_name: str
    fifo: bool = False
    max_receive_count: int = MAX_RECEIVE_COUNT
    platform: PlatformQueueKind | None = None
    """Which platform queue this is; ``None`` for an endpoint's own queue."""
    queue_name_prefix: str = ""
    """The prefix the endpoint's transport applies to every name it resolves."""
    arn_aware: bool = False
    """Whether the endpoint runs an ARN-aware transport (seed 000's "New"): it stamps and
    substitutes the ARN header itself and sends to queue ARNs in other accounts. Every released
    transport version is not ("Old"): it resolves every address by name in its own account."""
    immediate_retries: int = IMMEDIATE_RETRIES
    wrap_outgoing_messages: bool = WRAP_OUTGOING_MESSAGES
    """Whether the endpoint's dispatcher wraps (the transport's default) or writes the headers
    into a message attribute (``DoNotWrapOutgoingMessages``): the form the inbound relay
    delivers its messages in. ServiceControl wraps, so the platform queues keep the default."""
    path: str = field(default="", compare=False)
    """The topology field that declares it, for error messages."""

    @property
    def is_platform_queue(self) -> bool:
        """Whether this is one of ServiceControl's queues, which every endpoint sends to."""
        return self.platform is not None

    @property
    def is_error_queue(self) -> bool:
        """Whether this is the error queue, the one ServiceControl sends retries back from."""
        return self.platform is PlatformQueueKind.ERROR

    @property
    def description(self) -> str:
        """What declares the queue, for messages: ``endpoint 'Sales'``, ``the audit queue``."""
        return self.platform.label if self.platform else f"endpoint {self.name!r}"

    @property
    def delay_queue_name(self) -> str:
        """``<queue>-delay.fifo``, the queue its transport checks at start and sends delays
        over 15 minutes to."""
        return delay_queue_name(self.queue_name)


@dataclass(frozen=True)
class Route:
    """Permission for one endpoint (or a whole organization) to send to one endpoint."""

    receiver: str
    sender: str | None = None
    sender_organization: str | None = None
    relay: bool = False
    """Through the account bridge: the sender sends by name to a shadow queue in its own
    account, relays carry the message to the receiver's account."""
    replies: bool = True
    """Whether the receiver replies (or otherwise answers to ``ReplyToAddress``): the topology
    then provisions the way back, through the bridge for a receiver that resolves names, or a
    grant on the sender's queue for an ARN-aware one."""
    path: str = field(default="", compare=False)
    """The topology field that declares it, for error messages."""


class KeyGranularity(enum.StrEnum):
    """The topology's ``keys``: how many KMS keys encrypt an account's queues."""

    PER_QUEUE = "perQueue"
    """A key per queue group: an endpoint's queue, DLQ and delay queue; a shadow or ingress
    queue and its DLQ (aliased ``alias/messaging/<queue>``)."""
    PER_ACCOUNT = "perAccount"
    """One key per account and region (``alias/messaging/queues``), shared by every queue of
    the account, its grants each for the queues their grantees write to."""


_DEFAULT_KEYS = KeyGranularity(KEY_GRANULARITY)


@dataclass(frozen=True)
class AlarmSettings:
    """How each account's stack alarms: the age that makes an endpoint look stuck, and the
    topic (in the same account, created by the platform team) to notify, if any."""

    topic_name: str | None = None
    max_message_age_seconds: int = MAX_MESSAGE_AGE_SECONDS


@dataclass(frozen=True)
class Topology:
    """A validated topology. Build it with :func:`parse_topology` or :func:`load_topology`."""

    accounts: tuple[Account, ...]
    endpoints: tuple[Endpoint, ...]
    routes: tuple[Route, ...]
    platform_queues: tuple[Endpoint, ...]
    """The error queue first, then those of ServiceControl's other queues the topology
    declares, in :class:`PlatformQueueKind`'s order."""
    topics: tuple[Topic, ...] = ()
    alarms: AlarmSettings = AlarmSettings()
    source: str = "<topology>"
    analytics: AnalyticsSettings | None = None
    large_messages: LargeMessageSettings | None = None
    keys: KeyGranularity = _DEFAULT_KEYS

    def account(self, name: str) -> Account:
        """The account called ``name``."""
        return next(a for a in self.accounts if a.name == name)

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint (or the platform queue) called ``name``."""
        return next(e for e in self.all_queues if e.name == name)

    @property
    def error_queue(self) -> Endpoint:
        """ServiceControl's error queue, which every topology declares."""
        return self.platform_queues[0]

    def platform_queue(self, kind: PlatformQueueKind) -> Endpoint | None:
        """The platform queue of ``kind``, if the topology declares it."""
        return next((q for q in self.platform_queues if q.platform is kind), None)

    @property
    def all_queues(self) -> tuple[Endpoint, ...]:
        """Every endpoint queue plus the platform queues."""
        return (*self.endpoints, *self.platform_queues)

    def queues_in(self, account_name: str) -> tuple[Endpoint, ...]:
        """The queues one account's stack owns."""
        return tuple(q for q in self.all_queues if q.account == account_name)

    def queue_arn(self, endpoint: Endpoint) -> str:
        """The queue's ARN, its transport address, computed without any lookup."""
        return self.sqs_arn(endpoint.account, endpoint.queue_name)

    def sender_endpoints(self, receiver: Endpoint) -> tuple[Endpoint, ...]:
        """Endpoints that send to ``receiver``'s queue directly: declared senders of direct
        routes, and ARN-aware receivers of its routes answering it; to a platform queue, every
        ARN-aware endpoint (configured with its ARN). A released endpoint sends to a platform
        queue by name in its own account, to a shadow the bridge forwards: its account needs no
        grant, and one would let any of its principals plant messages there (a forged failed
        message, which ServiceControl would retry)."""
        if receiver.is_platform_queue:
            return tuple(e for e in self.endpoints if e.arn_aware)
        names = [
            r.sender
            for r in self.routes
            if r.receiver == receiver.name and r.sender and not r.relay
        ]
        # An ARN-aware receiver answers the sender's queue ARN directly.
        names += [
            r.receiver
            for r in self.routes
            if r.sender == receiver.name and r.replies and self.endpoint(r.receiver).arn_aware
        ]
        return tuple(self.endpoint(n) for n in dict.fromkeys(names))

    def sqs_arn(self, account_name: str, queue_name: str) -> str:
        """The ARN of a queue of an account, computed without any lookup."""
        account = self.account(account_name)
        return f"arn:{account.partition}:sqs:{account.region}:{account.id}:{queue_name}"

    def cross_account_senders(self, receiver: Endpoint) -> tuple[str, ...]:
        """Account ids that need a queue-policy grant to send to ``receiver``.

        Senders in the queue's own account are authorized by their IAM policies; a resource
        policy grant for them would widen access beyond the declared intent.
        """
        owner = self.account(receiver.account).id
        ids = (self.account(e.account).id for e in self.sender_endpoints(receiver))
        return tuple(sorted({i for i in ids if i != owner}))

    def owns_resources(self, account_name: str) -> bool:
        """Whether the account has a queue or a topic, and so a stack."""
        return bool(self.queues_in(account_name) or self.topics_in(account_name))

    def body_bucket(self, account_name: str) -> str | None:
        """The account's body bucket, if endpoints offload bodies and the account hosts one
        (every account with a queue does)."""
        if self.large_messages is None or not self.queues_in(account_name):
            return None
        account = self.account(account_name)
        return body_bucket_name(account.id, account.region)

    def topics_in(self, account_name: str) -> tuple[Topic, ...]:
        """The topics one account's stack owns."""
        return tuple(t for t in self.topics if t.account == account_name)

    @property
    def log_streaming_topics(self) -> tuple[Topic, ...]:
        """The topics whose delivery logs stream to the analytics account: all but anchor
        topics, which nobody publishes to and so never log a delivery."""
        return tuple(t for t in self.topics if not t.anchor)

    def topic_arn(self, topic: Topic) -> str:
        """The topic's ARN, computed without any lookup."""
        account = self.account(topic.account)
        return f"arn:{account.partition}:sns:{account.region}:{account.id}:{topic.topic_name}"

    def cross_account_publishers(self, topic: Topic) -> tuple[str, ...]:
        """Account ids that need a topic-policy grant to publish."""
        owner = self.account(topic.account).id
        ids = {self.account(self.endpoint(p).account).id for p in topic.publishers}
        return tuple(sorted(ids - {owner}))

    def subscriber_accounts(self, topic: Topic) -> tuple[str, ...]:
        """Other account ids whose queues subscribe to ``topic`` (they create the subscription)."""
        owner = self.account(topic.account).id
        ids = {
            self.account(self.endpoint(s.endpoint).account).id
            for s in topic.subscriptions
            if s.endpoint is not None
        }
        return tuple(sorted(ids - {owner}))

    def queue_subscriptions(
        self, endpoint: Endpoint
    ) -> tuple[tuple[Topic, TopicSubscription], ...]:
        """The SQS subscriptions that deliver into ``endpoint``'s queue."""
        return tuple(
            (t, s) for t in self.topics for s in t.subscriptions if s.endpoint == endpoint.name
        )

    def subscription_target(self, subscription: TopicSubscription) -> str:
        """What the subscription delivers to, as SNS names it: the queue's ARN, the URL or the
        function's ARN."""
        if subscription.endpoint is not None:
            return self.queue_arn(self.endpoint(subscription.endpoint))
        return subscription.url or subscription.function_arn or ""

    def sender_organizations(self, receiver: Endpoint) -> tuple[str, ...]:
        """Organization ids whose every principal may send to ``receiver``."""
        return tuple(
            sorted(
                {
                    r.sender_organization
                    for r in self.routes
                    if r.receiver == receiver.name and r.sender_organization
                }
            )
        )


def relay_role_name(account: Account, direction: RelayDirection, n: int = 1) -> str:
    """The name of the relay of ``account``'s ``n``-th stack in ``direction``
    (:func:`constructs_lib.relay_role_name`)."""
    return relay_roles.relay_role_name(account.name, direction, n)


def relay_role_arn(account: Account, direction: RelayDirection, n: int = 1) -> str:
    """The exact ARN of the relay role of ``account``'s ``n``-th stack in ``direction``
    (:func:`constructs_lib.relay_role_arn`)."""
    return relay_roles.relay_role_arn(account.name, account.id, direction, n, account.partition)
