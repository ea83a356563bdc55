"""Acknowledging a cdk-nag finding, always with the reason written next to it."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one cdk-nag finding on ``scope``; the reason is required, never empty."""
    if not reason.strip():
        raise ValueError(f"acknowledging {rule_id} needs a reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule_id, reason=reason))
