"""The declarative messaging topology: accounts, endpoints, who may send to whom.

One description drives every account's stack, the access report and the local deployment, so
it is validated here, at the boundary, before anything is synthesized: a wrong account id or a
queue name SQS would refuse must stop the run with a message that names the file, the path of
the field and the rule broken, instead of surfacing later as a CloudFormation failure in one
account out of many.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from constructs_lib.queue_naming import (
    MAX_QUEUE_NAME_LENGTH,
    QueueNameError,
    dead_letter_queue_name,
    endpoint_queue_name,
    ingress_queue_name,
    validate_queue_name,
)
from constructs_lib.validation import ACCOUNT_ID, ORGANIZATION_ID
from cross_account_runtime.common.partitions import partition_of
from stacks.field_checker import FieldChecker
from stacks.topology_analytics import AnalyticsSettings, parse_analytics
from stacks.topology_topics import (
    TOPIC_NAME,
    Topic,
    TopicSubscription,
    check_organization,
    parse_topics,
)

REGION = re.compile(r"^[a-z]{2}(-gov|-iso|-isob|-isof|-isoe)?-[a-z]+-\d{1,2}$")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
DEFAULT_MAX_RECEIVE_COUNT = 5
DEFAULT_MAX_MESSAGE_AGE_SECONDS = 900


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


@dataclass(frozen=True)
class Endpoint:
    """An endpoint's input queue; the error queue is one too, with every endpoint as sender."""

    name: str
    account: str
    queue_name: str
    dead_letter_queue_name: str
    fifo: bool = False
    max_receive_count: int = DEFAULT_MAX_RECEIVE_COUNT
    is_error_queue: bool = False


@dataclass(frozen=True)
class Route:
    """Permission for one endpoint (or a whole organization) to send to one endpoint."""

    receiver: str
    sender: str | None = None
    sender_organization: str | None = None
    relay: bool = False
    """Through the account bridge: the sender's legacy endpoints send to a shadow queue in
    their own account, relays stamp and substitute the ARN header across the boundary."""


@dataclass(frozen=True)
class AlarmSettings:
    """How each account's stack alarms: the age that makes an endpoint look stuck, and the
    topic (in the same account, created by the platform team) to notify, if any."""

    topic_name: str | None = None
    max_message_age_seconds: int = DEFAULT_MAX_MESSAGE_AGE_SECONDS


@dataclass(frozen=True)
class Topology:
    """A validated topology. Build it with :func:`parse_topology` or :func:`load_topology`."""

    accounts: tuple[Account, ...]
    endpoints: tuple[Endpoint, ...]
    routes: tuple[Route, ...]
    error_queue: Endpoint
    topics: tuple[Topic, ...] = ()
    alarms: AlarmSettings = AlarmSettings()
    source: str = "<topology>"
    analytics: AnalyticsSettings | None = None

    def account(self, name: str) -> Account:
        """The account called ``name``."""
        return next(a for a in self.accounts if a.name == name)

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint (or the error queue) called ``name``."""
        return next(e for e in self.all_queues if e.name == name)

    @property
    def all_queues(self) -> tuple[Endpoint, ...]:
        """Every endpoint queue plus the error queue."""
        return (*self.endpoints, self.error_queue)

    def queues_in(self, account_name: str) -> tuple[Endpoint, ...]:
        """The queues one account's stack owns."""
        return tuple(q for q in self.all_queues if q.account == account_name)

    def queue_arn(self, endpoint: Endpoint) -> str:
        """The queue's ARN, its transport address, computed without any lookup."""
        return self.sqs_arn(endpoint.account, endpoint.queue_name)

    def sender_endpoints(self, receiver: Endpoint) -> tuple[Endpoint, ...]:
        """Endpoints declared as senders to ``receiver``; the error queue accepts them all."""
        if receiver.is_error_queue:
            return self.endpoints
        names = [
            r.sender
            for r in self.routes
            if r.receiver == receiver.name and r.sender and not r.relay
        ]
        return tuple(self.endpoint(n) for n in dict.fromkeys(names))

    @property
    def relay_routes(self) -> tuple[Route, ...]:
        """Routes that cross accounts through relays."""
        return tuple(r for r in self.routes if r.relay)

    def shadow_queues(self, account_name: str) -> tuple[Endpoint, ...]:
        """Remote endpoints that get a shadow queue (named like their queue) in an account,
        read by the account's outbound relay."""
        names = [
            r.receiver
            for r in self.relay_routes
            if r.sender and self.endpoint(r.sender).account == account_name
        ]
        return tuple(self.endpoint(n) for n in dict.fromkeys(names))

    def ingress_endpoints(self, account_name: str) -> tuple[Endpoint, ...]:
        """Endpoints of an account that get an ingress queue, read by its inbound relay."""
        names = [
            r.receiver
            for r in self.relay_routes
            if self.endpoint(r.receiver).account == account_name
        ]
        return tuple(self.endpoint(n) for n in dict.fromkeys(names))

    def relay_sender_accounts(self, receiver: Endpoint) -> tuple[Account, ...]:
        """Accounts whose outbound relay forwards to ``receiver``'s ingress queue."""
        names = [
            self.endpoint(r.sender).account
            for r in self.relay_routes
            if r.receiver == receiver.name and r.sender
        ]
        return tuple(self.account(n) for n in dict.fromkeys(names))

    def relay_role_arn(self, account: Account, direction: str) -> str:
        """The ARN of an account's relay role, named so other accounts can admit it by ARN."""
        return (
            f"arn:{account.partition}:iam::{account.id}:role/{relay_role_name(account, direction)}"
        )

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

    def topics_in(self, account_name: str) -> tuple[Topic, ...]:
        """The topics one account's stack owns."""
        return tuple(t for t in self.topics if t.account == account_name)

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


