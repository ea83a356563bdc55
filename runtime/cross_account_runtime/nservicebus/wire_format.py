"""The headers and body of an NServiceBus message on SQS, read as the transport reads them and
written back in the place it reads them from.

NServiceBus.AmazonSQS (9.1.1, ``InputQueuePump.ExtractTransportMessage``) tries, in order:

1. **attribute** (the transport's "unwrapped" form, ``DoNotWrapOutgoingMessages``): a message
   attribute ``NServiceBus.AmazonSQS.Headers`` holds the headers as a JSON object; every other
   attribute except ``NServiceBus.MessageId`` is copied over them (an attribute wins over the
   JSON); the body is the payload. A broken attribute makes the message poison.
2. a **native message with a type**: a ``MessageTypeFullName`` attribute; the attributes are the
   headers, ``NServiceBus.EnclosedMessageTypes`` is that type, ``NServiceBus.MessageId`` is the
   message-id override.
3. **wrapped** (the default): the body is the JSON ``{"Body": ..., "S3BodyKey": ...,
   "Headers": {...}}``, read with System.Text.Json's rules (case-sensitive names, last member
   wins, transport 6's top-level ``TimeToBeReceived`` and ``ReplyToAddress.Queue`` folded into
   the headers), unless the headers could be a native message's (no ``NServiceBus.MessageId``,
   no ``NServiceBus.EnclosedMessageTypes``, not a control message). Attributes are not read.
4. otherwise **native**: the attributes are the headers and ``NServiceBus.MessageId`` is the
   SQS message id.

After copying attributes the transport drops ``NServiceBus.AmazonSQS.Headers``,
``…DelaySeconds`` and ``…TimeToBeReceived`` from the headers, and in forms 1 and 3 it adds
``NServiceBus.MessageId`` from the override only when the headers lack it. In production the
override is the SQS message id (the transport's unit tests pass the ``NServiceBus.MessageId``
attribute instead); :func:`read_message` takes it as ``message_id``.

A header may be null in .NET: a ``Binary`` attribute (it has no ``StringValue``) or a JSON
``null``. :class:`TransportView` keeps such a header with the value ``None``;
:func:`read_headers`, which the relay uses as text to text, leaves it out, and
:func:`write_headers` leaves it as it is.

Writing replaces only what changed, where the transport will read it: a header that an
attribute supplies is written to that attribute, any other to the headers JSON (attribute form)
or the ``Headers`` member (wrapped; every other byte of the body stays as it was), a header that
a transport 6 top-level member supplies to that member. A header the transport derives (the
message id from the override) is never written unless it changed.

A message is a mapping as boto3 returns it (``Body``, ``MessageId``, ``MessageAttributes`` with
``StringValue``/``DataType``), as Lambda passes it (``body``, ``messageId``,
``messageAttributes`` with ``stringValue``/``dataType``), or as ``send_message`` takes it
(``MessageBody``, ``MessageAttributes``).

The relay imports this module at cold start and reads every message with it: it imports
nothing but :mod:`json` and the modules of this package, compiles nothing, parses in json's C
scanners, and remembers the reading of the last body and headers text, since the relay reads a
message and then writes it back.
"""

from __future__ import annotations

import json

# The pattern json itself skips whitespace with: compiled when json is imported, not here.
from json.decoder import WHITESPACE as JSON_WHITESPACE_RUN  # type: ignore[attr-defined]
from json.decoder import scanstring as json_scan_string  # type: ignore[attr-defined]
from json.encoder import c_make_encoder as json_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring_ascii as json_encode_ascii

