"""Configuration of the SQS relay (:mod:`cross_account_runtime.relay.lambda_handler`), read from
a JSON file in the function's code and a few environment variables.

The topology decides which queues a relay reads, where each one forwards to, and which local
endpoints' addresses it stamps. That can be far more than Lambda's 4 KB of environment (an
inbound relay to the error queue of a ring of ten accounts of fifty endpoints lists 501 queues),
so the CDK construct writes it into a file of the function's code asset, read once per container
at the first invocation. The environment keeps only what names the file and what
CloudFormation fills in at deploy time, which a file written at synth cannot hold:

``RELAY_CONFIGURATION`` (required)
    The file's path, relative to the function's code (``LAMBDA_TASK_ROOT``, which Lambda sets;
    the working directory where it is unset), e.g. ``relay-config.json``.
``RELAY_HOME`` (required when the file names a source queue by name)
    The relay's own account and region, ``arn:<partition>:sqs:<region>:<account>``: a source
    queue the file names without an ARN is the queue of that name there.
``RELAY_BODY_BUCKET`` (outbound, for routes with a ``bodyBucket``; inbound: must be unset)
    The relay's own account's body bucket, where the senders' transports put large bodies.
``POWERTOOLS_SERVICE_NAME`` (optional)
    Names the log lines' ``service``; unset, it is :data:`DEFAULT_SERVICE_NAME`.

The file is a JSON object with these members:

``direction`` (required)
    ``outbound``: the relay reads shadow queues in the sender's account and stamps the ARN
    header; ``inbound``: it reads ingress queues in the receiver's account and substitutes the
    headers named in the ARN header.
``routes`` (required)
    A JSON object, one member per queue the relay reads, keyed by its ARN or by its name (a
    queue of ``RELAY_HOME``)::

        {"Billing": {"destination": "arn:aws:sqs:us-east-1:222222222222:Billing-ingress",
                     "deadLetterQueue": "Billing-dlq"}}

    ``destination`` (an ARN) is where its messages go; ``deadLetterQueue`` is the queue's own
    redrive dead-letter queue (its ARN, or its name beside the source queue), to which the relay
    sends the messages it refuses (see :mod:`cross_account_runtime.relay.decision`). Optional
    members:

    ``"delayed": true`` (outbound)
        The source is the shadow of a delay queue (FIFO, ``<queue>-delay.fifo``): the relay
        forwards each message only when its ``NServiceBus.AmazonSQS.DelaySeconds`` are nearly
        spent, as NServiceBus's delayed messages pump does, and sends it back to the source
        until then.
    ``"receiver": "arn"`` or ``"name"`` (inbound, required there)
        How the destination endpoint reads addresses: ``arn`` for an ARN-aware endpoint, which
        substitutes the ARN header itself (the message is delivered unchanged); ``name`` for a
        released one, which resolves every address by name in its own account: the relay
        writes into each address header the address that leads to the same queue from there.
    ``"addressBook": "<book>"`` (with ``"receiver": "name"``)
        The book of ``addressBooks`` listing the queues that endpoint reaches by name.
    ``"form": "wrapped"`` or ``"attribute"`` (inbound, required there; refused outbound)
        The wire form the receiving endpoint's own dispatcher writes (``attribute`` for an
        endpoint configured with ``DoNotWrapOutgoingMessages``): the inbound relay delivers
        every NServiceBus message in that form, since a receiver that copies attributes onto
        its retries and error copies mishandles a message of the other form.
    ``"forwardUnreadable": true`` (both directions)
        The route leads to an error queue: a message the relay cannot read (unreadable
        NServiceBus headers, a malformed ARN header) is forwarded unchanged instead of
        dead-lettered, as the transport moves a message it cannot read to its error queue.
    ``"maxReceiveCount": <1-1000>`` (both directions)
        The source queue's redrive ``maxReceiveCount``, so that the relay knows a receive is the
        last before SQS moves the message to the dead-letter queue, and dead-letters a message
        whose send fails then itself, with the reason.
    ``"bodyBucket": "<bucket name>"``
        Outbound (with ``RELAY_BODY_BUCKET``): the receiving account's body bucket. A message
        whose body the transport put in S3 (``S3BodyKey``) is forwarded only once the body is
        copied there under the same key, since the receiver reads the key from its own bucket;
        a body that no longer fits inline once stamped is uploaded there. Inbound: the relay's
        own account's body bucket, into which it uploads a body that no longer fits inline
        after form conversion or address translation (see
        :mod:`cross_account_runtime.relay.bodies`).
``localEndpoints`` (outbound: required; inbound: must be absent)
    A JSON array of the transport addresses of the local queues (endpoint queues and the error
    queue) whose address a message may carry, e.g. ``["Sales", "Shipping"]``: their physical
    names, which NServiceBus's address headers carry. Each is a queue of the source queues'
    account and region, so its ARN follows from the name.
``addressBooks`` (inbound, for routes with an ``addressBook``; outbound: must be absent)
    A JSON object of books, each listing the queues a released endpoint reaches by name in its
    own account (its account's queues, and those a shadow queue there leads to), grouped by
    account and region::

        {"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales", "Shipping"],
               "arn:aws:sqs:us-east-1:333333333333": ["error"]}}

    A released endpoint's transport address is its queue's name, so the address that leads to
    a listed queue is its name. Books rather than a map per route: the endpoints of one
    account reach the same queues, and a book is written once.

Everything is checked once, at the first invocation of a container, and every problem is
reported as a :class:`ConfigurationError` naming the file, the member or variable, and the
fix: a relay that guessed would forward messages to the wrong account.
"""

