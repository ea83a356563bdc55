"""CloudWatch Logs destinations and subscription filters as the delivery-log stacks deploy them.

In AWS a member account's subscription filter on a log group (``AWS::Logs::SubscriptionFilter``)
names a CloudWatch Logs *destination* (``AWS::Logs::Destination``) of another account.
CloudWatch Logs refuses the filter unless the destination's access policy lets the filter's
account ``logs:PutSubscriptionFilter`` on it; once created, every batch of log events the group
receives that the filter pattern matches travels to the destination's target (here a Firehose
stream), as one record: CloudWatch Logs' envelope (``messageType`` ``DATA_MESSAGE``,
``owner``, ``logGroup``, ``logStream``, ``subscriptionFilters``, ``logEvents``), compact JSON,
gzip-compressed ("Subscription filters: Examples", "Cross-account cross-Region subscriptions").

moto does none of it:

- its CloudFormation has no model for either type (``get_model_list`` in
  ``moto/cloudformation/parsing.py`` finds none) and skips them with a warning;
- ``LogsBackend.put_subscription_filter`` in ``moto/logs/models.py`` reads a ``logs`` ARN as a
  log group's, so a filter naming a destination fails with ``ResourceNotFoundException``, and
  it never reads a destination's access policy;
- ``LogStream.put_log_events`` hands every event to every filter whatever its pattern, and
  ``LogStream._send_log_events`` would put them into a log group named like the destination;
  for a Firehose stream of the group's own account it calls ``FirehoseBackend.send_log_event``
  (``moto/firehose/models.py``), which writes the envelope straight into S3, with the stream's
  account as ``owner``.

This teaching adds the two CloudFormation models (on
:class:`~local_aws.moto.resource_model.ResourceModel`), checks a destination's policy when a
filter is put, applies the filter pattern, and delivers the envelope to the destination's
target Firehose stream through ``FirehoseBackend.put_record_batch``, in the destination's
account and region, the log group's account as ``owner``; a direct Firehose target of the
group's own account is delivered the same way. What the stream then writes is Firehose's
business: :mod:`local_aws.moto.firehose_s3` (prefix, buffering, compression) when applied.

Filter patterns: the empty pattern (every event; the stacks' only one), term patterns (every
term, a ``"quoted phrase"`` verbatim, ``-term`` absent, all case-sensitive) and JSON patterns of
``$.field`` comparisons with ``=`` or ``!=`` against a quoted string (``*`` a wildcard) or a
number, joined by ``&&``. Any other pattern is refused when the filter is put
(``InvalidParameterException``), so none is silently read otherwise than AWS reads it.

Not modelled: the destination's role (CloudWatch Logs assumes it to reach the stream; like every
policy here it is not evaluated), Kinesis Data Streams and Lambda targets of a destination, the
``CONTROL_MESSAGE`` CloudWatch Logs sends when a filter is created, conditions in a destination
policy (a statement with any condition admits nobody), and principals narrower than an account
(an IAM role or user ARN admits nobody).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from moto.cloudformation.exceptions import ValidationError
from moto.core.common_models import CloudFormationModel
from moto.core.exceptions import JsonRESTError
from moto.firehose.models import firehose_backends
from moto.logs.exceptions import InvalidParameterException, ResourceNotFoundException
from moto.logs.models import Destination, LogsBackend, LogStream, logs_backends
from moto.utilities.arns import parse_arn

from local_aws.moto.patching import replacing
from local_aws.moto.resource_model import ReplacedOnUpdate, ResourceModel

PUT_SUBSCRIPTION_FILTER = "logs:PutSubscriptionFilter"
DATA_MESSAGE = "DATA_MESSAGE"

_PATCHED = "_local_aws_logs_destinations"


class AccessDeniedError(JsonRESTError):
    """CloudWatch Logs' refusal of a filter whose destination's policy does not admit the
    filter's account (moto's ``moto/logs/exceptions.py`` has no such error)."""

    code = 400

    def __init__(self, message: str) -> None:
        super().__init__("AccessDeniedException", message)


# The CloudFormation models -----------------------------------------------------------------

_HANDLER_ERROR_CODES = {
    "AccessDeniedException": "AccessDenied",
    "ResourceNotFoundException": "NotFound",
    "InvalidParameterException": "InvalidRequest",
    "LimitExceededException": "ServiceLimitExceeded",
}


@contextlib.contextmanager
def _as_stack_failure(resource_type: str, logical_id: str) -> Iterator[None]:
    """A CloudWatch Logs refusal as CloudFormation reports a resource's failure. moto's
    CloudFormation has no failed state and lets a service's error out of ``CreateStack``
    as is, a JSON body its query API's clients cannot read; this is an error they read."""
    try:
        yield
    except JsonRESTError as error:
        code = _HANDLER_ERROR_CODES.get(error.error_type, "GeneralServiceException")
        raise ValidationError(
            message=f"{logical_id} ({resource_type}): Resource handler returned message: "
            f'"{error.message}" (HandlerErrorCode: {code})'
        ) from error


class DestinationResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::Logs::Destination`` created in moto's CloudWatch Logs backend, with its policy.

    As CloudWatch Logs checks at creation that it can reach the target, a target Firehose
    stream must exist in the destination's account and region; other targets are refused as
    not modelled."""

    TYPE = "AWS::Logs::Destination"
    NAME_PROPERTY = "DestinationName"
    ATTRIBUTES = frozenset({"Arn"})

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> DestinationResource:
        with _as_stack_failure(cls.TYPE, resource_name):
            return cls._create(resource_name, cloudformation_json, account_id, region_name)

    @classmethod
    def _create(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> DestinationResource:
        properties = cloudformation_json.get("Properties", {})
        name = cls.resource_name(resource_name, cloudformation_json)
        target_arn = str(properties["TargetArn"])
        target = parse_arn(target_arn)
        if target.service != "firehose":
            raise InvalidParameterException(
                f"Destination {name}: target {target_arn} is not a Firehose stream, the only "
                "target the local AWS models"
            )
        if (
            firehose_backends[target.account][target.region].lookup_name_from_arn(target_arn)
            is None
        ):
            raise InvalidParameterException(
                f"Destination {name}: could not deliver a test message to Firehose stream "
                f"{target_arn}; check that it exists and is ACTIVE"
            )
        backend: LogsBackend = logs_backends[account_id][region_name]
        destination = backend.put_destination(name, str(properties["RoleArn"]), target_arn, tags={})
        policy = properties.get("DestinationPolicy")
        if policy:
            backend.put_destination_policy(name, str(policy))
        return cls(name, {"Arn": destination.arn})

    def delete(self, account_id: str, region_name: str) -> None:
        logs_backends[account_id][region_name].delete_destination(self.physical_resource_id)

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        name = cls.resource_name(resource_name, cloudformation_json)
        logs_backends[account_id][region_name].delete_destination(name)


class SubscriptionFilterResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::Logs::SubscriptionFilter`` put through ``LogsBackend.put_subscription_filter``
    (and so through this teaching's destination check). Unnamed, it gets the name
    CloudFormation generates; ``Ref`` gives the name."""

    TYPE = "AWS::Logs::SubscriptionFilter"
    NAME_PROPERTY = "FilterName"
    ATTRIBUTES: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, physical_id: str, log_group_name: str) -> None:
        super().__init__(physical_id, {})
        self.log_group_name = log_group_name

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> SubscriptionFilterResource:
        properties = cloudformation_json.get("Properties", {})
        name = cls.resource_name(resource_name, cloudformation_json)
        group = str(properties["LogGroupName"])
        with _as_stack_failure(cls.TYPE, resource_name):
            logs_backends[account_id][region_name].put_subscription_filter(
                group,
                name,
                str(properties.get("FilterPattern", "")),
                str(properties["DestinationArn"]),
                str(properties.get("RoleArn", "")),
            )
        return cls(name, group)

    def delete(self, account_id: str, region_name: str) -> None:
        logs_backends[account_id][region_name].delete_subscription_filter(
            self.log_group_name, self.physical_resource_id
        )

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        properties = cloudformation_json.get("Properties", {})
        logs_backends[account_id][region_name].delete_subscription_filter(
            str(properties["LogGroupName"]), cls.resource_name(resource_name, cloudformation_json)
        )


# Destination policies ----------------------------------------------------------------------


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _like(pattern: str, value: str, *, case: bool = True) -> bool:
    """IAM's ``*`` and ``?`` wildcards."""
    expression = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(expression, value, 0 if case else re.IGNORECASE) is not None


def _names_account(principal: Any, account: str) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    return any(
        str(p) in ("*", account, f"arn:aws:iam::{account}:root")
        for p in _listed(principal.get("AWS", []))
    )


