"""The access report's summary: per account what it grants beyond itself, and whether the
report equals the topology's intent, naming what differs."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from stacks.app_builder import topology_from_context
from stacks.checks import access_report
from stacks.placement.plan import committed_plan
from stacks.placement.plan_file import PlanFile

pytestmark = pytest.mark.synth


def _summary_of(report: access_report.AccessReport) -> access_report.AccessSummary:
    topology = topology_from_context(None)
    return access_report.summarize(report, topology, committed_plan(topology, PlanFile()))


def test_the_example_equals_its_intent_in_one_line_per_account_and_one_for_the_intent(
    example_assembly: Path,
) -> None:
    summary = _summary_of(access_report.build_report(example_assembly))
    assert summary.equals_intent
    assert [(a.name, a.account_id) for a in summary.accounts] == [
        ("Sales", "111111111111"),
        ("Billing", "222222222222"),
        ("Ops", "333333333333"),
    ]
    billing = summary.accounts[1]
    assert (billing.topics, billing.log_groups_leaving) == (1, 2)
    lines = access_report.summary_lines(summary, "out/access-report.md")
    assert len(lines) == 5
    assert lines[3].startswith("the report equals the topology's intent: the grants of ")
    assert lines[-1] == "full report: out/access-report.md"
    assert not any(line.startswith("|") for line in lines)


def test_a_grant_the_topology_does_not_mean_is_named(example_assembly: Path) -> None:
    report = access_report.build_report(example_assembly)
    changed = copy.deepcopy(report)
    queue = next(q for q in changed["queues"] if q["queue"].endswith(":Sales"))
    queue["receive"].append({"principal": {"account": "999999999999"}, "actions": ["sqs:*"]})
    changed["relays"] = changed["relays"][1:]
    summary = _summary_of(changed)
    assert not summary.equals_intent
    lines = access_report.summary_lines(summary)
    assert "the report DIFFERS from the topology's intent" in lines[3]
    assert (
        "  the grants of 70 queues and topics: 1 not as the topology means: "
        "arn:aws:sqs:us-east-1:111111111111:Sales"
    ) in lines
    assert any(line.startswith("  24 relay hops: 1 not as the topology means: ") for line in lines)
