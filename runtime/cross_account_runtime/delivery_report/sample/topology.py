"""The topics and subscriptions sample data is generated for, and how often each one fails.

A topology is a few dataclasses (or the same as JSON, see :func:`sample_topology_from_dict`). The
default mirrors the project's example: Billing (222222222222) publishes ``OrderBilled``, Sales
(111111111111) subscribes its queue across accounts, a partner receives it on an HTTPS webhook
with a delivery policy; Billing archives through Firehose and audits with a Lambda function;
the error-queue account (333333333333) keeps an audit queue on ``OrderAccepted``. SMS and a mobile push application cover the remaining protocols.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cross_account_runtime.delivery_policy.policy import BackoffFunction, HttpDeliveryPolicy

REGION = "us-east-1"
SALES_ACCOUNT = "111111111111"
BILLING_ACCOUNT = "222222222222"
ERROR_QUEUE_ACCOUNT = "333333333333"

PROTOCOLS = ("http/s", "sqs", "lambda", "firehose", "application", "sms")

FAILURE_CAUSES_BY_PROTOCOL: Mapping[str, tuple[str, ...]] = {
    "http/s": ("timeout", "tls_error", "connection_error", "http_5xx"),
    "sqs": ("kms_access_denied", "endpoint_missing", "access_denied", "data_protection_policy"),
    "lambda": ("throttled", "endpoint_missing", "access_denied"),
    "firehose": ("kms_access_denied", "endpoint_missing", "throttled"),
    "application": ("provider_error", "endpoint_missing"),
    "sms": ("provider_error",),
}
"""Failure causes the generator can render for each protocol (the causes SNS logs for it)."""

RETRIED_CAUSES = frozenset({"timeout", "tls_error", "connection_error", "http_5xx", "throttled"})
"""Causes SNS retries through the whole schedule; the others are client errors, not retried."""


@dataclass(frozen=True)
class SampleSubscription:
    """One subscription and its behaviour: failure rates per cause (of all deliveries)."""

    protocol: str
    endpoint: str
    failures: Mapping[str, float] = field(default_factory=dict)
    retried_success_rate: float = 0.0
    http_4xx_success_rate: float = 0.0
    delivery_policy: HttpDeliveryPolicy | None = None

    def __post_init__(self) -> None:
        where = f"subscription {self.endpoint!r}"
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"{where}: protocol {self.protocol!r} is not one of {PROTOCOLS}")
        allowed = FAILURE_CAUSES_BY_PROTOCOL[self.protocol]
        unknown = sorted(set(self.failures) - set(allowed))
        if unknown:
            raise ValueError(
                f"{where}: causes {unknown} are not logged for {self.protocol}; use {allowed}"
            )
        if self.delivery_policy is not None and self.protocol != "http/s":
            raise ValueError(f"{where}: only http/s subscriptions have a delivery policy")
        if self.http_4xx_success_rate and self.protocol != "http/s":
            raise ValueError(f"{where}: only http/s endpoints answer 4xx")
        total = sum(self.failures.values()) + self.retried_success_rate + self.http_4xx_success_rate
        if any(rate < 0 for rate in self.failures.values()) or total > 1:
            raise ValueError(f"{where}: rates must be >= 0 and add up to at most 1 (got {total})")

    @property
    def policy(self) -> HttpDeliveryPolicy:
        """The HTTP/S delivery policy in force (SNS's default when none is set)."""
        return self.delivery_policy or HttpDeliveryPolicy()


@dataclass(frozen=True)
class SampleTopic:
    """A topic, or the pseudo-topic SNS logs SMS or a platform application under.

    ``arn`` of SMS is ``arn:aws:sns:<region>:<account>:DirectPublishToPhoneNumber``; of a
    platform application its ARN (``...:app/<PLATFORM>/<name>``). Their records carry no
    ``topicArn``: the job takes it from the log group.
    """

    arn: str
    subscriptions: tuple[SampleSubscription, ...]
    weight: float = 1.0
    success_sample_rate: int = 100

    def __post_init__(self) -> None:
        parts = self.arn.split(":")
        if len(parts) != 6 or parts[2] != "sns":
            raise ValueError(
                f"topic ARN {self.arn!r} is not arn:<partition>:sns:<region>:<account>:<name>"
            )
        if not self.subscriptions:
            raise ValueError(f"topic {self.arn!r} has no subscriptions")
        if not 0 <= self.success_sample_rate <= 100:
            raise ValueError(f"topic {self.arn!r}: success_sample_rate must be 0..100")

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]

    @property
    def account(self) -> str:
        return self.arn.split(":")[4]

    @property
    def resource(self) -> str:
        return self.arn.split(":")[5]

    @property
    def carries_topic_arn(self) -> bool:
        """Whether SNS writes ``topicArn`` and ``messageMD5Sum`` into this topic's records."""
        return self.resource != "DirectPublishToPhoneNumber" and not self.resource.startswith(
            "app/"
        )

    def log_group(self, failure: bool) -> str:
        """The CloudWatch log group SNS writes this topic's successes or failures to."""
        base = f"sns/{self.region}/{self.account}/{self.resource}"
        return f"{base}/Failure" if failure else base


@dataclass(frozen=True)
class SampleTopology:
    """The topics sample data is generated for: the generator's own model of a topology, which
    carries failure rates and is not the app's :class:`stacks.topology.Topology`."""

    topics: tuple[SampleTopic, ...]


