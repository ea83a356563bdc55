"""Python's verdict on a gzip file Hadoop could not read: cut short, damaged, or fine."""

from __future__ import annotations

import gzip

import pytest

from cross_account_runtime.delivery_report.gzip_check import gzip_damage

MEMBER = gzip.compress(b"2025-01-06T10:00:00.000Z {}\n" * 5000, mtime=0)
BAD_CRC = MEMBER[:-8] + bytes(b ^ 0xFF for b in MEMBER[-8:-4]) + MEMBER[-4:]


@pytest.mark.parametrize(
    ("data", "damage"),
    [
        (MEMBER, None),
        (MEMBER + MEMBER, None),
        (MEMBER + b"\x00" * 16, None),
        (
            MEMBER[:100],
            "truncated gzip: the file ends after 100 bytes, before the end of its compressed "
            "stream",
        ),
        (MEMBER + MEMBER[:40], "truncated gzip: the file ends after"),
        (b"\x1f\x8b" + b"not deflate" * 5, "corrupt gzip: Unknown compression method"),
        (BAD_CRC, "corrupt gzip: CRC check failed"),
        (MEMBER + b"trailing text", "corrupt gzip: Not a gzipped file (b'tr')"),
    ],
    ids=[
        "whole",
        "two members",
        "zero padding",
        "cut short",
        "second member cut short",
        "not deflate",
        "checksum wrong",
        "trailing text",
    ],
)
def test_gzip_damage_says_what_is_wrong(data: bytes, damage: str | None) -> None:
    found = gzip_damage(data)
    if damage is None:
        assert found is None
    else:
        assert found is not None
        assert found.startswith(damage)
