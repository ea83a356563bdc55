"""Where a queue lives: an AWS account and a region (and so a partition), each checked as AWS
writes it, and :class:`AddressError`, the error of every address check of this package.

The address types here and in the modules built on them (queue ARNs, queue naming, transport
addresses) are immutable values (:class:`ImmutableValue`). Everything is computed without
calling AWS and imports nothing beyond the interpreter's core.
"""

from __future__ import annotations

from cross_account_runtime.common.partitions import partition_of


class AddressError(ValueError):
    """A transport address, ARN, queue URL, queue name or location that cannot be used."""


class ImmutableValue:
    """An immutable value: equality, hashing and repr come from ``__slots__``.

    Hand-written instead of a dataclass because importing ``dataclasses`` costs more than a
    Lambda cold start should pay for the address modules.
    """

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImmutableValue) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{field}={getattr(self, field)!r}" for field in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; build a new one instead")

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)


def check_account(account: str, field: str = "account") -> str:
    """Return ``account`` if it is an AWS account ID (12 digits); raise otherwise."""
    if not (isinstance(account, str) and len(account) == 12 and _ascii_digits(account)):
        raise AddressError(f"{field} {account!r} is not an AWS account ID; use its 12 digits")
    return account


def check_region(region: str, field: str = "region") -> str:
    """Return ``region`` if it looks like an AWS region name (``us-east-2``); raise otherwise."""
    parts = region.split("-") if isinstance(region, str) else []
    if not (
        len(parts) >= 3
        and len(parts[0]) == 2
        and all(part.isascii() and part.isalpha() and part.islower() for part in parts[:-1])
        and _ascii_digits(parts[-1])
    ):
        raise AddressError(
            f"{field} {region!r} is not an AWS region name; write it like 'us-east-2'"
        )
    return region


def partition_of_region(region: str) -> str:
    """The partition a region belongs to, for the partitions SQS addresses are built in."""
    check_region(region)
    partition = partition_of(region)
    if partition == "aws" and any(part.startswith("iso") for part in region.split("-")[1:-1]):
        raise AddressError(
            f"region {region!r} is in an isolated partition; only the aws, aws-cn and "
            "aws-us-gov partitions are supported"
        )
    return partition


class Location(ImmutableValue):
    """An account and region, e.g. the ones of the credentials an endpoint runs with."""

    __slots__ = ("account", "partition", "region")
    account: str
    partition: str
    region: str

    def __init__(self, account: str, region: str) -> None:
        self._set("account", check_account(account))
        self._set("partition", partition_of_region(region))
        self._set("region", region)


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