from __future__ import annotations

import enum
import json
import os

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.common.strict_json import object_without_duplicates
from cross_account_runtime.nservicebus.transport_address import (
    FIFO_SUFFIX,
    AddressError,
    QueueArn,
    address_form,
    dead_letter_queue_problem,
    parse_queue_arn,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

ENV_CONFIGURATION: Final = "RELAY_CONFIGURATION"
ENV_HOME: Final = "RELAY_HOME"
ENV_BODY_BUCKET: Final = "RELAY_BODY_BUCKET"
ENV_TASK_ROOT: Final = "LAMBDA_TASK_ROOT"
"""Where Lambda unpacked the function's code (``/var/task``); a relative
``RELAY_CONFIGURATION`` is read from there."""

FILE_DIRECTION: Final = "direction"
FILE_ROUTES: Final = "routes"
FILE_LOCAL_ENDPOINTS: Final = "localEndpoints"
FILE_ADDRESS_BOOKS: Final = "addressBooks"
_FILE_MEMBERS: Final = (FILE_DIRECTION, FILE_ROUTES, FILE_LOCAL_ENDPOINTS, FILE_ADDRESS_BOOKS)

DEFAULT_SERVICE_NAME: Final = "sqs-relay"
"""The log lines' ``service`` when ``POWERTOOLS_SERVICE_NAME`` is unset, as the CDK construct
leaves it: every relay's lines then share one name to query by, and each function's own log
group tells the relays apart."""

ROUTE_DESTINATION: Final = "destination"
ROUTE_DEAD_LETTER_QUEUE: Final = "deadLetterQueue"
ROUTE_DELAYED: Final = "delayed"
ROUTE_RECEIVER: Final = "receiver"
ROUTE_ADDRESS_BOOK: Final = "addressBook"
ROUTE_BODY_BUCKET: Final = "bodyBucket"
ROUTE_FORM: Final = "form"
ROUTE_FORWARD_UNREADABLE: Final = "forwardUnreadable"
ROUTE_MAX_RECEIVE_COUNT: Final = "maxReceiveCount"
MAX_RECEIVE_COUNT_RANGE: Final = range(1, 1001)
"""What SQS accepts as a redrive policy's ``maxReceiveCount``."""

_ROUTES_EXAMPLE: Final = (
    '{"<source queue name or ARN>": {"destination": "<destination queue ARN>", '
    '"deadLetterQueue": "<the source queue\'s dead-letter queue name or ARN>"}}'
)
_LOCAL_ENDPOINTS_EXAMPLE: Final = '["Sales", "Shipping"]'
_ADDRESS_BOOKS_EXAMPLE: Final = '{"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales"]}}'
_HOME_EXAMPLE: Final = "arn:aws:sqs:us-east-1:111111111111"


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


_REQUIRED_ROUTE_MEMBERS: Final = {
    RelayDirection.OUTBOUND: frozenset({ROUTE_DESTINATION, ROUTE_DEAD_LETTER_QUEUE}),
    RelayDirection.INBOUND: frozenset({ROUTE_DESTINATION, ROUTE_DEAD_LETTER_QUEUE, ROUTE_RECEIVER}),
}
_BOTH_DIRECTIONS_MEMBERS: Final = frozenset(
    {ROUTE_BODY_BUCKET, ROUTE_FORWARD_UNREADABLE, ROUTE_MAX_RECEIVE_COUNT}
)
_ROUTE_MEMBERS: Final = {
    RelayDirection.OUTBOUND: _REQUIRED_ROUTE_MEMBERS[RelayDirection.OUTBOUND]
    | _BOTH_DIRECTIONS_MEMBERS
    | {ROUTE_DELAYED},
    RelayDirection.INBOUND: _REQUIRED_ROUTE_MEMBERS[RelayDirection.INBOUND]
    | _BOTH_DIRECTIONS_MEMBERS
    | {ROUTE_ADDRESS_BOOK, ROUTE_FORM},
}


class ReceiverAddressing(enum.StrEnum):
    """How the endpoint an inbound relay delivers to reads address headers (``receiver``)."""

    ARN = "arn"
    """ARN-aware (seed 000's "New"): it substitutes the headers the ARN header names itself."""
    NAME = "name"
    """A released transport: it resolves every address by name in its own account."""


class MessageForm(enum.StrEnum):
    """The wire form an inbound route delivers NServiceBus messages in (``form``): the one the
    receiving endpoint's own dispatcher writes."""

    WRAPPED = "wrapped"
    """The transport's default: headers and base64 body in a JSON envelope in the body."""
    ATTRIBUTE = "attribute"
    """``DoNotWrapOutgoingMessages``: the payload as the body, the headers in the
    ``NServiceBus.AmazonSQS.Headers`` attribute."""


class SourceQueueRoute:
    """One queue the relay reads: where its messages go and where refused ones go, whether it
    holds delayed messages, how the destination endpoint reads addresses and which wire form it
    takes, whether unreadable messages go on (a route to an error queue), and the source
    queue's ``maxReceiveCount``.

    The queue URLs are computed once here, so that relaying a message costs no string work
    for addresses.
    """

    __slots__ = (
        "addresses",
        "body_bucket",
        "dead_letter_queue",
        "dead_letter_url",
        "delayed",
        "destination",
        "destination_fifo",
        "destination_url",
        "fifo",
        "form",
        "forward_unreadable",
        "max_receive_count",
        "receiver",
        "source",
        "source_url",
    )

    def __init__(
        self,
        source: QueueArn,
        destination: QueueArn,
        dead_letter_queue: QueueArn,
        *,
        delayed: bool = False,
        receiver: ReceiverAddressing | None = None,
        addresses: Mapping[str, str] | None = None,
        body_bucket: str | None = None,
        form: MessageForm | None = None,
        forward_unreadable: bool = False,
        max_receive_count: int | None = None,
    ) -> None:
        self.source = source
        self.destination = destination
        self.dead_letter_queue = dead_letter_queue
        self.fifo = source.name.endswith(FIFO_SUFFIX)
        self.destination_fifo = destination.name.endswith(FIFO_SUFFIX)
        self.source_url = source.url
        self.destination_url = destination.url
        self.dead_letter_url = dead_letter_queue.url
        self.delayed = delayed
        self.receiver = receiver
        self.addresses: Mapping[str, str] = addresses or {}
        """Queue ARN to the address a released receiver resolves to that queue (shared by the
        routes of one address book)."""
        self.body_bucket = body_bucket
        """The receiving account's body bucket, into which the outbound relay copies S3 bodies
        and uploads bodies that no longer fit inline; inbound, the relay's own account's, into
        which it uploads those."""
        self.form = form
        """The form an inbound route delivers NServiceBus messages in; ``None`` outbound."""
        self.forward_unreadable = forward_unreadable
        """Whether a message the relay cannot read goes on unchanged (a route to an error
        queue) rather than to the dead-letter queue."""
        self.max_receive_count = max_receive_count
        """The source queue's redrive ``maxReceiveCount``, if the route says."""


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
        self.routes = _routes(self.direction, routes, _address_books(address_books), _home(home))
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
            f'{{"{FILE_DIRECTION}": "outbound", "{FILE_ROUTES}": {_ROUTES_EXAMPLE}, '
            f'"{FILE_LOCAL_ENDPOINTS}": {_LOCAL_ENDPOINTS_EXAMPLE}}}'
        ) from None
    if not isinstance(document, dict):
        raise ConfigurationError(
            f"{path} holds a JSON {type(document).__name__}, not an object with the members "
            f"{list(_FILE_MEMBERS)}"
        )
    unknown = sorted(set(document) - set(_FILE_MEMBERS))
    if unknown:
        raise ConfigurationError(
            f"{path}: {unknown} are not members the relay reads; it reads {list(_FILE_MEMBERS)}: "
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
        f"'arn:<partition>:sqs:<region>:<account>', as {_HOME_EXAMPLE!r}"
    )


