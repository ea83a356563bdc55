"""The effective access matrix, read back from the synthesized templates.

Run ``python -m stacks.checks.access_report cdk.out --json access.json --markdown access.md``;
without ``--json`` or ``--markdown`` the Markdown goes to standard output. Exit code 2 when the
assembly holds something the report cannot read with certainty.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from stacks.checks.access_report.assembly import AccessReportError
from stacks.checks.access_report.markdown import to_markdown
from stacks.checks.access_report.report import build_report


def main(argv: Sequence[str] | None = None) -> int:
    """Write the access report of a cloud assembly as JSON and Markdown."""
    parser = argparse.ArgumentParser(
        prog="python -m stacks.checks.access_report",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("assembly", help="the cloud assembly directory (cdk.out)")
    parser.add_argument("--json", type=Path, help="write the JSON report here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown report here")
    args = parser.parse_args(argv)
    try:
        report = build_report(args.assembly)
    except AccessReportError as error:
        print(f"access report: {error}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(to_markdown(report), encoding="utf-8")
    if not args.json and not args.markdown:
        print(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
