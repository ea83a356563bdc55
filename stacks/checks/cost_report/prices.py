"""AWS's unit prices the cost report multiplies by, with the date they were read: their one
home. ``docs/costs.md`` renders them (a test keeps the two equal).

On-demand list prices in US East (N. Virginia), before free tiers (which apply per payer
account, not per topology): another region or a discount changes the figures by its ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

PRICES_DATE = "2026-11-26"
"""When these prices were read from the pages each one cites."""
PRICES_REGION = "us-east-1"


@dataclass(frozen=True)
class Price:
    """``usd`` for ``quantity`` ``unit``, as AWS's pricing page states it."""

    name: str
    usd: float
    quantity: int
    unit: str
    source: str

    @property
    def each(self) -> float:
        """The price of one unit."""
        return self.usd / self.quantity

    @property
    def stated(self) -> str:
        """As the pricing page states it: ``$0.40 per 1,000,000 requests``."""
        decimals = max(2, len(f"{self.usd:.10f}".rstrip("0").split(".")[1]))
        amount = f"${self.usd:.{decimals}f}"
        per = self.unit if self.quantity == 1 else f"{self.quantity:,} {self.unit}"
        return f"{amount} per {per}"


_SQS = "https://aws.amazon.com/sqs/pricing/"
_LAMBDA = "https://aws.amazon.com/lambda/pricing/"
_KMS = "https://aws.amazon.com/kms/pricing/"
_CLOUDWATCH = "https://aws.amazon.com/cloudwatch/pricing/"

SQS_STANDARD_REQUEST = Price(
    "SQS request, standard queue (each 64 KiB of payload is one)",
    0.40,
    1_000_000,
    "requests",
    _SQS,
)
SQS_FIFO_REQUEST = Price(
    "SQS request, FIFO queue (each 64 KiB of payload is one)", 0.50, 1_000_000, "requests", _SQS
)
LAMBDA_REQUEST = Price("Lambda invocation", 0.20, 1_000_000, "invocations", _LAMBDA)
LAMBDA_ARM_GB_SECOND = Price("Lambda duration, arm64", 0.0000133334, 1, "GB-second", _LAMBDA)
KMS_KEY_MONTH = Price(
    "KMS customer managed key (each of its first two rotations adds as much)",
    1.00,
    1,
    "key-month",
    _KMS,
)
KMS_REQUEST = Price("KMS request (GenerateDataKey, Decrypt)", 0.03, 10_000, "requests", _KMS)
ALARM_METRIC_MONTH = Price(
    "CloudWatch alarm, standard resolution", 0.10, 1, "alarm metric-month", _CLOUDWATCH
)
DASHBOARD_MONTH = Price("CloudWatch dashboard", 3.00, 1, "dashboard-month", _CLOUDWATCH)
CUSTOM_METRIC_MONTH = Price(
    "CloudWatch custom metric (first 10,000 metrics; embedded metric format included)",
    0.30,
    1,
    "metric-month",
    _CLOUDWATCH,
)
LOGS_INGESTED = Price("CloudWatch Logs ingestion (standard class)", 0.50, 1, "GB", _CLOUDWATCH)
LOGS_STORED = Price("CloudWatch Logs storage", 0.03, 1, "GB-month", _CLOUDWATCH)

PRICES: tuple[Price, ...] = (
    SQS_STANDARD_REQUEST,
    SQS_FIFO_REQUEST,
    LAMBDA_REQUEST,
    LAMBDA_ARM_GB_SECOND,
    KMS_KEY_MONTH,
    KMS_REQUEST,
    ALARM_METRIC_MONTH,
    DASHBOARD_MONTH,
    CUSTOM_METRIC_MONTH,
    LOGS_INGESTED,
    LOGS_STORED,
)
"""Every price the report uses, in the order ``docs/costs.md`` lists them."""
