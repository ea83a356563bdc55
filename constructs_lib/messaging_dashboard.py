"""``MessagingDashboard``: the page an on-call engineer opens first for an account's bridge.

It answers "is the bridge healthy right now, and which route is not?" on one page: per relay,
the messages in and out, dead-lettered, expired and failed (the relay's own metrics), its
function's errors, throttles and duration, the age of the oldest message in each queue it reads
(a route that stopped moving shows as a rising line named by its queue), and the state of the
alarms that watch it; per SNS HTTPS endpoint, its answers and its URL's; then the state of every
other alarm (endpoint queues, topics, subscriptions).

The widgets name their metrics by what synth knows, so a dashboard shows the resources of its
own stack; an account whose resources fill several stacks has one per stack.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TypeVar

from aws_cdk import Duration, Stack, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked, checked_keywords
from constructs_lib._private.metric_periods import require_metric_period
from constructs_lib.cross_account_relay import CrossAccountRelay, RelayMetric
from constructs_lib.defaults import (
    ALARM_EVALUATION_PERIOD,
    ALARMS_PER_STATUS_WIDGET,
    QUEUES_PER_GRAPH,
)
from constructs_lib.sns_https_endpoint import SnsHttpsEndpoint
from cross_account_runtime.sns_endpoint.receiver import DELIVERY_METRICS

FULL_WIDTH = 24
"""CloudWatch's dashboard grid is 24 units wide."""
GRAPH_HEIGHT = 6
ALARM_TILES_PER_ROW = 4
"""Alarm tiles a full-width alarm status widget shows side by side."""
DASHBOARD_NAME = re.compile(r"^[A-Za-z0-9_-]{1,255}$")
"""What CloudWatch takes as a dashboard's name (PutDashboard's ``DashboardName``)."""

_IN_OUT = (
    (RelayMetric.RECORDS, "in"),
    (RelayMetric.FORWARDED, "out"),
    (RelayMetric.DEAD_LETTERED, "dead-lettered"),
    (RelayMetric.EXPIRED, "expired"),
    (RelayMetric.FAILED, "failed (redelivered)"),
)


