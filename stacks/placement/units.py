"""What moves between an account's stacks as one piece, and what each piece costs a stack.

An account's resources are cut into *units*, each wholly in one stack:

* ``endpoint:<name>``: an endpoint's (or a platform queue's) queue, dead-letter queue, delay
  queue, key and alias, their alarms and outputs, and every SQS subscription that delivers into
  the queue (the subscription is made beside the queue, whose queue and key policies admit the
  topic);
* ``ingress:<name>``: the endpoint's ingress queue with its dead-letter queue, key and alarms,
  and its event source on its stack's inbound relay;
* ``shadow:<queue name>``: a shadow queue and the shadow of its remote delay queue (which
  shares its key), with their alarms and event sources on their stack's outbound relay;
* ``topic:<name>``: a topic with its key, delivery log groups, feedback role, alarm and output,
  and its HTTPS and Lambda subscriptions;
* ``bodies``: the account's body bucket (with its key and access-log bucket).

An ingress queue is a unit apart from its endpoint: it appears when another account starts
sending, and it then takes room wherever there is some instead of growing the endpoint's stack.

The costs below count what the constructs create for each (a test compares the estimate of every
stack with its synthesized template); a stack also holds a relay per direction it reads queues
for, and under ``"keys": "perAccount"`` the key its queues share. One thing only synth knows
goes uncounted: the managed policies CDK adds to a relay's role when its policy outgrows IAM's
inline size; the stacks' headroom (:data:`~stacks.placement.plan.RESOURCE_HEADROOM`)
absorbs them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from constructs_lib.queue_naming import ingress_queue_name
from stacks.topology.bridge import ShadowQueue, bridge_shadows, ingress_endpoints
from stacks.topology.model import Endpoint, KeyGranularity, Topology
from stacks.topology.topics import Topic

QUEUE = 4
"""An ``EndpointQueue``: the queue and its dead-letter queue with a queue policy each."""
KEY = 2
"""A KMS key and its alias: each queue group's own, or under ``"keys": "perAccount"`` one per
stack that holds queues (:attr:`~stacks.placement.plan.AccountStack.resources`)."""
DELAY_QUEUE = 2
"""An endpoint's delay queue (``<queue>-delay.fifo``) and its queue policy, under the queue's
key."""
QUEUE_ALARMS = 2
"""The age of the oldest message and a message in the dead-letter queue."""
EVENT_SOURCE = 1
"""A relay's event source mapping on a queue it reads."""
SUBSCRIPTION = 4
"""An SNS subscription, its dead-letter queue with its queue policy, and that queue's alarm."""
DELAY_SHADOW = 6
"""The shadow of a remote delay queue: the queue and its dead-letter queue with a queue policy
each (under its shadow's key), the dead-letter alarm and the relay's event source."""
TOPIC = 8
"""A ``DeliveryLoggedTopic``: the topic, its policy and key, the success and failure log groups,
the feedback role and its policy, and the failed-notifications alarm."""
LOG_STREAMING = 2
"""The subscription filters streaming both log groups to the analytics account."""
LAMBDA_SUBSCRIPTION = SUBSCRIPTION + 1
"""A Lambda subscription, plus the function's permission for SNS to invoke it."""
BODY_BUCKET = 6
"""A ``MessageBodyBucket``: the bucket, its access-log bucket, a policy each, the key and its
alias."""
RELAY_ALARMS = 5
"""A relay's alarms (``MessagingAlarms.watch_relay``): errors, throttles, dead-lettered,
expired and persistently failed messages."""
RELAY = 4 + RELAY_ALARMS
"""A ``CrossAccountRelay``'s function, log group, role and role policy, and its alarms."""
DASHBOARD = 1
"""The stack's ``MessagingDashboard``, in every stack that holds a unit."""
QUEUE_OUTPUTS = 3
"""An endpoint queue's transport address, URL and dead-letter queue ARN."""


class UnitKind(enum.StrEnum):
    """What a unit holds; its key is ``<kind>:<name>`` (``bodies`` alone)."""

    BODIES = "bodies"
    TOPIC = "topic"
    ENDPOINT = "endpoint"
    INGRESS = "ingress"
    SHADOW = "shadow"


def unit_key(kind: UnitKind, name: str = "") -> str:
    """How the stack plan records a unit: ``endpoint:Billing``, ``shadow:error``, ``bodies``."""
    return f"{kind}:{name}" if name else str(kind)


