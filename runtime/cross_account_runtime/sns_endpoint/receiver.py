"""A Lambda handler that receives SNS HTTP(S) deliveries safely.

Put it behind a Lambda function URL or an API Gateway REST (v1 proxy) or HTTP API and
subscribe that URL to the topics named in ``SNS_ENDPOINT_ALLOWED_TOPIC_ARNS``. Each POST is:

1. bounded (:data:`MAX_BODY_BYTES`) and parsed as a JSON object without duplicate keys;
2. matched against the ``x-amz-sns-message-type`` header (and ``x-amz-sns-topic-arn`` if sent);
3. refused unless its ``TopicArn`` is on the allow-list and its ``Timestamp`` is within the
   replay window;
4. verified with :func:`cross_account_runtime.sns_endpoint.signature.verify` (certificate URL rules, signature);
5. handled by type: a ``SubscriptionConfirmation`` is confirmed by fetching its
   ``SubscribeURL`` (https on an SNS host only), an ``UnsubscribeConfirmation`` is
   acknowledged, a ``Notification`` is claimed in DynamoDB by ``MessageId`` and passed to the
   configured handler once.

The answer drives SNS: 2xx when done, 4xx for what no retry can fix (SNS counts 200-4xx as
delivered and stops), 5xx only when a retry can succeed (SNS retries by its delivery policy).
Delivery is at-least-once, so the claim in DynamoDB makes a retry of a processed message a
no-op; a claim whose handler failed is released so the retry is processed: a message is never
dropped because of the deduplication.

Configuration comes from the environment (see :class:`EndpointConfig`); ``boto3`` and
``cryptography`` are imported on first use, and the DynamoDB client is created once per
container.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import json
import os
import re
import time
import traceback
from dataclasses import dataclass, field

from cross_account_runtime.common.json_log import JsonLogger
from cross_account_runtime.sns_endpoint import signature as sns_signature
from cross_account_runtime.sns_endpoint.signature import (
    NOTIFICATION,
    SUBSCRIPTION_CONFIRMATION,
    CertificateCache,
    CertificateFetchError,
    FetchError,
    MessageFormatError,
    SignatureError,
    text_field,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final

    NotificationHandler = Callable[["Notification"], object]
    SubscriptionConfirmer = Callable[[str], None]

ENV_ALLOWED_TOPIC_ARNS: Final = "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS"
ENV_DEDUPE_TABLE: Final = "SNS_ENDPOINT_DEDUPE_TABLE"
ENV_HANDLER: Final = "SNS_ENDPOINT_HANDLER"
ENV_REPLAY_WINDOW_SECONDS: Final = "SNS_ENDPOINT_REPLAY_WINDOW_SECONDS"
ENV_LEASE_SECONDS: Final = "SNS_ENDPOINT_LEASE_SECONDS"
ENV_SERVICE_NAME: Final = "POWERTOOLS_SERVICE_NAME"

MESSAGE_TYPE_HEADER: Final = "x-amz-sns-message-type"
TOPIC_ARN_HEADER: Final = "x-amz-sns-topic-arn"

# SNS messages are at most 256 KiB. In the JSON envelope the Message is a JSON string, where a
# control character takes 6 bytes (\u001f); with 64 KiB for the other fields and the message
# attributes, no genuine delivery exceeds this. Lambda function URLs accept 6 MB.
MAX_SNS_MESSAGE_BYTES: Final = 256 * 1024
MAX_BODY_BYTES: Final = 6 * MAX_SNS_MESSAGE_BYTES + 64 * 1024

# The longest retry schedule a delivery policy allows is 3,600 s, and a retry carries the
# original Timestamp; 300 s more absorb clock skew and SNS's queueing.
DEFAULT_REPLAY_WINDOW_SECONDS: Final = 3_900.0
# How far in the future a Timestamp may be: the clock skew tolerated between SNS and Lambda.
MAX_CLOCK_SKEW_SECONDS: Final = 300.0
# SNS abandons a request after 15 s; a claim this old belongs to a delivery SNS already counts
# as failed, so a retry may take it over. Short enough for a crashed attempt not to block the
# default retries (20 s apart).
DEFAULT_LEASE_SECONDS: Final = 30.0
# Connecting to SNS to confirm a subscription, within SNS's 15 s answer deadline.
CONFIRMATION_TIMEOUT_SECONDS: Final = 5.0
MAX_CONFIRMATION_RESPONSE_BYTES: Final = 64 * 1024

_TOPIC_ARN: Final = re.compile(
    r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(?:\.fifo)?"
)
_TABLE_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_DEFAULT_SERVICE: Final = "sns-https-endpoint"


class ConfigurationError(ValueError):
    """The endpoint's configuration is unusable; the message names the setting and the fix."""


