"""The whole report of a cloud assembly: the messaging grants and edges, then the delivery
logs."""

from __future__ import annotations

from pathlib import Path

from stacks.checks.access_report.assembly import read_assembly
from stacks.checks.access_report.delivery_logs import read_delivery_logs
from stacks.checks.access_report.messaging import read_messaging
from stacks.checks.access_report.records import AccessReport


def build_report(assembly_dir: str | Path) -> AccessReport:
    """Every queue and topic of the assembly: who may send, receive, publish and subscribe,
    who may use each key, every subscription (the topic-to-endpoint edges), every relay hop,
    and where the delivery logs go (``delivery_logs``)."""
    stacks = read_assembly(assembly_dir)
    return {**read_messaging(stacks), "delivery_logs": read_delivery_logs(stacks)}
