"""What the checks' command lines share: the cloud assembly they read and where a report goes.

Each report (access, cost) takes the assembly directory and writes JSON and Markdown where
asked, the Markdown to standard output when neither is; the quota gate takes the assembly
alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def assembly_parser(prog: str, doc: str | None, *, outputs: bool = True) -> argparse.ArgumentParser:
    """A parser taking the cloud assembly directory (and, with ``outputs``, ``--json`` and
    ``--markdown``), described by the first line of ``doc``."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {prog}", description=doc.splitlines()[0] if doc else None
    )
    parser.add_argument("assembly", help="the cloud assembly directory (cdk.out)")
    if outputs:
        parser.add_argument("--json", type=Path, help="write the JSON report here")
        parser.add_argument("--markdown", type=Path, help="write the Markdown report here")
    return parser


def write_report(args: argparse.Namespace, json_text: str, markdown: str) -> None:
    """Write the report where ``args`` asks, or its Markdown to standard output."""
    if args.json:
        args.json.write_text(json_text + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown, encoding="utf-8")
    if not args.json and not args.markdown:
        print(markdown)
