"""The largest use of each AWS quota in a cloud assembly, and the quotas it crosses.

Run ``python -m stacks.quotas cdk.out``: a line per quota (the value, AWS's number, the
share and where); exit code 1 with the problems on standard error when a quota is crossed, 2
when the directory is no cloud assembly.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from stacks.quotas import QuotaGateError, largest_uses, measure_assembly, usage_line
from stacks.report_cli import assembly_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Print the largest use of each quota; report the crossed ones."""
    args = assembly_parser("stacks.quotas", __doc__, outputs=False).parse_args(argv)
    try:
        measurements = measure_assembly(args.assembly)
    except QuotaGateError as error:
        print(f"quota gate: {error}", file=sys.stderr)
        return 2
    for measurement in largest_uses(measurements):
        print(usage_line(measurement))
    problems = [m.problem() for m in measurements if m.crosses]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
