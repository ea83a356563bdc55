"""``AWS::CloudWatch::Alarm`` for moto's CloudFormation, which has no model for it.

moto's CloudWatch keeps alarms (``PutMetricAlarm``, ``DescribeAlarms``), but its CloudFormation
skips the type with a warning: a stack's alarms never exist, and a template that reads one's
``Arn`` (an alarm status widget of a dashboard, an alarm rule) is refused outright
("Fn::GetAtt references undefined resource"). This model creates each alarm through moto's own
backend, as ``PutMetricAlarm`` would, so a deployed stack's alarms are found by
``describe-alarms`` with the metric, dimensions, threshold and actions the template gave them.
"""

from __future__ import annotations

from typing import Any

from moto.cloudwatch.models import (
    CloudWatchBackend,
    Dimension,
    Metric,
    MetricDataQuery,
    MetricStat,
    cloudwatch_backends,
)
from moto.core.common_models import CloudFormationModel

from local_aws.moto.resource_model import ReplacedOnUpdate, ResourceModel


class AlarmResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::CloudWatch::Alarm`` put into moto's CloudWatch backend. Unnamed, it gets the
    name CloudFormation generates; ``Ref`` gives the name, ``Fn::GetAtt Arn`` its ARN."""

    TYPE = "AWS::CloudWatch::Alarm"
    NAME_PROPERTY = "AlarmName"
    ATTRIBUTES = frozenset({"Arn"})

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> AlarmResource:
        properties = cloudformation_json.get("Properties", {})
        name = cls.resource_name(resource_name, cloudformation_json)
        backend: CloudWatchBackend = cloudwatch_backends[account_id][region_name]
        alarm = backend.put_metric_alarm(
            name=name,
            namespace=properties.get("Namespace"),
            metric_name=properties.get("MetricName"),
            metric_data_queries=[_query(m) for m in properties.get("Metrics", [])] or None,
            comparison_operator=properties["ComparisonOperator"],
            evaluation_periods=int(properties["EvaluationPeriods"]),
            datapoints_to_alarm=_int(properties.get("DatapointsToAlarm")),
            period=_int(properties.get("Period")),  # type: ignore[arg-type]
            threshold=float(properties.get("Threshold", 0)),
            statistic=properties.get("Statistic"),
            extended_statistic=properties.get("ExtendedStatistic"),
            description=properties.get("AlarmDescription"),
            dimensions=list(properties.get("Dimensions", [])),
            alarm_actions=list(properties.get("AlarmActions", [])),
            ok_actions=list(properties.get("OKActions", [])),
            insufficient_data_actions=list(properties.get("InsufficientDataActions", [])),
            unit=properties.get("Unit"),
            actions_enabled=str(properties.get("ActionsEnabled", True)).lower() == "true",
            treat_missing_data=properties.get("TreatMissingData"),
            evaluate_low_sample_count_percentile=properties.get("EvaluateLowSampleCountPercentile"),
            threshold_metric_id=properties.get("ThresholdMetricId"),
        )
        return cls(name, {"Arn": alarm.alarm_arn})

    def delete(self, account_id: str, region_name: str) -> None:
        cloudwatch_backends[account_id][region_name].delete_alarms([self.physical_resource_id])

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        name = cls.resource_name(resource_name, cloudformation_json)
        cloudwatch_backends[account_id][region_name].delete_alarms([name])


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _query(metric: dict[str, Any]) -> MetricDataQuery:
    """One of a metric-math alarm's ``Metrics``, as moto's ``PutMetricAlarm`` reads it."""
    stat = metric.get("MetricStat")
    metric_stat = None
    if stat is not None:
        watched = stat["Metric"]
        metric_stat = MetricStat(
            metric=Metric(
                metric_name=watched["MetricName"],
                namespace=watched.get("Namespace"),
                dimensions=[
                    Dimension(name=d["Name"], value=d["Value"])
                    for d in watched.get("Dimensions", [])
                ],
            ),
            period=stat.get("Period"),
            stat=stat.get("Stat"),
            unit=stat.get("Unit"),
        )
    return MetricDataQuery(
        query_id=metric["Id"],
        label=metric.get("Label"),  # type: ignore[arg-type]
        period=metric.get("Period"),  # type: ignore[arg-type]
        return_data=metric.get("ReturnData"),  # type: ignore[arg-type]
        expression=metric.get("Expression"),
        metric_stat=metric_stat,
    )
