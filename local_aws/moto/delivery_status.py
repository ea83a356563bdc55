"""SNS's record of a delivery's outcome: a delivery-status log record, and the ledger.

In AWS a topic logs the deliveries of every protocol it names a feedback role for (its
``<Protocol>SuccessFeedbackRoleArn``, ``<Protocol>SuccessFeedbackSampleRate`` and
``<Protocol>FailureFeedbackRoleArn`` attributes, ``Protocol`` one of ``HTTP``, ``SQS``,
``Lambda``, ``Firehose``, ``Application``; in a template, the ``DeliveryStatusLogging`` list of
``AWS::SNS::Topic``). SNS assumes the role and writes, in the topic's account and region, one
log event per delivery, once its outcome is known (after its last attempt): a sample of the
successes (``SuccessFeedbackSampleRate`` percent) into the log group
``sns/<region>/<account-id>/<TopicName>``, every failure into the same name plus ``/Failure``, in
log streams SNS names with UUIDs, creating a group that does not exist yet. Each event is one
JSON record: ``notification`` (``messageMD5Sum``, ``messageId``, ``topicArn``, ``timestamp``),
``delivery`` (``deliveryId``, ``destination``, ``providerResponse``, ``dwellTimeMs``,
``attempts``, ``statusCode``) and ``status`` (``SUCCESS`` or ``FAILURE``), as AWS documents it
("Amazon SNS message delivery status") and as the delivery report reads it
(``cross_account_runtime.delivery_report``, whose sample generator writes the same shape).

moto writes none of it (nothing in moto writes to its CloudWatch Logs backend,
``moto/logs/models.py``, on SNS's behalf). This module holds what every delivery the local SNS
makes shares, whichever teaching makes it (:mod:`local_aws.moto.sns_delivery_logs` for SQS,
:mod:`local_aws.moto.sns_http_deliveries` for HTTP/S): :func:`log_delivery` writes the record
only through the topic's feedback role for its outcome, which must name a role of the topic's
account whose trust policy lets ``sns.amazonaws.com`` assume it (``sts:AssumeRole``; conditions
on ``aws:SourceAccount`` and ``aws:SourceArn`` are evaluated against the topic, any other
condition counts as unmet). A missing role, or one SNS may not assume, means no record, as in
AWS; the role's own permissions (``logs:CreateLogGroup``, ``logs:CreateLogStream``,
``logs:PutLogEvents``) are not evaluated, like every other policy in the local AWS. Successes
are sampled deterministically: each topic draws from its own generator seeded with
:data:`SAMPLING_SEED` and the topic's name, so a topic logs the same deliveries in every run,
whatever its account or the traffic of other topics.

Every delivery is also counted, logged or not, in a ledger the server process keeps per topic,
subscription and protocol (:func:`count_delivery`), read with ``GET`` :data:`DELIVERIES_PATH`
(:func:`sns_deliveries`): SNS's own record of what it did, the ground truth the delivery
report's counts are checked against, since the logs are what is being tested.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import random
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from moto.core.utils import camelcase_to_underscores
from moto.iam.models import iam_backends
from moto.logs.models import LogsBackend, logs_backends
from moto.moto_api._internal import mock_random
from moto.sns.models import Subscription, Topic
from moto.utilities.arns import parse_arn
from moto.utilities.utils import get_partition

from local_aws.moto.api_routes import add_route

PROTOCOL_PREFIXES: dict[str, str] = {
    "http/s": "HTTP",
    "sqs": "SQS",
    "lambda": "Lambda",
    "firehose": "Firehose",
    "application": "Application",
}
"""A ``DeliveryStatusLogging`` entry's ``Protocol``, and the prefix of its topic attributes."""

FEEDBACK_ATTRIBUTES: tuple[str, ...] = tuple(
    f"{prefix}{suffix}"
    for prefix in PROTOCOL_PREFIXES.values()
    for suffix in ("SuccessFeedbackRoleArn", "SuccessFeedbackSampleRate", "FailureFeedbackRoleArn")
)
"""Every feedback attribute of a topic, as ``GetTopicAttributes`` names them."""

SNS_PRINCIPAL = "sns.amazonaws.com"
FAILURE_SUFFIX = "/Failure"
SAMPLING_SEED = "local-aws-sns-delivery-logs"
"""With a topic's name, the seed of the generator that samples its successes."""

SUCCESS = "SUCCESS"
FAILURE = "FAILURE"

_SAMPLER = "_local_aws_delivery_log_sampler"

_publication: contextvars.ContextVar[tuple[str, int] | None] = contextvars.ContextVar(
    "local_aws_sns_publication", default=None
)
"""``(messageId, epoch ms)`` of the message being delivered: when SNS took it. moto's
``Topic.publish`` delivers a message to its subscriptions one after another in one call, so
the first delivery seen of a message id marks its publication."""

