"""Configuration of the SQS relay (:mod:`cross_account_runtime.relay.lambda_handler`), read from
the environment.

The topology decides which queues a relay reads, where each one forwards to, and which local
endpoints' addresses it stamps; the CDK construct passes that in three variables:

``RELAY_DIRECTION`` (required)
    ``outbound``: the relay reads shadow queues in the sender's account and stamps the ARN
    header; ``inbound``: it reads ingress queues in the receiver's account and substitutes the
    headers named in the ARN header.
``RELAY_ROUTES`` (required)
    A JSON object, one member per queue the relay reads::

        {"arn:aws:sqs:us-east-1:111111111111:Billing":
            {"destination": "arn:aws:sqs:us-east-1:222222222222:Billing-ingress",
             "deadLetterQueue": "arn:aws:sqs:us-east-1:111111111111:Billing-dlq"}}

    ``destination`` is where its messages go; ``deadLetterQueue`` is the queue's own redrive
    dead-letter queue, to which the relay sends the messages it refuses (see
    :mod:`cross_account_runtime.relay.decision`).
``RELAY_LOCAL_ENDPOINTS`` (outbound: required; inbound: must be unset)
    A JSON object mapping each local endpoint's legacy transport address (the value its
    headers carry, e.g. ``"Sales"``) to its queue ARN, its canonical transport address.

``POWERTOOLS_SERVICE_NAME`` (optional) names the log lines' ``service``; unset, it is
:data:`DEFAULT_SERVICE_NAME`.

Everything is checked once, at the first invocation of a container, and every problem is
reported as a :class:`ConfigurationError` naming the variable and the fix: a relay that
guessed would forward messages to the wrong account.
"""

from __future__ import annotations

