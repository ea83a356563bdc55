"""Metrics as CloudWatch's embedded metric format: one log line CloudWatch Logs turns into
metrics, with no API call and no client to import.

A line is a JSON object whose ``_aws`` member says which of its members are metrics: the
``Timestamp`` (epoch ms) and one ``CloudWatchMetrics`` directive, its ``Namespace``, its
``Dimensions`` (lists of member names whose values are the dimensions) and its ``Metrics``
(``Name`` and ``Unit``, at most 100); each dimension and metric is also a member of the object
(CloudWatch's "Embedded metric format specification"). Powertools for AWS Lambda's Metrics
writes the same shape; this module is a few lines of ``json`` instead of its import, which a
relay's cold start would pay.

A component writes one line per batch, on a line of its own, with bounded dimensions only (a
service and a direction, never a message id), so that a batch of 10,000 messages still logs one
small line.
"""

from __future__ import annotations

import json
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Final, TextIO

    MetricsWriter = Callable[[Mapping[str, str], Mapping[str, int]], None]
    """Writes one line of counts under dimensions: :func:`write_metrics`, or a test's."""

NAMESPACE: Final = "CrossAccountMessaging"
"""The namespace of every metric the runtimes write (one home; the constructs' alarms and
dashboards read it)."""
MAX_METRICS: Final = 100
"""CloudWatch takes at most 100 metrics in one directive."""
MAX_DIMENSIONS: Final = 30
"""CloudWatch takes at most 30 dimensions in one dimension set."""
COUNT: Final = "Count"
SERVICE_DIMENSION: Final = "Service"
"""The dimension every line carries: the function's service name (``POWERTOOLS_SERVICE_NAME``),
one per function, which the constructs set, so that an alarm tells functions apart."""


def metric_name(value: str) -> str:
    """A metric's name from an outcome's text: ``destination_missing`` -> ``DestinationMissing``."""
    return "".join(part.capitalize() for part in value.split("_"))


def metrics_line(
    dimensions: Mapping[str, str],
    counts: Mapping[str, int],
    *,
    namespace: str = NAMESPACE,
    timestamp_ms: int | None = None,
) -> str:
    """One EMF line: each of ``counts`` a metric in ``Count``, under ``dimensions``."""
    if len(counts) > MAX_METRICS:
        raise ValueError(f"counts: {len(counts)} metrics, CloudWatch takes at most {MAX_METRICS}")
    if len(dimensions) > MAX_DIMENSIONS:
        raise ValueError(
            f"dimensions: {len(dimensions)}, CloudWatch takes at most {MAX_DIMENSIONS}"
        )
    clash = sorted(set(dimensions) & set(counts))
    if clash:
        raise ValueError(f"counts: {clash} are dimensions too; name them apart")
    document: dict[str, object] = {
        "_aws": {
            "Timestamp": int(time.time() * 1000) if timestamp_ms is None else timestamp_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace,
                    "Dimensions": [list(dimensions)],
                    "Metrics": [{"Name": name, "Unit": COUNT} for name in counts],
                }
            ],
        },
        **dimensions,
        **counts,
    }
    return json.dumps(document, separators=(",", ":"))


def write_metrics(
    dimensions: Mapping[str, str],
    counts: Mapping[str, int],
    *,
    stream: TextIO | None = None,
) -> None:
    """Write :func:`metrics_line` to ``stream`` (default: the standard output current at the
    time of the write, which Lambda sends to CloudWatch Logs)."""
    out = stream if stream is not None else sys.stdout
    out.write(metrics_line(dimensions, counts) + "\n")
    out.flush()
