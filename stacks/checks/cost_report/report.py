"""The cost report of a cloud assembly: each account's fixed monthly cost, and the cost of a
million messages through the account bridge, from what the templates deploy.

Fixed costs are what exists whether or not a message flows: KMS keys, CloudWatch alarms and
dashboards, the custom metrics the functions write (a relay's core counts every hour it runs),
and the empty receives of the relays' event sources; log groups cost nothing until written. The
bridge's cost per message follows a message from the sender's send to its shadow queue,
through the outbound relay, the receiving account's ingress queue and the inbound relay, to
the receiver's queue: SQS requests as the relays batch them, relay invocations and their
GB-seconds, their log lines, and KMS requests per data key reuse period. Keys are counted,
not inferred from the topology, so a topology with one key per account (``"keys":
"perAccount"``) costs what its templates hold.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from constructs_lib.relay_roles import RELAY_ROLE_PREFIX
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX
from cross_account_runtime.relay.config_format import HANDLER as RELAY_HANDLER
from cross_account_runtime.relay.outcomes import CORE
from cross_account_runtime.sns_endpoint.config import HANDLER as SNS_ENDPOINT_HANDLER
from cross_account_runtime.sns_endpoint.receiver import DELIVERY_METRICS
from stacks.checks.cost_report import prices as p
from stacks.checks.cost_report import usage as u
from stacks.quotas.assembly import StackTemplate, read_templates

DIRECTIONS = ("outbound", "inbound")
METRICS_WRITTEN = {RELAY_HANDLER: len(CORE), SNS_ENDPOINT_HANDLER: len(DELIVERY_METRICS)}
"""The custom metrics a function of each handler writes whenever it runs: one dimension set
(its service, and a relay's direction) per function. A relay's other outcomes add theirs only
for the hours they happen, which the report leaves out."""


@dataclass(frozen=True)
class Line:
    """One item of a cost: how many of what, at which price, for how much."""

    item: str
    quantity: float
    price: p.Price
    estimate: bool = False

    @property
    def usd(self) -> float:
        return self.quantity * self.price.each

    def as_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "quantity": round(self.quantity, 3),
            "unit": self.price.unit,
            "price": self.price.stated,
            "usd": round(self.usd, 4),
            "estimate": self.estimate,
        }


@dataclass
class AccountCost:
    """An account's fixed monthly cost over its stacks."""

    account: str
    stacks: list[str] = field(default_factory=list)
    keys: int = 0
    alarm_metrics: int = 0
    dashboards: int = 0
    custom_metrics: int = 0
    event_sources: int = 0
    log_groups: int = 0

    @property
    def lines(self) -> list[Line]:
        idle_receives = self.event_sources * u.IDLE_POLLERS * u.SECONDS_PER_MONTH
        return [
            Line("KMS keys", self.keys, p.KMS_KEY_MONTH),
            Line("CloudWatch alarm metrics", self.alarm_metrics, p.ALARM_METRIC_MONTH),
            Line("CloudWatch dashboards", self.dashboards, p.DASHBOARD_MONTH),
            Line(
                "custom metrics the functions write",
                self.custom_metrics,
                p.CUSTOM_METRIC_MONTH,
                estimate=True,
            ),
            Line(
                f"empty receives of {self.event_sources} SQS event sources",
                idle_receives / u.LONG_POLL_SECONDS,
                p.SQS_STANDARD_REQUEST,
                estimate=True,
            ),
        ]

    @property
    def usd(self) -> float:
        return sum(line.usd for line in self.lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "account": self.account,
            "stacks": self.stacks,
            "keys": self.keys,
            "alarmMetrics": self.alarm_metrics,
            "dashboards": self.dashboards,
            "customMetrics": self.custom_metrics,
            "eventSources": self.event_sources,
            "logGroups": self.log_groups,
            "lines": [line.as_json() for line in self.lines],
            "usd": round(self.usd, 2),
        }


@dataclass(frozen=True)
class RelayHop:
    """One relay event source: a queue the relay reads and what each batch costs."""

    direction: str
    where: str
    batch_size: int
    fifo: bool
    memory_mb: int
    log_retention_months: float

    def lines(self, messages: int, message_bytes: int) -> list[Line]:
        """What ``messages`` cost through this hop: the poller's receives and deletes, the
        relay's sends, its invocations, duration and log."""
        request = p.SQS_FIFO_REQUEST if self.fifo else p.SQS_STANDARD_REQUEST
        per_call = min(self.batch_size, u.SQS_MAX_RECEIVE)
        chunks = math.ceil(per_call * message_bytes / u.SQS_PAYLOAD_CHUNK)
        invocations = messages / self.batch_size
        send_calls = math.ceil(self.batch_size / u.RELAY_SEND_ENTRIES)
        log_gb = (
            invocations * u.LOG_BYTES_PER_INVOCATION + messages * u.LOG_BYTES_PER_MESSAGE
        ) / 1e9
        return [
            Line(f"{self.direction}: receives", messages / per_call * chunks, request),
            Line(f"{self.direction}: deletes", messages / per_call, request),
            Line(f"{self.direction}: sends", messages / per_call * chunks, request),
            Line(f"{self.direction}: invocations", invocations, p.LAMBDA_REQUEST),
            Line(
                f"{self.direction}: duration",
                invocations * send_calls * u.SEND_CALL_SECONDS * self.memory_mb / 1024,
                p.LAMBDA_ARM_GB_SECOND,
                estimate=True,
            ),
            Line(f"{self.direction}: log ingestion", log_gb, p.LOGS_INGESTED),
            Line(
                f"{self.direction}: log storage",
                log_gb * self.log_retention_months,
                p.LOGS_STORED,
            ),
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "eventSource": self.where,
            "batchSize": self.batch_size,
            "fifo": self.fifo,
            "memoryMb": self.memory_mb,
        }


@dataclass(frozen=True)
class BridgeCost:
    """A million (``messages``) messages on one route through the bridge, through the typical
    relay event source of each direction."""

    messages: int
    message_bytes: int
    over_days: float
    kms_reuse_seconds: int
    hops: Mapping[str, RelayHop]

    @property
    def lines(self) -> list[Line]:
        chunks = math.ceil(self.message_bytes / u.SQS_PAYLOAD_CHUNK)
        found = [
            Line(
                "sender: sends to its shadow queue", self.messages * chunks, p.SQS_STANDARD_REQUEST
            )
        ]
        for direction in DIRECTIONS:
            if direction in self.hops:
                found += self.hops[direction].lines(self.messages, self.message_bytes)
        periods = self.over_days * 86_400 / self.kms_reuse_seconds
        kms = u.QUEUE_HOPS * u.KMS_CALLS_PER_QUEUE_HOP * min(self.messages, periods)
        found.append(Line("KMS data keys", kms, p.KMS_REQUEST))
        return found

    @property
    def usd(self) -> float:
        return sum(line.usd for line in self.lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "messageBytes": self.message_bytes,
            "overDays": self.over_days,
            "kmsDataKeyReuseSeconds": self.kms_reuse_seconds,
            "relays": {d: hop.as_json() for d, hop in self.hops.items()},
            "lines": [line.as_json() for line in self.lines],
            "usd": round(self.usd, 2),
        }


def _alarm_metrics(props: Mapping[str, Any]) -> int:
    """Metrics an alarm is billed for: one, or each metric of a metric-math alarm."""
    metrics = props.get("Metrics")
    if not isinstance(metrics, list):
        return 1
    return sum(1 for metric in metrics if "MetricStat" in metric) or 1


def _retention_months(stack: StackTemplate, log_group: Any) -> float:
    logical_id = log_group.get("Ref") if isinstance(log_group, Mapping) else None
    resource = stack.resources.get(logical_id or "", {})
    days = resource.get("Properties", {}).get("RetentionInDays")
    return u.RETENTION_WITHOUT_EXPIRY_MONTHS if days is None else int(days) / 30


def _relay_hops(stack: StackTemplate) -> list[RelayHop]:
    hops: list[RelayHop] = []
    for logical_id, props in stack.of_type("AWS::Lambda::EventSourceMapping"):
        source = stack.text(props.get("EventSourceArn", ""))
        named = props.get("FunctionName")
        function = stack.resources.get(
            named.get("Ref", "") if isinstance(named, Mapping) else "", {}
        )
        if ":sqs:" not in source or function.get("Type") != "AWS::Lambda::Function":
            continue
        function_props = function.get("Properties", {})
        role_arn = stack.text(function_props.get("Role", ""))
        role = role_arn.rsplit("/", 1)[-1]
        direction = role.removeprefix(RELAY_ROLE_PREFIX).split("-", 1)[0]
        if not role.startswith(RELAY_ROLE_PREFIX) or direction not in DIRECTIONS:
            continue
        hops.append(
            RelayHop(
                direction,
                f"{stack.name}: {logical_id}",
                int(props.get("BatchSize", u.SQS_MAX_RECEIVE)),
                source.endswith(FIFO_SUFFIX),
                int(function_props.get("MemorySize", u.DEFAULT_LAMBDA_MEMORY_MB)),
                _retention_months(stack, function_props.get("LoggingConfig", {}).get("LogGroup")),
            )
        )
    return hops


def _typical(hops: Sequence[RelayHop], message_bytes: int) -> RelayHop:
    """The configuration most of a direction's event sources share (the costliest of equals):
    a message takes one route, and most routes are alike; a FIFO delay queue's source, say,
    carries only delayed messages."""
    shared: dict[tuple[int, bool, int, float], list[RelayHop]] = defaultdict(list)
    for hop in hops:
        shared[(hop.batch_size, hop.fifo, hop.memory_mb, hop.log_retention_months)].append(hop)
    return max(
        (found[0] for found in shared.values()),
        key=lambda hop: (
            len(shared[(hop.batch_size, hop.fifo, hop.memory_mb, hop.log_retention_months)]),
            sum(line.usd for line in hop.lines(1_000, message_bytes)),
        ),
    )


@dataclass(frozen=True)
class CostReport:
    accounts: list[AccountCost]
    bridge: BridgeCost

    @property
    def fixed_usd(self) -> float:
        return sum(account.usd for account in self.accounts)

    def as_json(self) -> dict[str, Any]:
        return {
            "prices": {
                "date": p.PRICES_DATE,
                "region": p.PRICES_REGION,
                "items": [
                    {"item": x.name, "price": x.stated, "source": x.source} for x in p.PRICES
                ],
            },
            "accounts": [account.as_json() for account in self.accounts],
            "fixedMonthlyUsd": round(self.fixed_usd, 2),
            "bridge": self.bridge.as_json(),
        }


def build_cost_report(
    assembly_dir: str | Path,
    *,
    messages: int = 1_000_000,
    message_bytes: int = u.MESSAGE_BYTES,
    over_days: float = u.SPREAD_DAYS,
) -> CostReport:
    """The cost report of the cloud assembly in ``assembly_dir``."""
    accounts: dict[str, AccountCost] = {}
    hops: dict[str, list[RelayHop]] = defaultdict(list)
    reuse: list[int] = []
    for stack in read_templates(assembly_dir):
        account = accounts.setdefault(stack.account, AccountCost(stack.account))
        account.stacks.append(stack.name)
        account.keys += sum(1 for _ in stack.of_type("AWS::KMS::Key"))
        account.alarm_metrics += sum(
            _alarm_metrics(props) for _, props in stack.of_type("AWS::CloudWatch::Alarm")
        )
        account.dashboards += sum(1 for _ in stack.of_type("AWS::CloudWatch::Dashboard"))
        account.custom_metrics += sum(
            METRICS_WRITTEN.get(str(props.get("Handler")), 0)
            for _, props in stack.of_type("AWS::Lambda::Function")
        )
        account.event_sources += sum(
            1
            for _, props in stack.of_type("AWS::Lambda::EventSourceMapping")
            if ":sqs:" in stack.text(props.get("EventSourceArn", ""))
        )
        account.log_groups += sum(1 for _ in stack.of_type("AWS::Logs::LogGroup"))
        reuse += [
            int(props.get("KmsDataKeyReusePeriodSeconds", u.DEFAULT_KMS_DATA_KEY_REUSE_SECONDS))
            for _, props in stack.of_type("AWS::SQS::Queue")
            if "KmsMasterKeyId" in props
        ]
        for hop in _relay_hops(stack):
            hops[hop.direction].append(hop)
    bridge = BridgeCost(
        messages,
        message_bytes,
        over_days,
        min(reuse, default=u.DEFAULT_KMS_DATA_KEY_REUSE_SECONDS),
        {d: _typical(found, message_bytes) for d, found in hops.items()},
    )
    return CostReport(sorted(accounts.values(), key=lambda a: a.account), bridge)
