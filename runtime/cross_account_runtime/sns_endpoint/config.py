"""Configuration of the SNS HTTP(S) endpoint, read from the environment.

The endpoint accepts only the topics it is told to, records deliveries in one DynamoDB table and
hands each notification to one handler; the CDK construct passes that in these variables:

``SNS_ENDPOINT_ALLOWED_TOPIC_ARNS`` (required)
    Exact topic ARNs, separated by commas or whitespace; no wildcards.
``SNS_ENDPOINT_DEDUPE_TABLE`` (required)
    The DynamoDB table deduplicating deliveries (partition key ``MessageId``, a string).
``SNS_ENDPOINT_HANDLER`` (required when built from the environment)
    ``package.module:function``, called with each notification.
``SNS_ENDPOINT_REPLAY_WINDOW_SECONDS``, ``SNS_ENDPOINT_LEASE_SECONDS`` (optional)
    How old a ``Timestamp`` may be, and how long a claim blocks other deliveries.

``POWERTOOLS_SERVICE_NAME`` (optional) names the log lines' ``service``; unset, it is
:data:`DEFAULT_SERVICE_NAME`.

A bad value raises :class:`~cross_account_runtime.common.configuration.ConfigurationError`
naming the variable and the fix; until it is fixed every delivery is answered 500, so SNS keeps
retrying instead of dropping messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cross_account_runtime.common.configuration import ConfigurationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

ENV_ALLOWED_TOPIC_ARNS: Final = "SNS_ENDPOINT_ALLOWED_TOPIC_ARNS"
ENV_DEDUPE_TABLE: Final = "SNS_ENDPOINT_DEDUPE_TABLE"
ENV_HANDLER: Final = "SNS_ENDPOINT_HANDLER"
ENV_REPLAY_WINDOW_SECONDS: Final = "SNS_ENDPOINT_REPLAY_WINDOW_SECONDS"
ENV_LEASE_SECONDS: Final = "SNS_ENDPOINT_LEASE_SECONDS"

HANDLER: Final = "cross_account_runtime.sns_endpoint.lambda_handler.handler"
"""The endpoint function's handler, as the construct sets it and the cost report finds
endpoints."""

DEFAULT_SERVICE_NAME: Final = "sns-https-endpoint"
"""The log lines' ``service`` when ``POWERTOOLS_SERVICE_NAME`` is unset: what the function is
(the construct names each endpoint's service after the construct instead)."""

# The longest retry schedule a delivery policy allows is 3,600 s, and a retry carries the
# original Timestamp; 300 s more absorb clock skew and SNS's queueing.
DEFAULT_REPLAY_WINDOW_SECONDS: Final = 3_900.0
# SNS abandons a request after 15 s; a claim this old belongs to a delivery SNS already counts
# as failed, so a retry may take it over. Short enough for a crashed attempt not to block the
# default retries (20 s apart).
DEFAULT_LEASE_SECONDS: Final = 30.0

_TOPIC_ARN: Final = re.compile(
    r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(?:\.fifo)?"
)
_TABLE_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{3,255}")


@dataclass(frozen=True)
class EndpointConfig:
    """What the endpoint accepts and where it records deliveries.

    - ``allowed_topic_arns`` (``SNS_ENDPOINT_ALLOWED_TOPIC_ARNS``, required): exact topic ARNs,
      separated by commas or whitespace; messages from other topics are refused (403) and their
      subscriptions never confirmed.
    - ``dedupe_table`` (``SNS_ENDPOINT_DEDUPE_TABLE``, required): the DynamoDB table holding one
      item per ``MessageId`` (string partition key ``MessageId``, TTL attribute ``ExpiresAt``).
    - ``handler_path`` (``SNS_ENDPOINT_HANDLER``): ``"package.module:function"``, called with a
      :class:`~cross_account_runtime.sns_endpoint.notification.Notification`; required when
      building from the environment.
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
            check_topic_arn(arn)
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


def check_topic_arn(
    arn: object, field: str = f"allowed_topic_arns ({ENV_ALLOWED_TOPIC_ARNS})"
) -> str:
    """Return ``arn`` if it is one exact SNS topic ARN, which the endpoint compares a
    delivery's ``TopicArn`` with; raise otherwise, naming ``field``. A wildcard or any other
    ARN would match no delivery, and the endpoint would refuse every one; the CDK construct
    applies this same check at synth (``SnsHttpsEndpoint(allowed_topic_arns=...)``)."""
    if not isinstance(arn, str) or not _TOPIC_ARN.fullmatch(arn):
        raise ConfigurationError(
            f"{field}: {arn!r} is not an SNS topic ARN; write "
            "arn:<partition>:sns:<region>:<account id>:<topic name> (no wildcards)"
        )
    return arn


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
