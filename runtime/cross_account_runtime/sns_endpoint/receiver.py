"""The SNS HTTP(S) endpoint's request handling: one delivery in, one answer out.

Each POST is:

1. read from the Lambda event, whose shape is checked (a malformed event is a 400 naming the
   field, never a 500 to retry), bounded
   (:data:`~cross_account_runtime.sns_endpoint.http_request.MAX_BODY_BYTES`) and parsed as a JSON
   object without repeated names (:mod:`cross_account_runtime.sns_endpoint.http_request`);
2. matched against the ``x-amz-sns-message-type`` header (and ``x-amz-sns-topic-arn`` if sent);
3. refused unless its ``TopicArn`` is on the allow-list and its ``Timestamp`` is within the
   replay window;
4. verified with :func:`cross_account_runtime.sns_endpoint.signature.verify` (certificate URL
   rules, signature);
5. handled by type: a ``SubscriptionConfirmation`` is confirmed by fetching its
   ``SubscribeURL`` (https on an SNS host only), an ``UnsubscribeConfirmation`` is
   acknowledged, a ``Notification`` is claimed in DynamoDB by ``MessageId``
   (:mod:`cross_account_runtime.sns_endpoint.dedupe`) and passed to the configured handler once.

The :class:`Answer` drives SNS: 2xx when done, 4xx for what no retry can fix (SNS counts 200-4xx
as delivered and stops), 5xx only when a retry can succeed (SNS retries by its delivery policy).
Delivery is at-least-once, so the claim in DynamoDB makes a retry of a processed message a
no-op; a claim whose handler failed is released so the retry is processed: a message is never
dropped because of the deduplication.

Every side effect is injected into :class:`SnsHttpsReceiver`, so tests drive it directly; the
Lambda entry point (:mod:`cross_account_runtime.sns_endpoint.lambda_handler`) builds one from
the environment. ``boto3`` and ``cryptography`` are imported on first use.
"""

from __future__ import annotations

