"""The NServiceBus side of a deployed topology, played by the model of the released transport.

Each endpoint of the topology runs as :class:`~local_aws.released_transport.endpoint.ReleasedEndpoint`
(or, ``arnAware``, as the seed's :class:`~local_aws.released_transport.arn_aware.ArnAwareEndpoint`)
with SQS, SNS and S3 clients of its own account, configured as its team would configure it
after the README's "What the endpoints configure": its name, its queue-name prefix, its
immediate retries, the error queue's name, no installers, topic policies left to the platform,
the topic name prefix of its event topics, its account's body bucket (``largeMessages``), and
the compatibility mode as a publisher to message-driven subscribers (which stores them) or as
one (``RegisterPublisher`` for each event). ServiceControl runs on
the error queue's account. Nothing here knows the bridge: every peer resolves names in its own
account as the released transport does, and an ARN-aware sender is told, as its team would tell
it (``UseAccountForEndpoint``), the account of each endpoint it routes to directly.

:meth:`Peers.settle` plays the background work of every peer and relay (input pumps, delayed
messages pumps, ServiceControl's ingestion and retries, the relays' event source mappings)
round after round until nothing moves; :meth:`Peers.advance` lets the local AWS's time pass
first (:mod:`local_aws.moto_time_travel`), so retries and delays of minutes take a second.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import DEFAULT_MAX_ROUNDS, LambdaPoller, PumpResult
from local_aws.moto_time_travel import age_sqs_messages
from local_aws.released_transport.arn_aware import ArnAwareEndpoint
from local_aws.released_transport.endpoint import (
    EndpointSettings,
    MessageDrivenPubSubCompatibility,
    MessageHandlerContext,
    ProcessingOutcome,
    ReleasedEndpoint,
)
from local_aws.released_transport.queue_creator import QueueCreator
from local_aws.released_transport.queue_policy import PolicySettings
from local_aws.released_transport.recoverability import RecoverabilitySettings
from local_aws.released_transport.s3_settings import S3Settings
from local_aws.released_transport.service_control import ServiceControl, ServiceControlSettings
from stacks.topology import Endpoint, Topology

BODY_KEY_PREFIX: Final = "bodies"
"""The ``S3Settings`` key prefix every peer configures: any prefix serves, since the relay
copies a body under its own key."""
EVENT_ASSEMBLY_VERSION: Final = "Version=1.0.0.0, Culture=neutral, PublicKeyToken=null"
DEFAULT_MAX_SETTLE_ROUNDS: Final = 50
"""Rounds of :meth:`Peers.settle` before it gives up: a conversation of the demo settles in a
handful; a message bouncing between two queues never would."""


def event_type_name(full_name: str) -> str:
    """The assembly-qualified name core gives ``typeof(<full_name>)``, in an assembly named
    after its namespace (the topic comes from the ``FullName``; a subscribe message carries
    the whole name, which core parses, so it needs its ``Version=``)."""
    assembly = full_name.rsplit(".", 1)[0]
    return f"{full_name}, {assembly}, {EVENT_ASSEMBLY_VERSION}"


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
    ) -> None:
        """Start a peer for each endpoint, whose messages ``handle`` handles (given the
        endpoint's name), and ServiceControl."""
        self.topology = topology
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
        error_queue = topology.error_queue
        sqs = self._client(accounts, error_queue.account)
        self.service_control = ServiceControl(
            sqs, ServiceControlSettings(error_queue=error_queue.name, wait_time_seconds=0)
        )
        # ServiceControl's own setup creates its staging and poison queues; the error queue is
        # the topology's.
        creator = QueueCreator(sqs, self.service_control.queue_cache)
        for address in (
            self.service_control.staging_queue_address,
            f"{self.service_control.settings.instance_name}.Errors",
        ):
            creator.create_queue_if_necessary(address, create_delay_queue=False)
        try:
            self.service_control.start()
        except Exception as error:
            raise PeersError(f"ServiceControl did not start: {error}") from error

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
        bucket = self.topology.body_bucket(endpoint.account)
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
            s3=None
            if bucket is None
            else S3Settings(
                bucket, BODY_KEY_PREFIX, self._client(accounts, endpoint.account, "s3")
            ),
            policies=policies,
            message_driven_pub_sub=MessageDrivenPubSubCompatibility(registered)
            if registered or publishes_to_stored
            else None,
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
            if moved == 0:
                return activity
        raise PeersError(
            f"messages were still moving after {max_rounds} rounds of every peer and relay; a "
            "message bouncing between queues keeps them busy"
        )

    def advance(self, seconds: float) -> Activity:
        """Let ``seconds`` pass for every message of the local AWS, then settle."""
        age_sqs_messages(self.poller.endpoint_url, seconds)
        return self.settle()
