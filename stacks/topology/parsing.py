"""Reading a topology document: every field checked, every problem reported at once.

One description drives every account's stack, the access report and the local deployment, so
it is validated here, at the boundary, before anything is synthesized: a wrong account id or a
queue name SQS would refuse must stop the run with a message that names the file, the path of
the field and the rule broken, instead of surfacing later as a CloudFormation failure in one
account out of many.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from constructs_lib.defaults import (
    IMMEDIATE_RETRIES,
    KEY_GRANULARITY,
    MAX_MESSAGE_AGE_RANGE_SECONDS,
    MAX_MESSAGE_AGE_SECONDS,
    WRAP_OUTGOING_MESSAGES,
    endpoint_receives,
)
from constructs_lib.queue_naming import (
    QueueNameError,
    dead_letter_queue_name,
    endpoint_queue_name,
    validate_queue_name,
    validate_queue_name_prefix,
)
from constructs_lib.topic_naming import topic_name_problem
from constructs_lib.validation import ACCOUNT_ID, ORGANIZATION_ID
from cross_account_runtime.common.json_document import (
    WHOLE_DOCUMENT,
    JsonDocumentError,
    decode_json_document,
)
from cross_account_runtime.nservicebus.redrive import dead_letter_kind_problem
from stacks.topology.analytics import parse_analytics
from stacks.topology.bridge import bridge_shadows
from stacks.topology.field_checker import FieldChecker
from stacks.topology.inventory import name_clashes, stack_queues
from stacks.topology.large_messages import parse_large_messages
from stacks.topology.model import (
    Account,
    AlarmSettings,
    Endpoint,
    KeyGranularity,
    PlatformQueueKind,
    Route,
    Topology,
    TopologyError,
)
from stacks.topology.regions import region_problem
from stacks.topology.stack_ids import stack_id_clashes
from stacks.topology.stack_order import SubscriptionCycleError, stack_order
from stacks.topology.topics import Topic, check_organization, parse_topics

CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"
"""The project's ``cdk.json``, whose context holds the example topology: the topology of the
app, the main job and the placement commands when none is named."""
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
ACCOUNT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,38}$")

SCHEMA_KEY = "$schema"
"""Where a document names its JSON Schema for an editor (``topology.schema.json``); ignored."""
_TOP_KEYS = (
    SCHEMA_KEY,
    "accounts",
    "endpoints",
    "routes",
    *PlatformQueueKind,
    "topics",
    "alarms",
    "analytics",
    "largeMessages",
    "keys",
)
_ALARM_KEYS = ("topicName", "maxMessageAgeSeconds")
_ACCOUNT_KEYS = ("name", "id", "region", "organizationId")
_PLATFORM_QUEUE_KEYS = (
    "name",
    "account",
    "fifo",
    "queueNamePrefix",
    "queueName",
    "maxReceiveCount",
    "deadLetterQueue",
)
_ENDPOINT_KEYS = (*_PLATFORM_QUEUE_KEYS, "arnAware", "immediateRetries", "wrapOutgoingMessages")
_DLQ_KEYS = ("fifo", "queueName")
_ROUTE_KEYS = ("from", "fromOrganization", "to", "relay", "replies")


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
    platform_queues = _parse_platform_queues(check, root, account_names, endpoints)
    known_orgs = {a.organization_id for a in accounts if a.organization_id}
    routes = _parse_routes(
        check, root.get("routes", []), {e.name: e.account for e in endpoints}, known_orgs
    )
    topics = parse_topics(
        check,
        root.get("topics", []),
        {a.name: a.id for a in accounts},
        {e.name: (e.account, e.fifo) for e in endpoints},
        known_orgs,
    )
    routes += _message_driven_routes(check, topics, routes, {e.name: e for e in endpoints})
    alarms = _parse_alarms(check, root.get("alarms", {}))
    large_messages = parse_large_messages(check, root.get("largeMessages"))
    keys = _parse_keys(check, root)
    analytics = parse_analytics(
        check,
        root.get("analytics"),
        {a.name: a.region for a in accounts},
        [(t.name, t.account) for t in topics if not t.anchor],
    )
    if check.problems:
        raise TopologyError(source, check.problems)
    topology = Topology(
        tuple(accounts),
        tuple(endpoints),
        tuple(routes),
        tuple(platform_queues),
        tuple(topics),
        alarms,
        source,
        analytics,
        large_messages,
        keys,
    )
    _check_reachability(check, topology)
    _check_stack_order(check, topology)
    if check.problems:
        raise TopologyError(source, check.problems)
    return topology


def _parse_keys(check: FieldChecker, root: Mapping[str, Any]) -> KeyGranularity:
    """``keys``: a KMS key per queue group (the default) or one per account."""
    raw = root.get("keys", KEY_GRANULARITY)
    if isinstance(raw, str) and raw in {k.value for k in KeyGranularity}:
        return KeyGranularity(raw)
    check.fail(
        "topology.keys",
        f'{raw!r} is no key granularity; write "perQueue" (a KMS key per queue, the '
        'default) or "perAccount" (one key per account, shared by its queues)',
    )
    return KeyGranularity(KEY_GRANULARITY)


def _parse_alarms(check: FieldChecker, raw: Any) -> AlarmSettings:
    obj = check.obj(raw, "topology.alarms")
    if obj is None:
        return AlarmSettings()
    check.unknown_keys(obj, _ALARM_KEYS, "topology.alarms")
    topic_name = check.string(obj, "topicName", "topology.alarms", required=False)
    problem = None if topic_name is None else topic_name_problem(topic_name, fifo=False)
    if problem is not None:
        check.fail("topology.alarms.topicName", problem)
    age = check.integer(
        obj,
        "maxMessageAgeSeconds",
        "topology.alarms",
        default=MAX_MESSAGE_AGE_SECONDS,
        low=MAX_MESSAGE_AGE_RANGE_SECONDS[0],
        high=MAX_MESSAGE_AGE_RANGE_SECONDS[1],
    )
    return AlarmSettings(topic_name, age)


def _parse_accounts(check: FieldChecker, raw: Any) -> list[Account]:
    if raw is None:
        check.fail("topology.accounts", "is required: list the AWS accounts, at least one")
        return []
    accounts: list[Account] = []
    seen_names: set[str] = set()
    seen_ids: set[str] = set()
    for path, obj in check.objects(raw, "topology.accounts", _ACCOUNT_KEYS):
        problems_before = len(check.problems)
        name = check.string(obj, "name", path)
        account_id = check.string(obj, "id", path)
        region = check.string(obj, "region", path)
        org = check.string(obj, "organizationId", path, required=False)
        if name is not None:
            if not ACCOUNT_NAME.match(name):
                check.fail(
                    f"{path}.name",
                    "must start with a letter and use only letters, digits and '-', at most 39: "
                    "it names the stack (Messaging-<name>, which takes no '.' or '_') and the "
                    "relay roles (messaging-relay-outbound-<name>, at most 64 characters)",
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
        if region is not None:
            problem = region_problem(region)
            if problem:
                check.fail(f"{path}.region", problem)
        if org is not None and not ORGANIZATION_ID.match(org):
            check.fail(
                f"{path}.organizationId",
                f"malformed organization id {org!r}; expected 'o-' and 10-32 lowercase letters or digits",
            )
        if name and account_id and region and len(check.problems) == problems_before:
            accounts.append(Account(name, account_id, region, org))
        else:
            check.declared_invalid("account", name)
    return accounts


def _parse_queue(
    check: FieldChecker,
    obj: Mapping[str, Any],
    path: str,
    account_names: set[str],
    *,
    platform: PlatformQueueKind | None,
) -> Endpoint | None:
    check.unknown_keys(obj, _PLATFORM_QUEUE_KEYS if platform else _ENDPOINT_KEYS, path)
    name = check.string(obj, "name", path)
    account = check.reference(obj, "account", path, account_names, "account")
    prefix = check.string(obj, "queueNamePrefix", path, required=False) or ""
    explicit = check.string(obj, "queueName", path, required=False)
    fifo = check.boolean(obj, "fifo", path, False)
    arn_aware = check.boolean(obj, "arnAware", path, False)
    wraps = check.boolean(obj, "wrapOutgoingMessages", path, WRAP_OUTGOING_MESSAGES)
    retries, max_receive, problems = endpoint_receives(
        obj.get("immediateRetries", IMMEDIATE_RETRIES),
        obj.get("maxReceiveCount"),
        fields=("immediateRetries", "maxReceiveCount"),
    )
    for field, problem in problems:
        check.fail(f"{path}.{field}", problem)
    if name is not None and not NAME.match(name):
        check.fail(
            f"{path}.name",
            "must start with a letter and use only letters, digits, '.', '_' or '-' (at most 64)",
        )
        name = None
    if name is None or account is None:
        return None
    if explicit is None:
        try:
            validate_queue_name_prefix(prefix)
        except QueueNameError as error:
            check.fail(f"{path}.queueNamePrefix", str(error))
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
    return Endpoint(
        name,
        account,
        queue_name,
        dlq_name,
        fifo,
        max_receive,
        platform,
        queue_name_prefix=prefix,
        arn_aware=arn_aware,
        immediate_retries=retries,
        wrap_outgoing_messages=wraps,
        path=path,
    )


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
    problem = dead_letter_kind_problem(
        repr(queue_name), fifo=fifo, dead_letter_fifo=check.boolean(obj, "fifo", path, fifo)
    )
    if problem is not None:
        check.fail(f"{path}.fifo", f"{problem}; set fifo to {str(fifo).lower()}")
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
    for path, obj in check.objects(raw, "topology.endpoints"):
        endpoint = _parse_queue(check, obj, path, account_names, platform=None)
        if endpoint is None:
            check.declared_invalid(
                "endpoint", obj.get("name") if isinstance(obj.get("name"), str) else None
            )
            continue
        if endpoint.name in seen:
            check.fail(f"{path}.name", f"duplicate endpoint name {endpoint.name!r}")
            continue
        seen.add(endpoint.name)
        endpoints.append(endpoint)
    return endpoints


def _parse_platform_queues(
    check: FieldChecker,
    root: Mapping[str, Any],
    account_names: set[str],
    endpoints: list[Endpoint],
) -> list[Endpoint]:
    """ServiceControl's queues, in :class:`PlatformQueueKind`'s order: the error queue (which
    every topology declares) and those of the others it declares. Each needs a name of its own:
    the stacks and the bridge tell queues apart by name."""
    queues: list[Endpoint] = []
    taken = {e.name: "an endpoint" for e in endpoints}
    for kind in PlatformQueueKind:
        raw = root.get(kind.value)
        if raw is None:
            if kind is PlatformQueueKind.ERROR:
                check.fail(kind.path, "is required: name the error queue and its account")
            continue
        obj = check.obj(raw, kind.path)
        queue = (
            None
            if obj is None
            else _parse_queue(check, obj, kind.path, account_names, platform=kind)
        )
        if queue is None:
            continue
        if queue.name in taken:
            check.fail(
                f"{kind.path}.name", f"duplicate name {queue.name!r}: {taken[queue.name]} has it"
            )
            continue
        taken[queue.name] = kind.label
        queues.append(queue)
    return queues


def _parse_routes(
    check: FieldChecker, raw: Any, accounts_of: Mapping[str, str], known_orgs: set[str]
) -> list[Route]:
    endpoint_names = set(accounts_of)
    routes: list[Route] = []
    seen: set[Route] = set()
    for path, obj in check.objects(raw, "topology.routes", _ROUTE_KEYS):
        receiver = check.string(obj, "to", path)
        sender = check.string(obj, "from", path, required=False)
        if receiver is None or check.is_invalid("endpoint", receiver):
            continue
        if check.is_invalid("endpoint", sender):
            continue
        org = check.string(obj, "fromOrganization", path, required=False)
        relay = check.boolean(obj, "relay", path, False)
        replies = check.boolean(obj, "replies", path, True)
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
        if receiver not in endpoint_names:
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
        if relay and sender is not None and accounts_of[sender] == accounts_of[receiver]:
            check.fail(
                f"{path}.relay",
                "both endpoints are in one account; a relay only crosses accounts, drop 'relay'",
            )
            continue
        route = Route(receiver, sender, org, relay, replies, path)
        if Route(receiver, sender, org) in seen:
            check.fail(path, "duplicate route; remove one")
            continue
        seen.add(Route(receiver, sender, org))
        routes.append(route)
    return routes


def _message_driven_routes(
    check: FieldChecker,
    topics: list[Topic],
    routes: list[Route],
    endpoints: Mapping[str, Endpoint],
) -> list[Route]:
    """The route each message-driven subscriber's subscribe message takes to the publisher;
    its way back is the one events take. Between accounts it goes through the bridge unless
    both ends are ARN-aware; a route the topology already declares serves if it has replies."""
    declared = {(r.sender, r.receiver): r for r in routes}
    added: list[Route] = []
    for topic in topics:
        if len(topic.publishers) != 1:
            continue
        publisher = endpoints[topic.publishers[0]]
        for j, name in enumerate(topic.message_driven_subscribers):
            subscriber = endpoints[name]
            path = f"{topic.path}.messageDrivenSubscribers[{j}]"
            known = declared.get((subscriber.name, publisher.name))
            if known is not None:
                if not known.replies:
                    check.fail(
                        path,
                        f"the route {known.path} says {publisher.name} never answers "
                        f"{subscriber.name}, but it sends it every {topic.event_type}; "
                        'remove "replies": false from that route',
                    )
                continue
            crosses = subscriber.account != publisher.account
            route = Route(
                publisher.name,
                subscriber.name,
                relay=crosses and not (subscriber.arn_aware and publisher.arn_aware),
                path=path,
            )
            declared[(subscriber.name, publisher.name)] = route
            added.append(route)
    return added


def load_topology(path: str | Path) -> Topology:
    """Read and validate a topology JSON file (the ``topology`` object itself, or a file with a
    top-level ``topology`` key such as ``cdk.json``'s context)."""
    source = str(path)
    try:
        data = decode_json_document(Path(path).read_bytes(), "the topology")
    except OSError as error:
        raise TopologyError(
            source, [(WHOLE_DOCUMENT, f"cannot be read: {error.strerror}")]
        ) from error
    except JsonDocumentError as error:
        raise TopologyError(source, [(error.where, error.rule)]) from error
    if isinstance(data, Mapping) and "context" in data and isinstance(data["context"], Mapping):
        data = data["context"].get("topology", data)
    if isinstance(data, Mapping) and set(data) == {"topology"}:
        data = data["topology"]
    return parse_topology(data, source)


def _check_reachability(check: FieldChecker, topology: Topology) -> None:
    """What only the whole topology shows: a direct route an endpoint cannot use, an error
    queue no endpoint can reach, and the queues the bridge adds (their names, and clashes with
    every other queue of their account)."""
    for route in topology.routes:
        if route.sender is None or route.relay:
            continue
        sender, receiver = topology.endpoint(route.sender), topology.endpoint(route.receiver)
        if sender.account != receiver.account and topology.large_messages is not None:
            check.fail(
                route.path,
                f"a direct send from {sender.name} leaves a body over 1 MiB in the bucket of "
                f"account {sender.account!r}, and {receiver.name} reads bodies from its own "
                f'account\'s bucket; set "relay": true (the relay copies the body across)',
            )
        elif sender.account != receiver.account and not sender.arn_aware:
            check.fail(
                route.path,
                f"{sender.name} is not ARN-aware: its transport resolves {receiver.name!r} by "
                f"name in account {sender.account!r}, where it finds no such queue. Set "
                '"relay": true to send through the account bridge, or "arnAware": true on the '
                "endpoint if it runs an ARN-aware transport",
            )
    for route in topology.routes:
        _check_fifo(check, topology, route)
    service_control = topology.platform_queue(PlatformQueueKind.SERVICE_CONTROL)
    if service_control is not None and service_control.account != topology.error_queue.account:
        # ServiceControl's primary instance reads its own queue and the error queue with one
        # transport connection, which resolves both by name in one account.
        check.fail(
            f"{PlatformQueueKind.SERVICE_CONTROL.path}.account",
            f"is {service_control.account!r} but the error queue is in "
            f"{topology.error_queue.account!r}: ServiceControl's primary instance reads both "
            "queues through one connection, in one account. Put them in the same account",
        )
    for kind in PlatformQueueKind:
        queue = topology.platform_queue(kind)
        if queue is not None and queue.fifo:
            check.fail(
                f"{kind.path}.fifo",
                f"NServiceBus sends {kind.traffic} without a message group, which a FIFO queue "
                f"refuses: no endpoint could reach {kind.label}. Make it a standard queue",
            )
    bridge = bridge_shadows(topology)
    for known, other in bridge.conflicts:
        fix = (
            "rename one of them"
            if known.remote.is_platform_queue and other.remote.is_platform_queue
            else "give one of the endpoints a queueNamePrefix"
        )
        check.fail(
            other.path,
            f"the bridge needs a shadow queue {other.queue_name!r} in account {other.account!r} "
            f"for {other.reason} (leading to {other.remote.name}) and for {known.reason} "
            f"(leading to {known.remote.name}); {fix}",
        )
    for path, rule in stack_id_clashes(topology):
        check.fail(path, rule)
    queues, problems = stack_queues(topology)
    for path, rule in (*problems, *name_clashes(queues)):
        check.fail(path, rule)


def _check_stack_order(check: FieldChecker, topology: Topology) -> None:
    """Refuse subscriptions across accounts that leave the stacks no deploy order."""
    try:
        stack_order(topology)
    except SubscriptionCycleError as error:
        check.fail("topology.topics", str(error))


def _check_fifo(check: FieldChecker, topology: Topology, route: Route) -> None:
    """NServiceBus's SQS transport sets a message group only on its delay queue's sends
    (``MessageDispatcher``), ARN-aware or not, and SQS refuses any other send to a FIFO queue.
    So an endpoint can send to no FIFO queue, nor be answered on one; FIFO endpoint queues serve
    native producers (``fromOrganization`` routes, FIFO topics)."""
    if route.sender is None:
        return
    receiver, sender = topology.endpoint(route.receiver), topology.endpoint(route.sender)
    if receiver.fifo:
        check.fail(
            route.path,
            f"{sender.name} sends without a message group (NServiceBus's SQS transport sets one "
            f"only for its delay queue), which {receiver.name}'s FIFO queue refuses; make "
            f"{receiver.name} a standard queue, or let native producers send to it "
            "(fromOrganization, a FIFO topic)",
        )
    elif sender.fifo and route.replies:
        check.fail(
            f"{route.path}.replies",
            f"{receiver.name} would answer {sender.name} without a message group, which "
            f'{sender.name}\'s FIFO queue refuses; set "replies": false, or make '
            f"{sender.name} a standard queue",
        )