from cross_account_runtime.nservicebus.address_headers import REPLY_TO_ADDRESS
from cross_account_runtime.nservicebus.dotnet_text import (
    has_lone_surrogate,
    is_null_or_white_space,
    try_from_base64,
    utf8_bytes,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Final, Literal

    WireForm = Literal["attribute", "wrapped", "native"]
    Headers = dict[str, str | None]
    Span = tuple[int, int]

HEADERS_ATTRIBUTE: Final = "NServiceBus.AmazonSQS.Headers"
DELAY_SECONDS_HEADER: Final = "NServiceBus.AmazonSQS.DelaySeconds"
TIME_TO_BE_RECEIVED_HEADER: Final = "NServiceBus.AmazonSQS.TimeToBeReceived"
MESSAGE_TYPE_ATTRIBUTE: Final = "MessageTypeFullName"
S3_BODY_KEY: Final = "S3BodyKey"
MESSAGE_ID_HEADER: Final = "NServiceBus.MessageId"
ENCLOSED_MESSAGE_TYPES_HEADER: Final = "NServiceBus.EnclosedMessageTypes"
CONTROL_MESSAGE_HEADER: Final = "NServiceBus.ControlMessage"
EMPTY_MESSAGE: Final = "empty message"
"""The body the transport sends for an empty payload (SQS refuses an empty body)."""
MAX_TIME_TO_BE_RECEIVED: Final = "10675199.02:48:05.4775807"
"""``TimeSpan.MaxValue`` as .NET writes it: the time to be received of a message without one."""

TRANSPORT_HEADERS: Final = (HEADERS_ATTRIBUTE, DELAY_SECONDS_HEADER, TIME_TO_BE_RECEIVED_HEADER)
"""Removed from the headers after the attributes are copied in, wherever they came from."""

BODY_KEYS: Final = ("Body", "body", "MessageBody")
ATTRIBUTES_KEYS: Final = ("MessageAttributes", "messageAttributes")
MESSAGE_ID_KEYS: Final = ("MessageId", "messageId")
STRING_VALUE_KEYS: Final = ("StringValue", "stringValue")
BINARY_VALUE_KEYS: Final = ("BinaryValue", "binaryValue")
DATA_TYPE_KEYS: Final = ("DataType", "dataType")
WRAPPED_HEADERS_KEY: Final = "Headers"

_WRAPPED_BODY_KEY: Final = "Body"
_V1_TIME_TO_BE_RECEIVED: Final = "TimeToBeReceived"
_V1_REPLY_TO_ADDRESS: Final = "ReplyToAddress"
_V1_QUEUE: Final = "Queue"
_QUOTED_HEADERS_KEY: Final = f'"{WRAPPED_HEADERS_KEY}"'
# Lambda spells attribute fields in camel case, boto3 and send_message in Pascal case.
_LAMBDA_ATTRIBUTE_KEYS: Final = (DATA_TYPE_KEYS[1], STRING_VALUE_KEYS[1], BINARY_VALUE_KEYS[1])


class _Members(list[tuple[str, object]]):
    """A JSON object as its members in document order, repeated names included: what
    System.Text.Json's reader sees (a later member overrides an earlier one, after the earlier
    one's setter has run). A subclass, so that an array is not mistaken for an object."""

    __slots__ = ()


class _Integer:
    """Stands for a JSON integer: the transport never reads one, and ``int()`` of a long digit
    run raises where System.Text.Json would skip it."""

    __slots__ = ()


_INTEGER: Final = _Integer()


def _integer(_text: str) -> _Integer:
    """``parse_int`` for json: any integer, however long, is :data:`_INTEGER`."""
    return _INTEGER


def _refuse_constant(name: str) -> object:
    """``parse_constant`` for json: NaN and Infinity are not JSON to .NET."""
    raise ValueError(f"{name} is not JSON")


# Both parse in C and refuse NaN and Infinity, as System.Text.Json does. The first gives
# objects as dicts (the last of a repeated name wins, as in .NET); the second as _Members, for
# bodies where the order of members matters.
_PLAIN_DECODER: Final = json.JSONDecoder(parse_int=_integer, parse_constant=_refuse_constant)
_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_Members, parse_int=_integer, parse_constant=_refuse_constant
)
# json's C scanners, called directly where positions are needed (typeshed does not list them).
_SCAN_VALUE: Final[Callable[[str, int], tuple[object, int]]] = _PLAIN_DECODER.scan_once  # type: ignore[attr-defined]
_SCAN_STRING: Final[Callable[[str, int], tuple[str, int]]] = json_scan_string
# json's C encoder made once (JSONEncoder.encode makes one per call): compact, ASCII only.
_ENCODE: Final[Callable[[object, int], tuple[str, ...]]] = json_make_encoder(
    None, None, json_encode_ascii, None, ":", ",", False, False, True
)
_HEADER_VALUE_TYPES: Final = frozenset({str, type(None)})
_WHITESPACE_CHARACTERS: Final = (" ", "\t", "\n", "\r")


class WireFormatError(ValueError):
    """A message whose NServiceBus headers cannot be read or written."""


class TransportView:
    """What the transport makes of one SQS message: its form, headers, body and S3 key.

    ``form`` is ``attribute``, ``wrapped`` or ``native`` (a native message with a
    ``MessageTypeFullName`` attribute is ``native`` and :attr:`typed`). ``headers`` are the ones
    the pipeline gets, a null header as ``None``. ``body`` is the transport message's body text
    (``None`` where it is null), ``s3_body_key`` the key of a body stored in S3, if any.
    """

    __slots__ = ("body", "form", "headers", "s3_body_key")
    body: str | None
    form: WireForm
    headers: Headers
    s3_body_key: str | None

    def __init__(
        self, form: WireForm, headers: Headers, body: str | None, s3_body_key: str | None
    ) -> None:
        self.form = form
        self.headers = headers
        self.body = body
        self.s3_body_key = s3_body_key

    @property
    def typed(self) -> bool:
        """Whether this is a native message with a ``MessageTypeFullName`` attribute."""
        return self.form == "native" and MESSAGE_TYPE_ATTRIBUTE in self.headers

    @property
    def time_to_be_received(self) -> str | None:
        """``TransportMessage.TimeToBeReceived``: the header, else ``TimeSpan.MaxValue``."""
        return self.headers.get(TIME_TO_BE_RECEIVED_HEADER, MAX_TIME_TO_BE_RECEIVED)

    def body_bytes(self) -> bytes:
        """The payload as ``TransportMessageExtensions.RetrieveBody`` gives it without S3.

        ``empty message`` is no bytes; a body is text (UTF-8) when the headers hold
        ``NServiceBus.AmazonSQS.Headers`` (only a wrapped message's own JSON can), else it is
        base64-decoded when .NET's ``TryFromBase64String`` accepts it, else UTF-8. A body in S3
        or a null body cannot be retrieved here.
        """
        if self.s3_body_key:
            raise WireFormatError(
                f"the body is stored in S3 under the key {self.s3_body_key!r}; NServiceBus "
                "reads it from the receiving endpoint's own bucket"
            )
        if self.body is None:
            raise WireFormatError(
                "the message's body is null; NServiceBus treats the message as poison"
            )
        if self.body == EMPTY_MESSAGE:
            return b""
        if HEADERS_ATTRIBUTE not in self.headers:
            decoded = try_from_base64(self.body)
            if decoded is not None:
                return decoded
        return utf8_bytes(self.body)

    def __repr__(self) -> str:
        return (
            f"TransportView(form={self.form!r}, headers={self.headers!r}, body={self.body!r}, "
            f"s3_body_key={self.s3_body_key!r})"
        )