DELIVERIES_PATH = "/moto-api/local-aws/sns/deliveries"
"""``GET``: the ledger of the deliveries this process's SNS made (:func:`ledger_rows`)."""

LEDGER_COUNTS: tuple[str, ...] = (
    "deliveries",
    "attempts",
    "successes",
    "failures",
    "retried",
    "retried_succeeded",
    "http_4xx",
)
"""What the ledger counts per subscription: deliveries, attempts over them, their outcomes,
the deliveries that took more than one attempt and those of them that succeeded, and the
successes whose endpoint answered 4xx (SNS does not retry those, and logs them ``SUCCESS``)."""

_ledger: dict[tuple[str, str, str, str], dict[str, int]] = {}
"""Per ``(topic ARN, subscription ARN, protocol, endpoint)``: the :data:`LEDGER_COUNTS` of
the deliveries SNS made, whatever its logging. It is SNS's own
record of what it did, so the delivery report, which sees only what the logs carried, can be
checked against it."""
_ledger_lock = threading.Lock()

_streams: dict[tuple[str, str, str], str] = {}
"""The log stream SNS writes to, per ``(account, region, log group)``."""
_streams_lock = threading.Lock()
"""moto's server answers requests on threads, and its log streams take no lock of their own."""


@dataclass(frozen=True)
class Outcome:
    """What became of one delivery attempt, as its record tells it."""

    status: str
    status_code: int | None
    """The endpoint's HTTP status; ``None`` when none came (a timeout, a refused connection),
    and SNS's record then has no ``statusCode``."""
    provider_response: str
    attempts: int = 1
    logs_attempts: bool = True
    """Whether the record says ``attempts``: SNS leaves it out of a Lambda delivery accepted
    at the first try (AWS's sample record of one)."""

    @property
    def answered_4xx(self) -> bool:
        """A success whose endpoint answered 4xx: SNS does not retry it and logs ``SUCCESS``."""
        return (
            self.status == SUCCESS
            and self.status_code is not None
            and 400 <= self.status_code < 500
        )


@dataclass(frozen=True)
class FeedbackConfig:
    """A topic's delivery-status logging of one protocol (its three feedback attributes)."""

    success_role_arn: str | None
    failure_role_arn: str | None
    success_sample_rate: float

    def role_for(self, status: str) -> str | None:
        return self.success_role_arn if status == SUCCESS else self.failure_role_arn


def attribute(topic: Topic, name: str) -> Any:
    """A topic attribute as moto stores it: set as ``snake_case`` on the topic by
    ``SNSBackend.create_topic`` and ``SNSBackend.set_topic_attribute``."""
    return getattr(topic, camelcase_to_underscores(name), None)


def logged_protocol(protocol: str) -> str:
    """A subscription protocol as SNS's delivery-status logging names it: ``http`` and
    ``https`` are both ``http/s`` (the delivery report names them so too)."""
    return "http/s" if protocol in ("http", "https") else protocol


def feedback_config(topic: Topic, protocol: str) -> FeedbackConfig | None:
    """The topic's logging of a subscription ``protocol`` (``sqs``, ``https``...), if any.

    An unset or unreadable sample rate logs no success (the stacks always set one).
    """
    prefix = PROTOCOL_PREFIXES.get(logged_protocol(protocol))
    if prefix is None:
        return None
    success = attribute(topic, f"{prefix}SuccessFeedbackRoleArn") or None
    failure = attribute(topic, f"{prefix}FailureFeedbackRoleArn") or None
    if success is None and failure is None:
        return None
    try:
        rate = float(attribute(topic, f"{prefix}SuccessFeedbackSampleRate") or 0)
    except (TypeError, ValueError):
        rate = 0.0
    return FeedbackConfig(success, failure, rate)


def log_group_names(topic_arn: str) -> tuple[str, str]:
    """The success and failure log groups of a topic: ``sns/<region>/<account>/<name>``."""
    arn = parse_arn(topic_arn)
    success = f"sns/{arn.region}/{arn.account}/{arn.resource_id}"
    return success, success + FAILURE_SUFFIX


# The trust policy SNS must pass ------------------------------------------------------------