_TOP_KEYS = ("accounts", "endpoints", "routes", "errorQueue", "topics", "alarms", "analytics")
_ALARM_KEYS = ("topicName", "maxMessageAgeSeconds")
_ACCOUNT_KEYS = ("name", "id", "region", "organizationId")
_ENDPOINT_KEYS = (
    "name",
    "account",
    "fifo",
    "queueNamePrefix",
    "queueName",
    "maxReceiveCount",
    "deadLetterQueue",
)
_DLQ_KEYS = ("fifo", "queueName")
_ROUTE_KEYS = ("from", "fromOrganization", "to", "relay")
RELAY_DIRECTIONS = ("outbound", "inbound")


def relay_role_name(account: Account, direction: str) -> str:
    """``messaging-relay-<direction>-<account name>``, at most 64 characters (IAM's limit)."""
    return f"messaging-relay-{direction}-{account.name}"[:64]


def parse_topology(data: Any, source: str = "<topology>") -> Topology:
    """Validate a topology document (the JSON shape of ``cdk.json``'s ``topology`` context).

    Raises :class:`TopologyError` listing every problem as ``<source>: <path>: <rule>``.
    """
    check = FieldChecker()
    root = check.obj(data, "topology")
    if root is None:
        raise TopologyError(source, check.problems)
    check.unknown_keys(root, _TOP_KEYS, "topology")
    accounts = _parse_accounts(check, root.get("accounts"))
    account_names = {a.name for a in accounts}
    endpoints = _parse_endpoints(check, root.get("endpoints"), account_names)
    error_queue = _parse_error_queue(check, root.get("errorQueue"), account_names)
    names = [e.name for e in endpoints]
    if error_queue is not None and error_queue.name in names:
        check.fail(
            "topology.errorQueue.name", f"duplicate name {error_queue.name!r}: an endpoint has it"
        )
    queues = [*endpoints, *([error_queue] if error_queue else [])]
    taken = _check_unique_queue_names(check, queues)
    known_orgs = {a.organization_id for a in accounts if a.organization_id}
    routes = _parse_routes(
        check, root.get("routes", []), {e.name: e.account for e in endpoints}, known_orgs
    )
    _check_relay_queue_names(check, queues, routes, taken)
    topics = parse_topics(
        check,
        root.get("topics", []),
        {a.name: a.id for a in accounts},
        {e.name: (e.account, e.fifo) for e in endpoints},
        known_orgs,
    )
    alarms = _parse_alarms(check, root.get("alarms", {}))
    analytics = parse_analytics(
        check,
        root.get("analytics"),
        {a.name: a.region for a in accounts},
        {t.name: t.account for t in topics},
    )
    if check.problems or error_queue is None:
        if error_queue is None and not check.problems:
            check.fail("topology.errorQueue", "is required")
        raise TopologyError(source, check.problems)
    return Topology(
        tuple(accounts),
        tuple(endpoints),
        tuple(routes),
        error_queue,
        tuple(topics),
        alarms,
        source,
        analytics,
    )