def default_sample_topology() -> SampleTopology:
    """The project's example accounts, with failures of every cause the generator knows."""
    partner_policy = HttpDeliveryPolicy(
        min_delay_target=1,
        max_delay_target=60,
        num_retries=50,
        num_no_delay_retries=3,
        num_min_delay_retries=2,
        num_max_delay_retries=35,
        backoff_function=BackoffFunction.EXPONENTIAL,
    )
    order_billed = SampleTopic(
        arn=f"arn:aws:sns:{REGION}:{BILLING_ACCOUNT}:OrderBilled",
        weight=6.0,
        subscriptions=(
            SampleSubscription(
                "sqs",
                f"arn:aws:sqs:{REGION}:{SALES_ACCOUNT}:Sales",
                failures={
                    "kms_access_denied": 0.004,
                    "endpoint_missing": 0.001,
                    "access_denied": 0.001,
                },
                retried_success_rate=0.01,
            ),
            SampleSubscription(
                "http/s",
                "https://partner.example.com/webhooks/order-billed",
                failures={
                    "timeout": 0.006,
                    "tls_error": 0.002,
                    "connection_error": 0.002,
                    "http_5xx": 0.004,
                },
                retried_success_rate=0.03,
                http_4xx_success_rate=0.01,
                delivery_policy=partner_policy,
            ),
            SampleSubscription(
                "lambda",
                f"arn:aws:lambda:{REGION}:{BILLING_ACCOUNT}:function:BillingAudit",
                failures={"throttled": 0.0005, "endpoint_missing": 0.001, "access_denied": 0.0005},
                retried_success_rate=0.01,
            ),
            SampleSubscription(
                "firehose",
                f"arn:aws:firehose:{REGION}:{BILLING_ACCOUNT}:deliverystream/message-archive",
                failures={
                    "kms_access_denied": 0.002,
                    "endpoint_missing": 0.0005,
                    "throttled": 0.0005,
                },
                retried_success_rate=0.005,
            ),
        ),
    )
    order_accepted = SampleTopic(
        arn=f"arn:aws:sns:{REGION}:{SALES_ACCOUNT}:OrderAccepted",
        weight=3.0,
        subscriptions=(
            SampleSubscription(
                "sqs",
                f"arn:aws:sqs:{REGION}:{BILLING_ACCOUNT}:Billing",
                failures={"data_protection_policy": 0.002, "kms_access_denied": 0.002},
                retried_success_rate=0.01,
            ),
            SampleSubscription(
                "http/s",
                "http://legacy.example.net/sns",
                failures={"connection_error": 0.01, "http_5xx": 0.01},
                retried_success_rate=0.02,
                http_4xx_success_rate=0.02,
            ),
            SampleSubscription(
                "sqs",
                f"arn:aws:sqs:{REGION}:{ERROR_QUEUE_ACCOUNT}:audit",
                failures={"endpoint_missing": 0.002},
                retried_success_rate=0.005,
            ),
        ),
    )
    sms = SampleTopic(
        arn=f"arn:aws:sns:{REGION}:{SALES_ACCOUNT}:DirectPublishToPhoneNumber",
        weight=0.3,
        subscriptions=(
            SampleSubscription("sms", "+15555550100", failures={"provider_error": 0.05}),
        ),
    )
    push = SampleTopic(
        arn=f"arn:aws:sns:{REGION}:{SALES_ACCOUNT}:app/APNS/SalesMobile",
        weight=0.3,
        subscriptions=(
            SampleSubscription(
                "application",
                f"arn:aws:sns:{REGION}:{SALES_ACCOUNT}:endpoint/APNS/SalesMobile/6a1f3e0c-4c1b-3d9a-9a51-0c6b2e1f7d10",
                failures={"provider_error": 0.03, "endpoint_missing": 0.01},
                retried_success_rate=0.01,
            ),
        ),
    )
    return SampleTopology(topics=(order_billed, order_accepted, sms, push))


def sample_topology_from_dict(data: Mapping[str, Any]) -> SampleTopology:
    """A topology from JSON: ``{"topics": [{"arn", "weight"?, "successSampleRate"?,
    "subscriptions": [{"protocol", "endpoint", "failures"?, "retriedSuccessRate"?,
    "http4xxSuccessRate"?, "deliveryPolicy"?: {"healthyRetryPolicy": {...}}}]}]}``."""
    topics = []
    for index, topic in enumerate(data.get("topics", [])):
        if "arn" not in topic or "subscriptions" not in topic:
            raise ValueError(f"topics[{index}] needs 'arn' and 'subscriptions'")
        subscriptions = []
        for sub in topic["subscriptions"]:
            policy = sub.get("deliveryPolicy", {}).get("healthyRetryPolicy")
            subscriptions.append(
                SampleSubscription(
                    protocol=sub["protocol"],
                    endpoint=sub["endpoint"],
                    failures=dict(sub.get("failures", {})),
                    retried_success_rate=float(sub.get("retriedSuccessRate", 0.0)),
                    http_4xx_success_rate=float(sub.get("http4xxSuccessRate", 0.0)),
                    delivery_policy=(
                        HttpDeliveryPolicy.from_json({"healthyRetryPolicy": policy})
                        if policy
                        else None
                    ),
                ),
            )
        topics.append(
            SampleTopic(
                arn=topic["arn"],
                subscriptions=tuple(subscriptions),
                weight=float(topic.get("weight", 1.0)),
                success_sample_rate=int(topic.get("successSampleRate", 100)),
            ),
        )
    if not topics:
        raise ValueError("a topology needs at least one topic under 'topics'")
    return SampleTopology(topics=tuple(topics))