class _Layout:
    """Where each header of a message came from, so that a write changes it there.

    ``own`` are the headers JSON's own entries (the attribute's, or the wrapped ``Headers``
    member's, before anything overrides them); ``from_attributes`` the headers an attribute
    supplies; ``from_members`` the span of the JSON string of a transport 6 top-level member that
    supplies a header; ``derived`` the headers that are in no place (the message id from the
    override); ``headers_span`` the span of the ``Headers`` member's value; ``headers_members``
    how many ``Headers`` members the body has.
    """

    __slots__ = (
        "derived",
        "from_attributes",
        "from_members",
        "headers_members",
        "headers_span",
        "own",
    )

    def __init__(self, own: Headers) -> None:
        self.own = own
        self.from_attributes: tuple[str, ...] = ()
        self.from_members: dict[str, Span] = {}
        self.derived: tuple[str, ...] = ()
        self.headers_span: Span = (0, 0)
        self.headers_members = 0


def read_message(message: Mapping[str, object], message_id: str | None = None) -> TransportView:
    """What NServiceBus.AmazonSQS makes of ``message``, as ``ExtractTransportMessage`` does.

    ``message_id`` is the override for ``NServiceBus.MessageId`` (see the module docstring); by
    default the message's own SQS id, as in production. A message without an SQS id (a
    ``send_message`` request) and no override gets no ``NServiceBus.MessageId`` from either.
    Raises :class:`WireFormatError` for a message the transport would treat as poison (a
    headers attribute that is not a JSON object of text) or that is not a message at all.
    """
    return _read(message, message_id)[0]


def wire_form(message: Mapping[str, object]) -> WireForm:
    """Where ``message`` keeps its NServiceBus headers: ``attribute``, ``wrapped`` or ``native``."""
    return _read(message, None)[0].form


def read_headers(message: Mapping[str, object]) -> dict[str, str]:
    """The headers the transport reads from ``message``, null ones left out; refuses a native
    message, saying why it is one, and a wrapped body with two ``Headers`` members."""
    view, reason, layout = _read(message, None)
    _refuse_unwritable(view, reason, layout, _NATIVE_ON_READ)
    return _text_headers(view.headers)


def write_headers(message: Mapping[str, object], headers: Mapping[str, str]) -> dict[str, object]:
    """A copy of ``message`` that the transport reads with ``headers``, changed only where a
    header changed.

    ``headers`` are the complete text headers, as :func:`read_headers` gives them with some
    changed, added or removed; null headers that it leaves out stay as they are. Each change is
    written where the transport will read it (module docstring), JSON with non-ASCII characters
    escaped so that any text fits the characters SQS accepts. Refused: a native message, a
    header the form cannot carry, and a change after which the transport would read the message
    differently than asked.
    """
    view, reason, layout = _read(message, None, spans=True)
    _refuse_unwritable(view, reason, layout, _NATIVE_ON_WRITE)
    current = _text_headers(view.headers)
    changed = {name: value for name, value in headers.items() if current.get(name) != value}
    removed = [] if current.keys() <= headers.keys() else [n for n in current if n not in headers]
    return _write(message, view, layout, changed, removed)


class HeadersUpdate:
    """A message's headers read once, to be written back with some changed: what a relay does
    with every message, at the cost of one reading instead of the two :func:`read_headers` and
    :func:`write_headers` take together, and without comparing every header to find the few
    that changed.

    ``headers`` and ``form`` are as :func:`read_headers` and :func:`wire_form` give them.

    The time to be received is read and written where the form carries it: a wrapped message's
    ``NServiceBus.AmazonSQS.TimeToBeReceived`` header (or transport 6's top-level member), and
    in the attribute form an entry of the headers JSON, which the transport drops on receive
    (its own unwrapped dispatcher never writes one) but a relay may carry from hop to hop.
    """

    __slots__ = ("_layout", "_message", "_view", "form", "headers")

    def __init__(self, message: Mapping[str, object]) -> None:
        """Read ``message``; refused as :func:`read_headers` refuses it."""
        view, reason, layout = _read(message, None, spans=True)
        _refuse_unwritable(view, reason, layout, _NATIVE_ON_READ)
        self._message = message
        self._view = view
        self._layout = layout
        self.form: WireForm = view.form
        # A copy: with spans the reading shares its dict with the layout a write relies on.
        self.headers: dict[str, str] = dict(_text_headers(view.headers))

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
        return self._layout.derived

    @property
    def headers_from_attributes(self) -> tuple[str, ...]:
        """The names of the headers an attribute supplies (attribute form only)."""
        return self._layout.from_attributes

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
        layout = self._layout
        headers = {n: v for n, v in self._view.headers.items() if n not in layout.derived}
        own = layout.own
        if self.form == "attribute" and TIME_TO_BE_RECEIVED_HEADER in own:
            headers[TIME_TO_BE_RECEIVED_HEADER] = own[TIME_TO_BE_RECEIVED_HEADER]
        for name in dropped_attributes:
            if name in layout.from_attributes:
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
            self._layout,
            changed,
            [],
            time_to_be_received=time_to_be_received is not None,
        )

    def _carrier(self) -> Headers:
        """Where the form carries the time to be received."""
        return self._layout.own if self.form == "attribute" else self._view.headers


