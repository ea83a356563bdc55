"""The cost report as a reviewer reads it, and the price table ``docs/costs.md`` holds (a test
keeps the file's table equal to :func:`prices_markdown`)."""

from __future__ import annotations

from stacks.checks.cost_report.prices import PRICES, PRICES_DATE, PRICES_REGION
from stacks.checks.cost_report.report import CostReport, Line


def prices_markdown() -> str:
    """The unit prices, their date and sources, as a Markdown table."""
    rows = [
        f"Prices: {PRICES_REGION}, on-demand, read on {PRICES_DATE}.",
        "",
        "| item | price | source |",
        "|---|---|---|",
    ]
    rows += [f"| {price.name} | {price.stated} | <{price.source}> |" for price in PRICES]
    return "\n".join(rows) + "\n"


def _line(line: Line) -> str:
    estimate = " (estimate)" if line.estimate else ""
    return f"| {line.item}{estimate} | {line.quantity:,.2f} {line.price.unit} | ${line.usd:,.2f} |"


def to_markdown(report: CostReport) -> str:
    """Each account's fixed monthly cost, then a million messages through the bridge."""
    out = ["# Cost report", "", "## Fixed monthly cost per account", ""]
    for account in report.accounts:
        out += [
            f"### Account `{account.account}` ({', '.join(account.stacks)}): "
            f"${account.usd:,.2f} a month",
            "",
            "| item | quantity | monthly |",
            "|---|---|---|",
            *(_line(line) for line in account.lines),
            "",
            f"{account.log_groups} log groups: nothing until written (the relays' share is in "
            "the bridge's cost).",
            "",
        ]
    bridge = report.bridge
    out += [
        f"All accounts: ${report.fixed_usd:,.2f} a month.",
        "",
        f"## {bridge.messages:,} messages through the bridge: ${bridge.usd:,.2f}",
        "",
        f"On one route, {bridge.message_bytes:,} bytes each, spread over {bridge.over_days:g} "
        f"days; data keys reused for {bridge.kms_reuse_seconds} s.",
        "",
    ]
    for direction, hop in bridge.hops.items():
        out.append(
            f"- {direction} relay: batches of {hop.batch_size}, {hop.memory_mb} MB ({hop.where})"
        )
    out += [
        "",
        "| item | quantity | cost |",
        "|---|---|---|",
        *(_line(line) for line in bridge.lines),
        "",
        prices_markdown(),
    ]
    return "\n".join(out)
