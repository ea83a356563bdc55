"""SQS transport addresses: the three address forms, queue ARNs, queue URLs and queue names.

A legacy transport address is a bare queue name, which cannot say which account or region a
queue lives in, nor whether the queue-name prefix was already applied. The canonical address
is therefore the queue ARN. Two shorter forms remain for configuration:

* ``arn:<partition>:sqs:<region>:<account>:<name>``: exactly that queue;
* ``:<name>``: the queue ``<name>`` in the local account and region, taken as is (no prefix);
* ``<name>``: the local queue whose name the queue-name generator makes from ``<name>`` and
  the configured prefix (the legacy form; this is why the generator must be idempotent).

Where other endpoints live comes from a per-endpoint mapping (``UseAccountForEndpoint``,
``UseRegionForEndpoint``), which can be given in environment variables, the usual way to
configure a Lambda function:

* ``NSB_SQS_ENDPOINT_ACCOUNTS``: ``Endpoint=111122223333,Other=444455556666``;
* ``NSB_SQS_ENDPOINT_REGIONS``: ``Endpoint=us-east-2,Other=eu-west-1``;
* ``NSB_SQS_QUEUE_NAME_PREFIX``: the queue-name prefix (default: none);
* ``AWS_ACCOUNT_ID`` and ``AWS_REGION`` (or ``AWS_DEFAULT_REGION``): the local account and
  region, read as the AWS SDKs read them.

Everything here is computed without calling AWS, so it costs nothing per message and imports
nothing beyond the interpreter's core.
"""

from __future__ import annotations

from cross_account_runtime.common.partitions import PARTITION_DNS_SUFFIXES, partition_of
from cross_account_runtime.nservicebus.dotnet_text import (
    is_letter_or_digit,
    is_null_or_white_space,
    starts_with_ordinal,
    utf16_length,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Final, Literal

    QueueNameGenerator = Callable[[str, str], str]
    """``(destination, prefix) -> queue name``, as NServiceBus's ``QueueNameGenerator``."""

    AddressForm = Literal["arn", "local", "prefixed"]

ENV_ENDPOINT_ACCOUNTS: Final = "NSB_SQS_ENDPOINT_ACCOUNTS"
ENV_ENDPOINT_REGIONS: Final = "NSB_SQS_ENDPOINT_REGIONS"
ENV_QUEUE_NAME_PREFIX: Final = "NSB_SQS_QUEUE_NAME_PREFIX"
ENV_ACCOUNT_ID: Final = "AWS_ACCOUNT_ID"
ENV_REGION: Final = "AWS_REGION"
ENV_DEFAULT_REGION: Final = "AWS_DEFAULT_REGION"

MAX_QUEUE_NAME_LENGTH: Final = 80
FIFO_SUFFIX: Final = ".fifo"
LEGACY_US_EAST_1_HOST: Final = "queue.amazonaws.com"

_NAME_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)
_GENERATOR_PROBES: Final = ("MyEndpoint", "Sales.Orders", "error")
_PREFIX_EXAMPLE: Final = "Sales"
# The default generator's replacement for ASCII text: every character but letters, digits, '-'
# and '_' becomes '-'.
_ASCII_REPLACEMENTS: Final = {code: "-" for code in range(128) if chr(code) not in _NAME_CHARACTERS}


class AddressError(ValueError):
    """A transport address, ARN, queue URL, queue name or location that cannot be used."""


class NonIdempotentGeneratorError(AddressError):
    """A queue-name generator that changes a name it has already made.

    Legacy addresses on the wire may or may not carry the prefix already, so the generator is
    applied to both; only an idempotent one sends both to the same queue.
    """


