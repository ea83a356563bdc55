"""A deployed stack's alarms exist in the local AWS as CloudFormation creates them in AWS: found
by ``DescribeAlarms`` with their metric, dimensions, threshold and periods, and their ARNs
readable by the rest of the template (a dashboard's alarm status widget). Plain moto skips the
type, and refuses a template that reads an alarm's ``Arn``: every test here fails without
``local_aws.moto.cloudwatch_alarms``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App, Duration, Environment, Stack

from constructs_lib import EndpointQueue, MessagingAlarms, MessagingDashboard
from constructs_lib.defaults import MAX_MESSAGE_AGE_SECONDS
from tests.local_aws.accounts import REGION, client, fresh_account
from tests.local_aws.moto.cloudformation import delete, deploy, update

pytestmark = pytest.mark.moto


def template(account: str, *, max_age_seconds: int = MAX_MESSAGE_AGE_SECONDS) -> dict[str, Any]:
    """An endpoint queue watched by alarms, which a dashboard shows by ARN."""
    app = App()
    stack = Stack(app, "Watched", env=Environment(account=account, region=REGION))
    queue = EndpointQueue(stack, "Sales", endpoint_name="Sales", queue_name="Sales")
    alarms = MessagingAlarms(stack, "Alarms", max_message_age=Duration.seconds(max_age_seconds))
    watched = [
        alarms.watch_endpoint_queue("Sales", queue.queue),
        alarms.watch_dead_letter_queue("Sales", queue.dead_letter_queue),
    ]
    MessagingDashboard(stack, "Dashboard", dashboard_name="Watched").show_alarms("Sales", watched)
    found = app.synth().get_stack_by_name("Watched").template
    return {k: v for k, v in found.items() if k not in ("Parameters", "Rules")}


def test_the_stacks_alarms_are_created_as_the_template_gives_them(moto_endpoint: str) -> None:
    account = fresh_account(moto_endpoint)
    deploy(account, moto_endpoint, "Watched", template(account.account_id))
    alarms = client(account, "cloudwatch", moto_endpoint).describe_alarms()["MetricAlarms"]
    by_metric = {a["MetricName"]: a for a in alarms}
    assert set(by_metric) == {"ApproximateAgeOfOldestMessage", "ApproximateNumberOfMessagesVisible"}
    oldest = by_metric["ApproximateAgeOfOldestMessage"]
    assert oldest["Namespace"] == "AWS/SQS"
    assert oldest["Dimensions"] == [{"Name": "QueueName", "Value": "Sales"}]
    assert oldest["Threshold"] == MAX_MESSAGE_AGE_SECONDS
    assert oldest["ComparisonOperator"] == "GreaterThanThreshold"
    assert oldest["EvaluationPeriods"] == 1
    assert oldest["Period"] == 300
    assert oldest["TreatMissingData"] == "notBreaching"
    assert oldest["AlarmName"].startswith("Watched-")


def test_a_dashboard_reads_the_alarms_arns(moto_endpoint: str) -> None:
    account = fresh_account(moto_endpoint)
    deploy(account, moto_endpoint, "Watched", template(account.account_id))
    cloudwatch = client(account, "cloudwatch", moto_endpoint)
    arns = {a["AlarmArn"] for a in cloudwatch.describe_alarms()["MetricAlarms"]}
    body = json.loads(cloudwatch.get_dashboard(DashboardName="Watched")["DashboardBody"])
    (status,) = [w for w in body["widgets"] if w["type"] == "alarm"]
    assert set(status["properties"]["alarms"]) == arns


def test_an_update_replaces_the_alarm_and_a_delete_removes_it(moto_endpoint: str) -> None:
    account = fresh_account(moto_endpoint)
    deploy(account, moto_endpoint, "Watched", template(account.account_id))
    update(account, moto_endpoint, "Watched", template(account.account_id, max_age_seconds=600))
    cloudwatch = client(account, "cloudwatch", moto_endpoint)
    alarms = cloudwatch.describe_alarms()["MetricAlarms"]
    assert len(alarms) == 2
    assert {a["Threshold"] for a in alarms if a["Namespace"] == "AWS/SQS"} >= {600}
    delete(account, moto_endpoint, "Watched")
    assert cloudwatch.describe_alarms()["MetricAlarms"] == []