@dataclass(frozen=True)
class EndpointConfig:
    """What the endpoint accepts and where it records deliveries.

    - ``allowed_topic_arns`` (``SNS_ENDPOINT_ALLOWED_TOPIC_ARNS``, required): exact topic ARNs,
      separated by commas or whitespace; messages from other topics are refused (403) and their
      subscriptions never confirmed.
    - ``dedupe_table`` (``SNS_ENDPOINT_DEDUPE_TABLE``, required): the DynamoDB table holding one
      item per ``MessageId`` (string partition key ``MessageId``, TTL attribute ``ExpiresAt``).
    - ``handler_path`` (``SNS_ENDPOINT_HANDLER``): ``"package.module:function"``, called with a
      :class:`Notification`; required when building from the environment.
    - ``replay_window_seconds`` (``SNS_ENDPOINT_REPLAY_WINDOW_SECONDS``, default 3900): how old
      a ``Timestamp`` may be. Keep it above the delivery policy's retry span, or retries of a
      genuine message are refused.
    - ``lease_seconds`` (``SNS_ENDPOINT_LEASE_SECONDS``, default 30): how long a claim blocks
      other deliveries of the same message while its handler runs.
    """

    allowed_topic_arns: frozenset[str]
    dedupe_table: str
    handler_path: str | None = None
    replay_window_seconds: float = DEFAULT_REPLAY_WINDOW_SECONDS
    lease_seconds: float = DEFAULT_LEASE_SECONDS

    def __post_init__(self) -> None:
        if not self.allowed_topic_arns:
            raise ConfigurationError(
                f"allowed_topic_arns ({ENV_ALLOWED_TOPIC_ARNS}) is empty; list the ARNs of the "
                "topics this endpoint subscribes to, separated by commas"
            )
        for arn in sorted(self.allowed_topic_arns):
            if not _TOPIC_ARN.fullmatch(arn):
                raise ConfigurationError(
                    f"allowed_topic_arns ({ENV_ALLOWED_TOPIC_ARNS}): {arn!r} is not an SNS topic "
                    "ARN; write arn:<partition>:sns:<region>:<account id>:<topic name> "
                    "(no wildcards)"
                )
        if not _TABLE_NAME.fullmatch(self.dedupe_table):
            raise ConfigurationError(
                f"dedupe_table ({ENV_DEDUPE_TABLE}): {self.dedupe_table!r} is not a DynamoDB table "
                "name; use 3-255 letters, digits, '_', '-' or '.'"
            )
        for name, env, value in (
            ("replay_window_seconds", ENV_REPLAY_WINDOW_SECONDS, self.replay_window_seconds),
            ("lease_seconds", ENV_LEASE_SECONDS, self.lease_seconds),
        ):
            if not 0 < value < float("inf"):
                raise ConfigurationError(
                    f"{name} ({env}) must be a positive, finite number of seconds, got {value!r}"
                )

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> EndpointConfig:
        """Read the settings from ``environ`` (``os.environ`` in Lambda)."""
        topics = environ.get(ENV_ALLOWED_TOPIC_ARNS, "")
        table = environ.get(ENV_DEDUPE_TABLE, "").strip()
        if not table:
            raise ConfigurationError(
                f"{ENV_DEDUPE_TABLE} is not set; set it to the name of the DynamoDB table that "
                "deduplicates deliveries (partition key MessageId, a string)"
            )
        return cls(
            allowed_topic_arns=frozenset(arn for arn in re.split(r"[\s,]+", topics) if arn),
            dedupe_table=table,
            handler_path=environ.get(ENV_HANDLER, "").strip() or None,
            replay_window_seconds=_seconds(
                environ, ENV_REPLAY_WINDOW_SECONDS, DEFAULT_REPLAY_WINDOW_SECONDS
            ),
            lease_seconds=_seconds(environ, ENV_LEASE_SECONDS, DEFAULT_LEASE_SECONDS),
        )


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    """The number of seconds in ``environ[name]``, or ``default`` when unset."""
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ConfigurationError(
            f"{name} must be a number of seconds, got {text!r}; unset it for {default:g}"
        ) from None


