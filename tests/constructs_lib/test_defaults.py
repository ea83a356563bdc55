"""Every default has one home, :mod:`constructs_lib.defaults`: the constructs take their
keyword defaults from it and the topology reads the same values, so changing one there changes
a construct used directly and every stack the topology builds alike."""

from __future__ import annotations

import enum
import inspect
import re
from typing import Any

import pytest
from aws_cdk import App, Duration, Size, Stack
from aws_cdk import aws_logs as logs
from constructs import Construct

import constructs_lib
from constructs_lib import defaults
from stacks.topology import AlarmSettings, TopologyError, parse_topology

DEFAULT_VALUES = [value for name, value in vars(defaults).items() if name.isupper()]


def is_a_setting(value: object) -> bool:
    """A value someone may want to tune: a number, a name or a time, not a flag, a choice
    among an enum's members, or nothing."""
    if isinstance(value, bool | enum.Enum) or value is None or value == "":
        return False
    return isinstance(value, int | float | str | Duration | Size | logs.RetentionDays)


def construct_defaults() -> list[tuple[str, Any]]:
    found = []
    for name in constructs_lib.__all__:
        value = getattr(constructs_lib, name)
        if inspect.isclass(value) and issubclass(value, Construct):
            for parameter in inspect.signature(value.__init__).parameters.values():
                if is_a_setting(parameter.default):
                    found.append((f"{name}.{parameter.name}", parameter.default))
    return found


@pytest.mark.parametrize(("where", "value"), construct_defaults())
def test_every_construct_default_comes_from_the_defaults_module(where: str, value: Any) -> None:
    assert any(value is known for known in DEFAULT_VALUES), f"{where} = {value!r}"


def test_the_topology_reads_the_same_defaults(example_document: dict[str, Any]) -> None:
    topology = parse_topology(example_document)
    assert {e.max_receive_count for e in topology.all_queues} == {defaults.MAX_RECEIVE_COUNT}
    assert topology.alarms == AlarmSettings(
        max_message_age_seconds=defaults.MAX_MESSAGE_AGE_SECONDS
    )
    assert {t.success_sample_rate for t in topology.topics} == {defaults.SUCCESS_SAMPLE_RATE}
    assert topology.analytics is not None
    assert topology.analytics.retention_days == defaults.LOG_BUCKET_RETENTION_DAYS
    assert (
        topology.analytics.infrequent_access_after_days
        == defaults.LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS
    )
    assert topology.analytics.schedule_expression == defaults.REPORT_SCHEDULE


def test_derived_defaults_follow_what_they_derive_from() -> None:
    assert defaults.MAX_MESSAGE_AGE.to_seconds() == defaults.MAX_MESSAGE_AGE_SECONDS
    assert defaults.LOG_BUCKET_RETENTION.to_days() == defaults.LOG_BUCKET_RETENTION_DAYS


def test_every_log_group_keeps_the_one_default_retention() -> None:
    retentions = {
        name: inspect.signature(inspect.unwrap(getattr(constructs_lib, name).__init__))
        .parameters["log_retention"]
        .default
        for name in constructs_lib.__all__
        if inspect.isclass(getattr(constructs_lib, name))
        and "log_retention" in inspect.signature(getattr(constructs_lib, name).__init__).parameters
    }
    assert set(retentions) == {
        "CrossAccountRelay",
        "DeliveryLoggedTopic",
        "DeliveryReportJob",
        "SnsHttpsEndpoint",
    }
    assert all(value is defaults.LOG_RETENTION for value in retentions.values())


def test_the_receive_count_default_and_floor_follow_the_immediate_retries() -> None:
    assert defaults.default_max_receive_count(defaults.IMMEDIATE_RETRIES) == (
        defaults.MAX_RECEIVE_COUNT
    )
    assert defaults.default_max_receive_count(8) == 8 + 1 + defaults.RECEIVE_MARGIN
    assert defaults.max_receive_count_problem(9, 8) is None
    problem = defaults.max_receive_count_problem(8, 8)
    assert problem is not None
    assert "allow at least 9 receives (the default is 13)" in problem


def test_the_construct_and_the_topology_refuse_a_short_redrive_with_one_rule(
    document: dict[str, Any],
) -> None:
    rule = defaults.max_receive_count_problem(3, 5)
    with pytest.raises(ValueError, match=re.escape(f"max_receive_count: {rule}")):
        constructs_lib.EndpointQueue(Stack(App(), "S"), "Q", endpoint_name="Q", max_receive_count=3)
    document["endpoints"][0]["maxReceiveCount"] = 3
    with pytest.raises(TopologyError) as caught:
        parse_topology(document)
    assert caught.value.problems == [("topology.endpoints[0].maxReceiveCount", rule)]