def _parse_alarms(check: FieldChecker, raw: Any) -> AlarmSettings:
    obj = check.obj(raw, "topology.alarms")
    if obj is None:
        return AlarmSettings()
    check.unknown_keys(obj, _ALARM_KEYS, "topology.alarms")
    topic_name = check.string(obj, "topicName", "topology.alarms", required=False)
    if topic_name is not None and not TOPIC_NAME.match(topic_name):
        check.fail(
            "topology.alarms.topicName", "SNS topic names use 1-256 letters, digits, '-' or '_'"
        )
    age = check.integer(
        obj,
        "maxMessageAgeSeconds",
        "topology.alarms",
        default=DEFAULT_MAX_MESSAGE_AGE_SECONDS,
        low=60,
        high=1209600,
    )
    return AlarmSettings(topic_name, age)


def _parse_accounts(check: FieldChecker, raw: Any) -> list[Account]:
    if raw is None:
        check.fail("topology.accounts", "is required: list the AWS accounts, at least one")
        return []
    accounts: list[Account] = []
    seen_names: set[str] = set()
    seen_ids: set[str] = set()
    for i, item in enumerate(check.array(raw, "topology.accounts")):
        path = f"topology.accounts[{i}]"
        obj = check.obj(item, path)
        if obj is None:
            continue
        check.unknown_keys(obj, _ACCOUNT_KEYS, path)
        name = check.string(obj, "name", path)
        account_id = check.string(obj, "id", path)
        region = check.string(obj, "region", path)
        org = check.string(obj, "organizationId", path, required=False)
        if name is not None:
            if not NAME.match(name):
                check.fail(
                    f"{path}.name",
                    "must start with a letter and use only letters, digits, '.', '_' or '-' (at most 64)",
                )
            if name in seen_names:
                check.fail(f"{path}.name", f"duplicate account name {name!r}")
            seen_names.add(name)
        if account_id is not None:
            if not ACCOUNT_ID.match(account_id):
                check.fail(
                    f"{path}.id", f"account id must be exactly 12 digits, got {account_id!r}"
                )
            elif account_id in seen_ids:
                check.fail(f"{path}.id", f"duplicate account id {account_id}")
            seen_ids.add(account_id)
        if region is not None and not REGION.match(region):
            check.fail(f"{path}.region", f"malformed region {region!r}; expected e.g. 'us-east-1'")
        if org is not None and not ORGANIZATION_ID.match(org):
            check.fail(
                f"{path}.organizationId",
                f"malformed organization id {org!r}; expected 'o-' and 10-32 lowercase letters or digits",
            )
        if name and account_id and region:
            accounts.append(Account(name, account_id, region, org))
    return accounts


def _parse_queue(
    check: FieldChecker,
    obj: Mapping[str, Any],
    path: str,
    account_names: set[str],
    *,
    is_error_queue: bool,
) -> Endpoint | None:
    check.unknown_keys(obj, _ENDPOINT_KEYS, path)
    name = check.string(obj, "name", path)
    account = check.reference(obj, "account", path, account_names, "account")
    prefix = check.string(obj, "queueNamePrefix", path, required=False) or ""
    explicit = check.string(obj, "queueName", path, required=False)
    fifo = check.boolean(obj, "fifo", path, False)
    max_receive = check.integer(
        obj, "maxReceiveCount", path, default=DEFAULT_MAX_RECEIVE_COUNT, low=1, high=1000
    )
    if name is not None and not NAME.match(name):
        check.fail(
            f"{path}.name",
            "must start with a letter and use only letters, digits, '.', '_' or '-' (at most 64)",
        )
        name = None
    if name is None or account is None:
        return None
    try:
        if explicit is not None:
            queue_name = validate_queue_name(explicit, fifo=fifo)
        else:
            queue_name = endpoint_queue_name(name, prefix, fifo=fifo)
    except QueueNameError as error:
        field = "queueName" if explicit is not None else "name"
        check.fail(f"{path}.{field}", str(error))
        return None
    dlq_name = _parse_dead_letter_queue(
        check, obj.get("deadLetterQueue"), f"{path}.deadLetterQueue", queue_name, fifo
    )
    if dlq_name is None:
        return None
    return Endpoint(name, account, queue_name, dlq_name, fifo, max_receive, is_error_queue)


