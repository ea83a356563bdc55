"""CloudWatch alarms for the failure signals of a messaging account.

A failed SNS delivery, a message parked in any DLQ and a message that waits too long in an
endpoint queue are the three ways a message can stop moving; each gets an alarm, optionally
notifying an alarm topic. The bridge's functions add theirs: a relay's errors and throttles,
the messages it dead-lettered, let expire or could not send (its metrics,
:class:`~constructs_lib.RelayMetric`), and an SNS HTTPS endpoint's errors, 5xx answers, refused
signatures and dedupe table throttles.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked, checked_keywords
from constructs_lib._private.metric_periods import require_metric_period
from constructs_lib.cross_account_relay import CrossAccountRelay, RelayMetric
from constructs_lib.defaults import (
    ALARM_EVALUATION_PERIOD,
    MAX_MESSAGE_AGE,
    MAX_MESSAGE_AGE_RANGE_SECONDS,
    PERSISTING_FAILURE_PERIODS,
)
from constructs_lib.sns_https_endpoint import SnsHttpsEndpoint
from constructs_lib.validation import require_local, require_range
from cross_account_runtime.sns_endpoint.receiver import SIGNATURE_REFUSED_METRIC

_LOCAL_METRICS = (
    "CloudWatch keeps its metrics in its own account alone, so an alarm here would watch "
    "nothing: watch it with a MessagingAlarms in a stack of that account"
)


@checked
class MessagingAlarms(Construct):
    """Alarms on topics, DLQs and endpoint queues; add them as the stack creates resources.

    Example:

    ```python
    from aws_cdk import App, Stack

    from constructs_lib import EndpointQueue, MessagingAlarms

    app = App()
    stack = Stack(app, "Sales")
    sales = EndpointQueue(stack, "Sales", endpoint_name="Sales")
    alarms = MessagingAlarms(stack, "Alarms")
    alarms.watch_endpoint_queue("Sales", sales.queue)
    app.synth()
    ```
    """

    alarms = Attribute[list[cloudwatch.Alarm]]("Every alarm added so far.")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        alarm_topic: sns.ITopic | None = None,
        max_message_age: Duration = MAX_MESSAGE_AGE,
        evaluation_period: Duration = ALARM_EVALUATION_PERIOD,
    ) -> None:
        """Prepare the alarms; the ``watch_*`` methods add one per resource.

        :param alarm_topic: notified when an alarm fires and when it clears. Default: none
            (the alarms only show in CloudWatch).
        :param max_message_age: the age of the oldest message in an endpoint queue above which
            the endpoint is considered stuck (1 minute to 14 days). Default:
            :data:`~constructs_lib.defaults.MAX_MESSAGE_AGE_SECONDS` (15 minutes).
        :param evaluation_period: the metric period (1, 5, 10 or 30 seconds, or whole
            minutes, as CloudWatch takes it). Default:
            :data:`~constructs_lib.defaults.ALARM_EVALUATION_PERIOD` (5 minutes).
        """
        super().__init__(scope, construct_id)
        require_range(
            "max_message_age (seconds)",
            int(max_message_age.to_seconds()),
            *MAX_MESSAGE_AGE_RANGE_SECONDS,
        )
        require_metric_period("evaluation_period", evaluation_period)
        self._action = actions.SnsAction(alarm_topic) if alarm_topic else None
        self._max_age = max_message_age
        self._period = evaluation_period
        self.alarms = []

    def _above_zero(
        self,
        alarm_id: str,
        metric: cloudwatch.Metric | cloudwatch.MathExpression,
        description: str,
        *,
        periods: int = 1,
    ) -> cloudwatch.Alarm:
        """An alarm when ``metric`` is above zero in ``periods`` periods in a row."""
        return self._add(
            metric.create_alarm(
                self,
                alarm_id,
                alarm_description=description,
                threshold=0,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=periods,
                datapoints_to_alarm=periods,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )

    def _add(self, alarm: cloudwatch.Alarm) -> cloudwatch.Alarm:
        if self._action:
            alarm.add_alarm_action(self._action)
            alarm.add_ok_action(self._action)
        self.alarms.append(alarm)
        return alarm

    @checked_keywords
    def watch_topic(self, alarm_id: str, topic: sns.ITopic) -> cloudwatch.Alarm:
        """Alarm when any delivery of the topic fails (``NumberOfNotificationsFailed`` > 0)."""
        require_local("topic", topic, self, "a topic", _LOCAL_METRICS)
        return self._add(
            topic.metric_number_of_notifications_failed(
                period=self._period, statistic="Sum"
            ).create_alarm(
                self,
                f"{alarm_id}DeliveryFailed",
                alarm_description=f"SNS failed to deliver a message of {topic.topic_name}; "
                "check its /Failure delivery-status log group",
                threshold=0,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )

    @checked_keywords
    def watch_dead_letter_queue(self, alarm_id: str, queue: sqs.IQueue) -> cloudwatch.Alarm:
        """Alarm when a DLQ holds any message."""
        require_local("queue", queue, self, "a queue", _LOCAL_METRICS)
        return self._add(
            queue.metric_approximate_number_of_messages_visible(
                period=self._period, statistic="Maximum"
            ).create_alarm(
                self,
                f"{alarm_id}DeadLetters",
                alarm_description=f"Messages are waiting in the dead-letter queue {queue.queue_name}",
                threshold=0,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )

    @checked_keywords
    def watch_endpoint_queue(self, alarm_id: str, queue: sqs.IQueue) -> cloudwatch.Alarm:
        """Alarm when the oldest message of an endpoint queue is older than the bound."""
        require_local("queue", queue, self, "a queue", _LOCAL_METRICS)
        return self._add(
            queue.metric_approximate_age_of_oldest_message(
                period=self._period, statistic="Maximum"
            ).create_alarm(
                self,
                f"{alarm_id}OldestMessage",
                alarm_description=f"The oldest message in {queue.queue_name} is older than "
                f"{int(self._max_age.to_seconds())} s: is the endpoint consuming?",
                threshold=self._max_age.to_seconds(),
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        )

    @checked_keywords
    def watch_relay(self, alarm_id: str, relay: CrossAccountRelay) -> list[cloudwatch.Alarm]:
        """Alarms on a relay: its function's errors (a batch that failed whole) and throttles,
        the messages it dead-lettered or found expired, and ``Failed`` messages over
        :data:`~constructs_lib.defaults.PERSISTING_FAILURE_PERIODS` periods in a row (a send
        that keeps failing: a destination missing, a key refusing)."""
        require_local("relay", relay.function, self, "a relay", _LOCAL_METRICS)
        period = self._period
        name = relay.service_name
        return [
            self._above_zero(
                f"{alarm_id}Errors",
                relay.function.metric_errors(period=period, statistic="Sum"),
                f"The relay {name} failed whole batches (function errors): its log group "
                "holds the traceback; the batches return to their queues",
            ),
            self._above_zero(
                f"{alarm_id}Throttles",
                relay.function.metric_throttles(period=period, statistic="Sum"),
                f"Lambda throttled the relay {name}: the account's or the function's "
                "concurrency is spent, and its queues wait",
            ),
            self._above_zero(
                f"{alarm_id}DeadLettered",
                relay.metric(RelayMetric.DEAD_LETTERED, period=period),
                f"The relay {name} dead-lettered messages: its DeadLettered.<reason> metrics "
                "and log lines (outcome dead_lettered) say why; redrive them once fixed",
            ),
            self._above_zero(
                f"{alarm_id}Expired",
                relay.metric(RelayMetric.EXPIRED, period=period),
                f"The relay {name} dropped messages whose time to be received had run out "
                "(acknowledged, never delivered): is a queue of the route backed up?",
            ),
            self._above_zero(
                f"{alarm_id}Failed",
                relay.metric(RelayMetric.FAILED, period=period),
                f"The relay {name} has failed to send messages for "
                f"{PERSISTING_FAILURE_PERIODS} periods in a row (SQS redelivers them, then "
                "dead-letters): its log lines name the outcome (destination_missing, "
                "key_refused, send_failed)",
                periods=PERSISTING_FAILURE_PERIODS,
            ),
        ]

    @checked_keywords
    def watch_sns_endpoint(
        self, alarm_id: str, endpoint: SnsHttpsEndpoint
    ) -> list[cloudwatch.Alarm]:
        """Alarms on an SNS HTTPS endpoint: its function's errors, refused signatures,
        throttles of its dedupe table, and 5xx answers over
        :data:`~constructs_lib.defaults.PERSISTING_FAILURE_PERIODS` periods in a row (SNS
        retries each along the delivery policy, then dead-letters it)."""
        require_local("endpoint", endpoint.function, self, "an endpoint", _LOCAL_METRICS)
        period = self._period
        name = endpoint.service_name
        table = endpoint.table
        throttles = cloudwatch.MathExpression(
            expression="reads + writes",
            using_metrics={
                "reads": table.metric("ReadThrottleEvents", period=period, statistic="Sum"),
                "writes": table.metric("WriteThrottleEvents", period=period, statistic="Sum"),
            },
            label="Dedupe table throttle events",
            period=period,
        )
        return [
            self._above_zero(
                f"{alarm_id}Errors",
                endpoint.function.metric_errors(period=period, statistic="Sum"),
                f"The SNS endpoint {name} failed unexpectedly (function errors): its log "
                "group holds the traceback; SNS retries the deliveries",
            ),
            self._above_zero(
                f"{alarm_id}SignatureRefused",
                endpoint.metric(SIGNATURE_REFUSED_METRIC, period=period),
                f"The SNS endpoint {name} refused messages whose signature did not verify: "
                "forged posts to its URL, or a signing certificate it cannot fetch",
            ),
            self._above_zero(
                f"{alarm_id}DedupeThrottles",
                throttles,
                f"DynamoDB throttled the dedupe table of the SNS endpoint {name}: deliveries "
                "are answered 5xx and retried by SNS",
            ),
            self._above_zero(
                f"{alarm_id}Url5xx",
                endpoint.metric_url_5xx(period=period),
                f"The SNS endpoint {name} has answered 5xx for {PERSISTING_FAILURE_PERIODS} "
                "periods in a row: SNS retries, then moves the deliveries to the "
                "subscription's dead-letter queue; its log lines (outcome retry or error) "
                "say why",
                periods=PERSISTING_FAILURE_PERIODS,
            ),
        ]
