"""Writing an NServiceBus message's headers back where the transport reads them.

Writing replaces only what changed, where the transport will read it (the forms:
:mod:`~cross_account_runtime.nservicebus.wire_format`): a header that an attribute supplies is
written to that attribute, any other to the headers JSON (attribute form) or the ``Headers``
member (wrapped; every other byte of the body stays as it was), a header that a transport 6
top-level member supplies to that member. A header the transport derives (the message id from
the override) is never written unless it changed. A null header the new headers leave out stays
as it is.

A write starts from a reading (:mod:`~cross_account_runtime.nservicebus.wire_reading`) that
says where each header came from; :class:`HeadersUpdate`, what the relay uses for every
message, reads once and writes from that one reading.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.address_headers import REPLY_TO_ADDRESS
from cross_account_runtime.nservicebus.dotnet_text import is_null_or_white_space
from cross_account_runtime.nservicebus.json_spans import WHITESPACE_CHARACTERS, compact_json
from cross_account_runtime.nservicebus.message_fields import (
    as_mapping,
    attributes_field,
    body_field,
    string_value,
    with_text,
)
from cross_account_runtime.nservicebus.wire_format import (
    CONTROL_MESSAGE_HEADER,
    ENCLOSED_MESSAGE_TYPES_HEADER,
    HEADERS_ATTRIBUTE,
    MESSAGE_ID_HEADER,
    TIME_TO_BE_RECEIVED_HEADER,
    TRANSPORT_HEADERS,
    WireFormatError,
)
from cross_account_runtime.nservicebus.wire_reading import (
    read_with_origins,
    refuse_unwritable,
    text_headers,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cross_account_runtime.nservicebus.json_spans import Span
    from cross_account_runtime.nservicebus.wire_format import Headers, WireForm
    from cross_account_runtime.nservicebus.wire_reading import HeaderOrigins, TransportView

_NATIVE_ON_WRITE = (
    "the message carries no NServiceBus headers ({reason}); writing some would change how "
    "receivers read it, so it is refused"
)


def write_headers(message: Mapping[str, object], headers: Mapping[str, str]) -> dict[str, object]:
    """A copy of ``message`` that the transport reads with ``headers``, changed only where a
    header changed.

    ``headers`` are the complete text headers, as
    :func:`~cross_account_runtime.nservicebus.wire_reading.read_headers` gives them with some
    changed, added or removed; null headers that it leaves out stay as they are. Each change is
    written where the transport will read it (module docstring), JSON with non-ASCII characters
    escaped so that any text fits the characters SQS accepts. Refused: a native message, a
    header the form cannot carry, and a change after which the transport would read the message
    differently than asked.
    """
    view, reason, origins = read_with_origins(message, None, spans=True)
    refuse_unwritable(view, reason, origins, _NATIVE_ON_WRITE)
    current = text_headers(view.headers)
    changed = {name: value for name, value in headers.items() if current.get(name) != value}
    removed = [] if current.keys() <= headers.keys() else [n for n in current if n not in headers]
    return _write(message, view, origins, changed, removed)


class HeadersUpdate:
    """A message's headers read once, to be written back with some changed: what a relay does
    with every message, at the cost of one reading instead of the two ``read_headers`` and
    :func:`write_headers` take together, and without comparing every header to find the few
    that changed.

    ``headers`` and ``form`` are as
    :func:`~cross_account_runtime.nservicebus.wire_reading.read_headers` and
    :func:`~cross_account_runtime.nservicebus.wire_reading.wire_form` give them.

    The time to be received is read and written where the form carries it: a wrapped message's
    ``NServiceBus.AmazonSQS.TimeToBeReceived`` header (or transport 6's top-level member), and
    in the attribute form an entry of the headers JSON, which the transport drops on receive
    (its own unwrapped dispatcher never writes one) but a relay may carry from hop to hop.
    """

    __slots__ = ("_message", "_origins", "_view", "form", "headers")

    def __init__(self, message: Mapping[str, object]) -> None:
        """Read ``message``; refused as ``read_headers`` refuses it."""
        view, reason, origins = read_with_origins(message, None, spans=True)
        refuse_unwritable(view, reason, origins)
        self._message = message
        self._view = view
        self._origins = origins
        self.form: WireForm = view.form
        # A copy: with spans the reading shares its dict with the origins a write relies on.
        self.headers: dict[str, str] = dict(text_headers(view.headers))

    @property
    def s3_body_key(self) -> str | None:
        """The key of the body the transport stored in S3, if it did."""
        return self._view.s3_body_key

    @property
    def view(self) -> TransportView:
        """What the transport makes of the message (its headers with the message id derived
        from the SQS id, null headers as ``None``; its body text and S3 key). Read only."""
        return self._view

    @property
    def derived(self) -> tuple[str, ...]:
        """The names of the headers the transport derives rather than reads (the message id,
        from the SQS message id, when the headers have none)."""
        return self._origins.derived

    @property
    def headers_from_attributes(self) -> tuple[str, ...]:
        """The names of the headers an attribute supplies (attribute form only)."""
        return self._origins.from_attributes

    @property
    def carries_time_to_be_received(self) -> bool:
        """Whether the message carries a time to be received where its form holds one."""
        return TIME_TO_BE_RECEIVED_HEADER in self._carrier()

    @property
    def time_to_be_received(self) -> str | None:
        """The time to be received the message carries (``None`` if none, or null)."""
        return self._carrier().get(TIME_TO_BE_RECEIVED_HEADER)

    def carried_headers(self, dropped_attributes: Iterable[str] = ()) -> Headers:
        """The headers as the message carries them, for writing it in another form: what the
        transport reads, null ones included, without the message id it derives from the SQS
        id (each receiver derives its own), with the time to be received where the attribute
        form holds one, and without what the ``dropped_attributes`` supplied (the headers
        JSON's own value comes back where an attribute overrode it)."""
        origins = self._origins
        headers = {n: v for n, v in self._view.headers.items() if n not in origins.derived}
        own = origins.own
        if self.form == "attribute" and TIME_TO_BE_RECEIVED_HEADER in own:
            headers[TIME_TO_BE_RECEIVED_HEADER] = own[TIME_TO_BE_RECEIVED_HEADER]
        for name in dropped_attributes:
            if name in origins.from_attributes:
                if name in own:
                    headers[name] = own[name]
                else:
                    headers.pop(name, None)
        return headers

    def write(
        self, changes: Mapping[str, str], time_to_be_received: str | None = None
    ) -> dict[str, object]:
        """A copy of the message that the transport reads with ``changes`` made to its headers
        (each header changed or added; none removed), as :func:`write_headers` writes them, and
        with ``time_to_be_received``, if given, where the form carries it."""
        current = self.headers
        changed = {name: value for name, value in changes.items() if current.get(name) != value}
        if time_to_be_received is not None and self.time_to_be_received != time_to_be_received:
            changed[TIME_TO_BE_RECEIVED_HEADER] = time_to_be_received
        return _write(
            self._message,
            self._view,
            self._origins,
            changed,
            [],
            time_to_be_received=time_to_be_received is not None,
        )

    def _carrier(self) -> Headers:
        """Where the form carries the time to be received."""
        return self._origins.own if self.form == "attribute" else self._view.headers


def _write(
    message: Mapping[str, object],
    view: TransportView,
    origins: HeaderOrigins,
    changed: Mapping[str, str],
    removed: list[str],
    *,
    time_to_be_received: bool = False,
) -> dict[str, object]:
    """The message with headers ``changed`` (each different from what it carries) and
    ``removed``, once it was read (with spans) and found writable. With
    ``time_to_be_received``, an attribute form message takes that header into its headers
    JSON (see :class:`HeadersUpdate`)."""
    for name, value in changed.items():
        # An unchanged header equals text already read; only the others need checking.
        if type(name) is not str or type(value) is not str:
            raise WireFormatError(
                f"header {name!r} = {value!r}: NServiceBus headers are text to text; convert "
                "the name and value to str"
            )
    result = dict(message)
    if not changed and not removed:
        return result
    for name in removed:
        if name in origins.derived:
            raise WireFormatError(
                f"header {name!r} is not in the message: NServiceBus derives it on receive "
                "(from the SQS message id), so it cannot be removed"
            )
    if view.form == "wrapped":
        body_key, body = body_field(message)
        assert body is not None  # a wrapped message was parsed from its body
        result[body_key] = _written_body(body, origins, changed, removed)
        return result
    for name in changed:
        if name in TRANSPORT_HEADERS and not (
            time_to_be_received and name == TIME_TO_BE_RECEIVED_HEADER
        ):
            raise WireFormatError(
                f"header {name!r} cannot be carried by an unwrapped message: NServiceBus "
                "removes it from the headers on receive"
            )
    attributes_key, attributes = attributes_field(message)
    result[attributes_key] = _written_attributes(attributes, origins, changed, removed)
    return result


def _written_body(
    body: str, origins: HeaderOrigins, changed: Mapping[str, str], removed: Iterable[str]
) -> str:
    """The wrapped body with the changes made where the transport reads each header: a
    transport 6 member that sets it, else the ``Headers`` member; every other byte kept."""
    if _only_added(origins, changed, removed):
        return _with_entries(body, origins.headers_span[1], bool(origins.own), changed)
    if not removed and not any(name in origins.from_members for name in changed):
        start, end = origins.headers_span
        edited = _edited_object(body[start:end], origins.own, changed)
        if edited is not None:
            return body[:start] + edited + body[end:]
    own = dict(origins.own)
    own_changed = bool(removed)
    replacements: list[tuple[Span, str]] = []
    for name in removed:
        if name in origins.from_members:
            replacements.append((origins.from_members[name], "null"))
        own.pop(name, None)
    for name, value in changed.items():
        span = origins.from_members.get(name)
        if span is None:
            own[name] = value
            own_changed = True
            continue
        replacements.append((span, compact_json(value)))
        if name == REPLY_TO_ADDRESS and is_null_or_white_space(value):
            # .NET ignores a blank ReplyToAddress.Queue, so the Headers member is read instead.
            own[name] = value
            own_changed = True
    if own.get(CONTROL_MESSAGE_HEADER) != "True" and not (
        MESSAGE_ID_HEADER in own or ENCLOSED_MESSAGE_TYPES_HEADER in own
    ):
        raise WireFormatError(
            f"after this change the headers would have neither {MESSAGE_ID_HEADER} nor "
            f"{ENCLOSED_MESSAGE_TYPES_HEADER}, and NServiceBus would read the message as native"
        )
    if own_changed:
        replacements.append((origins.headers_span, compact_json(own)))
    replacements.sort(reverse=True)
    for (start, end), text in replacements:
        body = body[:start] + text + body[end:]
    return body


def _only_added(origins: HeaderOrigins, changed: Mapping[str, str], removed: Iterable[str]) -> bool:
    """Whether the change only adds headers to the JSON (the relay's stamp, usually)."""
    return not removed and not any(
        name in origins.own or name in origins.from_members or name in origins.from_attributes
        for name in changed
    )


def _edited_object(text: str, own: Headers, changed: Mapping[str, str]) -> str | None:
    """The JSON object ``text``, whose headers are ``own``, with ``changed`` made in place:
    each header it holds written as compact JSON writes it (as the transport's dispatcher
    does), found exactly once, gets its new value; the others are added before the closing
    brace. ``None`` when a pair is spelled otherwise (or twice), for a rewrite of the whole
    object. An unescaped ``"name":`` can only be a member name: in a JSON string quotes are
    escaped."""
    added: dict[str, str] = {}
    for name, value in changed.items():
        if name not in own:
            added[name] = value
            continue
        key = compact_json(name)
        pair = f"{key}:{compact_json(own[name])}"
        found = text.find(pair)
        if found < 0 or text.find(pair, found + 1) >= 0:
            return None
        text = f"{text[:found]}{key}:{compact_json(value)}{text[found + len(pair) :]}"
    if added:
        text = _with_entries(text, len(text), bool(own), added)
    return text


def _with_entries(text: str, end: int, after_others: bool, added: Mapping[str, str]) -> str:
    """``text`` with ``added`` written into the JSON object that ends at ``end``, just before
    its closing brace: the object's own bytes stay as they are."""
    entries = ",".join(
        f"{compact_json(name)}:{compact_json(value)}" for name, value in added.items()
    )
    return f"{text[: end - 1]}{',' if after_others else ''}{entries}{text[end - 1 :]}"


def _written_attributes(
    attributes: Mapping[str, object],
    origins: HeaderOrigins,
    changed: Mapping[str, str],
    removed: Iterable[str],
) -> dict[str, object]:
    """The attributes with the changes made where the transport reads each header: the
    attribute that supplies it, else the headers JSON."""
    result = dict(attributes)
    text = string_value(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE) or ""
    blank = "".join(WHITESPACE_CHARACTERS)
    start, end = len(text) - len(text.lstrip(blank)), len(text.rstrip(blank))
    # The JSON may be null (no headers); only an object is edited in place.
    if text[start:end].startswith("{") and not removed:
        if _only_added(origins, changed, removed):
            edited: str | None = _with_entries(
                text[start:end], end - start, bool(origins.own), changed
            )
        elif not any(name in origins.from_attributes for name in changed):
            edited = _edited_object(text[start:end], origins.own, changed)
        else:
            edited = None
        if edited is not None:
            result[HEADERS_ATTRIBUTE] = with_text(
                as_mapping(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE),
                text[:start] + edited + text[end:],
            )
            return result
    own = dict(origins.own)
    for name in removed:
        if name in origins.from_attributes:
            del result[name]
        own.pop(name, None)
    for name, value in changed.items():
        if name in origins.from_attributes:
            result[name] = with_text(as_mapping(result[name], name), value)
        else:
            own[name] = value
    if own != origins.own:
        result[HEADERS_ATTRIBUTE] = with_text(
            as_mapping(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE), compact_json(own)
        )
    return result