def _source(text: str, home: QueueArn | None) -> QueueArn:
    """A route's key: the source queue's ARN, or its name in ``RELAY_HOME``."""
    where = f"{FILE_ROUTES}: source {text!r}"
    if text.startswith("arn:"):
        return _arn(text, where)
    if home is None:
        raise ConfigurationError(
            f"{where} names a queue by name, which needs {ENV_HOME} (the relay's own account "
            f"and region, as {_HOME_EXAMPLE!r}): set it, or key the route by the queue's ARN"
        )
    return _named(text, home, where)


def _named(name: str, beside: QueueArn, where: str) -> QueueArn:
    """The queue called ``name`` in ``beside``'s account and region."""
    if ":" in name:
        raise ConfigurationError(
            f"{where}: {name!r} is neither a queue ARN ('arn:<partition>:sqs:<region>:"
            "<account>:<queue name>') nor a queue name; write one of them"
        )
    return _arn(f"arn:{beside.partition}:sqs:{beside.region}:{beside.account}:{name}", where)


def _dead_letter_queue(value: object, source: QueueArn, where: str) -> QueueArn:
    """A route's ``deadLetterQueue``: its ARN, or its name beside the source queue."""
    member = f"{where}: {ROUTE_DEAD_LETTER_QUEUE}"
    if isinstance(value, str) and not value.startswith("arn:"):
        return _named(value, source, member)
    return _arn(value, member)


