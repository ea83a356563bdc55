"""AWS partitions: which one a region belongs to, and the DNS suffix of its service endpoints.

ARNs, service principals' ``kms:ViaService`` names and queue URLs all depend on the partition,
so China and GovCloud work unchanged only if every place derives it the same way from the
region. Standard library only: Lambda functions, the stacks and the access report share it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

PARTITION_DNS_SUFFIXES: Final = {
    "aws": "amazonaws.com",
    "aws-cn": "amazonaws.com.cn",
    "aws-us-gov": "amazonaws.com",
}
"""The partitions the package builds addresses in, and the DNS suffix of their endpoints."""


def partition_of(region: str) -> str:
    """The partition of a region's resources: ``aws-cn`` for ``cn-*``, ``aws-us-gov`` for
    ``us-gov-*``, ``aws`` otherwise (the region itself is not checked here)."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def dns_suffix(partition: str) -> str:
    """The DNS suffix of a partition's service endpoints (``amazonaws.com.cn`` in China)."""
    return PARTITION_DNS_SUFFIXES[partition]
