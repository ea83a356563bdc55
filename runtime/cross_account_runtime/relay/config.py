"""The SQS relay's configuration (:class:`RelayConfig`), read from the file in the function's
code and the environment variables that :mod:`cross_account_runtime.relay.config_format`
describes, once per container at the first invocation
(:mod:`cross_account_runtime.relay.lambda_handler`).

Everything is checked then, whole, and every problem is reported as a
:class:`~cross_account_runtime.common.configuration.ConfigurationError` naming the file, the
member or variable, and the fix: a relay that guessed would forward messages to the wrong
account.
"""

from __future__ import annotations

import json
import os

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.strict_json import object_without_duplicates
from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from cross_account_runtime.nservicebus.transport_address import address_form
from cross_account_runtime.relay.config_format import (
    ENV_BODY_BUCKET,
    ENV_CONFIGURATION,
    ENV_HOME,
    ENV_TASK_ROOT,
    FILE_ADDRESS_BOOKS,
    FILE_DIRECTION,
    FILE_LOCAL_ENDPOINTS,
    FILE_MEMBERS,
    FILE_ROUTES,
    HOME_EXAMPLE,
    LOCAL_ENDPOINTS_EXAMPLE,
    ROUTE_BODY_BUCKET,
    ROUTES_EXAMPLE,
    RelayDirection,
)
from cross_account_runtime.relay.routes import (
    check_address_books,
    check_routes,
    checked_bucket_name,
    checked_queue_arn,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from cross_account_runtime.nservicebus.queue_arn import QueueArn
    from cross_account_runtime.relay.routes import SourceQueueRoute


class RelayConfig:
    """The checked configuration: ``direction``, ``routes`` by source queue ARN, for an
    outbound relay ``local_endpoints`` (legacy address to queue ARN, from the addresses) and
    ``body_bucket`` (its account's body bucket, if its routes copy bodies), and for an inbound
    one the ``address_books`` its routes name.

    The arguments are the decoded members of the file (``home`` and ``body_bucket`` the
    variables ``RELAY_HOME`` and ``RELAY_BODY_BUCKET``), so that tests and
    :meth:`from_environment` go through the same checks.
    """

    __slots__ = ("body_bucket", "direction", "local_endpoints", "routes")

    def __init__(
        self,
        direction: object,
        routes: object,
        local_endpoints: object = None,
        address_books: object = None,
        body_bucket: object = None,
        *,
        home: object = None,
    ) -> None:
        if direction is None:
            raise ConfigurationError(
                f"{FILE_DIRECTION} is not set; set it to {RelayDirection.OUTBOUND.value!r} or "
                f"{RelayDirection.INBOUND.value!r}"
            )
        try:
            self.direction = RelayDirection(direction if isinstance(direction, str) else "")
        except ValueError:
            raise ConfigurationError(
                f"{FILE_DIRECTION} is {direction!r}; set it to "
                f"{RelayDirection.OUTBOUND.value!r} (a relay reading shadow queues, which stamps "
                f"the ARN header) or {RelayDirection.INBOUND.value!r} (a relay reading ingress "
                "queues, which substitutes the headers the ARN header names)"
            ) from None
        if address_books is not None and self.direction is RelayDirection.OUTBOUND:
            raise ConfigurationError(
                f"{FILE_ADDRESS_BOOKS} is given but {FILE_DIRECTION} is "
                f"{RelayDirection.OUTBOUND.value!r}; only an inbound relay translates addresses "
                "for released receivers: remove it"
            )
        self.routes = check_routes(
            self.direction, routes, check_address_books(address_books), _home(home)
        )
        first = next(iter(self.routes.values())).source
        if self.direction is RelayDirection.INBOUND:
            if local_endpoints is not None:
                raise ConfigurationError(
                    f"{FILE_LOCAL_ENDPOINTS} is given but {FILE_DIRECTION} is "
                    f"{RelayDirection.INBOUND.value!r}; an inbound relay substitutes from the ARN "
                    "header and stamps nothing: remove it"
                )
            self.local_endpoints: dict[str, str] = {}
        else:
            self.local_endpoints = _local_endpoints(local_endpoints, first)
        self.body_bucket = _body_bucket(self.direction, body_bucket, self.routes)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> RelayConfig:
        """Read the file ``RELAY_CONFIGURATION`` names and the variables from ``environ``
        (``os.environ`` in Lambda)."""
        name = environ.get(ENV_CONFIGURATION, "").strip()
        if not name:
            raise ConfigurationError(
                f"{ENV_CONFIGURATION} is not set; set it to the relay's configuration file in "
                "the function's code, as 'relay-config.json' (the CDK construct writes the file "
                "into the code asset and sets the variable)"
            )
        path = os.path.join(environ.get(ENV_TASK_ROOT, "").strip() or ".", name)
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigurationError(
                f"{ENV_CONFIGURATION}: cannot read {path} ({error}); the file belongs in the "
                "function's code beside the runtime package: deploy the code asset the CDK "
                f"construct built, or correct {ENV_CONFIGURATION}"
            ) from None
        document = _document(text, path)
        try:
            return cls(
                document.get(FILE_DIRECTION),
                document.get(FILE_ROUTES),
                document.get(FILE_LOCAL_ENDPOINTS),
                document.get(FILE_ADDRESS_BOOKS),
                environ.get(ENV_BODY_BUCKET, "").strip() or None,
                home=environ.get(ENV_HOME, "").strip() or None,
            )
        except ConfigurationError as error:
            raise ConfigurationError(f"{path}: {error}") from None


def _document(text: str, path: str) -> dict[str, object]:
    """The file's JSON object, with no repeated names and no member the relay does not know."""
    try:
        document = json.loads(text, object_pairs_hook=object_without_duplicates)
    except ValueError as error:
        raise ConfigurationError(
            f"{path} is not valid JSON ({error}); write it as "
            f'{{"{FILE_DIRECTION}": "outbound", "{FILE_ROUTES}": {ROUTES_EXAMPLE}, '
            f'"{FILE_LOCAL_ENDPOINTS}": {LOCAL_ENDPOINTS_EXAMPLE}}}'
        ) from None
    if not isinstance(document, dict):
        raise ConfigurationError(
            f"{path} holds a JSON {type(document).__name__}, not an object with the members "
            f"{list(FILE_MEMBERS)}"
        )
    unknown = sorted(set(document) - set(FILE_MEMBERS))
    if unknown:
        raise ConfigurationError(
            f"{path}: {unknown} are not members the relay reads; it reads {list(FILE_MEMBERS)}: "
            "correct or remove them"
        )
    return document


def _home(home: object) -> QueueArn | None:
    """``RELAY_HOME`` as a queue ARN without its name (``name`` is a placeholder), or ``None``
    when unset."""
    if home is None:
        return None
    if isinstance(home, str) and home.count(":") == 4:
        try:
            return parse_queue_arn(f"{home}:home")
        except AddressError as error:
            raise ConfigurationError(f"{ENV_HOME}: {error}") from None
    raise ConfigurationError(
        f"{ENV_HOME} is {home!r}; set it to the relay's own account and region as "
        f"'arn:<partition>:sqs:<region>:<account>', as {HOME_EXAMPLE!r}"
    )


def _local_endpoints(local_endpoints: object, home: QueueArn) -> dict[str, str]:
    """The addresses an outbound relay stamps, each with the ARN of its queue in the account
    and region of the queues it reads (``home``)."""
    if not local_endpoints:
        raise ConfigurationError(
            f"{FILE_LOCAL_ENDPOINTS} is missing or empty; an outbound relay stamps the ARN of "
            "each local queue whose address a message carries: set it to their addresses, as "
            f"{LOCAL_ENDPOINTS_EXAMPLE}"
        )
    if not isinstance(local_endpoints, list):
        raise ConfigurationError(
            f"{FILE_LOCAL_ENDPOINTS} is a JSON {type(local_endpoints).__name__}, not an array of "
            f"queue names; write it as {LOCAL_ENDPOINTS_EXAMPLE}"
        )
    checked: dict[str, str] = {}
    for address in local_endpoints:
        where = f"{FILE_LOCAL_ENDPOINTS}: endpoint {address!r}"
        if not isinstance(address, str) or not address or address != address.strip():
            raise ConfigurationError(
                f"{where}: the address is not text, empty or has surrounding spaces and would "
                "never equal a header value; give the address exactly as the endpoint's headers "
                "carry it"
            )
        try:
            form = address_form(address)
        except AddressError as error:
            raise ConfigurationError(f"{where}: {error}") from None
        if form != "prefixed":
            raise ConfigurationError(
                f"{where}: give the legacy transport address (a queue name such as 'Sales'), "
                "the value its headers carry; ARNs and ':name' forms never are"
            )
        arn = checked_queue_arn(
            f"arn:{home.partition}:sqs:{home.region}:{home.account}:{address}", where
        )
        checked[address] = str(arn)
    return checked


def _body_bucket(
    direction: RelayDirection, bucket: object, routes: Mapping[str, SourceQueueRoute]
) -> str | None:
    """The relay's own body bucket: set exactly when some outbound route copies bodies (an
    inbound route's bucket is its own account's, and it only uploads there)."""
    copying = [
        str(r.source)
        for r in routes.values()
        if r.body_bucket is not None and direction is RelayDirection.OUTBOUND
    ]
    if bucket is None:
        if copying:
            raise ConfigurationError(
                f"{FILE_ROUTES}: the route for {copying[0]!r} has a {ROUTE_BODY_BUCKET} but "
                f"{ENV_BODY_BUCKET} is not set; set it to this account's body bucket, from which "
                "the bodies are copied"
            )
        return None
    if direction is RelayDirection.INBOUND:
        raise ConfigurationError(
            f"{ENV_BODY_BUCKET} is set but {FILE_DIRECTION} is {RelayDirection.INBOUND.value!r}; "
            "bodies are copied by the outbound relay of the sending account (an inbound route's "
            f"{ROUTE_BODY_BUCKET} names the bucket it uploads to): unset it"
        )
    return checked_bucket_name(bucket, ENV_BODY_BUCKET)