@checked
class MessagingDashboard(Construct):
    """A CloudWatch dashboard of relays, SNS HTTPS endpoints and alarms, in sections added as
    the stack creates them (:class:`~constructs_lib.AccountBridge` adds its relays' when given
    one).

    Example:

    ```python
    from aws_cdk import App, Environment, Stack

    from constructs_lib import AccountBridge, BridgeShadow, MessagingAlarms, MessagingDashboard

    app = App()
    stack = Stack(app, "Sales", env=Environment(account="111111111111", region="eu-west-1"))
    AccountBridge(
        stack,
        "Bridge",
        account_name="Sales",
        local_endpoints=["Sales"],
        shadows=[BridgeShadow("arn:aws:sqs:eu-west-1:222222222222:Billing")],
        alarms=MessagingAlarms(stack, "Alarms"),
        dashboard=MessagingDashboard(stack, "Dashboard", dashboard_name="Messaging-Sales"),
    )
    app.synth()
    ```
    """

    dashboard = Attribute[cloudwatch.Dashboard]("The CloudWatch dashboard.")
    shown_alarms = Attribute[list[cloudwatch.IAlarm]]("Every alarm a section shows so far.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        dashboard_name: str | None = None,
        period: Duration = ALARM_EVALUATION_PERIOD,
    ) -> None:
        """Create the dashboard with its heading; the ``show_*`` methods add sections.

        :param dashboard_name: letters, digits, ``-`` and ``_`` (up to 255), unique in the
            account across its regions (CloudWatch's dashboards are global). Default: a name
            CloudFormation generates.
        :param period: of every graph (1, 5, 10 or 30 seconds, or whole minutes). Default:
            :data:`~constructs_lib.defaults.ALARM_EVALUATION_PERIOD` (5 minutes), the alarms'.
        """
        super().__init__(scope, construct_id)
        if dashboard_name is not None and not (
            Token.is_unresolved(dashboard_name) or DASHBOARD_NAME.match(dashboard_name)
        ):
            raise ValueError(
                f"dashboard_name: CloudWatch takes 1 to 255 letters, digits, '-' and '_', got "
                f"{dashboard_name!r}"
            )
        require_metric_period("period", period)
        self._period = period
        self.shown_alarms = []
        self.dashboard = cloudwatch.Dashboard(
            self,
            "Resource",
            dashboard_name=dashboard_name,
            period_override=cloudwatch.PeriodOverride.AUTO,
        )
        stack = Stack.of(self).stack_name
        self.dashboard.add_widgets(
            cloudwatch.TextWidget(
                markdown=f"# The account bridge of stack {stack}\n"
                "Built by its CDK stack: a change made here in the console is lost at the "
                "next deploy.",
                width=FULL_WIDTH,
                height=2,
            )
        )

    @checked_keywords
    def show_relay(
        self, relay: CrossAccountRelay, alarms: Sequence[cloudwatch.IAlarm] = ()
    ) -> None:
        """A relay's section: its messages, its function, the oldest message of each queue it
        reads (but delay queues, which hold every message until due), and ``alarms`` (those on
        the relay and on its queues)."""
        period = self._period
        self._heading(f"{str(relay.direction).capitalize()} relay {relay.service_name}")
        messages = cloudwatch.GraphWidget(
            title="Messages",
            left=[relay.metric(name, period=period).with_(label=label) for name, label in _IN_OUT],
            width=8,
            height=GRAPH_HEIGHT,
        )
        function = cloudwatch.GraphWidget(
            title="Function",
            left=[
                relay.function.metric_errors(period=period, statistic="Sum"),
                relay.function.metric_throttles(period=period, statistic="Sum"),
            ],
            right=[
                relay.function.metric_duration(period=period, statistic="Maximum"),
                relay.function.metric_duration(period=period, statistic="p99"),
            ],
            width=8,
            height=GRAPH_HEIGHT,
        )
        ages = [
            queue.metric_approximate_age_of_oldest_message(period=period, statistic="Maximum")
            for queue in relay.source_queues
            if queue not in relay.delay_queues
        ]
        chunks = _chunks(ages, QUEUES_PER_GRAPH)
        oldest = [
            cloudwatch.GraphWidget(
                title="Oldest message per queue read (s)"
                + (f" ({n} of {len(chunks)})" if len(chunks) > 1 else ""),
                left=chunk,
                width=8,
                height=GRAPH_HEIGHT,
                legend_position=cloudwatch.LegendPosition.RIGHT,
            )
            for n, chunk in enumerate(chunks, 1)
        ]
        self.dashboard.add_widgets(messages, function, *oldest)
        self._alarm_status("Alarms of the relay and its queues", alarms)

    @checked_keywords
    def show_sns_endpoint(
        self, endpoint: SnsHttpsEndpoint, alarms: Sequence[cloudwatch.IAlarm] = ()
    ) -> None:
        """An SNS HTTPS endpoint's section: its answers, its URL's, its function, and
        ``alarms``."""
        period = self._period
        self._heading(f"SNS HTTPS endpoint {endpoint.service_name}")
        answers = cloudwatch.GraphWidget(
            title="Deliveries by answer",
            left=[endpoint.metric(name, period=period) for name in DELIVERY_METRICS],
            width=8,
            height=GRAPH_HEIGHT,
        )
        url = cloudwatch.GraphWidget(
            title="Function URL",
            left=[
                endpoint.function.metric(name, period=period, statistic="Sum")
                for name in ("UrlRequestCount", "Url4xxCount", "Url5xxCount")
            ],
            width=8,
            height=GRAPH_HEIGHT,
        )
        function = cloudwatch.GraphWidget(
            title="Function",
            left=[endpoint.function.metric_errors(period=period, statistic="Sum")],
            right=[endpoint.function.metric_duration(period=period, statistic="p99")],
            width=8,
            height=GRAPH_HEIGHT,
        )
        self.dashboard.add_widgets(answers, url, function)
        self._alarm_status("Alarms of the endpoint", alarms)

    @checked_keywords
    def show_alarms(self, title: str, alarms: Sequence[cloudwatch.IAlarm]) -> None:
        """A section of alarm states alone (an account's endpoint queues and topics, say)."""
        if alarms:
            self._heading(title)
            self._alarm_status(title, alarms)

    def _heading(self, text: str) -> None:
        self.dashboard.add_widgets(
            cloudwatch.TextWidget(markdown=f"## {text}", width=FULL_WIDTH, height=1)
        )

    def _alarm_status(self, title: str, alarms: Sequence[cloudwatch.IAlarm]) -> None:
        """``alarms`` in status widgets of at most CloudWatch's number each, those in alarm
        first."""
        chunks = _chunks(list(alarms), ALARMS_PER_STATUS_WIDGET)
        for n, chunk in enumerate(chunks, 1):
            self.dashboard.add_widgets(
                cloudwatch.AlarmStatusWidget(
                    title=title + (f" ({n} of {len(chunks)})" if len(chunks) > 1 else ""),
                    alarms=chunk,
                    sort_by=cloudwatch.AlarmStatusWidgetSortBy.STATE_UPDATED_TIMESTAMP,
                    width=FULL_WIDTH,
                    height=1 + math.ceil(len(chunk) / ALARM_TILES_PER_ROW),
                )
            )
        self.shown_alarms.extend(alarms)


_T = TypeVar("_T")


def _chunks(items: list[_T], size: int) -> list[list[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
