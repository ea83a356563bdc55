"""Partitions follow from the region; each has its service endpoints' DNS suffix."""

from __future__ import annotations

import pytest

from cross_account_runtime.common.partitions import dns_suffix, partition_of


@pytest.mark.parametrize(
    ("region", "partition", "suffix"),
    [
        ("us-east-1", "aws", "amazonaws.com"),
        ("eu-west-3", "aws", "amazonaws.com"),
        ("cn-north-1", "aws-cn", "amazonaws.com.cn"),
        ("cn-northwest-1", "aws-cn", "amazonaws.com.cn"),
        ("us-gov-west-1", "aws-us-gov", "amazonaws.com"),
    ],
)
def test_the_partition_and_its_dns_suffix_follow_from_the_region(
    region: str, partition: str, suffix: str
) -> None:
    assert partition_of(region) == partition
    assert dns_suffix(partition_of(region)) == suffix
