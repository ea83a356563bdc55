"""Topics and subscriptions of the topology: who publishes, who subscribes, how.

Each topic lives in one account. SQS subscriptions name an endpoint (its queue may be in
another account: that account's stack creates the subscription); HTTPS subscriptions carry a
delivery policy validated against SNS's limits; Lambda subscriptions name a function of the
topic's account.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from constructs_lib.defaults import SUCCESS_SAMPLE_RATE
from constructs_lib.validation import ORGANIZATION_ID
from cross_account_runtime.delivery_policy.policy import DeliveryPolicyError, HttpDeliveryPolicy
from stacks.topology.field_checker import FieldChecker

TOPIC_NAME = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
LAMBDA_ARN = re.compile(
    r"^arn:aws(-cn|-us-gov)?:lambda:[a-z0-9-]+:(?P<account>\d{12}):function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]+)?$"
)
HTTPS_URL = re.compile(r"^https://[^/\s:@]+(:\d{1,5})?(/\S*)?$")
SUBSCRIPTION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,63}$")
PROTOCOLS = ("sqs", "https", "lambda")
MAX_FILTER_POLICY_BYTES = 256 * 1024


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

    @property
    def topic_name(self) -> str:
        """The SNS topic name (FIFO topics end in ``.fifo``)."""
        return f"{self.name}.fifo" if self.fifo else self.name


_TOPIC_KEYS = (
    "name",
    "account",
    "fifo",
    "publishers",
    "publisherOrganizations",
    "successSampleRate",
    "logAllProtocols",
    "subscriptions",
)
_SUBSCRIPTION_KEYS = {
    "sqs": ("name", "protocol", "endpoint", "rawMessageDelivery", "filterPolicy"),
    "https": ("name", "protocol", "url", "rawMessageDelivery", "filterPolicy", "deliveryPolicy"),
    "lambda": ("name", "protocol", "functionArn", "filterPolicy"),
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
        name = check.string(obj, "name", path)
        account = check.reference(obj, "account", path, account_ids, "account")
        fifo = check.boolean(obj, "fifo", path, False)
        rate = check.integer(
            obj, "successSampleRate", path, default=SUCCESS_SAMPLE_RATE, low=0, high=100
        )
        log_all = check.boolean(obj, "logAllProtocols", path, False)
        if name is not None and not TOPIC_NAME.match(name):
            check.fail(
                f"{path}.name",
                "SNS topic names use 1-256 letters, digits, '-' or '_' (FIFO's '.fifo' is added)",
            )
            name = None
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
        topics.append(Topic(name, account, fifo, publishers, orgs, rate, log_all, tuple(subs)))
    return topics


def _names(
    check: FieldChecker,
    obj: Mapping[str, Any],
    key: str,
    path: str,
    endpoints: Mapping[str, tuple[str, bool]],
) -> tuple[str, ...]:
    names: list[str] = []
    for j, value in enumerate(check.array(obj.get(key, []), f"{path}.{key}")):
        if not isinstance(value, str) or value not in endpoints:
            check.fail(
                f"{path}.{key}[{j}]",
                f"unknown endpoint {value!r}; declared endpoints: {', '.join(sorted(endpoints))}",
            )
        elif value in names:
            check.fail(f"{path}.{key}[{j}]", f"duplicate publisher {value!r}")
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
        base = TopicSubscription(
            name,
            protocol,
            raw_message_delivery=check.boolean(obj, "rawMessageDelivery", path, protocol == "sqs"),
            filter_policy=_filter_policy(check, obj.get("filterPolicy"), f"{path}.filterPolicy"),
        )
        parse = {"sqs": _sqs, "https": _https, "lambda": _lambda}[protocol]
        subscription = parse(scope, obj, path, base)
        if subscription is not None:
            result.append(subscription)
    return result


def _filter_policy(check: FieldChecker, raw: Any, path: str) -> Mapping[str, Any] | None:
    if raw is None:
        return None
    obj = check.obj(raw, path)
    if obj is None:
        return None
    if not obj:
        check.fail(
            path, "an empty filter policy matches nothing useful; remove it or add attributes"
        )
        return None
    for key, value in obj.items():
        if not isinstance(value, list | Mapping):
            check.fail(
                f"{path}.{key}",
                "each attribute takes a list of values or a nested object (SNS filter policy syntax)",
            )
    return dict(obj)


def _sqs(
    scope: _Scope, obj: Mapping[str, Any], path: str, base: TopicSubscription
) -> TopicSubscription | None:
    endpoint = scope.check.string(obj, "endpoint", path)
    if endpoint is None:
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
    if not HTTPS_URL.match(url):
        scope.check.fail(
            f"{path}.url",
            f"{url!r} must be an https:// URL with a host (plain http sends messages in clear)",
        )
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
