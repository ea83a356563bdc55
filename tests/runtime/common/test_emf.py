"""An embedded-metric-format line is what CloudWatch's specification asks for: a ``_aws``
member with an integer ``Timestamp`` and ``CloudWatchMetrics`` directives (``Namespace``,
``Dimensions`` as lists of member names, ``Metrics`` with ``Name`` and ``Unit``, at most 100),
every dimension a string member and every metric a number member of the same object."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from cross_account_runtime.common.emf import MAX_METRICS, NAMESPACE, metrics_line, write_metrics

UNITS = {"Seconds", "Microseconds", "Milliseconds", "Bytes", "Count", "Percent", "None"}
"""Some of the units the specification lists; the runtimes write ``Count`` only."""


def spec_problems(line: str) -> list[str]:
    """What the specification's rules find wrong with a line (none for a valid one)."""
    document: dict[str, Any] = json.loads(line)
    problems: list[str] = []
    metadata = document.get("_aws", {})
    if not isinstance(metadata.get("Timestamp"), int):
        problems.append("_aws.Timestamp is not an integer of epoch milliseconds")
    for directive in metadata.get("CloudWatchMetrics", []):
        if not 1 <= len(directive.get("Namespace", "")) <= 1024:
            problems.append("Namespace is not 1 to 1024 characters")
        for dimension_set in directive["Dimensions"]:
            if len(dimension_set) > 30:
                problems.append("a dimension set has more than 30 dimensions")
            problems += [
                f"dimension {name} is not a string member"
                for name in dimension_set
                if not isinstance(document.get(name), str)
            ]
        if len(directive["Metrics"]) > 100:
            problems.append("more than 100 metrics in a directive")
        for metric in directive["Metrics"]:
            if metric.get("Unit", "None") not in UNITS:
                problems.append(f"{metric['Name']}: unit {metric.get('Unit')}")
            if not isinstance(document.get(metric["Name"]), int | float):
                problems.append(f"metric {metric['Name']} is not a number member")
    if not metadata.get("CloudWatchMetrics"):
        problems.append("no CloudWatchMetrics directive")
    return problems


def test_a_line_meets_the_specification() -> None:
    line = metrics_line(
        {"Service": "sqs-relay", "Direction": "outbound"},
        {"Forwarded": 3, "Expired": 0},
        timestamp_ms=1_767_225_600_000,
    )

    assert spec_problems(line) == []
    document = json.loads(line)
    (directive,) = document["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == NAMESPACE
    assert directive["Dimensions"] == [["Service", "Direction"]]
    assert (document["Forwarded"], document["Expired"]) == (3, 0)
    assert "\n" not in line


def test_more_metrics_than_cloudwatch_takes_are_refused() -> None:
    counts = {f"M{n}": n for n in range(MAX_METRICS + 1)}
    with pytest.raises(ValueError, match="at most 100"):
        metrics_line({"Service": "s"}, counts)


def test_a_metric_named_like_a_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="are dimensions too"):
        metrics_line({"Direction": "inbound"}, {"Direction": 1})


def test_a_line_is_written_whole_on_a_line_of_its_own() -> None:
    stream = io.StringIO()
    write_metrics({"Service": "s"}, {"Records": 10_000}, stream=stream)
    (line,) = stream.getvalue().splitlines()
    assert spec_problems(line) == []
    assert len(line) < 300
