"""The NServiceBus side of a deployed topology, played by the model of the released transport.

Each endpoint of the topology runs as :class:`~local_aws.released_transport.endpoint.ReleasedEndpoint`
(or, ``arnAware``, as the seed's :class:`~local_aws.released_transport.arn_aware.ArnAwareEndpoint`)
with an SQS client of its own account, configured as its team would configure it: its name,
its queue-name prefix, its immediate retries and the error queue's name. ServiceControl runs on
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
    MessageHandlerContext,
    ProcessingOutcome,
    ReleasedEndpoint,
)
from local_aws.released_transport.queue_creator import QueueCreator
from local_aws.released_transport.recoverability import RecoverabilitySettings
from local_aws.released_transport.service_control import ServiceControl, ServiceControlSettings
from stacks.topology import Endpoint, Topology

DEFAULT_MAX_SETTLE_ROUNDS: Final = 50
"""Rounds of :meth:`Peers.settle` before it gives up: a conversation of the demo settles in a
handful; a message bouncing between two queues never would."""


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
        self.poller = poller
        self.endpoints: dict[str, ReleasedEndpoint] = {}
        self._handle = handle
        for endpoint in topology.endpoints:
            peer = self._peer(endpoint, self._client(accounts, endpoint.account))
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

    def _client(self, accounts: Mapping[str, AccountCredentials], account: str) -> Any:
        if account not in accounts:
            raise PeersError(
                f"no credentials for account {account}; deploy it first (deploy_all returns "
                f"them), have {sorted(accounts)}"
            )
        return self.poller.client(accounts[account], "sqs")

    def _peer(self, endpoint: Endpoint, sqs: Any) -> ReleasedEndpoint:
        settings = EndpointSettings(
            queue_name_prefix=endpoint.queue_name_prefix or None,
            error_queue=self.topology.error_queue.name,
            recoverability=RecoverabilitySettings(immediate_retries=endpoint.immediate_retries),
            wait_time_seconds=0,
        )
        if not endpoint.arn_aware:
            return ReleasedEndpoint(endpoint.name, sqs, settings)
        peer = ArnAwareEndpoint(endpoint.name, sqs, settings)
        for route in self.topology.routes:
            receiver = self.topology.endpoint(route.receiver)
            if route.sender == endpoint.name and not route.relay:
                account = self.topology.account(receiver.account)
                peer.use_account_for_endpoint(receiver.name, account.id)
                peer.use_region_for_endpoint(receiver.name, account.region)
        return peer

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