def _json_object_member(value: object, member: str, example: str) -> dict[str, object] | None:
    """A member of the file that must be a JSON object, or ``None`` when absent."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{member} is a JSON {type(value).__name__}, not an object; write it as {example}"
        )
    return value


def _routes(
    direction: RelayDirection,
    routes: object,
    address_books: Mapping[str, Mapping[str, str]],
    home: QueueArn | None,
) -> dict[str, SourceQueueRoute]:
    """Check every route; all source queues must share one account and region."""
    if routes is None:
        raise ConfigurationError(
            f"{FILE_ROUTES} is not set; set it to the queues this relay reads, as {_ROUTES_EXAMPLE}"
        )
    checked_routes = _json_object_member(routes, FILE_ROUTES, _ROUTES_EXAMPLE)
    if not checked_routes:
        raise ConfigurationError(
            f"{FILE_ROUTES} lists no queue; a relay needs at least one, as {_ROUTES_EXAMPLE}"
        )
    checked: dict[str, SourceQueueRoute] = {}
    keys: dict[str, str] = {}
    first: QueueArn | None = None
    for source_text, target in checked_routes.items():
        source = _source(source_text, home)
        where = f"{FILE_ROUTES}: route for {source_text!r}"
        if str(source) in keys:
            raise ConfigurationError(
                f"{where}: the queue {str(source)!r} also has the route for "
                f"{keys[str(source)]!r}; give each queue one route"
            )
        keys[str(source)] = source_text
        allowed = _ROUTE_MEMBERS[direction]
        if (
            direction is RelayDirection.OUTBOUND
            and isinstance(target, dict)
            and ROUTE_FORM in target
        ):
            raise ConfigurationError(
                f"{where}: {ROUTE_FORM} is for inbound routes; an outbound relay forwards each "
                "message in the form its sender wrote, and the receiving account's inbound relay "
                f"delivers it in its endpoint's form: remove {ROUTE_FORM}"
            )
        if (
            not isinstance(target, dict)
            or not _REQUIRED_ROUTE_MEMBERS[direction] <= set(target)
            or not set(target) <= allowed
        ):
            raise ConfigurationError(
                f"{where} must be an object with the members "
                f"{sorted(_REQUIRED_ROUTE_MEMBERS[direction])} (and optionally "
                f"{sorted(allowed - _REQUIRED_ROUTE_MEMBERS[direction])}) for an "
                f"{direction.value} relay, got {target!r}; write it as {_ROUTES_EXAMPLE}"
            )
        destination = _arn(target[ROUTE_DESTINATION], f"{where}: {ROUTE_DESTINATION}")
        dead_letter = _dead_letter_queue(target[ROUTE_DEAD_LETTER_QUEUE], source, where)
        delayed = target.get(ROUTE_DELAYED, False)
        if not isinstance(delayed, bool):
            raise ConfigurationError(f"{where}: {ROUTE_DELAYED} must be true or false")
        if first is None:
            first = source
        elif (source.account, source.region) != (first.account, first.region):
            raise ConfigurationError(
                f"{where}: the queue is in account {source.account} and region {source.region}, "
                f"but {str(first)!r} is in {first.account} and {first.region}; a relay function "
                "reads queues of its own account and region only: deploy one relay per "
                "account and region"
            )
        _check_route(direction, where, source, destination, dead_letter, delayed=delayed)
        receiver = (
            _receiver(where, target.get(ROUTE_RECEIVER)) if ROUTE_RECEIVER in target else None
        )
        addresses = _address_book(where, receiver, target.get(ROUTE_ADDRESS_BOOK), address_books)
        body_bucket = target.get(ROUTE_BODY_BUCKET)
        forward_unreadable = target.get(ROUTE_FORWARD_UNREADABLE, False)
        if not isinstance(forward_unreadable, bool):
            raise ConfigurationError(
                f"{where}: {ROUTE_FORWARD_UNREADABLE} is {forward_unreadable!r}; set it to true "
                "on a route to an error queue (unreadable messages then go on unchanged, as the "
                "transport moves them there), or leave it out"
            )
        checked[str(source)] = SourceQueueRoute(
            source,
            destination,
            dead_letter,
            delayed=delayed,
            receiver=receiver,
            addresses=addresses,
            body_bucket=None
            if body_bucket is None
            else _bucket_name(body_bucket, f"{where}: {ROUTE_BODY_BUCKET}"),
            form=_form(where, target) if direction is RelayDirection.INBOUND else None,
            forward_unreadable=forward_unreadable,
            max_receive_count=_max_receive_count(where, target.get(ROUTE_MAX_RECEIVE_COUNT)),
        )
    return checked


def _form(where: str, target: Mapping[str, object]) -> MessageForm:
    """The form an inbound route delivers in: required, one of :class:`MessageForm`."""
    value = target.get(ROUTE_FORM)
    try:
        return MessageForm(value if isinstance(value, str) else repr(value))
    except ValueError:
        raise ConfigurationError(
            f"{where}: {ROUTE_FORM} is {'missing' if value is None else repr(value)}; set it to "
            f"{MessageForm.WRAPPED.value!r} or {MessageForm.ATTRIBUTE.value!r}, the wire form "
            f"the receiving endpoint's own dispatcher writes ({MessageForm.ATTRIBUTE.value!r} "
            "when it is configured with DoNotWrapOutgoingMessages)"
        ) from None


def _max_receive_count(where: str, value: object) -> int | None:
    """The source queue's ``maxReceiveCount``, if given: an integer SQS accepts."""
    if value is None:
        return None
    if type(value) is not int or value not in MAX_RECEIVE_COUNT_RANGE:
        raise ConfigurationError(
            f"{where}: {ROUTE_MAX_RECEIVE_COUNT} is {value!r}; give the source queue's redrive "
            f"maxReceiveCount, an integer from {MAX_RECEIVE_COUNT_RANGE.start} to "
            f"{MAX_RECEIVE_COUNT_RANGE.stop - 1}, or leave it out"
        )
    return value