def _statements(policy: Any) -> Iterator[dict[str, Any]]:
    statements = policy.get("Statement", []) if isinstance(policy, dict) else []
    yield from [statements] if isinstance(statements, dict) else statements


def admits(destination: Destination, account: str) -> bool:
    """Whether ``account`` may put a subscription filter on ``destination``: its own account
    always may (IAM decides there); another only if the access policy allows it
    ``logs:PutSubscriptionFilter`` on the destination, without condition, and denies it
    nothing."""
    if parse_arn(destination.arn).account == account:
        return True
    try:
        policy = json.loads(destination.access_policy or "{}")
    except json.JSONDecodeError:
        return False
    allowed = False
    for statement in _statements(policy):
        if not _names_account(statement.get("Principal"), account):
            continue
        if not any(
            _like(str(a), PUT_SUBSCRIPTION_FILTER, case=False)
            for a in _listed(statement.get("Action", []))
        ):
            continue
        if not any(_like(str(r), destination.arn) for r in _listed(statement.get("Resource", "*"))):
            continue
        if statement.get("Effect") == "Deny":
            return False
        if statement.get("Effect") == "Allow" and not statement.get("Condition"):
            allowed = True
    return allowed


def find_destination(arn: str) -> Destination | None:
    """The destination an ARN names, in the account and region it names."""
    parsed = parse_arn(arn)
    backend: LogsBackend = logs_backends[parsed.account][parsed.region]
    return backend.destinations.get(arn) or next(
        (d for d in backend.destinations.values() if d.destination_name == parsed.resource_id),
        None,
    )


def _is_destination(arn: str) -> bool:
    try:
        parsed = parse_arn(arn)
    except ValueError:
        return False
    return bool(parsed.service == "logs" and parsed.resource_type == "destination")


# Filter patterns ---------------------------------------------------------------------------

_JSON_TEST = re.compile(
    r"""\s*\$\.(?P<path>[A-Za-z0-9_.\-]+)\s*(?P<op>!=|=)\s*"""
    r"""(?:"(?P<text>[^"]*)"|(?P<number>-?\d+(?:\.\d+)?))\s*"""
)
_TERM = re.compile(r'\s*(?P<negated>-?)(?:"(?P<phrase>[^"]*)"|(?P<word>[^\s"]+))')


def matcher(pattern: str) -> Callable[[str], bool]:
    """What a filter pattern selects, as CloudWatch Logs reads it (the forms this module's
    docstring lists); ``InvalidParameterException`` for any other form."""
    text = pattern.strip()
    if not text:
        return lambda _message: True
    if text.startswith("{") and text.endswith("}"):
        return _json_matcher(pattern, text[1:-1])
    return _term_matcher(pattern, text)


def _refused(pattern: str) -> InvalidParameterException:
    return InvalidParameterException(
        f"Invalid filter pattern {pattern!r} (the local AWS reads the empty pattern, terms and "
        "JSON $.field = / != comparisons joined by &&)"
    )


def _json_matcher(pattern: str, body: str) -> Callable[[str], bool]:
    tests: list[tuple[list[str], str, str | float]] = []
    for part in body.split("&&"):
        found = _JSON_TEST.fullmatch(part)
        if found is None:
            raise _refused(pattern)
        number = found["number"]
        expected: str | float = float(number) if number is not None else found["text"]
        tests.append((found["path"].split("."), found["op"], expected))

    def matches(message: str) -> bool:
        try:
            document: Any = json.loads(message)
        except json.JSONDecodeError:
            return False
        for path, op, expected in tests:
            value = document
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(expected, float):
                equal = isinstance(value, int | float) and float(value) == expected
            else:
                # CloudWatch Logs' only wildcard in a string value is ``*``.
                equal = (
                    isinstance(value, str)
                    and re.fullmatch(
                        ".*".join(re.escape(part) for part in expected.split("*")), value
                    )
                    is not None
                )
            if value is None or equal != (op == "="):
                return False
        return True

    return matches


def _term_matcher(pattern: str, text: str) -> Callable[[str], bool]:
    terms: list[tuple[bool, str]] = []
    position = 0
    while position < len(text):
        found = _TERM.match(text, position)
        if found is None or found.end() == position:
            raise _refused(pattern)
        term = found["phrase"] if found["phrase"] is not None else found["word"]
        if not term or (found["word"] is not None and any(c in term for c in "{}[]?")):
            raise _refused(pattern)
        terms.append((bool(found["negated"]), term))
        position = found.end()
    return lambda message: all((term in message) != negated for negated, term in terms)


