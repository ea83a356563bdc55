"""The report's records, typed.

The JSON report is these dictionaries exactly as built, key order included, so each record is
a ``TypedDict`` (a plain ``dict`` at run time) rather than a class that would change the output.
Values read from a template that the report passes on as written (conditions, filter and
delivery policies) stay JSON.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Principal = dict[str, str]
"""One principal as ``{kind: value}``: ``account``, ``service``, ``arn`` or ``any`` as a policy
names it (other kinds lower-cased), or ``organization``, ``role`` or ``topic`` once the
statement's conditions narrow it to one."""

Conditions = dict[str, dict[str, Any]]
"""A statement's ``Condition`` as written: operator, then key, then the value or values."""


class PrincipalRecord(TypedDict):
    """What every kind of grant has: the one principal it is for."""

    principal: Principal


class Grant(PrincipalRecord):
    """A resource-policy grant: the actions one principal may take, under the statement's
    conditions when it has any."""

    actions: list[str]
    conditions: NotRequired[Conditions]


class KeyUser(PrincipalRecord):
    """A principal outside the owner account that a queue's key policy allows, with the
    statement's conditions (empty when it has none)."""

    actions: list[str]
    conditions: Conditions


class QueueRecord(TypedDict):
    """A queue: who may send and receive by its policy, and who may use its key."""

    queue: str
    stack: str
    owner: str
    encryption: Literal["kms", "sqs-managed"]
    send: list[Grant]
    receive: list[Grant]
    denies_insecure_transport: bool
    key_users: list[KeyUser]


class TopicRecord(TypedDict):
    """A topic: who may publish and subscribe by its policy, and what it logs."""

    topic: str
    stack: str
    owner: str
    encryption: Literal["kms", "none"]
    logged_protocols: list[str]
    publish: list[Grant]
    subscribe: list[Grant]
    denies_insecure_transport: bool


class SubscriptionRecord(TypedDict):
    """A topic-to-endpoint edge and the stack that creates it."""

    topic: str
    stack: str
    protocol: str
    endpoint: str
    dead_letter_queue: str | None
    raw_message_delivery: bool
    filter_policy: dict[str, Any] | None
    delivery_policy: dict[str, Any] | None


RelayRecord = TypedDict(
    "RelayRecord",
    {
        "direction": str,
        "stack": str,
        "role": str,
        "from": str,
        "to": str,
        "dead_letter_queue": str,
    },
)
"""A relay hop, queue to queue, and the role that takes it (``from`` is a keyword, hence the
functional form)."""

PrefixAccessKind = Literal["read", "write", "delete"]
"""What a principal may do with the objects under a prefix of a log bucket."""


class PrefixAccess(TypedDict):
    """Per kind of access, the key prefixes of a bucket (``""``: every key)."""

    read: list[str]
    write: list[str]
    delete: list[str]


class PrefixGrant(PrincipalRecord, PrefixAccess):
    """Who may read, write and delete which prefixes of a log bucket: a role (with who may
    assume it) or a bucket-policy principal (under the statement's conditions, if any)."""

    assumed_by: list[Principal]
    conditions: NotRequired[Conditions]


class SubscriptionFilterRecord(TypedDict):
    """A log group's subscription filter and whether its destination admits it (None: the
    template cannot tell)."""

    log_group: str
    log_group_name: str
    account: str
    stack: str
    destination: str
    filter_pattern: str
    destination_in_assembly: bool
    admitted: bool | None


class DestinationRecord(TypedDict):
    """A CloudWatch Logs destination: whom it admits, and where its target puts the logs."""

    destination: str
    stack: str
    owner: str
    admits: list[Grant]
    role: str
    target: str
    location: str | None
    error_location: str | None
    role_may_put_records: bool


class StreamRecord(TypedDict):
    """A Firehose stream: its role, and where in S3 it writes records and failures (None where
    the template does not name the bucket)."""

    stream: str
    stack: str
    role: str | None
    bucket: str | None
    bucket_arn: str | None
    prefix: str
    location: str | None
    error_location: str | None
    error_prefix: str | None
    role_may_write: bool | None


class LogBucketRecord(TypedDict):
    """A bucket Firehose writes to: the stack defining it, and who may use its prefixes."""

    bucket: str
    stack: str | None
    denies_insecure_transport: bool
    access: list[PrefixGrant]


class DeliveryLogsRecord(TypedDict):
    """The delivery-log edges, out of each account and into S3."""

    subscription_filters: list[SubscriptionFilterRecord]
    destinations: list[DestinationRecord]
    streams: list[StreamRecord]
    buckets: list[LogBucketRecord]


class EventRecord(TypedDict):
    """An NServiceBus event's path: the endpoints publishing it (by name, in the topic's
    account), its topic, the queues subscribed to the topic, and the queues the publisher
    sends it to for their subscribe messages (message-driven, through the bridge)."""

    event_type: str
    topic: str
    publishers: list[str]
    subscriber_queues: list[str]
    message_driven_subscribers: list[str]
    anchor: bool
    """The topic only anchors message-driven subscribers' native subscribe (nobody publishes
    to it; see the topology's anchor topics)."""


class PlatformPathRecord(TypedDict):
    """One way into a platform queue from another account: the shadow its endpoints send to,
    the outbound relay role forwarding to the ingress queue, and the inbound relay role
    delivering from there."""

    account: str
    shadow: str
    outbound_role: str
    ingress: str
    inbound_role: str


class PlatformQueueRecord(TypedDict):
    """One of ServiceControl's queues (``kind``: the topology field that declares it) and
    every path through the bridge into it; endpoints of its own account reach it directly."""

    kind: str
    queue: str
    stack: str
    paths: list[PlatformPathRecord]


class MessagingRecords(TypedDict):
    """The queues and topics with their grants, and the edges between them."""

    queues: list[QueueRecord]
    topics: list[TopicRecord]
    subscriptions: list[SubscriptionRecord]
    relays: list[RelayRecord]
    events: list[EventRecord]
    platform_queues: list[PlatformQueueRecord]


class AccessReport(MessagingRecords):
    """The whole report, as written to JSON."""

    delivery_logs: DeliveryLogsRecord