def _receiver(where: str, value: object) -> ReceiverAddressing:
    try:
        return ReceiverAddressing(value if isinstance(value, str) else repr(value))
    except ValueError:
        raise ConfigurationError(
            f"{where}: {ROUTE_RECEIVER} is {value!r}; set it to "
            f"{ReceiverAddressing.ARN.value!r} (an ARN-aware endpoint, which substitutes the "
            f"ARN header itself) or {ReceiverAddressing.NAME.value!r} (a released transport, "
            "which resolves addresses by name in its own account)"
        ) from None


def _address_book(
    where: str,
    receiver: ReceiverAddressing | None,
    name: object,
    address_books: Mapping[str, Mapping[str, str]],
) -> Mapping[str, str]:
    """The ARN-to-address map of the book a route to a name-resolving endpoint names."""
    if name is None:
        return {}
    if receiver is not ReceiverAddressing.NAME:
        raise ConfigurationError(
            f"{where}: {ROUTE_ADDRESS_BOOK} is given but {ROUTE_RECEIVER} is not "
            f"{ReceiverAddressing.NAME.value!r}; only a released endpoint needs addresses "
            "translated: drop it or set the receiver"
        )
    if not isinstance(name, str) or name not in address_books:
        raise ConfigurationError(
            f"{where}: {ROUTE_ADDRESS_BOOK} is {name!r}, which {FILE_ADDRESS_BOOKS} does not "
            f"hold (it has {sorted(address_books)}); name one of its books"
        )
    return address_books[name]


