"""How much of the input must parse for a run to count as good.

The job never drops a unit: whatever is not a delivery-status record is a reject with a reason.
So a run over binary files, other JSON or a previous report still completes, with every unit
rejected; without a threshold it would exit 0 and a daily run pointed at the wrong prefix
would look green. Skipped units (blank lines, control messages, empty pages) are expected and
count neither way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cross_account_runtime.delivery_report.errors import TooLittleParsedError

MIN_PARSED_RECORDS = 1
"""A run that parsed no record read something other than delivery-status logs. (A day without
deliveries leaves no objects, and an input with no files already fails as missing input.)"""
MIN_PARSED_FRACTION = 0.5
"""More malformed units than records means the input is mostly something else (another
prefix's files beside the logs), not logs with a few damaged lines; a run over known clean
logs can ask for more, e.g. 0.99."""
REASONS_SHOWN = 3


@dataclass(frozen=True)
class ParsedThreshold:
    """The least a run must parse: a number of records and a share of the non-skipped units."""

    min_records: int = MIN_PARSED_RECORDS
    min_fraction: float = MIN_PARSED_FRACTION


def check_parsed(
    summary: Mapping[str, Any],
    threshold: ParsedThreshold,
    inputs: Sequence[str],
    summary_uri: str,
) -> None:
    """Raise ``TooLittleParsedError`` when the run parsed less than ``threshold`` asks."""
    accounting = summary["accounting"]
    parsed = int(accounting["records_parsed"])
    malformed = sum(int(n) for n in accounting["malformed_by_reason"].values())
    considered = parsed + malformed
    share = parsed / considered if considered else 0.0
    if parsed < threshold.min_records:
        need = f"need at least {threshold.min_records} (--min-parsed-records)"
    elif considered and share < threshold.min_fraction:
        need = f"need at least {threshold.min_fraction:.1%} (--min-parsed-fraction)"
    else:
        return
    raise TooLittleParsedError(
        ", ".join(inputs),
        f"parsed {parsed:,} of {considered:,} records ({share:.1%}), {need}; {_rejects(summary)}",
        "point --input at SNS delivery-status logs, or lower the threshold if this input is "
        f"right (the rejects and their samples are in {summary_uri})",
    )


def _rejects(summary: Mapping[str, Any]) -> str:
    """The commonest malformed reasons, the first with a file that shows it."""
    reasons = list(summary["accounting"]["malformed_by_reason"].items())[:REASONS_SHOWN]
    if not reasons:
        return "nothing was rejected as malformed (only blank lines or control messages)"
    counts = ", ".join(f"{reason} {count:,}" for reason, count in reasons)
    samples = summary["rejected_samples"].get(reasons[0][0], [])
    example = f" (e.g. {samples[0]['source_file']})" if samples else ""
    return f"rejected: {counts}{example}"