import enum
import json

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.strict_json import object_without_duplicates
from cross_account_runtime.nservicebus.transport_address import (
    FIFO_SUFFIX,
    AddressError,
    QueueArn,
    address_form,
    parse_queue_arn,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

ENV_DIRECTION: Final = "RELAY_DIRECTION"
ENV_ROUTES: Final = "RELAY_ROUTES"
ENV_LOCAL_ENDPOINTS: Final = "RELAY_LOCAL_ENDPOINTS"

DEFAULT_SERVICE_NAME: Final = "sqs-relay"
"""The log lines' ``service`` when ``POWERTOOLS_SERVICE_NAME`` is unset, as the CDK construct
leaves it: every relay's lines then share one name to query by, and each function's own log
group tells the relays apart."""

ROUTE_DESTINATION: Final = "destination"
ROUTE_DEAD_LETTER_QUEUE: Final = "deadLetterQueue"

_ROUTES_EXAMPLE: Final = (
    '{"<source queue ARN>": {"destination": "<destination queue ARN>", '
    '"deadLetterQueue": "<the source queue\'s dead-letter queue ARN>"}}'
)
_LOCAL_ENDPOINTS_EXAMPLE: Final = '{"Sales": "arn:aws:sqs:us-east-1:111111111111:Sales"}'


class RelayDirection(enum.StrEnum):
    """Which side of the account boundary a relay works on (``RELAY_DIRECTION``).

    A ``StrEnum``, so the environment variable, the log lines and a dead-lettered message's
    ``Relay.Rejection`` JSON carry the plain text (``outbound``, ``inbound``).
    """

    OUTBOUND = "outbound"
    """Reads shadow queues in the sender's account and stamps the ARN header."""
    INBOUND = "inbound"
    """Reads ingress queues in the receiver's account and substitutes the headers the ARN
    header names."""


class SourceQueueRoute:
    """One queue the relay reads: where its messages go and where refused ones go.

    The queue URLs are computed once here, so that relaying a message costs no string work
    for addresses.
    """

    __slots__ = (
        "dead_letter_queue",
        "dead_letter_url",
        "destination",
        "destination_url",
        "fifo",
        "source",
    )

    def __init__(
        self, source: QueueArn, destination: QueueArn, dead_letter_queue: QueueArn
    ) -> None:
        self.source = source
        self.destination = destination
        self.dead_letter_queue = dead_letter_queue
        self.fifo = source.name.endswith(FIFO_SUFFIX)
        self.destination_url = destination.url
        self.dead_letter_url = dead_letter_queue.url


class RelayConfig:
    """The checked configuration: ``direction``, ``routes`` by source queue ARN, and for an
    outbound relay ``local_endpoints`` (legacy address to queue ARN).

    The arguments are the decoded JSON of the environment variables, so that tests and
    :meth:`from_environment` go through the same checks.
    """

    __slots__ = ("direction", "local_endpoints", "routes")

    def __init__(
        self,
        direction: str,
        routes: Mapping[str, object],
        local_endpoints: Mapping[str, object] | None = None,
    ) -> None:
        try:
            self.direction = RelayDirection(direction)
        except ValueError:
            raise ConfigurationError(
                f"{ENV_DIRECTION} is {direction!r}; set it to "
                f"{RelayDirection.OUTBOUND.value!r} (a relay reading shadow queues, which stamps "
                f"the ARN header) or {RelayDirection.INBOUND.value!r} (a relay reading ingress "
                "queues, which substitutes the headers the ARN header names)"
            ) from None
        self.routes = _routes(self.direction, routes)
        home = next(iter(self.routes.values())).source
        if self.direction is RelayDirection.INBOUND:
            if local_endpoints is not None:
                raise ConfigurationError(
                    f"{ENV_LOCAL_ENDPOINTS} is set but {ENV_DIRECTION} is "
                    f"{RelayDirection.INBOUND.value!r}; an inbound relay substitutes from the ARN "
                    "header and stamps nothing: unset it"
                )
            self.local_endpoints: dict[str, str] = {}
        else:
            self.local_endpoints = _local_endpoints(local_endpoints, home)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> RelayConfig:
        """Read the variables from ``environ`` (``os.environ`` in Lambda)."""
        direction = environ.get(ENV_DIRECTION, "").strip()
        if not direction:
            raise ConfigurationError(
                f"{ENV_DIRECTION} is not set; set it to {RelayDirection.OUTBOUND.value!r} or "
                f"{RelayDirection.INBOUND.value!r}"
            )
        routes = _json_object(environ, ENV_ROUTES, _ROUTES_EXAMPLE)
        if routes is None:
            raise ConfigurationError(
                f"{ENV_ROUTES} is not set; set it to the queues this relay reads, as "
                f"{_ROUTES_EXAMPLE}"
            )
        return cls(
            direction,
            routes,
            _json_object(environ, ENV_LOCAL_ENDPOINTS, _LOCAL_ENDPOINTS_EXAMPLE),
        )


def _json_object(
    environ: Mapping[str, str], variable: str, example: str
) -> dict[str, object] | None:
    """The JSON object in ``environ[variable]``, or ``None`` when the variable is unset."""
    text = environ.get(variable, "").strip()
    if not text:
        return None
    try:
        value = json.loads(text, object_pairs_hook=object_without_duplicates)
    except ValueError as error:
        raise ConfigurationError(
            f"{variable} is not valid JSON ({error}); write it as {example}"
        ) from None
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{variable} is a JSON {type(value).__name__}, not an object; write it as {example}"
        )
    return value


def _routes(direction: RelayDirection, routes: Mapping[str, object]) -> dict[str, SourceQueueRoute]:
    """Check every route; all source queues must share the relay's account and region."""
    if not isinstance(routes, dict) or not routes:
        raise ConfigurationError(
            f"{ENV_ROUTES} lists no queue; a relay needs at least one, as {_ROUTES_EXAMPLE}"
        )
    checked: dict[str, SourceQueueRoute] = {}
    home: QueueArn | None = None
    for source_text, target in routes.items():
        source = _arn(source_text, f"{ENV_ROUTES}: source {source_text!r}")
        where = f"{ENV_ROUTES}: route for {source_text!r}"
        if not isinstance(target, dict) or set(target) != {
            ROUTE_DESTINATION,
            ROUTE_DEAD_LETTER_QUEUE,
        }:
            raise ConfigurationError(
                f"{where} must be an object with exactly the members {ROUTE_DESTINATION!r} and "
                f"{ROUTE_DEAD_LETTER_QUEUE!r}, got {target!r}; write it as {_ROUTES_EXAMPLE}"
            )
        destination = _arn(target[ROUTE_DESTINATION], f"{where}: {ROUTE_DESTINATION}")
        dead_letter = _arn(target[ROUTE_DEAD_LETTER_QUEUE], f"{where}: {ROUTE_DEAD_LETTER_QUEUE}")
        if home is None:
            home = source
        elif (source.account, source.region) != (home.account, home.region):
            raise ConfigurationError(
                f"{where}: the queue is in account {source.account} and region {source.region}, "
                f"but {str(home)!r} is in {home.account} and {home.region}; a relay function "
                "reads queues of its own account and region only: deploy one relay per "
                "account and region"
            )
        _check_route(direction, where, source, destination, dead_letter)
        checked[str(source)] = SourceQueueRoute(source, destination, dead_letter)
    return checked