# Delivery ----------------------------------------------------------------------------------


def envelope(
    owner: str, group: str, stream: str, filter_name: str, events: list[dict[str, Any]]
) -> bytes:
    """The record CloudWatch Logs gives a subscription's target: its envelope, compact JSON in
    its key order, gzip-compressed."""
    document = {
        "messageType": DATA_MESSAGE,
        "owner": owner,
        "logGroup": group,
        "logStream": stream,
        "subscriptionFilters": [filter_name],
        "logEvents": [
            {"id": str(e["id"]), "timestamp": e["timestamp"], "message": e["message"]}
            for e in events
        ],
    }
    return gzip.compress(json.dumps(document, separators=(",", ":")).encode())


def put_into_stream(stream_arn: str, data: bytes) -> None:
    """One record into a Firehose stream, in the account and region its ARN names, through
    ``FirehoseBackend.put_record_batch`` (what ``PutRecordBatch`` calls). A stream gone since
    the filter was put receives nothing, as CloudWatch Logs' delivery then fails silently."""
    parsed = parse_arn(stream_arn)
    backend = firehose_backends[parsed.account][parsed.region]
    stream = backend.lookup_name_from_arn(stream_arn)
    if stream is not None:
        backend.put_record_batch(stream.delivery_stream_name, [{"Data": data}])


def deliver(
    log_stream: LogStream, destination_arn: str, filter_name: str, events: list[dict[str, Any]]
) -> None:
    """Send a batch of a log stream's events to a destination's target, if the destination
    still exists and still admits the stream's account."""
    destination = find_destination(destination_arn)
    if destination is None or not admits(destination, log_stream.account_id):
        return
    data = envelope(
        log_stream.account_id,
        log_stream.log_group.name,
        log_stream.log_stream_name,
        filter_name,
        events,
    )
    put_into_stream(destination.target_arn, data)


# What register patches ---------------------------------------------------------------------


def _patch_put_subscription_filter() -> None:
    original = LogsBackend.put_subscription_filter

    @replacing(LogsBackend, "put_subscription_filter", _PATCHED)
    def put_subscription_filter(  # noqa: PLR0917 (moto's signature)
        self: LogsBackend,
        log_group_name: str,
        filter_name: str,
        filter_pattern: str,
        destination_arn: str,
        role_arn: str,
    ) -> None:
        matcher(filter_pattern)
        if not _is_destination(destination_arn):
            original(self, log_group_name, filter_name, filter_pattern, destination_arn, role_arn)
            return
        log_group = self.groups.get(log_group_name)
        if log_group is None:
            raise ResourceNotFoundException("The specified log group does not exist.")
        destination = find_destination(destination_arn)
        if destination is None:
            raise ResourceNotFoundException("The specified destination does not exist.")
        if not admits(destination, self.account_id):
            raise AccessDeniedError(
                f"User with accountId: {self.account_id} is not authorized to perform: "
                f"{PUT_SUBSCRIPTION_FILTER} on resource: {destination_arn}"
            )
        log_group.put_subscription_filter(filter_name, filter_pattern, destination_arn, role_arn)


def _patch_send_log_events() -> None:
    original = LogStream._send_log_events

    @replacing(LogStream, "_send_log_events", _PATCHED)
    def _send_log_events(
        self: LogStream,
        service: str,
        destination_arn: str,
        filter_name: str,
        log_events: list[dict[str, Any]],
    ) -> None:
        subscription = self.log_group.subscription_filters.get(filter_name)
        pattern = subscription.filter_pattern if subscription is not None else ""
        selects = matcher(pattern)
        events = [e for e in log_events if selects(str(e["message"]))]
        if not events:
            return
        if _is_destination(destination_arn):
            deliver(self, destination_arn, filter_name, events)
        elif service == "firehose":
            data = envelope(
                self.account_id, self.log_group.name, self.log_stream_name, filter_name, events
            )
            put_into_stream(destination_arn, data)
        else:
            original(self, service, destination_arn, filter_name, events)


def register() -> None:
    """Check destinations' policies when a filter is put (``LogsBackend.put_subscription_filter``)
    and deliver filtered batches to destinations and Firehose streams through
    ``FirehoseBackend.put_record_batch`` (``LogStream._send_log_events``); both in
    ``moto/logs/models.py``. The CloudFormation models register themselves on import.
    Idempotent."""
    _patch_put_subscription_filter()
    _patch_send_log_events()
