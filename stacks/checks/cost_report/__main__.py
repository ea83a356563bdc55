"""What a topology's synthesized templates cost: each account's fixed monthly cost and a
million messages through the account bridge.

Run ``python -m stacks.checks.cost_report cdk.out [--json costs.json] [--markdown costs.md]
[--message-bytes 4096] [--messages 1000000] [--over-days 30]``; without ``--json`` or
``--markdown`` the Markdown goes to standard output. Exit code 2 when the directory is no cloud
assembly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from stacks.checks.cost_report import usage
from stacks.checks.cost_report.markdown import to_markdown
from stacks.checks.cost_report.report import build_cost_report
from stacks.quotas.assembly import QuotaGateError
from stacks.report_cli import assembly_parser, write_report


def main(argv: Sequence[str] | None = None) -> int:
    """Write the cost report of a cloud assembly as JSON and Markdown."""
    parser = assembly_parser("stacks.checks.cost_report", __doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--message-bytes", type=int, default=usage.MESSAGE_BYTES)
    parser.add_argument("--over-days", type=float, default=usage.SPREAD_DAYS)
    args = parser.parse_args(argv)
    try:
        report = build_cost_report(
            args.assembly,
            messages=args.messages,
            message_bytes=args.message_bytes,
            over_days=args.over_days,
        )
    except QuotaGateError as error:
        print(f"cost report: {error}", file=sys.stderr)
        return 2
    write_report(args, json.dumps(report.as_json(), indent=2), to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
