"""The effective access matrix, read back from the synthesized templates.

Run ``python -m stacks.checks.access_report cdk.out --json access.json --markdown access.md``;
without ``--json`` or ``--markdown`` the Markdown goes to standard output. Exit code 2 when the
assembly holds something the report cannot read with certainty.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from stacks.checks.access_report.assembly import AccessReportError
from stacks.checks.access_report.markdown import to_markdown
from stacks.checks.access_report.report import build_report
from stacks.report_cli import assembly_parser, write_report


def main(argv: Sequence[str] | None = None) -> int:
    """Write the access report of a cloud assembly as JSON and Markdown."""
    args = assembly_parser("stacks.checks.access_report", __doc__).parse_args(argv)
    try:
        report = build_report(args.assembly)
    except AccessReportError as error:
        print(f"access report: {error}", file=sys.stderr)
        return 2
    write_report(args, json.dumps(report, indent=2), to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