class _Value:
    """An immutable value: equality, hashing and repr come from ``__slots__``.

    Hand-written instead of a dataclass because importing ``dataclasses`` costs more than a
    Lambda cold start should pay for this module.
    """

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Value) or type(other) is not type(self):
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
    if not _NAME_CHARACTERS.issuperset(base):
        bad = next(
            index for index, character in enumerate(base) if character not in _NAME_CHARACTERS
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


class Location(_Value):
    """An account and region, e.g. the ones of the credentials an endpoint runs with."""

    __slots__ = ("account", "partition", "region")
    account: str
    partition: str
    region: str

    def __init__(self, account: str, region: str) -> None:
        self._set("account", check_account(account))
        self._set("partition", partition_of_region(region))
        self._set("region", region)


class QueueArn(_Value):
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


def dead_letter_queue_problem(queue: QueueArn, dead_letter: QueueArn) -> str | None:
    """Why SQS would refuse ``dead_letter`` as the redrive dead-letter queue of ``queue``, or
    None: SQS redrives a message only within the source queue's account and region, and only to
    a queue of the source's type (FIFO or standard). The relay's configuration and the
    constructs that take a queue with its dead-letter queue apply this one rule."""
    if (dead_letter.account, dead_letter.region) != (queue.account, queue.region):
        return (
            f"dead-letter queue {str(dead_letter)!r} must be in the account ({queue.account}) "
            f"and region ({queue.region}) of its source queue {str(queue)!r}; give the source "
            "queue's own redrive dead-letter queue"
        )
    fifo = queue.name.endswith(FIFO_SUFFIX)
    if dead_letter.name.endswith(FIFO_SUFFIX) != fifo:
        kinds = ("FIFO", "standard") if fifo else ("standard", "FIFO")
        return (
            f"dead-letter queue {str(dead_letter)!r} is a {kinds[1]} queue but its source "
            f"{str(queue)!r} is a {kinds[0]} queue; SQS requires a dead-letter queue of the "
            "source's type"
        )
    return None


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


def default_queue_name(destination: str, prefix: str) -> str:
    """``QueueCache.GetSqsQueueName``, NServiceBus's default queue-name generator, exactly.

    1. A destination that is empty or white space is refused (.NET's ``IsNullOrWhiteSpace``).
    2. The prefix is added unless the destination already starts with it (ordinal).
    3. More than 80 UTF-16 code units, counted before any replacement and including a
       ``.fifo`` suffix, is refused.
    4. Every UTF-16 code unit that is not a letter or digit (``char.IsLetterOrDigit``), ``-`` or
       ``_`` becomes ``-``, except a trailing ``.fifo``. So ``DEV.`` + ``Sales`` is
       ``DEV-Sales``, a character beyond U+FFFF becomes ``--``, and Unicode letters and digits
       (``café``) are kept.

    The result is the transport's name, not necessarily one SQS accepts: :func:`check_queue_name`
    says whether it does. Nor is the rule idempotent for every prefix: one the replacement
    rewrites (``DEV.``) does not recognise its own output, so ``DEV-Sales`` becomes
    ``DEV-DEV-Sales`` (see :func:`check_queue_name_prefix`).
    """
    if not isinstance(destination, str) or is_null_or_white_space(destination):
        raise AddressError(
            f"destination {destination!r} is empty or white space; give the queue's name"
        )
    if not isinstance(prefix, str):
        raise AddressError(f"queue name prefix must be text, got {type(prefix).__name__}")
    name = (
        destination if prefix and starts_with_ordinal(destination, prefix) else prefix + destination
    )
    length = utf16_length(name)
    if length > MAX_QUEUE_NAME_LENGTH:
        raise AddressError(
            f"address {destination!r} with prefix {prefix!r} has {length} characters (UTF-16 "
            f"code units, as NServiceBus counts them); queue names have at most "
            f"{MAX_QUEUE_NAME_LENGTH}: use a shorter name or prefix"
        )
    kept = len(name) - len(FIFO_SUFFIX) if name.endswith(FIFO_SUFFIX) else len(name)
    head = name[:kept]
    if head.isascii():
        return head.translate(_ASCII_REPLACEMENTS) + name[kept:]
    return "".join(_replaced(character) for character in head) + name[kept:]


def _replaced(character: str) -> str:
    """One character as the default generator writes it: kept, ``-``, or ``--`` for the two
    UTF-16 code units of a character beyond U+FFFF (surrogates are not letters)."""
    if character in _NAME_CHARACTERS:
        return character
    if ord(character) > 0xFFFF:
        return "--"
    return character if is_letter_or_digit(character) else "-"


def check_queue_name_prefix(prefix: str) -> str:
    """Return ``prefix`` if NServiceBus's default generator is idempotent with it; raise
    otherwise.

    The generator adds the prefix only when a name does not already start with it, so a prefix
    the replacement rewrites (``DEV.`` becomes ``DEV-``) is added again to every name it made:
    the transport address ``DEV-Sales`` names the queue ``DEV-DEV-Sales``. The transport accepts
    such a prefix (its start-up check probes only the prefix ``Prefix``); here it is refused,
    because the queues, the addresses in headers and the relay's routes would disagree.
    """
    if not isinstance(prefix, str):
        raise AddressError(f"queue name prefix must be text, got {type(prefix).__name__}")
    for index, character in enumerate(prefix):
        if _replaced(character) != character:
            once = default_queue_name(_PREFIX_EXAMPLE, prefix)
            raise NonIdempotentGeneratorError(
                f"queue name prefix {prefix!r} has {character!r} at position {index}, which "
                "NServiceBus's default generator turns into '-', so it would no longer "
                f"recognise its own names: {_PREFIX_EXAMPLE!r} becomes {once!r}, and the "
                f"transport address {once!r} names the queue "
                f"{default_queue_name(once, prefix)!r}. Use letters, digits, '-' and '_' only"
            )
    return prefix


class QueueNaming(_Value):
    """A queue-name prefix and the generator that applies it, checked for idempotence.

    The check runs on a few probe names when the naming is built and again on every name it
    makes, so a generator that is not idempotent is refused before it misroutes a message. The
    probes are checked for idempotence only, as the transport's own start-up probe is
    (``AssertQueueNameGeneratorIdempotent``): a custom generator that keeps dots, say, is fine
    as long as the names of real queues are, and those are checked against SQS's rules when
    they are made.
    """

    __slots__ = ("generator", "prefix")
    generator: QueueNameGenerator
    prefix: str

    def __init__(
        self,
        prefix: str = "",
        generator: QueueNameGenerator = default_queue_name,
        probes: Iterable[str] = _GENERATOR_PROBES,
    ) -> None:
        if not isinstance(prefix, str):
            raise AddressError(f"queue name prefix must be text, got {type(prefix).__name__}")
        if not callable(generator):
            raise AddressError("queue name generator must be a function (destination, prefix)")
        if generator is default_queue_name:
            check_queue_name_prefix(prefix)
        self._set("prefix", prefix)
        self._set("generator", generator)
        for probe in probes:
            self._idempotent_name(probe)
            self._idempotent_name(prefix + probe)

    def queue_name(self, destination: str) -> str:
        """The queue name for ``destination``, checked against SQS's naming rules; refuses a
        generator that is not idempotent."""
        name = self._idempotent_name(destination)
        check_queue_name(name, f"queue name generated from {destination!r}")
        return name

    def _idempotent_name(self, destination: str) -> str:
        """What the generator makes of ``destination``, if it leaves that unchanged."""
        name = self.generator(destination, self.prefix)
        if not isinstance(name, str):
            raise AddressError(
                f"the queue name generator returned {type(name).__name__} for "
                f"{destination!r}; it must return the queue name as text"
            )
        again = self.generator(name, self.prefix)
        if again != name:
            raise NonIdempotentGeneratorError(
                f"the queue name generator is not idempotent: g({destination!r}, "
                f"{self.prefix!r}) = {name!r} but g({name!r}, {self.prefix!r}) = {again!r}. "
                "Addresses arrive with and without the prefix, so the generator must leave "
                "its own output unchanged (apply the prefix only when it is missing)"
            )
        return name


class EndpointRouting(_Value):
    """Where other endpoints live: ``UseAccountForEndpoint`` and ``UseRegionForEndpoint``.

    An endpoint without an entry lives in the local account and region.
    """

    __slots__ = ("accounts", "regions")
    accounts: tuple[tuple[str, str], ...]
    regions: tuple[tuple[str, str], ...]

    def __init__(
        self, accounts: Mapping[str, str] | None = None, regions: Mapping[str, str] | None = None
    ) -> None:
        for endpoint, account in (accounts or {}).items():
            _check_endpoint(endpoint)
            check_account(account, f"account of endpoint {endpoint!r}")
        for endpoint, region in (regions or {}).items():
            _check_endpoint(endpoint)
            partition_of_region(check_region(region, f"region of endpoint {endpoint!r}"))
        self._set("accounts", tuple((accounts or {}).items()))
        self._set("regions", tuple((regions or {}).items()))

    def use_account_for_endpoint(self, endpoint: str, account: str) -> EndpointRouting:
        """A routing in which ``endpoint`` lives in ``account``."""
        return EndpointRouting(
            _with(self.accounts, endpoint, account, "account"), dict(self.regions)
        )

    def use_region_for_endpoint(self, endpoint: str, region: str) -> EndpointRouting:
        """A routing in which ``endpoint`` lives in ``region``."""
        return EndpointRouting(dict(self.accounts), _with(self.regions, endpoint, region, "region"))

    def location_of(self, endpoint: str, local: Location) -> Location:
        """The account and region of ``endpoint``, falling back to ``local`` for each."""
        account = dict(self.accounts).get(endpoint, local.account)
        region = dict(self.regions).get(endpoint, local.region)
        location = Location(account, region)
        if location.partition != local.partition:
            raise AddressError(
                f"endpoint {endpoint!r} is mapped to region {region!r} in partition "
                f"{location.partition!r}, but this endpoint runs in {local.partition!r}; SQS "
                "cannot deliver across partitions"
            )
        return location


def _check_endpoint(endpoint: str) -> None:
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise AddressError(f"endpoint name {endpoint!r} is empty; give the endpoint's name")


def _with(
    pairs: tuple[tuple[str, str], ...], endpoint: str, value: str, what: str
) -> dict[str, str]:
    """``pairs`` plus ``endpoint -> value``; one endpoint cannot live in two places."""
    mapping = dict(pairs)
    if mapping.get(endpoint, value) != value:
        raise AddressError(
            f"endpoint {endpoint!r} is already in {what} {mapping[endpoint]!r}, so it cannot "
            f"also be in {value!r}; an endpoint's queue lives in one {what}"
        )
    mapping[endpoint] = value
    return mapping


def address_form(address: str) -> AddressForm:
    """Which of the three forms ``address`` is in: ``arn``, ``local`` (``:name``), ``prefixed``.

    Queue names cannot contain ``:``, so the leading characters decide.
    """
    if not isinstance(address, str) or not address:
        raise AddressError(f"transport address {address!r} is empty; give an ARN or a queue name")
    if address.startswith("arn:"):
        return "arn"
    if address.startswith(":"):
        return "local"
    return "prefixed"


class Addressing(_Value):
    """The local location, the routing to other endpoints and the queue naming, together."""

    __slots__ = ("local", "naming", "routing")
    local: Location
    naming: QueueNaming
    routing: EndpointRouting

    def __init__(
        self,
        local: Location,
        routing: EndpointRouting | None = None,
        naming: QueueNaming | None = None,
    ) -> None:
        self._set("local", local)
        self._set("routing", routing if routing is not None else EndpointRouting())
        self._set("naming", naming if naming is not None else QueueNaming())

    def endpoint_arn(self, endpoint: str) -> QueueArn:
        """``ToTransportAddress`` for an endpoint: its queue in its mapped account and region."""
        _check_endpoint(endpoint)
        location = self.routing.location_of(endpoint, self.local)
        return QueueArn.at(location, self.naming.queue_name(endpoint))

    def resolve(self, address: str, *, on_wire: bool = False) -> QueueArn:
        """The queue a transport address in any of the three forms points to.

        ``on_wire=True`` is for addresses read from message headers, where the ``:name`` form
        never appears (it is always expanded before it is sent).
        """
        form = address_form(address)
        if form == "arn":
            return parse_queue_arn(address)
        if form == "local":
            if on_wire:
                raise AddressError(
                    f"transport address {address!r} is in the ':name' form, which is expanded "
                    "to an ARN before sending and never appears in a message header"
                )
            return QueueArn.at(self.local, check_queue_name(address[1:]))
        return QueueArn.at(self.local, self.naming.queue_name(address))


def addressing_from_environment(
    environ: Mapping[str, str], generator: QueueNameGenerator = default_queue_name
) -> Addressing:
    """Build the addressing from the environment variables listed in the module docstring.

    Takes the environment as an argument (pass ``os.environ``) so that tests and callers with
    their own configuration source use the same code.
    """
    region = environ.get(ENV_REGION) or environ.get(ENV_DEFAULT_REGION)
    if not region:
        raise AddressError(
            f"neither {ENV_REGION} nor {ENV_DEFAULT_REGION} is set; set one to the region "
            "this endpoint runs in"
        )
    account = environ.get(ENV_ACCOUNT_ID)
    if not account:
        raise AddressError(
            f"{ENV_ACCOUNT_ID} is not set; set it to this endpoint's account ID (as STS "
            "GetCallerIdentity returns it) or build Addressing with a Location directly"
        )
    try:
        local = Location(account, region)
    except AddressError as error:
        raise AddressError(f"{ENV_ACCOUNT_ID}/{ENV_REGION}: {error}") from error
    routing = EndpointRouting()
    for endpoint, value in _pairs(environ, ENV_ENDPOINT_ACCOUNTS):
        try:
            routing = routing.use_account_for_endpoint(endpoint, value)
        except AddressError as error:
            raise AddressError(f"{ENV_ENDPOINT_ACCOUNTS}: {error}") from error
    for endpoint, value in _pairs(environ, ENV_ENDPOINT_REGIONS):
        try:
            routing = routing.use_region_for_endpoint(endpoint, value)
        except AddressError as error:
            raise AddressError(f"{ENV_ENDPOINT_REGIONS}: {error}") from error
    try:
        naming = QueueNaming(environ.get(ENV_QUEUE_NAME_PREFIX, ""), generator)
    except AddressError as error:
        raise AddressError(f"{ENV_QUEUE_NAME_PREFIX}: {error}") from error
    return Addressing(local, routing, naming)


def _pairs(environ: Mapping[str, str], variable: str) -> list[tuple[str, str]]:
    """Read ``Endpoint=value,Endpoint=value`` from ``variable``; spaces around items are ignored."""
    text = environ.get(variable, "")
    if not text.strip():
        return []
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, item in enumerate(text.split(","), start=1):
        endpoint, separator, value = item.partition("=")
        endpoint, value = endpoint.strip(), value.strip()
        if not separator or not endpoint or not value or "=" in value:
            raise AddressError(
                f"{variable}: item {number} {item.strip()!r} is not 'Endpoint=value'; separate "
                "items with single commas (endpoint names cannot contain ',' or '=' here)"
            )
        if endpoint in seen:
            raise AddressError(
                f"{variable}: endpoint {endpoint!r} appears twice (item {number}); list each "
                "endpoint once"
            )
        seen.add(endpoint)
        pairs.append((endpoint, value))
    return pairs


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
