"""A relay's routes: one per queue it reads, saying where its messages go and where refused
ones go, checked from the configuration file's ``routes`` member (its format:
:mod:`cross_account_runtime.relay.config_format`).

A route is refused when it would loop, cross a partition, mix FIFO and standard queues (but
for a delay queue's shadow), name a dead-letter queue SQS would not redrive to, or hold a
member its relay's direction does not take: a relay that guessed would forward messages to the
wrong queue.
"""

from __future__ import annotations

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.nservicebus.locations import AddressError
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX, parse_queue_arn
from cross_account_runtime.nservicebus.redrive import (
    MAX_RECEIVE_COUNT_RANGE,
    dead_letter_queue_problem,
)
from cross_account_runtime.relay.config_format import (
    ADDRESS_BOOKS_EXAMPLE,
    ENV_HOME,
    FILE_ADDRESS_BOOKS,
    FILE_DIRECTION,
    FILE_ROUTES,
    HOME_EXAMPLE,
    ROUTE_ADDRESS_BOOK,
    ROUTE_BODY_BUCKET,
    ROUTE_DEAD_LETTER_QUEUE,
    ROUTE_DELAYED,
    ROUTE_DESTINATION,
    ROUTE_FORM,
    ROUTE_FORWARD_UNREADABLE,
    ROUTE_MAX_RECEIVE_COUNT,
    ROUTE_RECEIVER,
    ROUTES_EXAMPLE,
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

    from cross_account_runtime.nservicebus.queue_arn import QueueArn

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


def check_routes(
    direction: RelayDirection,
    routes: object,
    address_books: Mapping[str, Mapping[str, str]],
    home: QueueArn | None,
) -> dict[str, SourceQueueRoute]:
    """Check every route; all source queues must share one account and region."""
    if routes is None:
        raise ConfigurationError(
            f"{FILE_ROUTES} is not set; set it to the queues this relay reads, as {ROUTES_EXAMPLE}"
        )
    given = _json_object_member(routes, FILE_ROUTES, ROUTES_EXAMPLE)
    if not given:
        raise ConfigurationError(
            f"{FILE_ROUTES} lists no queue; a relay needs at least one, as {ROUTES_EXAMPLE}"
        )
    checked: dict[str, SourceQueueRoute] = {}
    keys: dict[str, str] = {}
    first: QueueArn | None = None
    for source_text, target in given.items():
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
                f"{direction.value} relay, got {target!r}; write it as {ROUTES_EXAMPLE}"
            )
        destination = checked_queue_arn(target[ROUTE_DESTINATION], f"{where}: {ROUTE_DESTINATION}")
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
            else checked_bucket_name(body_bucket, f"{where}: {ROUTE_BODY_BUCKET}"),
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
    low, high = MAX_RECEIVE_COUNT_RANGE
    if type(value) is not int or not low <= value <= high:
        raise ConfigurationError(
            f"{where}: {ROUTE_MAX_RECEIVE_COUNT} is {value!r}; give the source queue's redrive "
            f"maxReceiveCount, an integer from {low} to {high}, or leave it out"
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


def check_address_books(books: object) -> dict[str, dict[str, str]]:
    """Each book as queue ARN to address (the queue's name)."""
    checked: dict[str, dict[str, str]] = {}
    given = _json_object_member(books, FILE_ADDRESS_BOOKS, ADDRESS_BOOKS_EXAMPLE)
    for name, book in (given or {}).items():
        where = f"{FILE_ADDRESS_BOOKS}: book {name!r}"
        if not isinstance(book, dict):
            raise ConfigurationError(
                f"{where} must be an object of 'arn:<partition>:sqs:<region>:<account>' to a "
                f"list of queue names, got {type(book).__name__}; write it as "
                f"{ADDRESS_BOOKS_EXAMPLE}"
            )
        addresses: dict[str, str] = {}
        for account, queue_names in book.items():
            if not isinstance(queue_names, list) or not queue_names:
                raise ConfigurationError(
                    f"{where}: {account!r} must list at least one queue name, got "
                    f"{queue_names!r}; write it as {ADDRESS_BOOKS_EXAMPLE}"
                )
            for queue_name in queue_names:
                if not isinstance(queue_name, str) or not queue_name:
                    raise ConfigurationError(
                        f"{where}: {account!r} lists {queue_name!r}; give queue names as text"
                    )
                arn = checked_queue_arn(f"{account}:{queue_name}", f"{where}: {account!r}")
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


def _source(text: str, home: QueueArn | None) -> QueueArn:
    """A route's key: the source queue's ARN, or its name in ``RELAY_HOME``."""
    where = f"{FILE_ROUTES}: source {text!r}"
    if text.startswith("arn:"):
        return checked_queue_arn(text, where)
    if home is None:
        raise ConfigurationError(
            f"{where} names a queue by name, which needs {ENV_HOME} (the relay's own account "
            f"and region, as {HOME_EXAMPLE!r}): set it, or key the route by the queue's ARN"
        )
    return _named(text, home, where)


def _named(name: str, beside: QueueArn, where: str) -> QueueArn:
    """The queue called ``name`` in ``beside``'s account and region."""
    if ":" in name:
        raise ConfigurationError(
            f"{where}: {name!r} is neither a queue ARN ('arn:<partition>:sqs:<region>:"
            "<account>:<queue name>') nor a queue name; write one of them"
        )
    return checked_queue_arn(
        f"arn:{beside.partition}:sqs:{beside.region}:{beside.account}:{name}", where
    )


def _dead_letter_queue(value: object, source: QueueArn, where: str) -> QueueArn:
    """A route's ``deadLetterQueue``: its ARN, or its name beside the source queue."""
    member = f"{where}: {ROUTE_DEAD_LETTER_QUEUE}"
    if isinstance(value, str) and not value.startswith("arn:"):
        return _named(value, source, member)
    return checked_queue_arn(value, member)


def _json_object_member(value: object, member: str, example: str) -> dict[str, object] | None:
    """A member of the file that must be a JSON object, or ``None`` when absent."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{member} is a JSON {type(value).__name__}, not an object; write it as {example}"
        )
    return value


def checked_bucket_name(name: object, where: str) -> str:
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


def checked_queue_arn(text: object, where: str) -> QueueArn:
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