def _parse_dead_letter_queue(
    check: FieldChecker, raw: Any, path: str, queue_name: str, fifo: bool
) -> str | None:
    if raw is None:
        try:
            return dead_letter_queue_name(queue_name)
        except QueueNameError as error:
            check.fail(path, f"{error}; give a shorter deadLetterQueue.queueName")
            return None
    obj = check.obj(raw, path)
    if obj is None:
        return None
    check.unknown_keys(obj, _DLQ_KEYS, path)
    dlq_fifo = obj.get("fifo", fifo)
    if dlq_fifo is not fifo:
        kind = "FIFO" if fifo else "standard"
        check.fail(
            f"{path}.fifo",
            f"a {kind} queue needs a {kind} dead-letter queue (SQS refuses a mixed redrive); set fifo to {str(fifo).lower()}",
        )
        return None
    explicit = check.string(obj, "queueName", path, required=False)
    try:
        if explicit is None:
            return dead_letter_queue_name(queue_name)
        return validate_queue_name(explicit, fifo=fifo)
    except QueueNameError as error:
        check.fail(f"{path}.queueName", str(error))
        return None


def _parse_endpoints(check: FieldChecker, raw: Any, account_names: set[str]) -> list[Endpoint]:
    if raw is None:
        check.fail("topology.endpoints", "is required: list the endpoints")
        return []
    endpoints: list[Endpoint] = []
    seen: set[str] = set()
    for i, item in enumerate(check.array(raw, "topology.endpoints")):
        path = f"topology.endpoints[{i}]"
        obj = check.obj(item, path)
        if obj is None:
            continue
        endpoint = _parse_queue(check, obj, path, account_names, is_error_queue=False)
        if endpoint is None:
            continue
        if endpoint.name in seen:
            check.fail(f"{path}.name", f"duplicate endpoint name {endpoint.name!r}")
            continue
        seen.add(endpoint.name)
        endpoints.append(endpoint)
    return endpoints


def _parse_error_queue(check: FieldChecker, raw: Any, account_names: set[str]) -> Endpoint | None:
    if raw is None:
        check.fail("topology.errorQueue", "is required: name the error queue and its account")
        return None
    obj = check.obj(raw, "topology.errorQueue")
    if obj is None:
        return None
    return _parse_queue(check, obj, "topology.errorQueue", account_names, is_error_queue=True)


def _check_unique_queue_names(check: FieldChecker, queues: list[Endpoint]) -> set[tuple[str, str]]:
    """Two queues with one name in one account would be the same queue (an account has one
    region here and account ids are unique, so the account name stands for both).

    Returns the ``(account, queue name)`` pairs taken, for the relays' queues to avoid.
    """
    owners: dict[tuple[str, str], str] = {}
    for q in queues:
        for name in (q.queue_name, q.dead_letter_queue_name):
            key = (q.account, name)
            if key in owners and owners[key] != q.name:
                check.fail(
                    f"topology.endpoints[{q.name}]",
                    f"queue name {name!r} is also used by {owners[key]!r} in the same account and region; change a name or prefix",
                )
            owners[key] = q.name
    return set(owners)