def load_handler(path: str) -> NotificationHandler:
    """Import ``"package.module:function"`` (the function may be ``Class.method``)."""
    module_name, separator, attribute = path.partition(":")
    if not separator or not module_name or not attribute:
        raise ConfigurationError(
            f"{ENV_HANDLER}: {path!r} is not 'package.module:function'; name the module, a "
            "colon, then the function to call with each notification"
        )
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigurationError(
            f"{ENV_HANDLER}: cannot import module {module_name!r} ({error}); check the name and "
            "that the module is in the deployment package"
        ) from error
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigurationError(
                f"{ENV_HANDLER}: module {module_name!r} has no {attribute!r}; check the name "
                "after the colon"
            ) from None
    if not callable(target):
        raise ConfigurationError(f"{ENV_HANDLER}: {path!r} is not callable")
    handler: NotificationHandler = target
    return handler


@dataclass(frozen=True)
class Notification:
    """A verified SNS notification, as given to the configured handler.

    ``envelope`` is the whole JSON body SNS posted (``MessageAttributes`` included).
    """

    message_id: str
    topic_arn: str
    message: str
    timestamp: str
    subject: str | None
    envelope: Mapping[str, object] = field(repr=False)

    @property
    def message_attributes(self) -> Mapping[str, object]:
        """The ``MessageAttributes`` object (name to ``{"Type", "Value"}``), empty if none."""
        attributes = self.envelope.get("MessageAttributes")
        return attributes if isinstance(attributes, dict) else {}


class DedupeUnavailableError(RuntimeError):
    """DynamoDB could not be asked; the delivery must be retried later."""


CLAIMED: Final = "claimed"
DONE: Final = "done"
IN_PROGRESS: Final = "in_progress"


@dataclass(frozen=True)
class Claim:
    """The outcome of claiming a message id: ``CLAIMED`` (this delivery owns it, with
    ``token``), ``DONE`` (processed before) or ``IN_PROGRESS`` (another delivery holds it)."""

    message_id: str
    state: str
    token: str = ""


class DynamoDbDedupe:
    """One item per ``MessageId``: claimed ``IN_PROGRESS`` before the handler runs, ``DONE``
    after it returned, deleted when it raised.

    A claim has a lease (``LeaseExpiresAt``): if the process dies while holding it, a later
    delivery takes the message over once the lease has run out, so a crash can cause a second
    processing but never a lost message. Items expire through the table's TTL on ``ExpiresAt``.
    The client is created on first use (``boto3.client("dynamodb")``, with the region and
    endpoint from the environment) and reused for the life of the container.
    """

    def __init__(self, table_name: str, *, client: Any = None) -> None:
        self.table_name = table_name
        self._client = client

    @property
    def client(self) -> Any:
        """The DynamoDB client, created once."""
        if self._client is None:
            import boto3  # noqa: PLC0415 (lazy, for cold starts)
            from botocore.config import Config  # noqa: PLC0415 (lazy, for cold starts)

            # Fail fast enough to answer SNS within its 15 s, so that it retries.
            config = Config(
                connect_timeout=2, read_timeout=5, retries={"mode": "standard", "max_attempts": 3}
            )
            self._client = boto3.client("dynamodb", config=config)
        return self._client

    def claim(
        self,
        message_id: str,
        topic_arn: str,
        *,
        now: float,
        lease_seconds: float,
        keep_until: float,
    ) -> Claim:
        """Claim ``message_id`` for this delivery unless it is done or validly held."""
        token = os.urandom(16).hex()
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item={
                    "MessageId": {"S": message_id},
                    "TopicArn": {"S": topic_arn},
                    "State": {"S": "IN_PROGRESS"},
                    "ClaimToken": {"S": token},
                    "LeaseExpiresAt": {"N": _number(now + lease_seconds)},
                    "ExpiresAt": {"N": str(int(keep_until) + 1)},
                },
                ConditionExpression=(
                    "attribute_not_exists(#id) OR (#state = :in_progress AND #lease < :now)"
                ),
                ExpressionAttributeNames={
                    "#id": "MessageId",
                    "#state": "State",
                    "#lease": "LeaseExpiresAt",
                },
                ExpressionAttributeValues={
                    ":in_progress": {"S": "IN_PROGRESS"},
                    ":now": {"N": _number(now)},
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except _aws_errors() as error:
            existing = _condition_failure_item(error)
            if existing is None:
                raise DedupeUnavailableError(f"claiming {message_id}: {error}") from error
            state = DONE if existing.get("State", {}).get("S") == "DONE" else IN_PROGRESS
            return Claim(message_id, state)
        return Claim(message_id, CLAIMED, token)

    def complete(self, claim: Claim) -> None:
        """Mark the claimed message ``DONE`` (if the claim is still this delivery's)."""
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key={"MessageId": {"S": claim.message_id}},
                UpdateExpression="SET #state = :done REMOVE #lease",
                ConditionExpression="#token = :token",
                ExpressionAttributeNames={
                    "#state": "State",
                    "#lease": "LeaseExpiresAt",
                    "#token": "ClaimToken",
                },
                ExpressionAttributeValues={":done": {"S": "DONE"}, ":token": {"S": claim.token}},
            )
        except _aws_errors() as error:
            raise DedupeUnavailableError(f"completing {claim.message_id}: {error}") from error

    def release(self, claim: Claim) -> None:
        """Delete the claim so that the next delivery of the message processes it."""
        try:
            self.client.delete_item(
                TableName=self.table_name,
                Key={"MessageId": {"S": claim.message_id}},
                ConditionExpression="#token = :token",
                ExpressionAttributeNames={"#token": "ClaimToken"},
                ExpressionAttributeValues={":token": {"S": claim.token}},
            )
        except _aws_errors() as error:
            raise DedupeUnavailableError(f"releasing {claim.message_id}: {error}") from error


