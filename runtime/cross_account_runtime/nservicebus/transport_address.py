"""SQS transport addresses: the three address forms, and the queue each one leads to.

A legacy transport address is a bare queue name, which cannot say which account or region a
queue lives in, nor whether the queue-name prefix was already applied. The canonical address
is therefore the queue ARN (:mod:`~cross_account_runtime.nservicebus.queue_arn`). Two shorter
forms remain for configuration:

* ``arn:<partition>:sqs:<region>:<account>:<name>``: exactly that queue;
* ``:<name>``: the queue ``<name>`` in the local account and region, taken as is (no prefix);
* ``<name>``: the local queue whose name the queue-name generator
  (:mod:`~cross_account_runtime.nservicebus.queue_name_generator`) makes from ``<name>`` and
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

from cross_account_runtime.nservicebus.locations import (
    AddressError,
    ImmutableValue,
    Location,
    check_account,
    check_region,
    partition_of_region,
)
from cross_account_runtime.nservicebus.queue_arn import (
    QueueArn,
    check_queue_name,
    parse_queue_arn,
)
from cross_account_runtime.nservicebus.queue_name_generator import (
    QueueNaming,
    default_queue_name,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final, Literal

    from cross_account_runtime.nservicebus.queue_name_generator import QueueNameGenerator

    AddressForm = Literal["arn", "local", "prefixed"]

ENV_ENDPOINT_ACCOUNTS: Final = "NSB_SQS_ENDPOINT_ACCOUNTS"
ENV_ENDPOINT_REGIONS: Final = "NSB_SQS_ENDPOINT_REGIONS"
ENV_QUEUE_NAME_PREFIX: Final = "NSB_SQS_QUEUE_NAME_PREFIX"
ENV_ACCOUNT_ID: Final = "AWS_ACCOUNT_ID"
ENV_REGION: Final = "AWS_REGION"
ENV_DEFAULT_REGION: Final = "AWS_DEFAULT_REGION"


class EndpointLocations(ImmutableValue):
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

    def use_account_for_endpoint(self, endpoint: str, account: str) -> EndpointLocations:
        """These locations with ``endpoint`` in ``account``."""
        return EndpointLocations(
            _with(self.accounts, endpoint, account, "account"), dict(self.regions)
        )

    def use_region_for_endpoint(self, endpoint: str, region: str) -> EndpointLocations:
        """These locations with ``endpoint`` in ``region``."""
        return EndpointLocations(
            dict(self.accounts), _with(self.regions, endpoint, region, "region")
        )

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


class Addressing(ImmutableValue):
    """The local location, where other endpoints live and the queue naming, together."""

    __slots__ = ("local", "locations", "naming")
    local: Location
    naming: QueueNaming
    locations: EndpointLocations

    def __init__(
        self,
        local: Location,
        locations: EndpointLocations | None = None,
        naming: QueueNaming | None = None,
    ) -> None:
        self._set("local", local)
        self._set("locations", locations if locations is not None else EndpointLocations())
        self._set("naming", naming if naming is not None else QueueNaming())

    def endpoint_arn(self, endpoint: str) -> QueueArn:
        """``ToTransportAddress`` for an endpoint: its queue in its mapped account and region."""
        _check_endpoint(endpoint)
        location = self.locations.location_of(endpoint, self.local)
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
    locations = EndpointLocations()
    for endpoint, value in _pairs(environ, ENV_ENDPOINT_ACCOUNTS):
        try:
            locations = locations.use_account_for_endpoint(endpoint, value)
        except AddressError as error:
            raise AddressError(f"{ENV_ENDPOINT_ACCOUNTS}: {error}") from error
    for endpoint, value in _pairs(environ, ENV_ENDPOINT_REGIONS):
        try:
            locations = locations.use_region_for_endpoint(endpoint, value)
        except AddressError as error:
            raise AddressError(f"{ENV_ENDPOINT_REGIONS}: {error}") from error
    try:
        naming = QueueNaming(environ.get(ENV_QUEUE_NAME_PREFIX, ""), generator)
    except AddressError as error:
        raise AddressError(f"{ENV_QUEUE_NAME_PREFIX}: {error}") from error
    return Addressing(local, locations, naming)


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
