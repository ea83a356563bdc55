"""The effective access matrix, read back from the synthesized templates.

Local AWS (moto) neither stores queue policies nor enforces them, so who may send to and
receive from each queue is checked statically: this package reads what CloudFormation would be
given (the cloud assembly in ``cdk.out``), not what the code meant to write, and reports every
grant with its conditions. Tests compare the result with the topology's intent.

The same holds for the delivery logs, which leave their account: each log group's subscription
filter and whether the destination admits it, the destination's Firehose stream and where in S3
it writes, and who may read and write that bucket's prefixes.

Run ``python -m stacks.checks.access_report cdk.out --json access.json --markdown access.md``.
"""

from stacks.checks.access_report.assembly import AccessReportError, SynthesizedStack, read_assembly
from stacks.checks.access_report.intent import (
    Access,
    LogDataEdge,
    PlatformPath,
    RelayEdge,
    actual_access,
    actual_log_data_edges,
    actual_platform_paths,
    actual_relay_edges,
    expected_access,
    expected_log_data_edges,
    expected_platform_paths,
    expected_relay_edges,
    principal_set,
)
from stacks.checks.access_report.markdown import to_markdown
from stacks.checks.access_report.records import AccessReport
from stacks.checks.access_report.report import build_report
from stacks.checks.access_report.summary import AccessSummary, summarize, summary_lines

__all__ = [
    "Access",
    "AccessReport",
    "AccessReportError",
    "AccessSummary",
    "LogDataEdge",
    "PlatformPath",
    "RelayEdge",
    "SynthesizedStack",
    "actual_access",
    "actual_log_data_edges",
    "actual_platform_paths",
    "actual_relay_edges",
    "build_report",
    "expected_access",
    "expected_log_data_edges",
    "expected_platform_paths",
    "expected_relay_edges",
    "principal_set",
    "read_assembly",
    "summarize",
    "summary_lines",
    "to_markdown",
]
