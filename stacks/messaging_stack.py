"""One stack per account: the queues the topology places there and their sender grants."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Environment, Stack
from constructs import Construct

from constructs_lib.endpoint_queue import EndpointQueue
from stacks.resource_limit import ResourceLimit
from stacks.topology import Account, Endpoint, Topology

STACK_NAME_PREFIX = "Messaging-"


def stack_name(account: Account) -> str:
    """``Messaging-<account name>``: what ``cdk deploy`` takes to deploy one account."""
    return f"{STACK_NAME_PREFIX}{account.name}"


class MessagingAccountStack(Stack):
    """The queues one account owns.

    Cross-account references are computed ARNs (the topology knows every account id, region
    and queue name), never CloudFormation exports, which cannot cross accounts.
    """

    def __init__(
        self, scope: Construct, topology: Topology, account: Account, **kwargs: Any
    ) -> None:
        super().__init__(
            scope,
            stack_name(account),
            stack_name=stack_name(account),
            env=Environment(account=account.id, region=account.region),
            description=f"Messaging queues of account {account.name} ({account.id})",
            **kwargs,
        )
        self.account_config = account
        self.endpoint_queues: dict[str, EndpointQueue] = {}
        for endpoint in topology.queues_in(account.name):
            self.endpoint_queues[endpoint.name] = self._endpoint_queue(topology, endpoint)
        self.node.add_validation(ResourceLimit(self))

    def _endpoint_queue(self, topology: Topology, endpoint: Endpoint) -> EndpointQueue:
        queue = EndpointQueue(
            self,
            endpoint.name,
            endpoint_name=endpoint.name,
            queue_name=endpoint.queue_name,
            dead_letter_queue_name=endpoint.dead_letter_queue_name,
            fifo=endpoint.fifo,
            max_receive_count=endpoint.max_receive_count,
            sender_accounts=topology.cross_account_senders(endpoint),
            sender_organization_ids=topology.sender_organizations(endpoint),
        )
        CfnOutput(
            self,
            f"{endpoint.name}TransportAddress",
            value=queue.transport_address,
            description=f"Transport address (queue ARN) of {endpoint.name}",
        )
        CfnOutput(self, f"{endpoint.name}QueueUrl", value=queue.queue_url)
        CfnOutput(
            self, f"{endpoint.name}DeadLetterQueueArn", value=queue.dead_letter_queue.queue_arn
        )
        return queue
