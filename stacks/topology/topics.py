"""Topics and subscriptions of the topology: who publishes, who subscribes, how.

Each topic lives in one account. SQS subscriptions name an endpoint (its queue may be in
another account: that account's stack creates the subscription); HTTPS subscriptions carry a
delivery policy validated against SNS's limits; Lambda subscriptions name a function of the
topic's account.

A topic that carries an NServiceBus event names the event's .NET type (``eventType``): a
released endpoint publishes to, and subscribes to, the topic named after the type, found by
name in its own account (``TopicNameHelper``, ``TopicCache``), so the topic's name is derived
exactly as the transport derives it, and its publishers must live in its account. Its
``messageDrivenSubscribers`` subscribe the way NServiceBus's message-driven (hybrid) mode does,
with a subscribe message to the one publisher, through the bridge; each of their accounts gets
an anchor topic of the event's name (:attr:`Topic.anchor`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from constructs_lib.defaults import SUCCESS_SAMPLE_RATE
from constructs_lib.filter_policy import FilterPolicyScope, filter_policy_problems
from constructs_lib.topic_naming import TopicNameError, event_topic_name, topic_name_problem
from constructs_lib.validation import ORGANIZATION_ID, https_url_problem
from cross_account_runtime.delivery_policy.policy import DeliveryPolicyError, HttpDeliveryPolicy
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX
from stacks.topology.field_checker import FieldChecker

LAMBDA_ARN = re.compile(
    r"^arn:aws(-cn|-us-gov)?:lambda:[a-z0-9-]+:(?P<account>\d{12}):function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]+)?$"
)
SUBSCRIPTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,63}$")
PROTOCOLS = ("sqs", "https", "lambda")
EVENT_METADATA = "NServiceBusEvent"
"""The topic resource's metadata the stacks write for an event topic, for the access report:
``EventType``, ``Publishers`` and ``MessageDrivenSubscribers`` (queue ARNs), which no policy
shows (publishers in the topic's own account are authorized by IAM), and ``Anchor``."""


@dataclass(frozen=True)
class TopicSubscription:
    """One subscription of a topic."""

    name: str
    protocol: str
    endpoint: str | None = None
    url: str | None = None
    function_arn: str | None = None
    raw_message_delivery: bool = True
    filter_policy: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    delivery_policy: HttpDeliveryPolicy | None = None
    filter_policy_scope: FilterPolicyScope = FilterPolicyScope.MESSAGE_ATTRIBUTES
    """What ``filter_policy`` looks at: message attributes, or (nested policies) the body."""


@dataclass(frozen=True)
class Topic:
    """An SNS topic with its publishers and subscriptions."""

    name: str
    account: str
    fifo: bool = False
    publishers: tuple[str, ...] = ()
    publisher_organizations: tuple[str, ...] = ()
    success_sample_rate: int = SUCCESS_SAMPLE_RATE
    log_all_protocols: bool = False
    subscriptions: tuple[TopicSubscription, ...] = ()
    event_type: str | None = None
    """The .NET full name of the NServiceBus event published to this topic; the topic's name
    is then the transport's (``TopicNamePrefix`` + the type, sanitized)."""
    topic_name_prefix: str = ""
    """The ``TopicNamePrefix`` the endpoints' transports are configured with."""
    message_driven_subscribers: tuple[str, ...] = ()
    """Endpoints that subscribe by sending a subscribe message to the publisher (NServiceBus's
    message-driven, or hybrid, mode); the publisher then sends each event to their address."""
    path: str = field(default="", compare=False)
    """The topology field that declares it, for error messages."""
    anchor: bool = False
    """Derived, never declared: the event's topic in a message-driven subscriber's account.
    Nobody publishes to it. NServiceBus's hybrid subscribe first subscribes natively, finding
    the topic by name in the subscriber's own account, and sends no subscribe message when
    that fails (``MigrationSubscribeTerminator``); this topic, with the subscriber's queue
    already subscribed, lets it succeed without installers."""

    @property
    def topic_name(self) -> str:
        """The SNS topic name (FIFO topics end in ``.fifo``)."""
        return self.name + FIFO_SUFFIX if self.fifo else self.name


_TOPIC_KEYS = (
    "name",
    "account",
    "fifo",
    "publishers",
    "publisherOrganizations",
    "successSampleRate",
    "logAllProtocols",
    "subscriptions",
    "eventType",
    "topicNamePrefix",
    "messageDrivenSubscribers",
)
_FILTER_KEYS = ("filterPolicy", "filterPolicyScope")
_SUBSCRIPTION_KEYS = {
    "sqs": ("name", "protocol", "endpoint", "rawMessageDelivery", *_FILTER_KEYS),
    "https": ("name", "protocol", "url", "rawMessageDelivery", "deliveryPolicy", *_FILTER_KEYS),
    "lambda": ("name", "protocol", "functionArn", *_FILTER_KEYS),
}


def parse_topics(
    check: FieldChecker,
    raw: Any,
    account_ids: Mapping[str, str],
    endpoints: Mapping[str, tuple[str, bool]],
    known_orgs: set[str],
) -> list[Topic]:
    """Validate ``topology.topics``.

    ``account_ids`` maps account names to ids; ``endpoints`` maps endpoint names to their
    account name and FIFO flag.
    """
    topics: list[Topic] = []
    seen: set[tuple[str, str]] = set()
    for path, obj in check.objects(raw, "topology.topics", _TOPIC_KEYS):
        event_type = check.string(obj, "eventType", path, required=False)
        prefix = check.string(obj, "topicNamePrefix", path, required=False)
        name = check.string(obj, "name", path, required=event_type is None)
        account = check.reference(obj, "account", path, account_ids, "account")
        fifo = check.boolean(obj, "fifo", path, False)
        rate = check.integer(
            obj, "successSampleRate", path, default=SUCCESS_SAMPLE_RATE, low=0, high=100
        )
        log_all = check.boolean(obj, "logAllProtocols", path, False)
        if name is not None:
            problem = topic_name_problem(name + (FIFO_SUFFIX if fifo else ""), fifo=fifo)
            if problem is not None:
                check.fail(f"{path}.name", f"{problem} (FIFO's '.fifo' is added)")
                name = None
        if event_type is not None:
            name = _event_topic_name(
                check, path, event_type, prefix=prefix or "", name=name, fifo=fifo
            )
        elif prefix is not None:
            check.fail(
                f"{path}.topicNamePrefix",
                "a topic name prefix applies to event topics only; add eventType or remove it",
            )
        if name is None or account is None:
            continue
        if (account, name) in seen:
            check.fail(f"{path}.name", f"duplicate topic {name!r} in account {account!r}")
            continue
        seen.add((account, name))
        publishers = _names(check, obj, "publishers", path, endpoints)
        orgs = tuple(
            org
            for j, org in enumerate(
                check.array(obj.get("publisherOrganizations", []), f"{path}.publisherOrganizations")
            )
            if check_organization(check, org, f"{path}.publisherOrganizations[{j}]", known_orgs)
        )
        subs = _parse_subscriptions(
            check,
            obj.get("subscriptions", []),
            path,
            topic_account_id=account_ids[account],
            endpoints=endpoints,
            fifo=fifo,
        )
        message_driven = _names(check, obj, "messageDrivenSubscribers", path, endpoints)
        topic = Topic(
            name,
            account,
            fifo,
            publishers,
            orgs,
            rate,
            log_all,
            tuple(subs),
            event_type,
            prefix or "",
            message_driven,
            path,
        )
        if event_type is not None:
            _check_event_topic(check, topic, endpoints)
        elif message_driven:
            check.fail(
                f"{path}.messageDrivenSubscribers",
                "message-driven subscribers subscribe to an NServiceBus event; add eventType",
            )
        topics.append(topic)
    return topics + _anchor_topics(topics, endpoints)


def _anchor_topics(topics: list[Topic], endpoints: Mapping[str, tuple[str, bool]]) -> list[Topic]:
    """An anchor topic (see :attr:`Topic.anchor`) in each account of a message-driven
    subscriber that has no topic of the event's name yet, with those subscribers' queues
    subscribed raw, as the transport would subscribe them."""
    declared = {(t.account, t.name) for t in topics}
    anchors: dict[tuple[str, str], Topic] = {}
    for topic in topics:
        for j, subscriber in enumerate(topic.message_driven_subscribers):
            account = endpoints[subscriber][0]
            key = (account, topic.name)
            if key in declared:
                continue
            anchor = anchors.get(key) or Topic(
                topic.name,
                account,
                event_type=topic.event_type,
                topic_name_prefix=topic.topic_name_prefix,
                path=f"{topic.path}.messageDrivenSubscribers[{j}]",
                anchor=True,
            )
            anchors[key] = replace(
                anchor,
                subscriptions=(
                    *anchor.subscriptions,
                    TopicSubscription(_anchor_subscription_name(subscriber), "sqs", subscriber),
                ),
            )
    return list(anchors.values())


def _event_topic_name(
    check: FieldChecker, path: str, event_type: str, *, prefix: str, name: str | None, fifo: bool
) -> str | None:
    """The name the transport gives the event's topic; ``name``, if given, must be it."""
    try:
        derived = event_topic_name(event_type, prefix)
    except TopicNameError as error:
        check.fail(f"{path}.eventType", str(error))
        return None
    if fifo:
        check.fail(
            f"{path}.fifo",
            "NServiceBus publishes events without a message group, which a FIFO topic "
            "refuses; remove fifo",
        )
        return None
    if name is not None and name != derived:
        check.fail(
            f"{path}.name",
            f"released endpoints publish {event_type!r} (prefix {prefix!r}) to the topic "
            f"{derived!r}, found by name; remove name or set it to {derived!r}",
        )
        return None
    return derived


def _anchor_subscription_name(endpoint: str) -> str:
    """``<endpoint's letters and digits>Anchor``: apart from the name a declared subscription
    of the same endpoint may have (a subscriber both native and message-driven)."""
    return "".join(c for c in endpoint if c.isascii() and c.isalnum()) + "Anchor"


def _check_event_topic(
    check: FieldChecker, topic: Topic, endpoints: Mapping[str, tuple[str, bool]]
) -> None:
    """What the transport's publish and subscribe need of an event topic."""
    path, name, publishers = topic.path, topic.name, topic.publishers
    message_driven = topic.message_driven_subscribers
    for j, publisher in enumerate(publishers):
        home = endpoints[publisher][0]
        if home != topic.account:
            check.fail(
                f"{path}.publishers[{j}]",
                f"{publisher} publishes to the topic {name!r} found by name in its own account "
                f"{home!r}, and skips the event when there is none; declare the topic in "
                f"account {home!r} (one topic per publishing account)",
            )
    for subscription in topic.subscriptions:
        if subscription.endpoint is not None and not subscription.raw_message_delivery:
            check.fail(
                f"{path}.subscriptions",
                f"subscription {subscription.name!r}: NServiceBus reads raw deliveries only "
                "(it subscribes with RawMessageDelivery=true); remove rawMessageDelivery",
            )
    if not message_driven:
        return
    if len(publishers) != 1:
        check.fail(
            f"{path}.messageDrivenSubscribers",
            "a message-driven subscriber sends its subscribe message to the one endpoint "
            "registered as the event's publisher (RegisterPublisher); list exactly one publisher",
        )
        return
    for j, subscriber in enumerate(message_driven):
        if subscriber == publishers[0]:
            check.fail(
                f"{path}.messageDrivenSubscribers[{j}]",
                "the publisher need not subscribe to its own event; remove it",
            )
        elif endpoints[subscriber][1]:
            check.fail(
                f"{path}.messageDrivenSubscribers[{j}]",
                f"{subscriber} has a FIFO queue, to which NServiceBus cannot send events "
                "(no message group); subscribe a standard queue",
            )


def _names(
    check: FieldChecker,
    obj: Mapping[str, Any],
    key: str,
    path: str,
    endpoints: Mapping[str, tuple[str, bool]],
) -> tuple[str, ...]:
    names: list[str] = []
    for j, value in enumerate(check.array(obj.get(key, []), f"{path}.{key}")):
        if check.is_invalid("endpoint", value):
            continue
        if not isinstance(value, str) or value not in endpoints:
            check.fail(
                f"{path}.{key}[{j}]",
                f"unknown endpoint {value!r}; declared endpoints: {', '.join(sorted(endpoints))}",
            )
        elif value in names:
            check.fail(f"{path}.{key}[{j}]", f"duplicate {value!r}; list each endpoint once")
        else:
            names.append(value)
    return tuple(names)


def check_organization(check: FieldChecker, org: Any, path: str, known_orgs: set[str]) -> bool:
    """An organization id must be well formed and declared on one of the accounts."""
    if not isinstance(org, str) or not ORGANIZATION_ID.match(org):
        check.fail(
            path,
            f"malformed organization id {org!r}; expected 'o-' and 10-32 lowercase letters or digits",
        )
        return False
    if org not in known_orgs:
        check.fail(path, f"organization {org!r} is not the organizationId of any declared account")
        return False
    return True


@dataclass(frozen=True)
class _Scope:
    """What every subscription of one topic is checked against."""

    check: FieldChecker
    topic_account_id: str
    endpoints: Mapping[str, tuple[str, bool]]
    fifo: bool


def _parse_subscriptions(
    check: FieldChecker,
    raw: Any,
    topic_path: str,
    *,
    topic_account_id: str,
    endpoints: Mapping[str, tuple[str, bool]],
    fifo: bool,
) -> list[TopicSubscription]:
    scope = _Scope(check, topic_account_id, endpoints, fifo)
    result: list[TopicSubscription] = []
    names: set[str] = set()
    for path, obj in check.objects(raw, f"{topic_path}.subscriptions"):
        protocol = check.string(obj, "protocol", path)
        name = check.string(obj, "name", path)
        if protocol not in PROTOCOLS:
            if protocol is not None:
                check.fail(
                    f"{path}.protocol",
                    f"unsupported protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}",
                )
            continue
        check.unknown_keys(obj, _SUBSCRIPTION_KEYS[protocol], path)
        if name is not None and not SUBSCRIPTION_NAME.match(name):
            check.fail(
                f"{path}.name",
                "must start with a letter and use only letters and digits (at most 64)",
            )
            continue
        if name is None:
            continue
        if name in names:
            check.fail(f"{path}.name", f"duplicate subscription name {name!r} in this topic")
            continue
        names.add(name)
        if fifo and protocol != "sqs":
            check.fail(f"{path}.protocol", "FIFO topics deliver only to SQS queues")
            continue
        policy_scope = _filter_policy_scope(check, obj, path)
        base = TopicSubscription(
            name,
            protocol,
            raw_message_delivery=check.boolean(obj, "rawMessageDelivery", path, protocol == "sqs"),
            filter_policy=_filter_policy(
                check, obj.get("filterPolicy"), f"{path}.filterPolicy", policy_scope
            ),
            filter_policy_scope=policy_scope,
        )
        parse = {"sqs": _sqs, "https": _https, "lambda": _lambda}[protocol]
        subscription = parse(scope, obj, path, base)
        if subscription is not None:
            result.append(subscription)
    return result


def _filter_policy(
    check: FieldChecker, raw: Any, path: str, scope: FilterPolicyScope
) -> Mapping[str, Any] | None:
    """The subscription's filter policy if SNS would accept it (the constructs' rules:
    :mod:`constructs_lib.filter_policy`)."""
    if raw is None:
        return None
    obj = check.obj(raw, path)
    if obj is None:
        return None
    problems = filter_policy_problems(obj, scope)
    for field_path, rule in problems:
        check.fail(path + field_path, rule)
    return None if problems else dict(obj)


def _filter_policy_scope(
    check: FieldChecker, obj: Mapping[str, Any], path: str
) -> FilterPolicyScope:
    raw = obj.get("filterPolicyScope", FilterPolicyScope.MESSAGE_ATTRIBUTES.value)
    try:
        return FilterPolicyScope(raw)
    except ValueError:
        check.fail(
            f"{path}.filterPolicyScope",
            f"must be one of {', '.join(s.value for s in FilterPolicyScope)}, got {raw!r}",
        )
        return FilterPolicyScope.MESSAGE_ATTRIBUTES


def _sqs(
    scope: _Scope, obj: Mapping[str, Any], path: str, base: TopicSubscription
) -> TopicSubscription | None:
    endpoint = scope.check.string(obj, "endpoint", path)
    if endpoint is None or scope.check.is_invalid("endpoint", endpoint):
        return None
    if endpoint not in scope.endpoints:
        scope.check.fail(
            f"{path}.endpoint",
            f"unknown endpoint {endpoint!r}; declared endpoints: {', '.join(sorted(scope.endpoints))}",
        )
        return None
    if scope.endpoints[endpoint][1] != scope.fifo:
        kind = "FIFO" if scope.fifo else "standard"
        scope.check.fail(
            f"{path}.endpoint", f"a {kind} topic needs a {kind} queue; endpoint {endpoint!r} is not"
        )
        return None
    return replace(base, endpoint=endpoint)


def _https(
    scope: _Scope, obj: Mapping[str, Any], path: str, base: TopicSubscription
) -> TopicSubscription | None:
    url = scope.check.string(obj, "url", path)
    if url is None:
        return None
    problem = https_url_problem(url)
    if problem is not None:
        scope.check.fail(f"{path}.url", problem)
        return None
    policy: HttpDeliveryPolicy | None = None
    if "deliveryPolicy" in obj:
        raw = scope.check.obj(obj["deliveryPolicy"], f"{path}.deliveryPolicy")
        if raw is None:
            return None
        try:
            policy = HttpDeliveryPolicy.from_json(raw)
        except DeliveryPolicyError as error:
            scope.check.fail(f"{path}.deliveryPolicy", str(error))
            return None
    return replace(base, url=url, delivery_policy=policy)


def _lambda(
    scope: _Scope, obj: Mapping[str, Any], path: str, base: TopicSubscription
) -> TopicSubscription | None:
    arn = scope.check.string(obj, "functionArn", path)
    if arn is None:
        return None
    match = LAMBDA_ARN.match(arn)
    if not match:
        scope.check.fail(f"{path}.functionArn", f"{arn!r} is not a Lambda function ARN")
        return None
    if match["account"] != scope.topic_account_id:
        scope.check.fail(
            f"{path}.functionArn",
            "the function must be in the topic's account; subscribe it from its own account's "
            "topic instead",
        )
        return None
    return replace(base, function_arn=arn, raw_message_delivery=False)