def _check_relay_queue_names(
    check: FieldChecker, queues: list[Endpoint], routes: list[Route], taken: set[tuple[str, str]]
) -> None:
    """A relay adds a shadow queue in the sender's account (named like the remote queue) and
    an ingress queue in the receiver's; neither may take a name an account already uses."""
    by_name = {q.name: q for q in queues}
    added: set[tuple[str, str]] = set()
    for i, route in enumerate(routes):
        if not route.relay or route.sender is None:
            continue
        receiver = by_name[route.receiver]
        try:
            ingress = ingress_queue_name(receiver.queue_name)
            wanted = [
                (by_name[route.sender].account, receiver.queue_name, "shadow queue"),
                (receiver.account, ingress, "ingress queue"),
                (receiver.account, dead_letter_queue_name(ingress), "ingress dead-letter queue"),
            ]
        except QueueNameError as error:
            check.fail(f"topology.routes[{i}].to", f"{error}; shorten the endpoint's queue name")
            continue
        for account, name, role in wanted:
            if (account, name) in added:
                continue
            if (account, name) in taken:
                check.fail(
                    f"topology.routes[{i}]",
                    f"the relay's {role} {name!r} in account {account!r} has the name of a queue "
                    "already there; rename one of the endpoints",
                )
            added.add((account, name))


def _parse_routes(
    check: FieldChecker, raw: Any, accounts_of: Mapping[str, str], known_orgs: set[str]
) -> list[Route]:
    endpoint_names = set(accounts_of)
    routes: list[Route] = []
    seen: set[Route] = set()
    for i, item in enumerate(check.array(raw, "topology.routes")):
        path = f"topology.routes[{i}]"
        obj = check.obj(item, path)
        if obj is None:
            continue
        check.unknown_keys(obj, _ROUTE_KEYS, path)
        receiver = check.string(obj, "to", path)
        sender = check.string(obj, "from", path, required=False)
        org = check.string(obj, "fromOrganization", path, required=False)
        relay = check.boolean(obj, "relay", path, False)
        if relay and org is not None:
            check.fail(
                f"{path}.relay",
                "relays forward from an endpoint; use 'from', not 'fromOrganization'",
            )
            continue
        if (sender is None) == (org is None):
            check.fail(
                path,
                "give exactly one of 'from' (an endpoint) or 'fromOrganization' (an organization id)",
            )
            continue
        if receiver is not None and receiver not in endpoint_names:
            check.fail(
                f"{path}.to",
                f"unknown endpoint {receiver!r}; declared endpoints: {', '.join(sorted(endpoint_names))}",
            )
            continue
        if sender is not None and sender not in endpoint_names:
            check.fail(
                f"{path}.from",
                f"unknown endpoint {sender!r}; declared endpoints: {', '.join(sorted(endpoint_names))}",
            )
            continue
        if sender is not None and sender == receiver:
            check.fail(f"{path}.from", "an endpoint needs no route to itself; remove this route")
            continue
        if org is not None and not check_organization(
            check, org, f"{path}.fromOrganization", known_orgs
        ):
            continue
        assert receiver is not None
        if relay and sender is not None and accounts_of[sender] == accounts_of[receiver]:
            check.fail(
                f"{path}.relay",
                "both endpoints are in one account; a relay only crosses accounts, drop 'relay'",
            )
            continue
        route = Route(receiver, sender, org, relay)
        if Route(receiver, sender, org) in seen:
            check.fail(path, "duplicate route; remove one")
            continue
        seen.add(Route(receiver, sender, org))
        routes.append(route)
    return routes


def load_topology(path: str | Path) -> Topology:
    """Read and validate a topology JSON file (the ``topology`` object itself, or a file with a
    top-level ``topology`` key such as ``cdk.json``'s context)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise TopologyError(source, [("<file>", f"cannot be read: {error.strerror}")]) from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise TopologyError(
            source,
            [(f"<line {error.lineno}, column {error.colno}>", f"is not valid JSON: {error.msg}")],
        ) from error
    if isinstance(data, Mapping) and "context" in data and isinstance(data["context"], Mapping):
        data = data["context"].get("topology", data)
    if isinstance(data, Mapping) and set(data) == {"topology"}:
        data = data["topology"]
    return parse_topology(data, source)


__all__ = [
    "MAX_QUEUE_NAME_LENGTH",
    "Account",
    "Endpoint",
    "Route",
    "Topology",
    "TopologyError",
    "load_topology",
    "parse_topology",
]
