"""Command line of the sample-data generator: ``python -m cross_account_runtime.delivery_report.sample.cli``.

Writes ``--records`` delivery-status log events, reproducible from ``--seed``, in one layout
or all four, plus ``manifest.json`` with the counts the job must find in them. Events stream
to disk in bounded memory, made on every core; the files depend on the arguments alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cross_account_runtime.delivery_report.sample.generator import DEFAULT_HOURS, DEFAULT_START
from cross_account_runtime.delivery_report.sample.topology import sample_topology_from_dict
from cross_account_runtime.delivery_report.sample.writers import LAYOUTS, write_layouts


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, generate, write; 0 on success, 2 on a bad argument."""
    parser = argparse.ArgumentParser(description="Write sample SNS delivery-status logs.")
    parser.add_argument("--out", required=True, type=Path, help="directory to write into")
    parser.add_argument(
        "--records", type=_whole(1), default=10_000, help="log events to write (at least 1)"
    )
    parser.add_argument("--layout", choices=("all", *LAYOUTS), default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--topology", type=Path, help="topology JSON (default: the example)")
    parser.add_argument(
        "--start", default=DEFAULT_START.isoformat(), help="first publish time (ISO, UTC)"
    )
    parser.add_argument(
        "--hours", type=_positive_hours, default=DEFAULT_HOURS, help="publish window length (> 0)"
    )
    args = parser.parse_args(argv)
    try:
        start = datetime.fromisoformat(args.start)
    except ValueError:
        print(
            f"sample_data: --start {args.start!r} is not an ISO time; pass e.g. "
            "2024-05-01T00:00:00Z",
            file=sys.stderr,
        )
        return 2
    try:
        topology = (
            sample_topology_from_dict(json.loads(args.topology.read_text(encoding="utf-8-sig")))
            if args.topology
            else None
        )
    except OSError as error:
        print(
            f"sample_data: --topology {args.topology}: cannot be read ({error.strerror})",
            file=sys.stderr,
        )
        return 2
    except (ValueError, KeyError, TypeError) as error:
        print(
            f"sample_data: --topology {args.topology}: not a sample topology JSON ({error}); "
            "give a file like the example's",
            file=sys.stderr,
        )
        return 2
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    layouts = LAYOUTS if args.layout == "all" else (args.layout,)
    write_layouts(
        records=args.records,
        seed=args.seed,
        out=args.out,
        layouts=layouts,
        topology=topology,
        start=start,
        hours=args.hours,
    )
    end = start + timedelta(hours=args.hours)
    print(
        f"wrote {args.records} records ({', '.join(layouts)}) for {start:%Y-%m-%d %H:%M} .. {end:%Y-%m-%d %H:%M} to {args.out}"
    )
    return 0


def _whole(low: int) -> Callable[[str], int]:
    """argparse type: a whole number of at least ``low``."""

    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < low:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= {low}")
        return int(text)

    return parse


def _positive_hours(text: str) -> float:
    """argparse type: a window length above zero."""
    try:
        hours = float(text)
    except ValueError:
        hours = 0.0
    if not hours > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hours above 0")
    return hours


if __name__ == "__main__":
    sys.exit(main())
