"""The one check of a CloudWatch metric period, for an alarm's and a dashboard's alike: a graph
or an alarm with another period is refused by CloudWatch (or by aws-cdk-lib, from inside jsii,
only once a metric is made), so a keyword giving one is refused at the boundary, naming it."""

from __future__ import annotations

from aws_cdk import Duration

from constructs_lib.defaults import ALARM_PERIODS_UNDER_A_MINUTE_SECONDS


def require_metric_period(name: str, period: Duration) -> None:
    """Refuse ``period`` unless it is 1, 5, 10 or 30 seconds or whole minutes."""
    seconds = period.to_seconds()
    if seconds in ALARM_PERIODS_UNDER_A_MINUTE_SECONDS or (seconds >= 60 and not seconds % 60):
        return
    *shorter, longest = ALARM_PERIODS_UNDER_A_MINUTE_SECONDS
    raise ValueError(
        f"{name}: CloudWatch takes a period of {', '.join(map(str, shorter))} or {longest} "
        f"seconds or whole minutes, got {seconds:g} s"
    )