def _aws_errors() -> tuple[type[Exception], ...]:
    """botocore's exceptions, imported only once one was raised (an ``except`` clause is
    evaluated only then)."""
    from botocore.exceptions import (  # noqa: PLC0415 (lazy, for cold starts)
        BotoCoreError,
        ClientError,
    )

    return (BotoCoreError, ClientError)


def _number(value: float) -> str:
    """A DynamoDB number with millisecond precision."""
    return f"{value:.3f}"


def _condition_failure_item(error: Exception) -> dict[str, Any] | None:
    """The existing item if ``error`` is DynamoDB's failed condition, else ``None``."""
    response = getattr(error, "response", None) or {}
    if response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
        return None
    item: dict[str, Any] = response.get("Item") or {}
    return item


def confirm_subscription_over_https(url: str) -> None:
    """The default confirmer: GET the ``SubscribeURL`` (already checked to be SNS's)."""
    sns_signature.https_get(
        url, timeout=CONFIRMATION_TIMEOUT_SECONDS, max_bytes=MAX_CONFIRMATION_RESPONSE_BYTES
    )


@dataclass(frozen=True)
class Outcome:
    """What the endpoint answers and logs: HTTP ``status``, a one-word ``outcome`` for metrics,
    and a ``reason`` for people."""

    status: int
    outcome: str
    reason: str

    def response(self) -> dict[str, object]:
        """The Lambda proxy response (function URL and API Gateway read the same shape)."""
        return {
            "statusCode": self.status,
            "headers": {"content-type": "application/json"},
            "body": json.dumps({"outcome": self.outcome, "reason": self.reason}),
        }


