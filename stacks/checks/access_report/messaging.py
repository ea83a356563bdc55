"""The messaging part of the report: every queue and topic with who may send, receive, publish
and subscribe and who may use its key, every subscription (topic to endpoint), every relay
hop (queue to queue across accounts), and every path through the bridge into ServiceControl's
queues (shadow, outbound relay, ingress queue, inbound relay).

Local AWS (moto) neither stores queue policies nor enforces them, so who may send to and
receive from each queue is checked statically, from the policies as the templates write them,
with every grant's conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.relay.config_format import ENV_CONFIGURATION, ENV_TASK_ROOT
from stacks.checks.access_report.assembly import AccessReportError, SynthesizedStack
from stacks.checks.access_report.policies import (
    Policy,
    action_grants,
    as_list,
    effective_principals,
    principals,
    read_policy,
)
from stacks.checks.access_report.records import (
    EventRecord,
    MessagingRecords,
    PlatformQueueRecord,
    QueueRecord,
    RelayRecord,
    SubscriptionRecord,
    TopicRecord,
)
from stacks.topology.model import PLATFORM_QUEUE_METADATA
from stacks.topology.topics import EVENT_METADATA

ACTIONS_THAT_SEND = frozenset({"sqs:SendMessage", "sqs:SendMessageBatch"})
ACTIONS_THAT_RECEIVE = frozenset(
    {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:DeleteMessageBatch"}
)
QUEUE_ENCRYPTION_CONTEXT = "kms:EncryptionContext:aws:sqs:arn"
"""The condition key that confines a key statement to the queues whose ARNs it lists (SQS
passes the queue's ARN as the encryption context of its data keys)."""
ACTIONS_THAT_PUBLISH = frozenset({"sns:Publish"})
ACTIONS_THAT_SUBSCRIBE = frozenset({"sns:Subscribe"})
"""The actions whose grant counts as sending, receiving, publishing or subscribing when a
queue or topic policy is read: any one of them a statement's action covers, as IAM reads it
(``policies.action_grants``), makes it a grant of that kind, reported with all its actions.
(What the constructs grant senders is ``endpoint_queue.SENDER_ACTIONS``.)"""


def _queue_record(stack: SynthesizedStack, logical_id: str) -> QueueRecord:
    props = stack.template["Resources"][logical_id].get("Properties", {})
    kms_key = props.get("KmsMasterKeyId")
    queue: QueueRecord = {
        "queue": stack.queue_arn(logical_id),
        "stack": stack.name,
        "owner": stack.account,
        "encryption": "kms" if kms_key else "sqs-managed",
        "send": [],
        "receive": [],
        "denies_insecure_transport": False,
        "key_users": [],
    }
    if isinstance(kms_key, Mapping) and "Fn::GetAtt" in kms_key:
        key_id = kms_key["Fn::GetAtt"][0]
        key_policy = stack.resolve(
            stack.template["Resources"][key_id]["Properties"].get("KeyPolicy", {})
        )
        for statement in as_list(key_policy.get("Statement", [])):
            conditions = statement.get("Condition", {})
            if statement.get("Effect") != "Allow" or not _covers(conditions, queue["queue"]):
                continue
            for principal in principals(statement.get("Principal", {})):
                if principal == {"account": stack.account}:
                    continue
                queue["key_users"] += [
                    {
                        "principal": effective,
                        "actions": sorted(as_list(statement["Action"])),
                        "conditions": conditions,
                    }
                    for effective in effective_principals(principal, conditions)
                ]
    return queue


def _covers(conditions: Mapping[str, Any], queue_arn: str) -> bool:
    """Whether a key statement applies to the queue: it names no queue encryption context,
    or one of those it names is the queue's ARN, or a pattern matching it (a key shared by
    many queues admits each grantee for its own)."""
    exact, patterns = (
        [
            value
            for operator in operators
            for value in as_list(conditions.get(operator, {}).get(QUEUE_ENCRYPTION_CONTEXT, []))
        ]
        for operators in (("StringEquals", "ArnEquals"), ("StringLike", "ArnLike"))
    )
    if not exact and not patterns:
        return True
    return queue_arn in exact or any(fnmatchcase(queue_arn, p) for p in patterns)


def _topic_record(stack: SynthesizedStack, logical_id: str) -> TopicRecord:
    props = stack.template["Resources"][logical_id].get("Properties", {})
    return {
        "topic": stack.topic_arn(logical_id),
        "stack": stack.name,
        "owner": stack.account,
        "encryption": "kms" if props.get("KmsMasterKeyId") else "none",
        "logged_protocols": sorted(c["Protocol"] for c in props.get("DeliveryStatusLogging", [])),
        "publish": [],
        "subscribe": [],
        "denies_insecure_transport": False,
    }


def _event_records(
    topics: Mapping[str, Mapping[str, Any]], subscriptions: Sequence[SubscriptionRecord]
) -> list[EventRecord]:
    """Each event topic's publishers, topic and subscriber queues."""
    return [
        {
            "event_type": event["EventType"],
            "topic": arn,
            "publishers": sorted(event["Publishers"]),
            "subscriber_queues": sorted(
                s["endpoint"] for s in subscriptions if s["topic"] == arn and s["protocol"] == "sqs"
            ),
            "message_driven_subscribers": sorted(event["MessageDrivenSubscribers"]),
            "anchor": bool(event.get("Anchor", False)),
        }
        for arn, event in sorted(topics.items())
    ]


def _subscription_record(
    stack: SynthesizedStack, resource: Mapping[str, Any]
) -> SubscriptionRecord:
    props = stack.resolve(resource["Properties"])
    return {
        "topic": props["TopicArn"],
        "stack": stack.name,
        "protocol": props["Protocol"],
        "endpoint": props["Endpoint"],
        "dead_letter_queue": props.get("RedrivePolicy", {}).get("deadLetterTargetArn"),
        "raw_message_delivery": bool(props.get("RawMessageDelivery", False)),
        "filter_policy": props.get("FilterPolicy"),
        "delivery_policy": props.get("DeliveryPolicy"),
    }


def _relay_records(
    stack: SynthesizedStack, logical_id: str, resource: Mapping[str, Any]
) -> list[RelayRecord]:
    """The queue-to-queue hops of a relay function, read by the relay's own configuration
    reader from the file in its code asset and its environment, as CloudFormation resolves it."""
    variables = resource.get("Properties", {}).get("Environment", {}).get("Variables", {})
    if ENV_CONFIGURATION not in variables:
        return []
    environment = {name: str(stack.resolve(value)) for name, value in variables.items()}
    environment[ENV_TASK_ROOT] = str(stack.code(logical_id))
    try:
        config = RelayConfig.from_environment(environment)
    except ConfigurationError as error:
        raise AccessReportError(f"{stack.name}: relay function {logical_id}: {error}") from None
    role = stack.resolve(resource["Properties"]["Role"])
    return [
        {
            "direction": config.direction.value,
            "stack": stack.name,
            "role": role,
            "from": source,
            "to": str(route.destination),
            "dead_letter_queue": str(route.dead_letter_queue),
        }
        for source, route in config.routes.items()
    ]


def _platform_queue_records(
    platform: Mapping[str, tuple[str, str]], relays: Sequence[RelayRecord]
) -> list[PlatformQueueRecord]:
    """Each platform queue (ARN to its kind and stack) with the paths into it: every inbound
    hop delivering to it, and every outbound hop forwarding to that hop's ingress queue."""
    records: list[PlatformQueueRecord] = []
    for queue, (kind, stack) in sorted(platform.items()):
        record: PlatformQueueRecord = {"kind": kind, "queue": queue, "stack": stack, "paths": []}
        for inbound in relays:
            if inbound["direction"] != "inbound" or inbound["to"] != queue:
                continue
            record["paths"] += [
                {
                    "account": outbound["from"].split(":")[4],
                    "shadow": outbound["from"],
                    "outbound_role": outbound["role"],
                    "ingress": inbound["from"],
                    "inbound_role": inbound["role"],
                }
                for outbound in relays
                if outbound["direction"] == "outbound" and outbound["to"] == inbound["from"]
            ]
        records.append(record)
    return records


def _policy(stack: SynthesizedStack, logical_id: str) -> Policy:
    """A queue or topic policy resource's document, read."""
    document = stack.template["Resources"][logical_id]["Properties"]["PolicyDocument"]
    return read_policy(stack.resolve(document), f"{stack.name}: {logical_id}")


def _add_queue_grants(queue: QueueRecord, policy: Policy) -> None:
    """Who may send and receive by ``policy``; whether it denies non-TLS requests."""
    if policy.denies_insecure_transport:
        queue["denies_insecure_transport"] = True
    for statement in policy.allows:
        queue["send"] += action_grants(statement, ACTIONS_THAT_SEND)
        queue["receive"] += action_grants(statement, ACTIONS_THAT_RECEIVE)


def _add_topic_grants(topic: TopicRecord, policy: Policy) -> None:
    """Who may publish and subscribe by ``policy``; whether it denies non-TLS requests."""
    if policy.denies_insecure_transport:
        topic["denies_insecure_transport"] = True
    for statement in policy.allows:
        topic["publish"] += action_grants(statement, ACTIONS_THAT_PUBLISH)
        topic["subscribe"] += action_grants(statement, ACTIONS_THAT_SUBSCRIBE)


def read_messaging(stacks: Sequence[SynthesizedStack]) -> MessagingRecords:
    """Every queue and topic of the assembly: who may send, receive, publish and subscribe,
    who may use each key, every subscription (the topic-to-endpoint edges) and every relay
    hop, and the paths into ServiceControl's queues."""
    queues: dict[str, QueueRecord] = {}
    topics: dict[str, TopicRecord] = {}
    subscriptions: list[SubscriptionRecord] = []
    relays: list[RelayRecord] = []
    events: dict[str, Mapping[str, Any]] = {}
    platform: dict[str, tuple[str, str]] = {}
    for stack in stacks:
        resources = stack.template.get("Resources", {})
        queue_by_logical_id: dict[str, QueueRecord] = {}
        topic_by_logical_id: dict[str, TopicRecord] = {}
        for logical_id, resource in resources.items():
            if resource.get("Type") == "AWS::SQS::Queue":
                queue_by_logical_id[logical_id] = queues.setdefault(
                    stack.queue_arn(logical_id), _queue_record(stack, logical_id)
                )
                kind = resource.get("Metadata", {}).get(PLATFORM_QUEUE_METADATA)
                if kind is not None:
                    platform[stack.queue_arn(logical_id)] = (kind, stack.name)
            elif resource.get("Type") == "AWS::SNS::Topic":
                topic_by_logical_id[logical_id] = topics.setdefault(
                    stack.topic_arn(logical_id), _topic_record(stack, logical_id)
                )
                event = resource.get("Metadata", {}).get(EVENT_METADATA)
                if event is not None:
                    events[stack.topic_arn(logical_id)] = stack.resolve(event)
            elif resource.get("Type") == "AWS::SNS::Subscription":
                subscriptions.append(_subscription_record(stack, resource))
            elif resource.get("Type") == "AWS::Lambda::Function":
                relays.extend(_relay_records(stack, logical_id, resource))
        for logical_id, resource in resources.items():
            props = resource.get("Properties", {})
            if resource.get("Type") == "AWS::SQS::QueuePolicy":
                for ref in props["Queues"]:
                    queue = queue_by_logical_id[ref["Ref"]]
                    _add_queue_grants(queue, _policy(stack, logical_id))
            elif resource.get("Type") == "AWS::SNS::TopicPolicy":
                for ref in props["Topics"]:
                    topic = topic_by_logical_id[ref["Ref"]]
                    _add_topic_grants(topic, _policy(stack, logical_id))
    return {
        "queues": [queues[arn] for arn in sorted(queues)],
        "topics": [topics[arn] for arn in sorted(topics)],
        "subscriptions": sorted(
            subscriptions, key=lambda s: (s["topic"], s["protocol"], str(s["endpoint"]))
        ),
        "relays": sorted(relays, key=lambda r: (r["from"], r["to"])),
        "events": _event_records(events, subscriptions),
        "platform_queues": _platform_queue_records(
            platform, sorted(relays, key=lambda r: (r["from"], r["to"]))
        ),
    }
