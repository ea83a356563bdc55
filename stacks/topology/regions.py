"""Which regions an account may name: those botocore's endpoint data lists for SQS.

A region that has the shape (:func:`check_region`) (``us-east-9``) but does not exist passes every local check
and fails only when CloudFormation is asked to deploy there, after other accounts' stacks may
already be out. botocore's data is AWS's own list, updated with each release, so a new region
is accepted once the pinned ``boto3`` knows it.
"""

from __future__ import annotations

import functools

from cross_account_runtime.nservicebus.locations import AddressError, check_region

PARTITIONS = ("aws", "aws-cn", "aws-us-gov")
"""The partitions the stacks and the relay support (no isolated ones)."""


@functools.cache
def known_regions() -> frozenset[str]:
    """Every region with SQS in the supported partitions, per botocore's endpoint data."""
    import botocore.session  # noqa: PLC0415 (only validation needs it)

    session = botocore.session.get_session()
    return frozenset(
        region
        for partition in PARTITIONS
        for region in session.get_available_regions("sqs", partition)
    )


def region_problem(region: str) -> str | None:
    """Why ``region`` cannot hold an account's stack, or ``None``."""
    if region in known_regions():
        return None
    try:
        check_region(region)
    except AddressError:
        return f"malformed region {region!r}; expected e.g. 'us-east-1'"
    near = sorted(r for r in known_regions() if r.rsplit("-", 1)[0] == region.rsplit("-", 1)[0])
    hint = f"; regions of that name: {', '.join(near)}" if near else ""
    return f"unknown region {region!r} (not in botocore's list for {', '.join(PARTITIONS)}){hint}"