class _EarlyAnswerError(Exception):
    """Ends a request early with ``outcome``: every answer but success leaves this way, so
    each check is one ``raise`` instead of a chain of returned results."""

    def __init__(self, status: int, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome = Outcome(status, outcome, reason)


class SnsHttpsEndpoint:
    """The request handler: call it with a Lambda proxy event and context.

    Everything with side effects is injectable: ``process`` (the notification handler),
    ``dedupe``, ``fetch_certificate``, ``confirm_subscription``, ``certificate_cache``,
    ``clock`` (epoch seconds) and ``logger``.
    """

    def __init__(
        self,
        config: EndpointConfig,
        process: NotificationHandler,
        *,
        dedupe: DynamoDbDedupe | None = None,
        fetch_certificate: Callable[[str], bytes] = sns_signature.download_certificate,
        confirm_subscription: SubscriptionConfirmer = confirm_subscription_over_https,
        certificate_cache: CertificateCache | None = None,
        clock: Callable[[], float] = time.time,
        logger: JsonLogger | None = None,
    ) -> None:
        self.config = config
        self.process = process
        self.dedupe = dedupe if dedupe is not None else DynamoDbDedupe(config.dedupe_table)
        self.fetch_certificate = fetch_certificate
        self.confirm_subscription = confirm_subscription
        self.certificate_cache = (
            certificate_cache if certificate_cache is not None else sns_signature.DEFAULT_CACHE
        )
        self.clock = clock
        self.logger = logger if logger is not None else default_logger()
        self._cold = True

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], **dependencies: Any) -> SnsHttpsEndpoint:
        """Build from ``environ`` (see :class:`EndpointConfig`) and import the handler named by
        ``SNS_ENDPOINT_HANDLER``; ``dependencies`` are passed to the constructor."""
        config = EndpointConfig.from_environment(environ)
        if config.handler_path is None:
            raise ConfigurationError(
                f"{ENV_HANDLER} is not set; set it to 'package.module:function', the function "
                "to call with each notification"
            )
        return cls(config, load_handler(config.handler_path), **dependencies)

    def __call__(self, event: Mapping[str, Any], context: Any = None) -> dict[str, object]:
        """Handle one delivery and return the proxy response; never raises."""
        facts: dict[str, object] = {}
        try:
            outcome = self._handle(event, context, facts)
        except _EarlyAnswerError as early:
            outcome = early.outcome
        except Exception as error:
            self._log_exception("unexpected error", error, facts)
            outcome = Outcome(500, "error", "internal error; the delivery will be retried")
        self._log(outcome, facts, context)
        return outcome.response()

    def _handle(self, event: Mapping[str, Any], context: Any, facts: dict[str, object]) -> Outcome:
        method = _method(event)
        if method != "POST":
            raise _EarlyAnswerError(
                405, "rejected", f"method {method} not allowed; SNS delivers with POST"
            )
        headers = _headers(event)
        message = _parse_body(event)
        try:
            message_type = text_field(message, "Type")
            facts.update(
                message_type=message_type,
                message_id=message.get("MessageId"),
                topic_arn=message.get("TopicArn"),
            )
            header_type = headers.get(MESSAGE_TYPE_HEADER)
            if header_type is None:
                raise _EarlyAnswerError(
                    400, "rejected", f"header {MESSAGE_TYPE_HEADER} is missing; SNS always sends it"
                )
            if header_type != message_type:
                raise _EarlyAnswerError(
                    400,
                    "rejected",
                    f"header {MESSAGE_TYPE_HEADER} is {header_type!r} but the body's Type is "
                    f"{message_type!r}",
                )
            topic_arn = text_field(message, "TopicArn")
            header_topic = headers.get(TOPIC_ARN_HEADER)
            if header_topic is not None and header_topic != topic_arn:
                raise _EarlyAnswerError(
                    400,
                    "rejected",
                    f"header {TOPIC_ARN_HEADER} is {header_topic!r} but the body's TopicArn is "
                    f"{topic_arn!r}",
                )
            if topic_arn not in self.config.allowed_topic_arns:
                raise _EarlyAnswerError(
                    403,
                    "rejected",
                    f"TopicArn: {topic_arn!r} is not on the allow-list ({ENV_ALLOWED_TOPIC_ARNS})",
                )
            self._check_timestamp(text_field(message, "Timestamp"))
            sns_signature.verify(
                message, fetch_certificate=self.fetch_certificate, cache=self.certificate_cache
            )
        except MessageFormatError as error:
            raise _EarlyAnswerError(400, "rejected", str(error)) from error
        except CertificateFetchError as error:
            if error.retryable:
                raise _EarlyAnswerError(503, "retry", str(error)) from error
            raise _EarlyAnswerError(403, "rejected", str(error)) from error
        except SignatureError as error:
            raise _EarlyAnswerError(403, "rejected", str(error)) from error
        if message_type == NOTIFICATION:
            return self._notification(message, topic_arn, context, facts)
        if message_type == SUBSCRIPTION_CONFIRMATION:
            return self._confirm(message)
        return Outcome(200, "unsubscribed", "unsubscribe confirmation acknowledged")

    def _check_timestamp(self, text: str) -> None:
        """Refuse a ``Timestamp`` outside the replay window (or unreadable)."""
        from datetime import datetime  # noqa: PLC0415 (lazy, for cold starts)

        try:
            timestamp = datetime.fromisoformat(text)
        except ValueError:
            timestamp = None
        if timestamp is None or timestamp.tzinfo is None:
            raise MessageFormatError(
                "Timestamp", f"{text!r} is not an ISO 8601 time with a zone (SNS sends UTC, 'Z')"
            )
        age = self.clock() - timestamp.timestamp()
        if age > self.config.replay_window_seconds:
            raise SignatureError(
                "Timestamp",
                f"{text} is {age:.0f} s old, beyond the replay window of "
                f"{self.config.replay_window_seconds:g} s ({ENV_REPLAY_WINDOW_SECONDS})",
            )
        if -age > MAX_CLOCK_SKEW_SECONDS:
            raise SignatureError(
                "Timestamp",
                f"{text} is {-age:.0f} s in the future, beyond the {MAX_CLOCK_SKEW_SECONDS:g} s "
                "of clock skew tolerated",
            )

    def _confirm(self, message: Mapping[str, object]) -> Outcome:
        """Confirm a subscription to an allowed topic by fetching its ``SubscribeURL``."""
        url = text_field(message, "SubscribeURL")
        try:
            sns_signature.check_sns_url(url, field="SubscribeURL")
        except SignatureError as error:
            raise _EarlyAnswerError(403, "rejected", str(error)) from error
        try:
            self.confirm_subscription(url)
        except FetchError as error:
            if error.retryable:
                raise _EarlyAnswerError(
                    502, "retry", f"confirming the subscription: {error}"
                ) from error
            raise _EarlyAnswerError(
                400, "rejected", f"SNS refused the confirmation: {error}"
            ) from error
        except OSError as error:
            raise _EarlyAnswerError(
                502, "retry", f"confirming the subscription: {error}"
            ) from error
        return Outcome(200, "confirmed", "subscription confirmed")

    def _notification(
        self,
        message: Mapping[str, object],
        topic_arn: str,
        context: Any,
        facts: dict[str, object],
    ) -> Outcome:
        """Claim the message id, run the handler once, and record the result."""
        subject = message.get("Subject")
        notification = Notification(
            message_id=text_field(message, "MessageId"),
            topic_arn=topic_arn,
            message=text_field(message, "Message"),
            timestamp=text_field(message, "Timestamp"),
            subject=subject if isinstance(subject, str) else None,
            envelope=message,
        )
        now = self.clock()
        try:
            claim = self.dedupe.claim(
                notification.message_id,
                topic_arn,
                now=now,
                lease_seconds=self._lease_seconds(context),
                keep_until=now + self.config.replay_window_seconds + MAX_CLOCK_SKEW_SECONDS,
            )
        except DedupeUnavailableError as error:
            self._log_exception("deduplication unavailable", error, facts)
            raise _EarlyAnswerError(
                503, "retry", "deduplication store unavailable; the delivery will be retried"
            ) from error
        if claim.state == DONE:
            return Outcome(200, "duplicate", "already processed")
        if claim.state == IN_PROGRESS:
            return Outcome(
                503, "retry", "another delivery of this message is being processed; retry later"
            )
        try:
            self.process(notification)
        except Exception as error:
            self._log_exception("handler failed", error, facts)
            try:
                self.dedupe.release(claim)
            except DedupeUnavailableError as release_error:
                self._log_exception(
                    "releasing the claim failed; a retry takes over when the lease ends",
                    release_error,
                    facts,
                )
            return Outcome(500, "retry", "handler failed; the delivery will be retried")
        try:
            self.dedupe.complete(claim)
        except DedupeUnavailableError as error:
            self._log_exception(
                "recording completion failed; a delivery after the lease may process it again",
                error,
                facts,
            )
        return Outcome(200, "processed", "notification processed")

    def _lease_seconds(self, context: Any) -> float:
        """The configured lease, shortened to what is left of this invocation (a claim must not
        outlive the process that holds it by much)."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if not callable(remaining):
            return self.config.lease_seconds
        return max(1.0, min(self.config.lease_seconds, float(remaining()) / 1000 + 1))

    def _log(self, outcome: Outcome, facts: dict[str, object], context: Any) -> None:
        level = "INFO" if outcome.status < 400 else "WARNING" if outcome.status < 500 else "ERROR"
        self.logger.log(
            level,
            f"sns delivery {outcome.outcome}",
            {
                **facts,
                "status": outcome.status,
                "outcome": outcome.outcome,
                "reason": outcome.reason,
                "cold_start": self._cold,
                "function_request_id": getattr(context, "aws_request_id", None),
            },
        )
        self._cold = False

    def _log_exception(self, what: str, error: BaseException, facts: dict[str, object]) -> None:
        self.logger.error(
            what,
            **facts,
            exception_name=type(error).__name__,
            exception="".join(traceback.format_exception(error)),
        )


def default_logger() -> JsonLogger:
    """A logger named by ``POWERTOOLS_SERVICE_NAME``, else ``sns-https-endpoint``."""
    return JsonLogger(os.environ.get(ENV_SERVICE_NAME) or _DEFAULT_SERVICE)


def _method(event: Mapping[str, Any]) -> str:
    """The HTTP method of a function URL / HTTP API (2.0) or REST API (1.0) event."""
    if isinstance(event.get("httpMethod"), str):
        method: str = event["httpMethod"]
        return method.upper()
    http = (event.get("requestContext") or {}).get("http") or {}
    if isinstance(http.get("method"), str):
        method = http["method"]
        return method.upper()
    raise _EarlyAnswerError(
        400,
        "rejected",
        "event: no requestContext.http.method (function URL, HTTP API) nor httpMethod "
        "(REST API); invoke this handler through one of them",
    )


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    """The request headers with lower-case names (REST API events keep the sender's case)."""
    headers = event.get("headers") or {}
    return {str(name).lower(): str(value) for name, value in headers.items()}


def _parse_body(event: Mapping[str, Any]) -> dict[str, object]:
    """The body as a JSON object, within :data:`MAX_BODY_BYTES`, without duplicate keys."""
    body = event.get("body")
    if not isinstance(body, str) or not body:
        raise _EarlyAnswerError(400, "rejected", "body: empty; SNS posts a JSON message")
    if event.get("isBase64Encoded"):
        if len(body) > (MAX_BODY_BYTES + 2) // 3 * 4:
            raise _EarlyAnswerError(413, "rejected", f"body: larger than {MAX_BODY_BYTES} bytes")
        try:
            raw = base64.b64decode(body, validate=True)
        except binascii.Error as error:
            raise _EarlyAnswerError(
                400,
                "rejected",
                f"body: isBase64Encoded is true but the body is not base64 ({error})",
            ) from error
    else:
        if len(body) > MAX_BODY_BYTES:
            raise _EarlyAnswerError(413, "rejected", f"body: larger than {MAX_BODY_BYTES} bytes")
        raw = body.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_BODY_BYTES:
        raise _EarlyAnswerError(413, "rejected", f"body: larger than {MAX_BODY_BYTES} bytes")
    try:
        message = json.loads(raw.decode("utf-8"), object_pairs_hook=_without_duplicates)
    except (UnicodeDecodeError, ValueError) as error:
        raise _EarlyAnswerError(
            400, "rejected", f"body: not a JSON document in UTF-8 ({error})"
        ) from error
    if not isinstance(message, dict):
        raise _EarlyAnswerError(
            400, "rejected", f"body: a JSON {type(message).__name__}, not an object"
        )
    return message


def _without_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object, refusing repeated names: two readers could pick different values."""
    result: dict[str, object] = {}
    for name, value in pairs:
        if name in result:
            raise ValueError(f"the name {name!r} appears twice in one object")
        result[name] = value
    return result


@functools.cache
def _default_endpoint() -> SnsHttpsEndpoint:
    """The endpoint configured from ``os.environ``, built on the first invocation only."""
    return SnsHttpsEndpoint.from_environment(os.environ)


def handler(event: Mapping[str, Any], context: Any) -> dict[str, object]:
    """The Lambda entry point (``cross_account_runtime.sns_endpoint.receiver.handler``).

    A configuration error answers 500 to every delivery, so that SNS keeps retrying until the
    configuration is fixed, and is logged with the fix.
    """
    try:
        endpoint = _default_endpoint()
    except ConfigurationError as error:
        default_logger().error(
            "configuration error", outcome="misconfigured", reason=str(error), status=500
        )
        return Outcome(500, "misconfigured", "endpoint misconfigured; see its logs").response()
    return endpoint(event, context)