import enum
import json
import time
import traceback
from dataclasses import dataclass

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.emf import SERVICE_DIMENSION, metric_name, write_metrics
from cross_account_runtime.common.json_log import JsonLogger, default_logger
from cross_account_runtime.sns_endpoint import signature as sns_signature
from cross_account_runtime.sns_endpoint.config import (
    DEFAULT_SERVICE_NAME,
    ENV_ALLOWED_TOPIC_ARNS,
    ENV_HANDLER,
    ENV_REPLAY_WINDOW_SECONDS,
    EndpointConfig,
)
from cross_account_runtime.sns_endpoint.confirmation import confirm_subscription_over_https
from cross_account_runtime.sns_endpoint.dedupe import (
    ClaimState,
    DedupeUnavailableError,
    DynamoDbDedupe,
)
from cross_account_runtime.sns_endpoint.handler_loading import load_notification_handler
from cross_account_runtime.sns_endpoint.http_request import HttpRequestError, read_request
from cross_account_runtime.sns_endpoint.notification import Notification
from cross_account_runtime.sns_endpoint.signature import (
    NOTIFICATION,
    SUBSCRIPTION_CONFIRMATION,
    CertificateCache,
    CertificateFetchError,
    FetchError,
    MalformedSnsMessageError,
    SignatureError,
    text_field,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Final

    from cross_account_runtime.common.emf import MetricsWriter
    from cross_account_runtime.sns_endpoint.notification import NotificationHandler

    SubscriptionConfirmer = Callable[[str], None]

MESSAGE_TYPE_HEADER: Final = "x-amz-sns-message-type"
TOPIC_ARN_HEADER: Final = "x-amz-sns-topic-arn"

# How far in the future a Timestamp may be: the clock skew tolerated between SNS and Lambda.
MAX_CLOCK_SKEW_SECONDS: Final = 300.0


class AnswerOutcome(enum.StrEnum):
    """The one-word ``outcome`` of an answer, for metrics: in the answer's body and its log
    line. A ``StrEnum``, so both carry the plain text."""

    PROCESSED = "processed"
    """200: the handler returned."""
    DUPLICATE = "duplicate"
    """200: the message id was processed before."""
    CONFIRMED = "confirmed"
    """200: the subscription was confirmed."""
    UNSUBSCRIBED = "unsubscribed"
    """200: the unsubscribe confirmation was acknowledged."""
    REJECTED = "rejected"
    """4xx: malformed, forged or unwanted; no retry can fix it."""
    RETRY = "retry"
    """5xx: a retry may succeed (the handler failed, SNS or DynamoDB unavailable, a claim held)."""
    ERROR = "error"
    """500: an unexpected error; fixable without losing the message."""
    MISCONFIGURED = "misconfigured"
    """500: the configuration is unusable; SNS retries until it is fixed."""


SIGNATURE_REFUSED = "signature"
"""The ``refused`` fact of a delivery whose signature or certificate did not verify."""
SIGNATURE_REFUSED_METRIC: Final = "SignatureRefused"
"""The metric counting those deliveries: forgeries, or a certificate the endpoint cannot
fetch (the constructs alarm on it)."""


_COUNTED_OUTCOMES: Final = tuple(o for o in AnswerOutcome if o is not AnswerOutcome.MISCONFIGURED)
DELIVERY_METRICS: Final = (*(metric_name(o) for o in _COUNTED_OUTCOMES), SIGNATURE_REFUSED_METRIC)
"""Every metric a delivery writes (the constructs' dashboard graphs them, the cost report
prices them)."""


def delivery_counts(answer: Answer, facts: Mapping[str, object]) -> dict[str, int]:
    """The metrics of one delivery (:data:`DELIVERY_METRICS`): 1 for its outcome and 0 for
    every other (so an alarm on any has data whenever the endpoint is called), and
    ``SignatureRefused``, the forgeries."""
    counts = {metric_name(o): int(o is answer.outcome) for o in _COUNTED_OUTCOMES}
    counts[SIGNATURE_REFUSED_METRIC] = int(facts.get("refused") == SIGNATURE_REFUSED)
    return counts


@dataclass(frozen=True)
class Answer:
    """What the endpoint answers and logs: HTTP ``status``, a one-word ``outcome`` for metrics,
    and a ``reason`` for people."""

    status: int
    outcome: AnswerOutcome
    reason: str

    def response(self) -> dict[str, object]:
        """The Lambda proxy response (function URL and API Gateway read the same shape)."""
        return {
            "statusCode": self.status,
            "headers": {"content-type": "application/json"},
            "body": json.dumps({"outcome": self.outcome, "reason": self.reason}),
        }


class _EarlyAnswerError(Exception):
    """Ends a request early with ``answer``: every answer but success leaves this way, so
    each check is one ``raise`` instead of a chain of returned results."""

    def __init__(self, status: int, outcome: AnswerOutcome, reason: str) -> None:
        super().__init__(reason)
        self.answer = Answer(status, outcome, reason)


class SnsHttpsReceiver:
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
        metrics: MetricsWriter = write_metrics,
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
        self.logger = logger if logger is not None else default_logger(DEFAULT_SERVICE_NAME)
        self.metrics = metrics
        self._cold = True

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], **dependencies: Any) -> SnsHttpsReceiver:
        """Build from ``environ`` (see :class:`EndpointConfig`) and import the handler named by
        ``SNS_ENDPOINT_HANDLER``; ``dependencies`` are passed to the constructor."""
        config = EndpointConfig.from_environment(environ)
        if config.handler_path is None:
            raise ConfigurationError(
                f"{ENV_HANDLER} is not set; set it to 'package.module:function', the function "
                "to call with each notification"
            )
        return cls(config, load_notification_handler(config.handler_path), **dependencies)

    def __call__(self, event: object, context: Any = None) -> dict[str, object]:
        """Handle one delivery and return the proxy response; never raises. ``event`` is
        whatever Lambda was invoked with: its shape is checked before anything reads it."""
        facts: dict[str, object] = {}
        try:
            answer = self._handle(event, context, facts)
        except _EarlyAnswerError as early:
            answer = early.answer
        except Exception as error:
            self._log_exception("unexpected error", error, facts)
            answer = Answer(
                500, AnswerOutcome.ERROR, "internal error; the delivery will be retried"
            )
        self._log(answer, facts, context)
        self.metrics({SERVICE_DIMENSION: self.logger.service}, delivery_counts(answer, facts))
        return answer.response()

    def _handle(self, event: object, context: Any, facts: dict[str, object]) -> Answer:
        try:
            request = read_request(event)
            if request.method != "POST":
                raise _EarlyAnswerError(
                    405,
                    AnswerOutcome.REJECTED,
                    f"method {request.method} not allowed; SNS delivers with POST",
                )
            message = request.json_body()
        except HttpRequestError as error:
            raise _EarlyAnswerError(error.status, AnswerOutcome.REJECTED, error.reason) from error
        try:
            message_type = text_field(message, "Type")
            facts.update(
                message_type=message_type,
                message_id=message.get("MessageId"),
                topic_arn=message.get("TopicArn"),
            )
            header_type = request.headers.get(MESSAGE_TYPE_HEADER)
            if header_type is None:
                raise _EarlyAnswerError(
                    400,
                    AnswerOutcome.REJECTED,
                    f"header {MESSAGE_TYPE_HEADER} is missing; SNS always sends it",
                )
            if header_type != message_type:
                raise _EarlyAnswerError(
                    400,
                    AnswerOutcome.REJECTED,
                    f"header {MESSAGE_TYPE_HEADER} is {header_type!r} but the body's Type is "
                    f"{message_type!r}",
                )
            topic_arn = text_field(message, "TopicArn")
            header_topic = request.headers.get(TOPIC_ARN_HEADER)
            if header_topic is not None and header_topic != topic_arn:
                raise _EarlyAnswerError(
                    400,
                    AnswerOutcome.REJECTED,
                    f"header {TOPIC_ARN_HEADER} is {header_topic!r} but the body's TopicArn is "
                    f"{topic_arn!r}",
                )
            if topic_arn not in self.config.allowed_topic_arns:
                raise _EarlyAnswerError(
                    403,
                    AnswerOutcome.REJECTED,
                    f"TopicArn: {topic_arn!r} is not on the allow-list ({ENV_ALLOWED_TOPIC_ARNS})",
                )
            self._check_timestamp(text_field(message, "Timestamp"))
            sns_signature.verify(
                message, fetch_certificate=self.fetch_certificate, cache=self.certificate_cache
            )
        except MalformedSnsMessageError as error:
            raise _EarlyAnswerError(400, AnswerOutcome.REJECTED, str(error)) from error
        except CertificateFetchError as error:
            if error.retryable:
                raise _EarlyAnswerError(503, AnswerOutcome.RETRY, str(error)) from error
            raise _EarlyAnswerError(403, AnswerOutcome.REJECTED, str(error)) from error
        except SignatureError as error:
            facts["refused"] = SIGNATURE_REFUSED
            raise _EarlyAnswerError(403, AnswerOutcome.REJECTED, str(error)) from error
        if message_type == NOTIFICATION:
            return self._notification(message, topic_arn, context, facts)
        if message_type == SUBSCRIPTION_CONFIRMATION:
            return self._confirm(message)
        return Answer(200, AnswerOutcome.UNSUBSCRIBED, "unsubscribe confirmation acknowledged")

    def _check_timestamp(self, text: str) -> None:
        """Refuse a ``Timestamp`` outside the replay window (or unreadable)."""
        from datetime import datetime  # noqa: PLC0415 (lazy, for cold starts)

        try:
            timestamp = datetime.fromisoformat(text)
        except ValueError:
            timestamp = None
        if timestamp is None or timestamp.tzinfo is None:
            raise MalformedSnsMessageError(
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

    def _confirm(self, message: Mapping[str, object]) -> Answer:
        """Confirm a subscription to an allowed topic by fetching its ``SubscribeURL``."""
        url = text_field(message, "SubscribeURL")
        try:
            sns_signature.check_sns_url(url, field="SubscribeURL")
        except SignatureError as error:
            raise _EarlyAnswerError(403, AnswerOutcome.REJECTED, str(error)) from error
        try:
            self.confirm_subscription(url)
        except FetchError as error:
            if error.retryable:
                raise _EarlyAnswerError(
                    502, AnswerOutcome.RETRY, f"confirming the subscription: {error}"
                ) from error
            raise _EarlyAnswerError(
                400, AnswerOutcome.REJECTED, f"SNS refused the confirmation: {error}"
            ) from error
        except OSError as error:
            raise _EarlyAnswerError(
                502, AnswerOutcome.RETRY, f"confirming the subscription: {error}"
            ) from error
        return Answer(200, AnswerOutcome.CONFIRMED, "subscription confirmed")

    def _notification(
        self,
        message: Mapping[str, object],
        topic_arn: str,
        context: Any,
        facts: dict[str, object],
    ) -> Answer:
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
                503,
                AnswerOutcome.RETRY,
                "deduplication store unavailable; the delivery will be retried",
            ) from error
        if claim.state is ClaimState.DONE:
            return Answer(200, AnswerOutcome.DUPLICATE, "already processed")
        if claim.state is ClaimState.IN_PROGRESS:
            return Answer(
                503,
                AnswerOutcome.RETRY,
                "another delivery of this message is being processed; retry later",
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
            return Answer(500, AnswerOutcome.RETRY, "handler failed; the delivery will be retried")
        try:
            self.dedupe.complete(claim)
        except DedupeUnavailableError as error:
            self._log_exception(
                "recording completion failed; a delivery after the lease may process it again",
                error,
                facts,
            )
        return Answer(200, AnswerOutcome.PROCESSED, "notification processed")

    def _lease_seconds(self, context: Any) -> float:
        """The configured lease, shortened to what is left of this invocation (a claim must not
        outlive the process that holds it by much)."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if not callable(remaining):
            return self.config.lease_seconds
        return max(1.0, min(self.config.lease_seconds, float(remaining()) / 1000 + 1))

    def _log(self, answer: Answer, facts: dict[str, object], context: Any) -> None:
        level = "INFO" if answer.status < 400 else "WARNING" if answer.status < 500 else "ERROR"
        self.logger.log(
            level,
            f"sns delivery {answer.outcome}",
            {
                **facts,
                "status": answer.status,
                "outcome": answer.outcome,
                "reason": answer.reason,
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
