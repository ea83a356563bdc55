"""Which outbound relays deliver to a queue or write into a body bucket of another account: the
relay of each stack of a sending account that holds a shadow leading there, and no other.

An ingress queue, its key and a body bucket admit those relays' roles by exact ARN. A shadow
never leaves the stack the plan records it in, so the roles a receiving account admits change
only when the topology gives it a new sender (a route, an endpoint), which changes its
templates anyway; a stack a sending account adds for other shadows changes nothing here.
"""

from __future__ import annotations

from constructs_lib import BridgeAccount, RelayDirection
from stacks.placement.plan import StackPlan
from stacks.placement.units import UnitKind, unit_key
from stacks.topology.bridge import bridge_shadows, ingress_endpoints
from stacks.topology.model import Endpoint, Topology, relay_role_arn


def relay_stacks(
    topology: Topology, plan: StackPlan, sender: str, endpoint: Endpoint
) -> tuple[int, ...]:
    """The numbers of ``sender``'s stacks whose outbound relays deliver to ``endpoint``: those
    holding a shadow of it (one, unless its endpoints address it by several names)."""
    return tuple(
        sorted(
            {
                plan.stack_of(sender, unit_key(UnitKind.SHADOW, shadow.queue_name)).number
                for shadow in bridge_shadows(topology).leads_to(endpoint)
                if shadow.account == sender
            }
        )
    )


def bridge_sender(
    topology: Topology, plan: StackPlan, sender: str, endpoint: Endpoint
) -> BridgeAccount:
    """``sender`` as ``endpoint``'s ingress names it: with the stacks whose relays deliver
    there."""
    account = topology.account(sender)
    return BridgeAccount(
        account.name,
        account.id,
        account.partition,
        relay_stacks=relay_stacks(topology, plan, sender, endpoint),
    )


def ingress_writers(topology: Topology, plan: StackPlan, endpoint: Endpoint) -> tuple[str, ...]:
    """The exact ARNs of the outbound relay roles that deliver to ``endpoint``'s ingress
    queue, sorted."""
    bridge = bridge_shadows(topology)
    return tuple(
        sorted(
            relay_role_arn(topology.account(sender), RelayDirection.OUTBOUND, number)
            for sender in bridge.relay_sender_accounts(endpoint)
            for number in relay_stacks(topology, plan, sender, endpoint)
        )
    )


def body_writers(topology: Topology, plan: StackPlan, account: str) -> tuple[str, ...]:
    """The exact ARNs of the outbound relay roles of other accounts that copy bodies into
    ``account``'s body bucket: those delivering to any of its ingress queues, sorted."""
    return tuple(
        sorted(
            {
                role
                for endpoint in ingress_endpoints(topology, account)
                for role in ingress_writers(topology, plan, endpoint)
            }
        )
    )