def _address_books(books: object) -> dict[str, dict[str, str]]:
    """Each book as queue ARN to address (the queue's name)."""
    checked: dict[str, dict[str, str]] = {}
    given = _json_object_member(books, FILE_ADDRESS_BOOKS, _ADDRESS_BOOKS_EXAMPLE)
    for name, book in (given or {}).items():
        where = f"{FILE_ADDRESS_BOOKS}: book {name!r}"
        if not isinstance(book, dict):
            raise ConfigurationError(
                f"{where} must be an object of 'arn:<partition>:sqs:<region>:<account>' to a "
                f"list of queue names, got {type(book).__name__}; write it as "
                f"{_ADDRESS_BOOKS_EXAMPLE}"
            )
        addresses: dict[str, str] = {}
        for account, queue_names in book.items():
            if not isinstance(queue_names, list) or not queue_names:
                raise ConfigurationError(
                    f"{where}: {account!r} must list at least one queue name, got "
                    f"{queue_names!r}; write it as {_ADDRESS_BOOKS_EXAMPLE}"
                )
            for queue_name in queue_names:
                if not isinstance(queue_name, str) or not queue_name:
                    raise ConfigurationError(
                        f"{where}: {account!r} lists {queue_name!r}; give queue names as text"
                    )
                arn = _arn(f"{account}:{queue_name}", f"{where}: {account!r}")
                addresses[str(arn)] = arn.name
        checked[name] = addresses
    return checked


