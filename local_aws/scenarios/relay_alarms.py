"""The deployed alarms on the relays, read back from the local AWS and held against the metrics
the relays really wrote during the traffic.

The local AWS's CloudWatch evaluates no alarm and ingests no embedded-metric line, so this
reading does what CloudWatch would for one period: each alarm on the runtimes' namespace sums
the metric it watches over the lines written under its dimensions, and says whether that sum
crosses its threshold (an alarm that needs several periods in a row says how many). It also
proves the wiring end to end: every relay that wrote metrics must be watched, under the very
service and direction its lines carry, by a deployed alarm on each of the counts an on-call
engineer is paged for; a relay no alarm watches is a defect, and the traffic fails naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cross_account_runtime.common.emf import NAMESPACE
from cross_account_runtime.relay.outcomes import RelayMetric
from local_aws.accounts import AccountCredentials
from local_aws.lambda_poller import MetricSource

WATCHED: tuple[RelayMetric, ...] = (
    RelayMetric.DEAD_LETTERED,
    RelayMetric.EXPIRED,
    RelayMetric.FAILED,
)
"""The counts every relay must have a deployed alarm on (``MessagingAlarms.watch_relay``)."""


class UnwatchedRelayError(RuntimeError):
    """A relay wrote metrics that no deployed alarm watches."""


@dataclass(frozen=True)
class AlarmReading:
    """One deployed alarm on a relay's count, against what the traffic wrote."""

    account: str
    name: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]
    threshold: float
    periods: int
    value: int

    @property
    def sets_off(self) -> bool:
        return self.value > self.threshold

    def line(self) -> str:
        service = dict(self.dimensions).get("Service", "?")
        verdict = "quiet"
        if self.sets_off:
            verdict = "ALARM" if self.periods == 1 else f"ALARM after {self.periods} such periods"
        return (
            f"{service} {self.metric} {self.value} > {self.threshold:g}: {verdict} "
            f"({self.name}, account {self.account})"
        )


def read_relay_alarms(
    accounts: Mapping[str, AccountCredentials],
    endpoint_url: str,
    metrics: Mapping[MetricSource, Mapping[str, int]],
) -> tuple[AlarmReading, ...]:
    """The deployed alarms on the runtimes' namespace in every account, each with the sum of
    its metric over the lines written under its dimensions; refuses a relay whose lines no
    alarm watches on each of :data:`WATCHED`."""
    written: dict[tuple[tuple[str, str], ...], dict[str, int]] = {}
    for source, values in metrics.items():
        into = written.setdefault(tuple(sorted(source.dimensions)), {})
        for name, value in values.items():
            into[name] = into.get(name, 0) + value
    readings: list[AlarmReading] = []
    for credentials in accounts.values():
        cloudwatch = credentials.session().client("cloudwatch", endpoint_url=endpoint_url)
        for alarm in _alarms(cloudwatch):
            if alarm.get("Namespace") != NAMESPACE:
                continue
            dimensions = tuple(sorted((d["Name"], d["Value"]) for d in alarm["Dimensions"]))
            readings.append(
                AlarmReading(
                    credentials.account_id,
                    alarm["AlarmName"],
                    alarm["MetricName"],
                    dimensions,
                    float(alarm["Threshold"]),
                    int(alarm.get("DatapointsToAlarm") or alarm["EvaluationPeriods"]),
                    written.get(dimensions, {}).get(alarm["MetricName"], 0),
                )
            )
    watched = {(r.dimensions, r.metric) for r in readings}
    unwatched = sorted(
        f"{' '.join(f'{n}={v}' for n, v in dimensions)} {metric}"
        for dimensions in written
        for metric in map(str, WATCHED)
        if (dimensions, metric) not in watched
    )
    if unwatched:
        raise UnwatchedRelayError(
            "relays wrote metrics no deployed alarm watches: "
            + "; ".join(unwatched)
            + " (give their AccountBridge alarms=MessagingAlarms(...))"
        )
    return tuple(sorted(readings, key=lambda r: (not r.sets_off, r.dimensions, r.metric)))


def _alarms(cloudwatch: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for page in cloudwatch.get_paginator("describe_alarms").paginate(AlarmTypes=["MetricAlarm"]):
        found += page["MetricAlarms"]
    return found
