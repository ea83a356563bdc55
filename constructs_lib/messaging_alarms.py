"""CloudWatch alarms for the failure signals of a messaging account.

A failed SNS delivery, a message parked in any DLQ and a message that waits too long in an
endpoint queue are the three ways a message can stop moving; each gets an alarm, optionally
notifying an alarm topic.
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
from constructs_lib.defaults import (
    ALARM_EVALUATION_PERIOD,
    ALARM_PERIODS_UNDER_A_MINUTE_SECONDS,
    MAX_MESSAGE_AGE,
    MAX_MESSAGE_AGE_RANGE_SECONDS,
)
from constructs_lib.validation import require_local, require_range

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
        period = evaluation_period.to_seconds()
        if period not in ALARM_PERIODS_UNDER_A_MINUTE_SECONDS and (period < 60 or period % 60):
            *shorter, longest = ALARM_PERIODS_UNDER_A_MINUTE_SECONDS
            raise ValueError(
                f"evaluation_period: CloudWatch takes a period of "
                f"{', '.join(map(str, shorter))} or {longest} seconds or "
                f"whole minutes, got {period:g} s"
            )
        self._action = actions.SnsAction(alarm_topic) if alarm_topic else None
        self._max_age = max_message_age
        self._period = evaluation_period
        self.alarms = []

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