def _check_route(
    direction: RelayDirection,
    where: str,
    source: QueueArn,
    destination: QueueArn,
    dead_letter: QueueArn,
    *,
    delayed: bool,
) -> None:
    """Refuse the routes that would loop, cross a partition, or mix FIFO and standard (but
    for a delay queue's shadow, FIFO like every delay queue, forwarding to a standard queue)."""
    fifo = source.name.endswith(FIFO_SUFFIX)
    if delayed:
        if not fifo or destination.name.endswith(FIFO_SUFFIX):
            raise ConfigurationError(
                f"{where}: a {ROUTE_DELAYED} route reads the shadow of a delay queue, which is "
                "FIFO, and forwards to a standard ingress queue (per-message delays need one); "
                f"got source {str(source)!r} and destination {str(destination)!r}"
            )
        if direction is RelayDirection.INBOUND:
            raise ConfigurationError(
                f"{where}: {ROUTE_DELAYED} routes are outbound: the delay is spent in the "
                "sender's account"
            )
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
    if destination.name.endswith(FIFO_SUFFIX) != fifo and not delayed:
        raise ConfigurationError(
            f"{where}: the source is a {_kind(fifo)} queue but destination "
            f"{str(destination)!r} is a {_kind(not fifo)} queue; forward FIFO to FIFO (message "
            "groups and deduplication need it) and standard to standard"
        )
    problem = dead_letter_queue_problem(source, dead_letter)
    if problem is not None:
        raise ConfigurationError(f"{where}: {problem}")
    if direction is RelayDirection.INBOUND and destination.account != source.account:
        raise ConfigurationError(
            f"{where}: an inbound relay delivers to a local endpoint queue, but destination "
            f"{str(destination)!r} is in account {destination.account}, not {source.account}; "
            f"use an outbound relay ({FILE_DIRECTION} {RelayDirection.OUTBOUND.value!r}) to forward "
            "across accounts"
        )


def _local_endpoints(local_endpoints: object, home: QueueArn) -> dict[str, str]:
    """The addresses an outbound relay stamps, each with the ARN of its queue in the account
    and region of the queues it reads (``home``)."""
    if not local_endpoints:
        raise ConfigurationError(
            f"{FILE_LOCAL_ENDPOINTS} is missing or empty; an outbound relay stamps the ARN of "
            "each local queue whose address a message carries: set it to their addresses, as "
            f"{_LOCAL_ENDPOINTS_EXAMPLE}"
        )
    if not isinstance(local_endpoints, list):
        raise ConfigurationError(
            f"{FILE_LOCAL_ENDPOINTS} is a JSON {type(local_endpoints).__name__}, not an array of "
            f"queue names; write it as {_LOCAL_ENDPOINTS_EXAMPLE}"
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
        arn = _arn(f"arn:{home.partition}:sqs:{home.region}:{home.account}:{address}", where)
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
    return _bucket_name(bucket, ENV_BODY_BUCKET)


def _bucket_name(name: object, where: str) -> str:
    """An S3 bucket name as S3 (and the transport's ``S3Settings``) accept it."""
    if (
        not isinstance(name, str)
        or not 3 <= len(name) <= 63
        or not all(c.isascii() and (c.islower() or c.isdigit() or c in "-.") for c in name)
        or not name[0].isalnum()
        or not name[-1].isalnum()
        or ".." in name
        or ".-" in name
        or "-." in name
    ):
        raise ConfigurationError(
            f"{where} is {name!r}, not an S3 bucket name: 3-63 lowercase letters, digits, '-' "
            "and '.', starting and ending with a letter or digit"
        )
    return name


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