_NATIVE_ON_READ = "the message carries no NServiceBus headers: {reason}"
_NATIVE_ON_WRITE = (
    "the message carries no NServiceBus headers ({reason}); writing some would change how "
    "receivers read it, so it is refused"
)


def _refuse_unwritable(view: TransportView, reason: str, layout: _Layout, native: str) -> None:
    """Refuse a native message (the ``native`` text with the reason it is one) and a wrapped
    body with two ``Headers`` members."""
    if view.form == "native":
        raise WireFormatError(native.format(reason=reason))
    _refuse_repeated_headers(layout)


def _write(
    message: Mapping[str, object],
    view: TransportView,
    layout: _Layout,
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
        if name in layout.derived:
            raise WireFormatError(
                f"header {name!r} is not in the message: NServiceBus derives it on receive "
                "(from the SQS message id), so it cannot be removed"
            )
    if view.form == "wrapped":
        body_key, body = _body(message)
        assert body is not None  # a wrapped message was parsed from its body
        result[body_key] = _written_body(body, layout, changed, removed)
        return result
    for name in changed:
        if name in TRANSPORT_HEADERS and not (
            time_to_be_received and name == TIME_TO_BE_RECEIVED_HEADER
        ):
            raise WireFormatError(
                f"header {name!r} cannot be carried by an unwrapped message: NServiceBus "
                "removes it from the headers on receive"
            )
    attributes_key, attributes = _attributes(message)
    result[attributes_key] = _written_attributes(attributes, layout, changed, removed)
    return result


def _read(
    message: Mapping[str, object], message_id: str | None, *, spans: bool = False
) -> tuple[TransportView, str, _Layout]:
    """The view, the reason a native message is one, and where the headers came from (with
    ``spans``, also where in a wrapped body, which only a write needs)."""
    if not isinstance(message, dict):
        raise WireFormatError(
            f"a message must be a dict (as boto3 and Lambda give it), got {type(message).__name__}"
        )
    attributes, body, native_id = _fields(message)
    override = message_id if message_id is not None else native_id
    if HEADERS_ATTRIBUTE in attributes:
        own = _attribute_headers(attributes[HEADERS_ATTRIBUTE])
        layout = _Layout(own)
        headers = dict(own)
        layout.from_attributes = _copy_attributes(headers, attributes)
        layout.derived = _try_add_message_id(headers, override)
        return TransportView("attribute", headers, body, headers.get(S3_BODY_KEY)), "", layout
    layout = _Layout({})
    if MESSAGE_TYPE_ATTRIBUTE in attributes:
        headers = {}
        layout.from_attributes = _copy_attributes(headers, attributes)
        if override is not None:
            headers[MESSAGE_ID_HEADER] = override
        headers[ENCLOSED_MESSAGE_TYPES_HEADER] = _string_value(
            attributes[MESSAGE_TYPE_ATTRIBUTE], MESSAGE_TYPE_ATTRIBUTE
        )
        reason = f"it has a {MESSAGE_TYPE_ATTRIBUTE} attribute (a native message with a type)"
        return TransportView("native", headers, body, headers.get(S3_BODY_KEY)), reason, layout
    found = _wrapped(body, spans) if body is not None else "the body is null"
    if not isinstance(found, str):
        view_headers, wrapped_body, s3_body_key, layout = found
        if not spans or (override is not None and MESSAGE_ID_HEADER not in view_headers):
            # A copy for the caller to keep; a write only reads them, unless it adds the id.
            view_headers = dict(view_headers)
        layout.derived = _try_add_message_id(view_headers, override)
        return TransportView("wrapped", view_headers, wrapped_body, s3_body_key), "", layout
    headers = {}
    layout.from_attributes = _copy_attributes(headers, attributes)
    if native_id is not None:
        headers[MESSAGE_ID_HEADER] = native_id
    return TransportView("native", headers, body, None), found, layout


def _copy_attributes(headers: Headers, attributes: Mapping[str, object]) -> tuple[str, ...]:
    """``CopyMessageAttributes``: every attribute but the message id over the headers, then the
    transport's own headers removed. Returns the names of the headers attributes supplied."""
    for name, attribute in attributes.items():
        if name != MESSAGE_ID_HEADER:
            headers[name] = _string_value(attribute, name)
    for name in TRANSPORT_HEADERS:
        headers.pop(name, None)
    return tuple(
        name for name in attributes if name != MESSAGE_ID_HEADER and name not in TRANSPORT_HEADERS
    )


def _try_add_message_id(headers: Headers, override: str | None) -> tuple[str, ...]:
    """``headers.TryAdd(MessageId, override)``; returns the header's name if it was added."""
    if override is None or MESSAGE_ID_HEADER in headers:
        return ()
    headers[MESSAGE_ID_HEADER] = override
    return (MESSAGE_ID_HEADER,)


def _text_headers(headers: Headers) -> dict[str, str]:
    """The headers with a value: the same dict when all have one (the usual case)."""
    if None not in headers.values():
        return headers  # type: ignore[return-value]  # no None among the values
    return {name: value for name, value in headers.items() if value is not None}


def _refuse_repeated_headers(layout: _Layout) -> None:
    """The relay's rule, stricter than the transport's (which takes the last member): a body
    with two ``Headers`` members is refused, as readers outside .NET may take the first."""
    if layout.headers_members > 1:
        raise WireFormatError(
            f"the body has {layout.headers_members} {WRAPPED_HEADERS_KEY!r} members; a reader "
            "could take either, so the message is refused"
        )


def _fields(message: Mapping[str, object]) -> tuple[Mapping[str, object], str | None, str | None]:
    """The attributes, body and SQS message id; one call, as Lambda spells them, for the relay."""
    if "body" in message and "Body" not in message and "MessageBody" not in message:
        body = message["body"]
        attributes = message.get("messageAttributes")
        native_id = message.get("messageId")
        if (
            (body is None or type(body) is str)
            and type(attributes) is dict
            and "MessageAttributes" not in message
            and (native_id is None or type(native_id) is str)
            and "MessageId" not in message
        ):
            return attributes, body, native_id
    return _attributes(message)[1], _body(message)[1], _native_message_id(message)


def _native_message_id(message: Mapping[str, object]) -> str | None:
    """The SQS message id of a received message (``None`` for a request to send one)."""
    for key in MESSAGE_ID_KEYS:
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def _body(message: Mapping[str, object]) -> tuple[str, str | None]:
    """The body field's name and text; the name differs between boto3, Lambda and sends. A
    null body (the transport's tests use one) is ``None``."""
    if "body" in message and "Body" not in message and "MessageBody" not in message:
        keys = ["body"]  # a Lambda record: the relay's every message
    else:
        keys = [key for key in BODY_KEYS if key in message]
    if len(keys) != 1:
        raise WireFormatError(
            f"a message needs exactly one of the fields {', '.join(BODY_KEYS)}; it has "
            f"{', '.join(keys) or 'none'}"
        )
    body = message[keys[0]]
    if body is not None and not isinstance(body, str):
        raise WireFormatError(
            f"field {keys[0]!r} must be text, got {type(body).__name__}; decode it first"
        )
    return keys[0], body


def _attributes(message: Mapping[str, object]) -> tuple[str, Mapping[str, object]]:
    """The attributes field's name and value; a message may have no attributes at all."""
    keys = [key for key in ATTRIBUTES_KEYS if key in message]
    if len(keys) > 1:
        raise WireFormatError(
            f"a message has at most one of the fields {', '.join(ATTRIBUTES_KEYS)}; it has both"
        )
    if not keys:
        return ATTRIBUTES_KEYS[0], {}
    return keys[0], _as_mapping(message[keys[0]], keys[0])


def _as_mapping(value: object, field: str) -> Mapping[str, object]:
    """``value`` if it is a dict, which is what boto3, Lambda and ``json`` produce."""
    if not isinstance(value, dict):
        raise WireFormatError(
            f"field {field!r} must be a dict (as boto3 and Lambda give it), got "
            f"{type(value).__name__}"
        )
    return value


def _present_key(attribute: Mapping[str, object], keys: tuple[str, str]) -> str:
    """The spelling of ``keys`` the attribute uses (boto3 and Lambda differ in case)."""
    return keys[1] if keys[0] not in attribute and keys[1] in attribute else keys[0]


def _string_value(attribute: object, name: str) -> str | None:
    """An attribute's ``StringValue``, whatever its data type (``String``, ``String.x``,
    ``Number``...): what the transport copies. ``None`` for a ``Binary`` attribute."""
    fields = _as_mapping(attribute, name)
    value = fields.get("StringValue") if "StringValue" in fields else fields.get("stringValue")
    if value is not None and not isinstance(value, str):
        raise WireFormatError(
            f"attribute {name!r} has a {type(value).__name__} string value; SQS attribute "
            "values are text"
        )
    return value


def _attribute_headers(attribute: object) -> Headers:
    """The headers JSON of the attribute form; a broken one is an error, as for NServiceBus,
    which moves such a message to the error queue."""
    text = _string_value(attribute, HEADERS_ATTRIBUTE)
    if text is None:
        data_type = _as_mapping(attribute, HEADERS_ATTRIBUTE).get(
            _present_key(_as_mapping(attribute, HEADERS_ATTRIBUTE), DATA_TYPE_KEYS)
        )
        raise WireFormatError(
            f"attribute {HEADERS_ATTRIBUTE} has no text value (data type {data_type!r}); "
            "NServiceBus reads its headers from the text and treats this message as poison"
        )
    known = _ATTRIBUTE_READINGS.get(text)
    if known is not None:
        return known  # type: ignore[return-value]  # only headers are put there
    try:
        headers = _PLAIN_DECODER.decode(text)
    except ValueError as error:
        raise WireFormatError(f"attribute {HEADERS_ATTRIBUTE} is not JSON: {error}") from None
    if headers is None:
        # NServiceBus reads a JSON null here as no headers.
        return {}
    result, problem = _header_object(headers)
    if problem:
        raise WireFormatError(f"attribute {HEADERS_ATTRIBUTE}: {problem}")
    _ATTRIBUTE_READINGS.put(text, result)
    return result


def _header_object(value: object) -> tuple[Headers, str]:
    """``value`` as headers and '', or empty headers and why System.Text.Json would not read it
    as a dictionary of text (null allowed; the last of a repeated name wins)."""
    if not isinstance(value, dict | _Members):
        return {}, f"expected a JSON object, got {_kind(value)}"
    # A dict the parser just made is ours; _Members become one (the last of a name wins).
    headers: Headers = value if type(value) is dict else dict(value)  # type: ignore[arg-type]
    types = set(map(type, headers.values()))
    if not _HEADER_VALUE_TYPES.issuperset(types):
        name, item = next(
            (name, item) for name, item in headers.items() if type(item) not in _HEADER_VALUE_TYPES
        )
        return {}, f"header {name!r} holds {_kind(item)}, not text"
    # Only non-ASCII text can hold a lone surrogate; joining first keeps the usual case in C.
    texts = headers.values() if types == {str} else filter(None, headers.values())
    if not ("".join(headers).isascii() and "".join(texts).isascii()):  # type: ignore[arg-type]
        for name, item in headers.items():
            if has_lone_surrogate(name) or (item is not None and has_lone_surrogate(item)):
                return {}, f"header {name!r} has a lone surrogate, which is not valid UTF-16"
    return headers, ""


def _kind(value: object) -> str:
    """The Python type name of a parsed JSON value, for messages."""
    if value is _INTEGER:
        return "int"
    return "dict" if isinstance(value, _Members) else type(value).__name__


class _WrappedReading:
    """What a wrapped body reads as, and where its headers are in it when that was found on
    the way (``headers_span`` None otherwise): shared between calls, so never changed."""

    __slots__ = (
        "from_members",
        "headers",
        "headers_members",
        "headers_span",
        "own",
        "s3_body_key",
        "text",
    )

    def __init__(
        self, headers: Headers, own: Headers, text: str | None, s3_body_key: str | None
    ) -> None:
        self.headers = headers
        self.own = own
        self.text = text
        self.s3_body_key = s3_body_key
        self.headers_members = 0
        self.headers_span: Span | None = None
        self.from_members: dict[str, Span] = {}


class _Memo:
    """The result for the last text a reading was made of.

    The relay reads a message's headers and then writes them back, and the write reads the
    message again: remembering the last reading spares that repetition. The key is the text
    object itself: a str cannot change, and holding it keeps its identity from being reused.
    """

    __slots__ = ("entry",)

    def __init__(self) -> None:
        self.entry: tuple[object, object] = (self, None)

    def get(self, text: str) -> object:
        key, result = self.entry
        return result if key is text else None

    def put(self, text: str, result: object) -> None:
        self.entry = (text, result)


_WRAPPED_READINGS: Final = _Memo()
_ATTRIBUTE_READINGS: Final = _Memo()


def _wrapped(body: str, spans: bool) -> tuple[Headers, str | None, str | None, _Layout] | str:
    """The headers (shared: copy them to change them), body text, S3 key and layout of a
    wrapped body, or why the transport would read it as native. With ``spans``, the layout
    also says where in ``body`` the ``Headers`` member and the members that set a header
    are."""
    reading = _WRAPPED_READINGS.get(body)
    if reading is None:
        reading = _read_wrapped(body)
        _WRAPPED_READINGS.put(body, reading)
    if isinstance(reading, str):
        return reading
    assert isinstance(reading, _WrappedReading)
    if spans and reading.headers_span is None:
        # The name was spelled with escapes, so the one-call parse was used: walk the members.
        located = _wrapped_reading(_members_with_spans(body, 0, len(body)) or [], body)
        if isinstance(located, str):
            return located
        reading = located
    layout = _Layout(reading.own)
    layout.headers_members = reading.headers_members
    layout.headers_span = reading.headers_span or (0, 0)
    layout.from_members = reading.from_members
    return reading.headers, reading.text, reading.s3_body_key, layout


def _read_wrapped(body: str) -> _WrappedReading | str:
    """Read ``body`` as the transport's envelope, or say why the transport would not.

    A body naming ``"Headers"`` is walked member by member, which finds where the members are
    for a write (the relay rewrites most such messages) and counts repeated ones; any other is
    parsed in one call, faster, for native messages.
    """
    try:
        if _QUOTED_HEADERS_KEY in body:
            members: Sequence[tuple[str, object, *tuple[int, ...]]] | None = _members_with_spans(
                body, 0, len(body)
            )
        else:
            members = _members(body)
    except ValueError as error:
        return f"the body is not a JSON object ({error})"
    if members is None:
        return "the body is not a JSON object"
    return _wrapped_reading(members, body)


def _wrapped_reading(
    members: Sequence[tuple[str, object, *tuple[int, ...]]], body: str
) -> _WrappedReading | str:
    """Apply the members in document order, as System.Text.Json's source-generated reader for
    ``TransportMessage`` does: a later member of the same name wins, names are case-sensitive,
    unknown members are skipped, and transport 6's top-level ``TimeToBeReceived`` and
    ``ReplyToAddress`` set their header on the headers read so far (with none yet, .NET throws
    and the message is native). Returns why the transport would read the body as native, if it
    would. Members with their spans (name, value, start, end) also give the spans."""
    headers: Headers | None = None
    own: Headers = {}
    placed: dict[str, int] = {}
    headers_members = 0
    text: str | None = None
    s3_body_key: str | None = None
    for index, (name, value, *_) in enumerate(members):
        if name == WRAPPED_HEADERS_KEY:
            headers_members += 1
            if value is None:
                headers = None
                continue
            own, problem = _header_object(value)
            if problem:
                return f"its {WRAPPED_HEADERS_KEY!r} member is not an NServiceBus header set: {problem}"
            headers = own  # copied before a transport 6 member changes it
            placed = {"": index}
        elif name in (_WRAPPED_BODY_KEY, S3_BODY_KEY):
            if value is not None and (not isinstance(value, str) or has_lone_surrogate(value)):
                return f"its {name!r} member is {_kind(value)}, not text"
            if name == S3_BODY_KEY:
                s3_body_key = value
            else:
                text = value
        elif name in (_V1_TIME_TO_BE_RECEIVED, _V1_REPLY_TO_ADDRESS):
            found = _v1_member(name, value)
            if isinstance(found, str):
                return found
            if found is None:
                continue
            if headers is None:
                return (
                    f"its {name!r} member comes before any {WRAPPED_HEADERS_KEY!r}, so .NET "
                    "fails to set it"
                )
            header, header_value = found
            if headers is own:
                headers = dict(own)
            headers[header] = header_value
            placed[header] = index
    if headers is None:
        if not headers_members:
            return f"the body has no {WRAPPED_HEADERS_KEY!r} member"
        return f"its {WRAPPED_HEADERS_KEY!r} member is null"
    if headers.get(CONTROL_MESSAGE_HEADER) != "True" and not (
        MESSAGE_ID_HEADER in headers or ENCLOSED_MESSAGE_TYPES_HEADER in headers
    ):
        return (
            f"its headers have neither {MESSAGE_ID_HEADER} nor {ENCLOSED_MESSAGE_TYPES_HEADER} "
            "and it is not a control message"
        )
    reading = _WrappedReading(headers, own, text, s3_body_key)
    reading.headers_members = headers_members
    if members and len(members[0]) == 4:
        _locate(body, reading, placed, members)  # type: ignore[arg-type]  # they have spans
    return reading


def _v1_member(name: str, value: object) -> tuple[str, str] | str | None:
    """The header a transport 6 top-level member sets and its value, or None when it sets
    nothing, or why .NET fails to read it."""
    if value is None:
        return None
    if name == _V1_TIME_TO_BE_RECEIVED:
        if not isinstance(value, str) or has_lone_surrogate(value):
            return f"its {name!r} member is {_kind(value)}, not text"
        return TIME_TO_BE_RECEIVED_HEADER, value
    if not isinstance(value, dict | _Members):
        return f"its {name!r} member is {_kind(value)}, not an object"
    queue: str | None = None
    for field, item in value.items() if isinstance(value, dict) else value:
        if field not in (_V1_QUEUE, "Machine"):
            continue
        if item is not None and (not isinstance(item, str) or has_lone_surrogate(item)):
            return f"its {name}.{field} member is {_kind(item)}, not text"
        if field == _V1_QUEUE:
            queue = item if isinstance(item, str) else None
    if queue is None or is_null_or_white_space(queue):
        return None
    return REPLY_TO_ADDRESS, queue


def _locate(
    body: str,
    reading: _WrappedReading,
    placed: dict[str, int],
    members: Sequence[tuple[str, object, int, int]],
) -> None:
    """Record where the ``Headers`` member's value (``placed[""]``) and the JSON strings of the
    transport 6 members that set a header are in ``body``."""
    for header, index in placed.items():
        _, _, start, end = members[index]
        if header == "":
            reading.headers_span = (start, end)
        elif header == REPLY_TO_ADDRESS:
            fields = _members_with_spans(body, start, end) or []
            queue = [(first, last) for field, _, first, last in fields if field == _V1_QUEUE]
            reading.from_members[header] = queue[-1]
        else:
            reading.from_members[header] = (start, end)


def _members(body: str) -> list[tuple[str, object]] | None:
    """The members of the JSON object ``body``, None if it is JSON but not an object; raises
    ``ValueError`` for text that is not JSON.

    One C call building dicts, which is exact unless the order of members matters, with a
    transport 6 member: then they are kept in order. (A ``Headers`` member here has its name
    spelled with escapes; should there be two, the last is read, as .NET does, and a write, which
    walks the members, notices the repetition.)
    """
    start = _skip(body, 0)
    document, end = _PLAIN_DECODER.raw_decode(body, start)
    if _skip(body, end) != len(body):
        raise ValueError(f"extra text after the value at position {end}")
    if not isinstance(document, dict):
        return None
    if _V1_TIME_TO_BE_RECEIVED in document or _V1_REPLY_TO_ADDRESS in document:
        members: _Members = _DECODER.raw_decode(body, start)[0]
        return members
    return list(document.items())


def _members_with_spans(
    body: str, position: int, stop: int
) -> list[tuple[str, object, int, int]] | None:
    """The members of the JSON object in ``body[position:stop]`` as (name, value, start, end of
    the value's text), None if the text is JSON but not an object; raises ``ValueError`` for
    text that is not JSON. Calls the C scanners directly and skips whitespace only where there
    is some: this runs for every rewritten message."""
    scan = _SCAN_VALUE
    blank = _WHITESPACE_CHARACTERS
    try:
        position = _skip(body, position)
        if body[position : position + 1] != "{":
            _at_end(body, scan(body, position)[1], stop)
            return None
        members: list[tuple[str, object, int, int]] = []
        position = _skip(body, position + 1)
        if body[position : position + 1] == "}":
            _at_end(body, position + 1, stop)
            return members
        while True:
            if body[position : position + 1] != '"':
                raise ValueError(f"expected a member name at position {position}")
            name, position = _SCAN_STRING(body, position + 1)
            if body[position : position + 1] in blank:
                position = _skip(body, position)
            if body[position : position + 1] != ":":
                raise ValueError(f"expected ':' at position {position}")
            start = position + 1
            if body[start : start + 1] in blank:
                start = _skip(body, start)
            value, position = scan(body, start)
            members.append((name, value, start, position))
            if body[position : position + 1] in blank:
                position = _skip(body, position)
            following = body[position : position + 1]
            if following == ",":
                position += 1
                if body[position : position + 1] in blank:
                    position = _skip(body, position)
            elif following == "}":
                _at_end(body, position + 1, stop)
                return members
            else:
                raise ValueError(f"expected ',' or '}}' at position {position}")
    except StopIteration as error:
        raise ValueError(f"expected a value at position {error.value}") from None


def _at_end(body: str, position: int, stop: int) -> None:
    """Raise unless only whitespace follows up to ``stop``; JSON allows nothing else."""
    if _skip(body, position) < stop:
        raise ValueError(f"extra text after the value at position {position}")


def _skip(text: str, position: int) -> int:
    """The position after the JSON whitespace at ``position`` (compact JSON has none)."""
    if text[position : position + 1] not in _WHITESPACE_CHARACTERS:
        return position
    match = JSON_WHITESPACE_RUN.match(text, position)
    return match.end() if match else position


def _written_body(
    body: str, layout: _Layout, changed: Mapping[str, str], removed: Iterable[str]
) -> str:
    """The wrapped body with the changes made where the transport reads each header: a
    transport 6 member that sets it, else the ``Headers`` member; every other byte kept."""
    if _only_added(layout, changed, removed):
        return _with_entries(body, layout.headers_span[1], bool(layout.own), changed)
    if not removed and not any(name in layout.from_members for name in changed):
        start, end = layout.headers_span
        edited = _edited_object(body[start:end], layout.own, changed)
        if edited is not None:
            return body[:start] + edited + body[end:]
    own = dict(layout.own)
    own_changed = bool(removed)
    replacements: list[tuple[Span, str]] = []
    for name in removed:
        if name in layout.from_members:
            replacements.append((layout.from_members[name], "null"))
        own.pop(name, None)
    for name, value in changed.items():
        span = layout.from_members.get(name)
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
        replacements.append((layout.headers_span, compact_json(own)))
    replacements.sort(reverse=True)
    for (start, end), text in replacements:
        body = body[:start] + text + body[end:]
    return body


def compact_json(value: object) -> str:
    """``value`` as compact JSON with non-ASCII characters escaped, so that any text fits the
    characters SQS accepts; what this module writes, read alike by System.Text.Json."""
    return "".join(_ENCODE(value, 0))


def _only_added(layout: _Layout, changed: Mapping[str, str], removed: Iterable[str]) -> bool:
    """Whether the change only adds headers to the JSON (the relay's stamp, usually)."""
    return not removed and not any(
        name in layout.own or name in layout.from_members or name in layout.from_attributes
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
    layout: _Layout,
    changed: Mapping[str, str],
    removed: Iterable[str],
) -> dict[str, object]:
    """The attributes with the changes made where the transport reads each header: the
    attribute that supplies it, else the headers JSON."""
    result = dict(attributes)
    text = _string_value(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE) or ""
    blank = "".join(_WHITESPACE_CHARACTERS)
    start, end = len(text) - len(text.lstrip(blank)), len(text.rstrip(blank))
    # The JSON may be null (no headers); only an object is edited in place.
    if text[start:end].startswith("{") and not removed:
        if _only_added(layout, changed, removed):
            edited: str | None = _with_entries(
                text[start:end], end - start, bool(layout.own), changed
            )
        elif not any(name in layout.from_attributes for name in changed):
            edited = _edited_object(text[start:end], layout.own, changed)
        else:
            edited = None
        if edited is not None:
            result[HEADERS_ATTRIBUTE] = _with_text(
                _as_mapping(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE),
                text[:start] + edited + text[end:],
            )
            return result
    own = dict(layout.own)
    for name in removed:
        if name in layout.from_attributes:
            del result[name]
        own.pop(name, None)
    for name, value in changed.items():
        if name in layout.from_attributes:
            result[name] = _with_text(_as_mapping(result[name], name), value)
        else:
            own[name] = value
    if own != layout.own:
        result[HEADERS_ATTRIBUTE] = _with_text(
            _as_mapping(attributes[HEADERS_ATTRIBUTE], HEADERS_ATTRIBUTE), compact_json(own)
        )
    return result


def _with_text(attribute: Mapping[str, object], text: str) -> dict[str, object]:
    """A copy of ``attribute`` holding ``text``, in the spelling it uses; a ``Binary`` or
    ``Number`` attribute becomes ``String`` (the transport reads the text whatever the type)."""
    result = dict(attribute)
    spelling = 1 if any(key in result for key in _LAMBDA_ATTRIBUTE_KEYS) else 0
    data_type = result.get(DATA_TYPE_KEYS[spelling])
    if not (isinstance(data_type, str) and data_type.startswith("String")):
        result.pop(BINARY_VALUE_KEYS[spelling], None)
        result[DATA_TYPE_KEYS[spelling]] = "String"
    result[STRING_VALUE_KEYS[spelling]] = text
    return result