def _check_route(
    direction: RelayDirection,
    where: str,
    source: QueueArn,
    destination: QueueArn,
    dead_letter: QueueArn,
) -> None:
    """Refuse the routes that would loop, cross a partition, or mix FIFO and standard."""
    fifo = source.name.endswith(FIFO_SUFFIX)
    if destination == source or dead_letter in (source, destination):
        raise ConfigurationError(
            f"{where}: the source, destination and dead-letter queue must be three different "
            "queues; a relay sending to the queue it reads would loop"
        )
    if destination.partition != source.partition:
        raise ConfigurationError(
            f"{where}: destination {str(destination)!r} is in partition "
            f"{destination.partition!r} but the source is in {source.partition!r}; SQS cannot "
            "deliver across partitions"
        )
    if destination.name.endswith(FIFO_SUFFIX) != fifo:
        raise ConfigurationError(
            f"{where}: the source is a {_kind(fifo)} queue but destination "
            f"{str(destination)!r} is a {_kind(not fifo)} queue; forward FIFO to FIFO (message "
            "groups and deduplication need it) and standard to standard"
        )
    if (dead_letter.account, dead_letter.region) != (source.account, source.region):
        raise ConfigurationError(
            f"{where}: dead-letter queue {str(dead_letter)!r} must be in the source queue's "
            f"account ({source.account}) and region ({source.region}); give the source queue's "
            "own redrive dead-letter queue"
        )
    if dead_letter.name.endswith(FIFO_SUFFIX) != fifo:
        raise ConfigurationError(
            f"{where}: dead-letter queue {str(dead_letter)!r} is a {_kind(not fifo)} queue but "
            f"the source is a {_kind(fifo)} queue; SQS requires a dead-letter queue of the "
            "source's type"
        )
    if direction is RelayDirection.INBOUND and destination.account != source.account:
        raise ConfigurationError(
            f"{where}: an inbound relay delivers to a local endpoint queue, but destination "
            f"{str(destination)!r} is in account {destination.account}, not {source.account}; "
            f"use {ENV_DIRECTION}={RelayDirection.OUTBOUND.value!r} to forward across accounts"
        )


def _local_endpoints(
    local_endpoints: Mapping[str, object] | None, home: QueueArn
) -> dict[str, str]:
    """Check the address-to-ARN map an outbound relay stamps with."""
    if not local_endpoints:
        raise ConfigurationError(
            f"{ENV_LOCAL_ENDPOINTS} is not set or empty; an outbound relay stamps the ARN of "
            "each local endpoint whose address a message carries: set it to "
            f"{_LOCAL_ENDPOINTS_EXAMPLE}"
        )
    checked: dict[str, str] = {}
    for address, arn_text in local_endpoints.items():
        where = f"{ENV_LOCAL_ENDPOINTS}: endpoint {address!r}"
        if not address or address != address.strip():
            raise ConfigurationError(
                f"{where}: the address is empty or has surrounding spaces and would never equal "
                "a header value; give the address exactly as the endpoint's headers carry it"
            )
        try:
            form = address_form(address)
        except AddressError as error:
            raise ConfigurationError(f"{where}: {error}") from None
        if form != "prefixed":
            raise ConfigurationError(
                f"{where}: the key must be the legacy transport address (a queue name such as "
                "'Sales'), the value its headers carry; ARNs and ':name' forms never are"
            )
        arn = _arn(arn_text, where)
        if (arn.partition, arn.account) != (home.partition, home.account):
            raise ConfigurationError(
                f"{where}: {str(arn)!r} is not in this relay's account {home.account}; list the "
                "queue ARNs of the endpoints that send through this account's shadow queues"
            )
        checked[address] = str(arn)
    return checked


def _arn(text: object, where: str) -> QueueArn:
    """``text`` as a queue ARN, or a configuration error saying where it was found."""
    if not isinstance(text, str):
        raise ConfigurationError(
            f"{where}: expected a queue ARN as text, got {type(text).__name__}; write "
            "'arn:<partition>:sqs:<region>:<account>:<queue name>'"
        )
    try:
        return parse_queue_arn(text)
    except AddressError as error:
        raise ConfigurationError(f"{where}: {error}") from None


def _kind(fifo: bool) -> str:
    return "FIFO" if fifo else "standard"