def sns_may_assume(role_arn: str, topic_arn: str) -> bool:
    """Whether SNS may assume ``role_arn`` to log for ``topic_arn``: the role exists in the
    topic's account and its trust policy allows ``sns.amazonaws.com`` ``sts:AssumeRole`` with
    the topic as the source, and denies it nothing."""
    topic = parse_arn(topic_arn)
    try:
        role = parse_arn(role_arn)
    except (ValueError, IndexError):
        return False
    if role.service != "iam" or role.account != topic.account:
        return False
    iam = iam_backends[topic.account][get_partition(topic.region)]
    found = next((r for r in iam.get_roles() if r.arn == role_arn), None)
    if found is None:
        return False
    document = found.assume_role_policy_document
    try:
        policy = json.loads(document) if isinstance(document, str) else document
    except json.JSONDecodeError:
        return False
    context = {"aws:sourceaccount": topic.account, "aws:sourcearn": topic_arn}
    allowed = False
    for statement in _statements(policy):
        if not (_names_sns(statement) and _allows_assume_role(statement)):
            continue
        if not _conditions_hold(statement.get("Condition", {}), context):
            continue
        if statement.get("Effect") == "Deny":
            return False
        allowed = allowed or statement.get("Effect") == "Allow"
    return allowed


def _statements(policy: Any) -> Iterator[dict[str, Any]]:
    statements = policy.get("Statement", []) if isinstance(policy, dict) else []
    yield from [statements] if isinstance(statements, dict) else statements


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _names_sns(statement: dict[str, Any]) -> bool:
    principal = statement.get("Principal")
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    return SNS_PRINCIPAL in _listed(principal.get("Service", [])) or "*" in _listed(
        principal.get("AWS", [])
    )


def _allows_assume_role(statement: dict[str, Any]) -> bool:
    actions = _listed(statement.get("Action", []))
    return any(_like(str(a), "sts:AssumeRole", case=False) for a in actions)


def _like(pattern: str, value: str, *, case: bool = True) -> bool:
    """IAM's ``*`` and ``?`` wildcards."""
    expression = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(expression, value, 0 if case else re.IGNORECASE) is not None


_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "stringequals": lambda pattern, value: pattern == value,
    "stringequalsignorecase": lambda pattern, value: pattern.lower() == value.lower(),
    "stringlike": _like,
    "arnequals": lambda pattern, value: pattern == value,
    "arnlike": _like,
}
"""The condition operators the local AWS evaluates (and their ``Not`` forms)."""


def _conditions_hold(conditions: dict[str, Any], context: dict[str, str]) -> bool:
    """Every condition of a statement, against the keys SNS sets when it assumes the role."""
    for operator, tests in conditions.items():
        name = operator.lower()
        if_exists = name.endswith("ifexists")
        name = name.removesuffix("ifexists")
        negated = name.startswith(("stringnot", "arnnot"))
        compare = _OPERATORS.get(name.replace("not", "", 1) if negated else name)
        if compare is None:
            return False
        for key, patterns in tests.items():
            value = context.get(key.lower())
            if value is None:
                # IAM: a negated operator holds for a missing key, a positive one only with
                # IfExists.
                if if_exists or negated:
                    continue
                return False
            matched = any(compare(str(p), value) for p in _listed(patterns))
            if matched == negated:
                return False
    return True


# The records and where they go -------------------------------------------------------------


def record_text(
    *,
    message: str,
    message_id: str,
    topic_arn: str,
    published_ms: int,
    destination: str,
    dwell_ms: int,
    outcome: Outcome,
) -> str:
    """One delivery-status record as SNS writes it: compact JSON, keys in SNS's order, no
    ``statusCode`` when no answer came (a timeout, a refused connection)."""
    moment = datetime.fromtimestamp(published_ms / 1000, UTC)
    delivery: dict[str, Any] = {
        "deliveryId": str(mock_random.uuid4()),
        "destination": destination,
        "providerResponse": outcome.provider_response,
        "dwellTimeMs": dwell_ms,
    }
    if outcome.logs_attempts:
        delivery["attempts"] = outcome.attempts
    if outcome.status_code is not None:
        delivery["statusCode"] = outcome.status_code
    record = {
        "notification": {
            "messageMD5Sum": hashlib.md5(message.encode(), usedforsecurity=False).hexdigest(),
            "messageId": message_id,
            "topicArn": topic_arn,
            "timestamp": f"{moment:%Y-%m-%d %H:%M:%S}.{published_ms % 1000:03d}",
        },
        "delivery": delivery,
        "status": outcome.status,
    }
    return json.dumps(record, separators=(",", ":"))


