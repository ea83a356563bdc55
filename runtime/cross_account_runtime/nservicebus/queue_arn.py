"""SQS queues by ARN, the canonical transport address: the queue names SQS accepts, and ARNs
read from text and from queue URLs.

A legacy transport address is a bare queue name, which cannot say which account or region a
queue lives in, nor whether the queue-name prefix was already applied; a :class:`QueueArn`
says all of it, and gives the queue's URL without an API call.
"""

from __future__ import annotations

from cross_account_runtime.common.partitions import PARTITION_DNS_SUFFIXES
from cross_account_runtime.nservicebus.locations import (
    AddressError,
    ImmutableValue,
    Location,
    check_account,
    check_region,
    partition_of_region,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

MAX_QUEUE_NAME_LENGTH: Final = 80
FIFO_SUFFIX: Final = ".fifo"
LEGACY_US_EAST_1_HOST: Final = "queue.amazonaws.com"

QUEUE_NAME_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)
"""What SQS accepts in a queue name (but a ``.fifo`` suffix)."""


def check_queue_name(name: str, field: str = "queue name") -> str:
    """Return ``name`` if SQS accepts it as a queue name; raise otherwise, naming the first
    character SQS refuses and its position (counted in characters from 0).

    1 to 80 characters; ASCII letters, digits, ``-`` and ``_``, and a ``.fifo`` suffix for FIFO
    queues. Stricter than NServiceBus's generator, which keeps Unicode letters and digits.
    """
    if not isinstance(name, str):
        raise AddressError(f"{field} must be text, got {type(name).__name__}")
    base = name.removesuffix(FIFO_SUFFIX)
    if not base:
        raise AddressError(f"{field} {name!r} is empty; give the queue a name")
    if len(name) > MAX_QUEUE_NAME_LENGTH:
        raise AddressError(
            f"{field} {name!r} has {len(name)} characters; SQS allows at most "
            f"{MAX_QUEUE_NAME_LENGTH}: shorten the name or the prefix"
        )
    if not QUEUE_NAME_CHARACTERS.issuperset(base):
        bad = next(
            index for index, character in enumerate(base) if character not in QUEUE_NAME_CHARACTERS
        )
        character = base[bad]
        described = (
            repr(character) if character.isascii() else f"{character!r} (U+{ord(character):04X})"
        )
        raise AddressError(
            f"{field} {name!r} has {described} at position {bad}; SQS queue names hold only "
            "ASCII letters, digits, '-' and '_' (and a '.fifo' suffix)"
            + (
                ""
                if character.isascii()
                else "; NServiceBus keeps Unicode letters and digits, but SQS refuses them"
            )
        )
    return name


class QueueArn(ImmutableValue):
    """The ARN of an SQS queue: the canonical transport address. ``str()`` gives the ARN."""

    __slots__ = ("account", "name", "partition", "region")
    account: str
    name: str
    partition: str
    region: str

    def __init__(self, partition: str, region: str, account: str, name: str) -> None:
        if partition not in PARTITION_DNS_SUFFIXES:
            raise AddressError(
                f"partition {partition!r} is not supported; use one of "
                f"{', '.join(PARTITION_DNS_SUFFIXES)}"
            )
        if partition_of_region(region) != partition:
            raise AddressError(
                f"region {region!r} is not in partition {partition!r} but in "
                f"{partition_of_region(region)!r}; correct the partition or the region"
            )
        self._set("partition", partition)
        self._set("region", region)
        self._set("account", check_account(account))
        self._set("name", check_queue_name(name))

    @classmethod
    def at(cls, location: Location, name: str) -> QueueArn:
        """The queue called ``name`` in ``location``."""
        return cls(location.partition, location.region, location.account, name)

    def __str__(self) -> str:
        return f"arn:{self.partition}:sqs:{self.region}:{self.account}:{self.name}"

    @property
    def url(self) -> str:
        """The queue URL, built without an API call (as ``Queue.fromQueueAttributes`` does)."""
        suffix = PARTITION_DNS_SUFFIXES[self.partition]
        return f"https://sqs.{self.region}.{suffix}/{self.account}/{self.name}"


def parse_queue_arn(text: str) -> QueueArn:
    """Read ``arn:<partition>:sqs:<region>:<account>:<queue name>``."""
    parts = text.split(":") if isinstance(text, str) else []
    if len(parts) != 6 or parts[0] != "arn":
        raise AddressError(
            f"{text!r} is not an SQS queue ARN; write it as "
            "'arn:<partition>:sqs:<region>:<account>:<queue name>'"
        )
    _, partition, service, region, account, name = parts
    if service != "sqs":
        raise AddressError(
            f"{text!r} is an ARN of service {service!r}, not of an SQS queue; a transport "
            "address must name the endpoint's queue"
        )
    return QueueArn(partition, check_region(region, f"region in {text!r}"), account, name)


def queue_arn_from_url(url: str) -> QueueArn:
    """The ARN of the queue at ``url``: ``https://sqs.<region>.<suffix>/<account>/<name>``.

    Also reads the legacy hosts ``queue.amazonaws.com`` (us-east-1) and
    ``<region>.queue.<suffix>``.
    """
    if not isinstance(url, str):
        raise AddressError(f"queue URL must be text, got {type(url).__name__}")
    scheme, separator, rest = url.partition("://")
    if not separator or scheme.lower() not in ("https", "http"):
        raise AddressError(
            f"{url!r} is not a queue URL; write it as 'https://sqs.<region>.amazonaws.com/"
            "<account>/<queue name>'"
        )
    host, _, path = rest.partition("/")
    host = host.lower()
    if "?" in path or "#" in path or path.count("/") != 1:
        raise AddressError(
            f"queue URL {url!r} must end in '/<account>/<queue name>' with nothing after it"
        )
    account, name = path.split("/")
    region, suffix = _region_of_host(host, url)
    partition = partition_of_region(region)
    if PARTITION_DNS_SUFFIXES[partition] != suffix:
        raise AddressError(
            f"queue URL {url!r}: region {region!r} is in partition {partition!r}, whose hosts "
            f"end in {PARTITION_DNS_SUFFIXES[partition]!r}, not {suffix!r}"
        )
    return QueueArn(partition, region, check_account(account, f"account in {url!r}"), name)


def _region_of_host(host: str, url: str) -> tuple[str, str]:
    """Split an SQS host into its region and DNS suffix."""
    for suffix in ("amazonaws.com.cn", "amazonaws.com"):
        if host.endswith("." + suffix):
            head = host[: -len(suffix) - 1]
            break
    else:
        raise AddressError(
            f"queue URL {url!r}: host {host!r} is not an SQS host; expected "
            "'sqs.<region>.amazonaws.com' (or '.amazonaws.com.cn')"
        )
    if head == "queue" and suffix == "amazonaws.com":
        return "us-east-1", suffix
    if head.startswith("sqs."):
        return check_region(head[4:], f"region in {url!r}"), suffix
    if head.endswith(".queue"):
        return check_region(head[:-6], f"region in {url!r}"), suffix
    raise AddressError(
        f"queue URL {url!r}: host {host!r} is not an SQS host; expected "
        f"'sqs.<region>.{suffix}', '<region>.queue.{suffix}' or '{LEGACY_US_EAST_1_HOST}'"
    )
