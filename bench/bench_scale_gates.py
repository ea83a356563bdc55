"""Every gate on every topology of organization size: too slow for the test suite, run here.

``python bench/bench_scale_gates.py [--only NAME,...] [--keys perQueue|perAccount]`` prints one
JSON object. For ``topologies/org.json`` and each case of :mod:`scale_topologies` (the sizes
that found the limits: fifty accounts, a receiver of twenty accounts, a subscriber of 25
topics, 200 endpoints in one account, a ring of ten accounts by fifty endpoints) it runs what
the test suite runs on the example: synth with cdk-nag and the quota gate
(:func:`stacks.checks.gates.synth`), cfn-lint on every template, the access report and its
equality with the topology's intent (no grant beyond it, none missing), then reports the
largest use of each quota (policy sizes per kind as shares of AWS's numbers) and the cost
report's totals. The organization is placed as its committed plan records
(``topologies/org.stacks``), each case (and the organization with ``--keys``) as a new
organization's plan.

A gate that refuses is reported with its lines, and the run goes on to the next topology; the
process exits 1 if any topology failed a gate.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_support
import scale_topologies

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stacks.checks import access_report, gates  # noqa: E402
from stacks.checks.cost_report import build_cost_report  # noqa: E402
from stacks.placement.placing import new_organization_plan  # noqa: E402
from stacks.placement.plan import StackPlan, committed_plan  # noqa: E402
from stacks.placement.plan_file import PlanFile  # noqa: E402
from stacks.quotas import largest_uses, measure_assembly  # noqa: E402
from stacks.topology import Topology, parse_topology  # noqa: E402

CASES = (
    "org",
    "fifty_accounts",
    "receiver_of_twenty",
    "subscriber_of_twenty_five",
    "one_account_two_hundred",
    "ring_ten_by_fifty",
)


def document(name: str) -> dict[str, Any]:
    if name == "org":
        loaded: dict[str, Any] = json.loads(scale_topologies.ORG_FILE.read_text(encoding="utf-8"))
        return loaded
    return scale_topologies.topology(name)


def plan_of(name: str, keys: str | None, topology: Topology) -> StackPlan:
    """The organization's committed plan; a new organization's for a case, or for the
    organization with other keys (whose stacks hold other numbers of resources)."""
    if name == "org" and keys is None:
        return committed_plan(topology, PlanFile(scale_topologies.ORG_FILE))
    return new_organization_plan(topology)


def grants_differ(topology: Topology, plan: StackPlan, assembly: Path) -> dict[str, Any]:
    """Per queue and permission, what the templates grant beyond the intent and what they
    lack; empty when they are equal."""
    actual = access_report.actual_access(access_report.build_report(assembly))
    expected = access_report.expected_access(topology, plan)
    differences: dict[str, Any] = {}
    for queue in sorted(set(actual) | set(expected)):
        for permission in sorted(set(actual.get(queue, {})) | set(expected.get(queue, {}))):
            granted = actual.get(queue, {}).get(permission, set())
            intended = expected.get(queue, {}).get(permission, set())
            if granted != intended:
                differences[f"{queue} {permission}"] = {
                    "beyond": sorted(map(str, granted - intended)),
                    "missing": sorted(map(str, intended - granted)),
                }
    return differences


def check(name: str, keys: str | None, workdir: Path) -> dict[str, Any]:
    doc = document(name)
    if keys is not None:
        doc["keys"] = keys
    topology = parse_topology(doc, name)
    result: dict[str, Any] = {
        "topology": name,
        "accounts": len(topology.accounts),
        "endpoints": len(topology.endpoints),
    }
    outdir = workdir / name / "cdk.out"
    plan = plan_of(name, keys, topology)
    started = time.perf_counter()
    try:
        gates.synth(topology, plan, outdir)
    except gates.GateError as refused:
        result["synthSeconds"] = round(time.perf_counter() - started, 1)
        result["refused"] = refused.problems
        return result
    result["synthSeconds"] = round(time.perf_counter() - started, 1)
    result["stacks"] = len(gates.templates(outdir))
    started = time.perf_counter()
    result["cfnLintFindings"] = gates.cfn_lint(outdir)
    result["cfnLintSeconds"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    result["accessReportDifferences"] = grants_differ(topology, plan, outdir)
    result["accessReportSeconds"] = round(time.perf_counter() - started, 1)
    result["largestQuotaUses"] = [
        {
            "quota": m.quota.name,
            "value": m.value,
            "limit": m.limit,
            "share": round(m.share, 3),
            "where": f"{m.template}: {m.resource}",
        }
        for m in largest_uses(measure_assembly(outdir))
    ]
    costs = build_cost_report(outdir).as_json()
    result["costs"] = {
        "fixedMonthlyUsd": costs["fixedMonthlyUsd"],
        "keys": sum(account["keys"] for account in costs["accounts"]),
        "millionMessagesUsd": costs["bridge"]["usd"],
    }
    return result


def passed(result: dict[str, Any]) -> bool:
    return (
        "refused" not in result
        and not result["cfnLintFindings"]
        and not result["accessReportDifferences"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated topologies")
    parser.add_argument("--keys", choices=("perQueue", "perAccount"), default=None)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="scale-gates-") as workdir:
        for name in args.only.split(","):
            results.append(check(name, args.keys, Path(workdir)))
            print(json.dumps(results[-1], default=str), file=sys.stderr, flush=True)
    print(
        json.dumps(
            {"machine": bench_support.machine(), "keys": args.keys, "results": results},
            indent=2,
            default=str,
        )
    )
    return 0 if all(passed(r) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