@dataclass(frozen=True)
class StackUnit:
    """One unit of an account: what it is and what it costs the stack that holds it."""

    kind: UnitKind
    name: str
    """The endpoint's or topic's name, the shadow's queue name; empty for the body bucket."""
    resources: int
    outputs: int = 0

    @property
    def key(self) -> str:
        return unit_key(self.kind, self.name)

    @property
    def queues(self) -> bool:
        """Whether the unit holds queues of the account's messaging key: endpoint, ingress and
        shadow queues (topics and the body bucket have their own keys)."""
        return self.kind in (UnitKind.ENDPOINT, UnitKind.INGRESS, UnitKind.SHADOW)

    @property
    def relay(self) -> UnitKind | None:
        """The relay that reads the unit's queues in its stack: shadows the outbound one,
        ingress queues the inbound one."""
        return self.kind if self.kind in (UnitKind.SHADOW, UnitKind.INGRESS) else None


def account_units(topology: Topology, account: str) -> tuple[StackUnit, ...]:
    """The units of ``account``, in the order new ones are placed: the body bucket, topics,
    endpoint queues, ingress queues, shadows (each in the topology's order)."""
    queue = QUEUE + (KEY if topology.keys is KeyGranularity.PER_QUEUE else 0)
    units: list[StackUnit] = []
    if topology.body_bucket(account) is not None:
        units.append(StackUnit(UnitKind.BODIES, "", BODY_BUCKET, outputs=1))
    units.extend(_topic(topology, topic) for topic in topology.topics_in(account))
    units.extend(_endpoint(topology, endpoint, queue) for endpoint in topology.queues_in(account))
    units.extend(
        StackUnit(UnitKind.INGRESS, e.name, queue + QUEUE_ALARMS + EVENT_SOURCE)
        for e in ingress_endpoints(topology, account)
    )
    units.extend(_shadow(shadow, queue) for shadow in bridge_shadows(topology).shadows_in(account))
    return tuple(units)


def _endpoint(topology: Topology, endpoint: Endpoint, queue: int) -> StackUnit:
    # ServiceControl runs without delayed delivery: platform queues have no delay queue.
    delay = 0 if endpoint.is_platform_queue else DELAY_QUEUE
    subscriptions = len(topology.queue_subscriptions(endpoint)) * SUBSCRIPTION
    return StackUnit(
        UnitKind.ENDPOINT,
        endpoint.name,
        queue + delay + QUEUE_ALARMS + subscriptions,
        outputs=QUEUE_OUTPUTS,
    )


def _topic(topology: Topology, topic: Topic) -> StackUnit:
    streaming = LOG_STREAMING if topology.analytics is not None and not topic.anchor else 0
    subscriptions = sum(
        LAMBDA_SUBSCRIPTION if s.function_arn is not None else SUBSCRIPTION
        for s in topic.subscriptions
        if s.endpoint is None
    )
    return StackUnit(UnitKind.TOPIC, topic.name, TOPIC + streaming + subscriptions, outputs=1)


def _shadow(shadow: ShadowQueue, queue: int) -> StackUnit:
    delay = DELAY_SHADOW if shadow.delay_queue_name is not None else 0
    return StackUnit(
        UnitKind.SHADOW,
        shadow.queue_name,
        queue + QUEUE_ALARMS + EVENT_SOURCE + delay,
    )


NamedResource = tuple[str, str]
"""A resource by what names it in its account and region: ``(CloudFormation type, physical
name)``, such as ``("AWS::SQS::Queue", "Billing")``."""


def unit_resources(topology: Topology, account: str) -> dict[NamedResource, str]:
    """The resource that gives each unit of ``account`` away, to the unit's key: its queue (an
    endpoint's, ingress or shadow queue), its topic or its bucket. A stack deployed before
    stacks recorded their units (:data:`~stacks.placement.plan.UNITS_METADATA`) holds exactly
    the units whose resource it holds."""
    names: dict[NamedResource, str] = {}
    bucket = topology.body_bucket(account)
    if bucket is not None:
        names[("AWS::S3::Bucket", bucket)] = unit_key(UnitKind.BODIES)
    for topic in topology.topics_in(account):
        names[("AWS::SNS::Topic", topic.topic_name)] = unit_key(UnitKind.TOPIC, topic.name)
    for endpoint in topology.queues_in(account):
        names[("AWS::SQS::Queue", endpoint.queue_name)] = unit_key(UnitKind.ENDPOINT, endpoint.name)
        names[("AWS::SQS::Queue", ingress_queue_name(endpoint.queue_name))] = unit_key(
            UnitKind.INGRESS, endpoint.name
        )
    for shadow in bridge_shadows(topology).shadows_in(account):
        names[("AWS::SQS::Queue", shadow.queue_name)] = unit_key(UnitKind.SHADOW, shadow.queue_name)
    return names