def write_record(topic_arn: str, status: str, text: str, timestamp_ms: int) -> None:
    """Put one record into the topic's success or failure group, in the topic's account and
    region, creating the group (with no retention, as SNS does) and its stream if need be."""
    arn = parse_arn(topic_arn)
    success_group, failure_group = log_group_names(topic_arn)
    group = failure_group if status == FAILURE else success_group
    backend: LogsBackend = logs_backends[arn.account][arn.region]
    with _streams_lock:
        if group not in backend.groups:
            backend.create_log_group(group, tags={})
        key = (arn.account, arn.region, group)
        stream = _streams.get(key)
        if stream is None or stream not in backend.groups[group].streams:
            stream = _streams[key] = str(mock_random.uuid4())
            backend.create_log_stream(group, stream)
        backend.put_log_events(group, stream, [{"timestamp": timestamp_ms, "message": text}])


def _sampled(topic: Topic, rate: float) -> bool:
    """Whether a success is logged at ``rate`` percent, from the topic's own seeded draws
    (drawn only for a rate strictly between 0 and 100)."""
    if rate >= 100:
        return True
    if rate <= 0:
        return False
    sampler = topic.__dict__.get(_SAMPLER)
    if sampler is None:
        sampler = topic.__dict__[_SAMPLER] = random.Random(f"{SAMPLING_SEED}:{topic.name}")
    return cast(float, sampler.random()) * 100 < rate


def published_ms(message_id: str) -> int:
    """When SNS took the message being delivered, in epoch ms (see ``_publication``)."""
    current = _publication.get()
    if current is None or current[0] != message_id:
        current = (message_id, int(time.time() * 1000))
        _publication.set(current)
    return current[1]


def log_delivery(
    subscription: Subscription,
    message: str,
    message_id: str,
    outcome: Outcome,
    published: int,
    *,
    now_ms: int | None = None,
) -> None:
    """Write the delivery's record if its topic logs the protocol, through a role SNS may
    assume, and (for a success) the sample takes it. ``published`` and ``now_ms`` (default:
    the real time) are epoch ms on the clock the delivery ran by: the dwell time is their
    difference, the log event's timestamp ``now_ms``."""
    topic: Topic = subscription.topic
    config = feedback_config(topic, subscription.protocol)
    if config is None:
        return
    role_arn = config.role_for(outcome.status)
    if role_arn is None or not sns_may_assume(role_arn, topic.arn):
        return
    if outcome.status == SUCCESS and not _sampled(topic, config.success_sample_rate):
        return
    if now_ms is None:
        now_ms = int(time.time() * 1000)
    text = record_text(
        message=message,
        message_id=message_id,
        topic_arn=topic.arn,
        published_ms=published,
        destination=subscription.endpoint,
        dwell_ms=max(0, now_ms - published),
        outcome=outcome,
    )
    write_record(topic.arn, outcome.status, text, now_ms)


def count_delivery(subscription: Subscription, outcome: Outcome) -> None:
    """Add one delivery to the ledger, logged or not (sampling and roles do not apply)."""
    topic: Topic = subscription.topic
    key = (topic.arn, subscription.arn, subscription.protocol, subscription.endpoint)
    with _ledger_lock:
        row = _ledger.setdefault(key, dict.fromkeys(LEDGER_COUNTS, 0))
        row["deliveries"] += 1
        row["attempts"] += outcome.attempts
        row["successes" if outcome.status == SUCCESS else "failures"] += 1
        if outcome.attempts > 1:
            row["retried"] += 1
            row["retried_succeeded"] += outcome.status == SUCCESS
        row["http_4xx"] += outcome.answered_4xx


def ledger_rows() -> list[dict[str, Any]]:
    """The ledger as rows sorted by topic, subscription and protocol: ``topic``,
    ``subscription``, ``protocol``, ``destination`` and the :data:`LEDGER_COUNTS`."""
    with _ledger_lock:
        items = sorted(_ledger.items())
    return [
        {"topic": topic, "subscription": arn, "protocol": protocol, "destination": endpoint}
        | counts
        for (topic, arn, protocol, endpoint), counts in items
    ]


def _deliveries_response(
    _request: Any, _full_url: str, _headers: Any
) -> tuple[int, dict[str, str], str]:
    """The ledger route's handler, in moto's ``(status, headers, body)`` form."""
    body = json.dumps({"deliveries": ledger_rows()})
    return 200, {"Content-Type": "application/json"}, body


def sns_deliveries(endpoint_url: str) -> list[dict[str, Any]]:
    """The ledger of the local AWS at ``endpoint_url``: what its SNS delivered, per topic,
    subscription and protocol (:func:`ledger_rows`)."""
    with urllib.request.urlopen(f"{endpoint_url}{DELIVERIES_PATH}", timeout=10) as response:
        rows: list[dict[str, Any]] = json.loads(response.read())["deliveries"]
    return rows


def register() -> None:
    """Add the ledger's route to moto's own API (the ``/moto-api/`` paths). Idempotent."""
    add_route(DELIVERIES_PATH, _deliveries_response)
