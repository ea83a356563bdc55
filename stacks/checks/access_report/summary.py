"""The access report in a few lines: per account what it grants beyond itself, and whether the
report equals the topology's intent.

The full report (a table per queue and topic) is hundreds of lines, which a reviewer reads in
the Markdown file; a job that builds it prints this summary instead, so that its output stays a
report: the counts say whether an account's grants changed size, the comparisons say whether
they are the intended ones (the same comparisons the tests assert), and a difference is named.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from stacks.checks.access_report.intent import (
    actual_access,
    actual_log_data_edges,
    actual_platform_paths,
    actual_relay_edges,
    expected_access,
    expected_log_data_edges,
    expected_platform_paths,
    expected_relay_edges,
)
from stacks.checks.access_report.records import AccessReport
from stacks.placement.plan import StackPlan
from stacks.topology import Topology

T = TypeVar("T")

SHOWN_DIFFERENCES: Final = 3
"""How many differing entries a comparison names on screen; the rest are in the full report."""


@dataclass(frozen=True)
class AccountGrants:
    """What one account's resources grant beyond the account, as the report reads them."""

    name: str
    account_id: str
    queues: int
    topics: int
    grants: int
    """Resource-policy grants: send and receive on its queues, publish and subscribe on its
    topics (the owner account's own principals need none)."""
    key_users: int
    """Principals of other accounts its queues' key policies allow."""
    log_groups_leaving: int
    """Its log groups whose subscription filter sends delivery logs to a destination."""


@dataclass(frozen=True)
class IntentComparison:
    """One of the report's parts compared with what the topology means."""

    subject: str
    """What is compared, with ``{}`` where its count goes (``{} relay hops``)."""
    expected: int
    """How many entries the topology means (resources, hops, paths or edges)."""
    missing: tuple[str, ...]
    """Entries the topology means that the report lacks (or, for access, grants differently)."""
    unexpected: tuple[str, ...]
    """Entries the report holds that the topology does not mean."""

    @property
    def equal(self) -> bool:
        """Whether the report holds exactly what the topology means."""
        return not self.missing and not self.unexpected

    @property
    def counted(self) -> str:
        """The subject with the count of entries the topology means."""
        return self.subject.format(self.expected)


@dataclass(frozen=True)
class AccessSummary:
    """Per account its grants, and each part of the report against the intent."""

    accounts: tuple[AccountGrants, ...]
    comparisons: tuple[IntentComparison, ...]

    @property
    def equals_intent(self) -> bool:
        """Whether every compared part equals the topology's intent."""
        return all(c.equal for c in self.comparisons)


def summarize(report: AccessReport, topology: Topology, plan: StackPlan) -> AccessSummary:
    """The report's grants per account of ``topology`` (accounts the report does not name
    show zeros), and its access, relay hops, paths into platform queues and delivery-log edges
    compared with what the topology, placed by ``plan``, means."""
    accounts = tuple(
        _account_grants(report, account.name, account.id) for account in topology.accounts
    )
    expected = expected_access(topology, plan)
    actual = actual_access(report)
    differing = sorted(r for r in expected.keys() & actual.keys() if expected[r] != actual[r])
    access = IntentComparison(
        "the grants of {} queues and topics",
        len(expected),
        tuple(sorted(expected.keys() - actual.keys())) + tuple(differing),
        tuple(sorted(actual.keys() - expected.keys())),
    )
    return AccessSummary(
        accounts,
        (
            access,
            _compare("{} relay hops", expected_relay_edges(topology), actual_relay_edges(report)),
            _compare(
                "{} paths into platform queues",
                expected_platform_paths(topology),
                actual_platform_paths(report),
            ),
            _compare(
                "{} delivery-log edges",
                expected_log_data_edges(topology),
                actual_log_data_edges(report),
            ),
        ),
    )


def _account_grants(report: AccessReport, name: str, account_id: str) -> AccountGrants:
    queues = [q for q in report["queues"] if q["owner"] == account_id]
    topics = [t for t in report["topics"] if t["owner"] == account_id]
    return AccountGrants(
        name,
        account_id,
        len(queues),
        len(topics),
        sum(len(q["send"]) + len(q["receive"]) for q in queues)
        + sum(len(t["publish"]) + len(t["subscribe"]) for t in topics),
        sum(len(q["key_users"]) for q in queues),
        sum(
            1 for f in report["delivery_logs"]["subscription_filters"] if f["account"] == account_id
        ),
    )


def _compare(subject: str, expected: set[T], actual: set[T]) -> IntentComparison:
    def shown(entries: Iterable[T]) -> tuple[str, ...]:
        return tuple(
            sorted(" ".join(map(str, e)) if isinstance(e, tuple) else str(e) for e in entries)
        )

    return IntentComparison(
        subject, len(expected), shown(expected - actual), shown(actual - expected)
    )


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _named(entries: Sequence[str], what: str) -> str:
    """``what`` with the count of ``entries`` and the first few of them."""
    more = len(entries) - SHOWN_DIFFERENCES
    tail = f" and {more} more" if more > 0 else ""
    return f"{len(entries)} {what}: {', '.join(entries[:SHOWN_DIFFERENCES])}{tail}"


def summary_lines(summary: AccessSummary, *written: str) -> list[str]:
    """The summary as lines to print: one per account, one per comparison that differs (or
    one saying every part equals the intent), then where the full report was ``written``."""
    lines = [
        f"account {a.name} ({a.account_id}): {_plural(a.queues, 'queue')}, "
        f"{_plural(a.topics, 'topic')}; {_plural(a.grants, 'grant')} beyond the account, "
        f"{_plural(a.key_users, 'key user')} of other accounts, "
        f"{_plural(a.log_groups_leaving, 'log group')} sending delivery logs out"
        for a in summary.accounts
    ]
    compared = ", ".join(c.counted for c in summary.comparisons)
    if summary.equals_intent:
        lines.append(f"the report equals the topology's intent: {compared}")
    else:
        lines.append(f"the report DIFFERS from the topology's intent ({compared}):")
        for c in summary.comparisons:
            if c.missing:
                lines.append(f"  {c.counted}: {_named(c.missing, 'not as the topology means')}")
            if c.unexpected:
                lines.append(f"  {c.counted}: {_named(c.unexpected, 'granted, not meant')}")
    if written:
        lines.append(f"full report: {', '.join(written)}")
    return lines
