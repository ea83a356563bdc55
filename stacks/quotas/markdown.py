"""``docs/quotas.md``: the quota table as a reviewer reads it (a test keeps the file equal to
:func:`quotas_markdown`), and the largest use of each quota in an assembly."""

from __future__ import annotations

from collections.abc import Sequence

from stacks.quotas.measures import Measurement
from stacks.quotas.table import QUOTAS, Bound

INTRODUCTION = """\
# AWS quotas the synth checks

The local AWS (moto) enforces none of these, and neither cfn-lint nor cdk-nag measures the
policies, so a template that crosses one deploys locally and fails on AWS, in one account,
after the others may have changed. The quota gate (`stacks/quotas/`) reads every
template of the cloud assembly after the synth and refuses with one line per problem:

    <template>: <resource>: <quota>: <found> > <AWS's number> <unit>; <what to change>

It runs in `stacks.checks.gates.synth`, so the tests and the main job check every template
they synthesize. `python -m stacks.quotas cdk.out` prints the largest use of each quota
in an assembly (exit code 1 and the problems when one is crossed).

How sizes are counted: AWS counts a policy once CloudFormation has put the real names and ARNs
in, so the gate resolves every intrinsic first. What the template spells out is exact; what
only CloudFormation knows is counted at its longest: a KMS key's id as a UUID, and a name
CloudFormation generates as `<stack>-<logical id>-` and 13 characters, cut to the type's
longest name. An intrinsic the gate does not know counts as its own JSON. Quotas that span
stacks (aliases per key, filters per log group, a function's policy, roles per account) count
what the whole assembly creates; what already exists in the account shares them.

The numbers live in `stacks/quotas/table.py`, this table's one source.
"""


def quotas_markdown() -> str:
    """``docs/quotas.md``: the introduction and a row per quota."""
    lines = [
        INTRODUCTION,
        "| quota | AWS's number | per | counted as | adjustable | source |",
        "|---|---|---|---|---|---|",
    ]
    for quota in QUOTAS:
        bound = "at most" if quota.bound is Bound.AT_MOST else "at least"
        lines.append(
            f"| {quota.name} | {bound} {quota.number} | {quota.scope} | {quota.counted} | "
            f"{'yes' if quota.adjustable else 'no'} | <{quota.source}> |"
        )
    return "\n".join(lines) + "\n"


def largest_uses(measurements: Sequence[Measurement]) -> list[Measurement]:
    """Per quota with an upper bound, the measurement that uses the most of it, in the
    table's order; quotas nothing in the assembly measures are left out."""
    largest: dict[str, Measurement] = {}
    for measurement in measurements:
        if measurement.quota.bound is not Bound.AT_MOST:
            continue
        held = largest.get(measurement.quota.name)
        if held is None or measurement.share > held.share:
            largest[measurement.quota.name] = measurement
    return [largest[q.name] for q in QUOTAS if q.name in largest]


def usage_line(measurement: Measurement) -> str:
    """``<quota>: <value> of <number> <unit> (<share>) at <template>: <resource>``."""
    return (
        f"{measurement.quota.name}: {measurement.value:,} of {measurement.limit:,} "
        f"{measurement.quota.unit} ({measurement.share:.0%}) at {measurement.template}: "
        f"{measurement.resource}"
    )
