"""The numbers the README gives operators and endpoint teams, computed from the code they
describe, so that neither can drift from the other: the bytes an endpoint reserves for the ARN
header when bodies do not go through S3, the relay's timing per batch size, and how far the stack
plan fills a stack."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from constructs_lib.relay_timing import RelayTiming
from cross_account_runtime.nservicebus.address_headers import ADDRESS_HEADERS
from cross_account_runtime.nservicebus.arn_header import ARN_HEADER, encode
from stacks.placement.plan import RESOURCE_BUDGET, RESOURCE_HEADROOM
from stacks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
PROSE = " ".join(README.split())
"""The README with its lines joined, for sentences that wrap."""
LONGEST_QUEUE_ARN = "arn:aws-iso-b:sqs:" + "r" * 16 + ":123456789012:" + "q" * 80
"""The longest partition name, a region of 16 characters (the longest today has 15), an
account id and an 80-character queue name (SQS's longest)."""


def test_the_readme_reserves_the_bytes_the_stamp_can_add() -> None:
    """The ARN header listing every address header the outbound relay may stamp, each at the
    longest queue ARN, as one more member of the headers JSON (the wrapped body's or the
    headers attribute's)."""
    value = encode(dict.fromkeys(sorted(ADDRESS_HEADERS), LONGEST_QUEUE_ARN))
    member = "," + json.dumps({ARN_HEADER: value}, separators=(",", ":"))[1:-1]
    reserve = len(member.encode())
    assert len(LONGEST_QUEUE_ARN) == 128
    assert f"transport.ReserveBytesInMessageSizeCalculation = {reserve};" in README
    assert f"{reserve:,} bytes is the header at its largest" in PROSE
    assert f"{len(ADDRESS_HEADERS)} address headers" in PROSE
    assert f"{sum(map(len, ADDRESS_HEADERS))} characters of names" in PROSE
    assert f"{len(value):,} characters), in the headers JSON" in PROSE
    assert f"({len(member) - len(value)} characters more)" in PROSE
    # What the transport accepts (SqsTransport: at most 25 KiB).
    assert reserve <= 25 * 1024


def readme_timing_rows() -> dict[int, tuple[int, ...]]:
    """The README's table of the relay's timing: batch size to its numbers."""
    rows = re.findall(r"^\| ([\d,]+) \| (.+) \|$", README, flags=re.MULTILINE)
    return {
        int(batch.replace(",", "")): tuple(
            int(cell.removesuffix(" s").replace(",", "")) for cell in cells.split(" | ")
        )
        for batch, cells in rows
    }


@pytest.mark.parametrize("batch_size", [10, 100, 1_000, 10_000])
def test_the_readme_gives_the_relay_timing_of_each_batch_size(batch_size: int) -> None:
    timing = RelayTiming.for_batch(batch_size)
    assert readme_timing_rows()[batch_size] == (
        timing.calls,
        timing.function_timeout.to_seconds(),
        timing.calls_per_invocation,
        timing.invocations,
        timing.visibility_timeout.to_seconds(),
        timing.max_receive_count,
    )


def test_the_readme_gives_the_stack_plan_s_budget_and_cloudformation_s_limits() -> None:
    assert (
        f"more than CloudFormation's {CLOUDFORMATION_RESOURCES.fixed} resources or "
        f"{CLOUDFORMATION_OUTPUTS.fixed} outputs" in PROSE
    )
    assert f"each filled to {RESOURCE_BUDGET} resources, keeping {RESOURCE_HEADROOM}" in PROSE
