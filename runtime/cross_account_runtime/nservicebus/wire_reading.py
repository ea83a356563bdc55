"""Reading an SQS message as NServiceBus.AmazonSQS reads it: its wire form, its headers, its
body and the key of a body in S3 (the forms: :mod:`~cross_account_runtime.nservicebus.wire_format`),
and where each header came from, so that a write
(:mod:`~cross_account_runtime.nservicebus.wire_writing`) changes it there.

The message-id override the transport adds ``NServiceBus.MessageId`` from is, in production,
the SQS message id: :func:`read_message` takes it as ``message_id``. A null header (a
``Binary`` attribute, a JSON ``null``) is kept in :class:`TransportView` with the value
``None``; :func:`read_headers`, which the relay uses as text to text, leaves it out.

The relay imports this module at cold start and reads every message with it: it imports
nothing but :mod:`json` and the modules of this package, compiles nothing, parses in json's C
scanners, and remembers the reading of the last body and headers text, since the relay reads a
message and then writes it back.
"""

from __future__ import annotations

from cross_account_runtime.nservicebus.address_headers import REPLY_TO_ADDRESS
from cross_account_runtime.nservicebus.dotnet_text import (
    has_lone_surrogate,
    is_null_or_white_space,
    try_from_base64,
    utf8_bytes,
)
from cross_account_runtime.nservicebus.json_spans import (
    MEMBERS_DECODER,
    PLAIN_DECODER,
    Members,
    json_type_name,
    members_with_spans,
    skip_whitespace,
)
from cross_account_runtime.nservicebus.message_fields import (
    DATA_TYPE_KEYS,
    as_mapping,
    fields_of,
    present_key,
    string_value,
)
from cross_account_runtime.nservicebus.wire_format import (
    CONTROL_MESSAGE_HEADER,
    EMPTY_MESSAGE,
    ENCLOSED_MESSAGE_TYPES_HEADER,
    HEADERS_ATTRIBUTE,
    MAX_TIME_TO_BE_RECEIVED,
    MESSAGE_ID_HEADER,
    MESSAGE_TYPE_ATTRIBUTE,
    S3_BODY_KEY,
    TIME_TO_BE_RECEIVED_HEADER,
    TRANSPORT_HEADERS,
    WRAPPED_HEADERS_KEY,
    WireFormatError,
)

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Final

    from cross_account_runtime.nservicebus.json_spans import Span
    from cross_account_runtime.nservicebus.wire_format import Headers, WireForm

_WRAPPED_BODY_KEY: Final = "Body"
_V1_TIME_TO_BE_RECEIVED: Final = "TimeToBeReceived"
_V1_REPLY_TO_ADDRESS: Final = "ReplyToAddress"
_V1_QUEUE: Final = "Queue"
_QUOTED_HEADERS_KEY: Final = f'"{WRAPPED_HEADERS_KEY}"'
_HEADER_VALUE_TYPES: Final = frozenset({str, type(None)})


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


class HeaderOrigins:
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
    return read_with_origins(message, message_id)[0]


def wire_form(message: Mapping[str, object]) -> WireForm:
    """Where ``message`` keeps its NServiceBus headers: ``attribute``, ``wrapped`` or ``native``."""
    return read_with_origins(message, None)[0].form


def read_headers(message: Mapping[str, object]) -> dict[str, str]:
    """The headers the transport reads from ``message``, null ones left out; refuses a native
    message, saying why it is one, and a wrapped body with two ``Headers`` members."""
    view, reason, origins = read_with_origins(message, None)
    refuse_unwritable(view, reason, origins)
    return text_headers(view.headers)


_NATIVE_ON_READ = "the message carries no NServiceBus headers: {reason}"


def refuse_unwritable(
    view: TransportView, reason: str, origins: HeaderOrigins, native: str = _NATIVE_ON_READ
) -> None:
    """Refuse a native message (the ``native`` text with the reason it is one) and a wrapped
    body with two ``Headers`` members: what a reading for a write cannot use."""
    if view.form == "native":
        raise WireFormatError(native.format(reason=reason))
    _refuse_repeated_headers(origins)


def read_with_origins(
    message: Mapping[str, object], message_id: str | None, *, spans: bool = False
) -> tuple[TransportView, str, HeaderOrigins]:
    """The view, the reason a native message is one, and where the headers came from (with
    ``spans``, also where in a wrapped body, which only a write needs)."""
    if not isinstance(message, dict):
        raise WireFormatError(
            f"a message must be a dict (as boto3 and Lambda give it), got {type(message).__name__}"
        )
    attributes, body, native_id = fields_of(message)
    override = message_id if message_id is not None else native_id
    if HEADERS_ATTRIBUTE in attributes:
        own = _attribute_headers(attributes[HEADERS_ATTRIBUTE])
        origins = HeaderOrigins(own)
        headers = dict(own)
        origins.from_attributes = _copy_attributes(headers, attributes)
        origins.derived = _try_add_message_id(headers, override)
        return TransportView("attribute", headers, body, headers.get(S3_BODY_KEY)), "", origins
    origins = HeaderOrigins({})
    if MESSAGE_TYPE_ATTRIBUTE in attributes:
        headers = {}
        origins.from_attributes = _copy_attributes(headers, attributes)
        if override is not None:
            headers[MESSAGE_ID_HEADER] = override
        headers[ENCLOSED_MESSAGE_TYPES_HEADER] = string_value(
            attributes[MESSAGE_TYPE_ATTRIBUTE], MESSAGE_TYPE_ATTRIBUTE
        )
        reason = f"it has a {MESSAGE_TYPE_ATTRIBUTE} attribute (a native message with a type)"
        return TransportView("native", headers, body, headers.get(S3_BODY_KEY)), reason, origins
    found = _wrapped(body, spans) if body is not None else "the body is null"
    if not isinstance(found, str):
        view_headers, wrapped_body, s3_body_key, origins = found
        if not spans or (override is not None and MESSAGE_ID_HEADER not in view_headers):
            # A copy for the caller to keep; a write only reads them, unless it adds the id.
            view_headers = dict(view_headers)
        origins.derived = _try_add_message_id(view_headers, override)
        return TransportView("wrapped", view_headers, wrapped_body, s3_body_key), "", origins
    headers = {}
    origins.from_attributes = _copy_attributes(headers, attributes)
    if native_id is not None:
        headers[MESSAGE_ID_HEADER] = native_id
    return TransportView("native", headers, body, None), found, origins


def _copy_attributes(headers: Headers, attributes: Mapping[str, object]) -> tuple[str, ...]:
    """``CopyMessageAttributes``: every attribute but the message id over the headers, then the
    transport's own headers removed. Returns the names of the headers attributes supplied."""
    for name, attribute in attributes.items():
        if name != MESSAGE_ID_HEADER:
            headers[name] = string_value(attribute, name)
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


def text_headers(headers: Headers) -> dict[str, str]:
    """The headers with a value: the same dict when all have one (the usual case)."""
    if None not in headers.values():
        return headers  # type: ignore[return-value]  # no None among the values
    return {name: value for name, value in headers.items() if value is not None}


def _refuse_repeated_headers(origins: HeaderOrigins) -> None:
    """The relay's rule, stricter than the transport's (which takes the last member): a body
    with two ``Headers`` members is refused, as readers outside .NET may take the first."""
    if origins.headers_members > 1:
        raise WireFormatError(
            f"the body has {origins.headers_members} {WRAPPED_HEADERS_KEY!r} members; a reader "
            "could take either, so the message is refused"
        )


def _attribute_headers(attribute: object) -> Headers:
    """The headers JSON of the attribute form; a broken one is an error, as for NServiceBus,
    which moves such a message to the error queue."""
    text = string_value(attribute, HEADERS_ATTRIBUTE)
    if text is None:
        data_type = as_mapping(attribute, HEADERS_ATTRIBUTE).get(
            present_key(as_mapping(attribute, HEADERS_ATTRIBUTE), DATA_TYPE_KEYS)
        )
        raise WireFormatError(
            f"attribute {HEADERS_ATTRIBUTE} has no text value (data type {data_type!r}); "
            "NServiceBus reads its headers from the text and treats this message as poison"
        )
    known = _ATTRIBUTE_READINGS.get(text)
    if known is not None:
        return known  # type: ignore[return-value]  # only headers are put there
    try:
        headers = PLAIN_DECODER.decode(text)
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
    if not isinstance(value, dict | Members):
        return {}, f"expected a JSON object, got {json_type_name(value)}"
    # A dict the parser just made is ours; Members become one (the last of a name wins).
    headers: Headers = value if type(value) is dict else dict(value)  # type: ignore[arg-type]
    types = set(map(type, headers.values()))
    if not _HEADER_VALUE_TYPES.issuperset(types):
        name, item = next(
            (name, item) for name, item in headers.items() if type(item) not in _HEADER_VALUE_TYPES
        )
        return {}, f"header {name!r} holds {json_type_name(item)}, not text"
    # Only non-ASCII text can hold a lone surrogate; joining first keeps the usual case in C.
    texts = headers.values() if types == {str} else filter(None, headers.values())
    if not ("".join(headers).isascii() and "".join(texts).isascii()):  # type: ignore[arg-type]
        for name, item in headers.items():
            if has_lone_surrogate(name) or (item is not None and has_lone_surrogate(item)):
                return {}, f"header {name!r} has a lone surrogate, which is not valid UTF-16"
    return headers, ""


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


def _wrapped(body: str, spans: bool) -> tuple[Headers, str | None, str | None, HeaderOrigins] | str:
    """The headers (shared: copy them to change them), body text, S3 key and origins of a
    wrapped body, or why the transport would read it as native. With ``spans``, the origins
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
        located = _wrapped_reading(members_with_spans(body, 0, len(body)) or [], body)
        if isinstance(located, str):
            return located
        reading = located
    origins = HeaderOrigins(reading.own)
    origins.headers_members = reading.headers_members
    origins.headers_span = reading.headers_span or (0, 0)
    origins.from_members = reading.from_members
    return reading.headers, reading.text, reading.s3_body_key, origins


def _read_wrapped(body: str) -> _WrappedReading | str:
    """Read ``body`` as the transport's envelope, or say why the transport would not.

    A body naming ``"Headers"`` is walked member by member, which finds where the members are
    for a write (the relay rewrites most such messages) and counts repeated ones; any other is
    parsed in one call, faster, for native messages.
    """
    try:
        if _QUOTED_HEADERS_KEY in body:
            members: Sequence[tuple[str, object, *tuple[int, ...]]] | None = members_with_spans(
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
                return f"its {name!r} member is {json_type_name(value)}, not text"
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
            return f"its {name!r} member is {json_type_name(value)}, not text"
        return TIME_TO_BE_RECEIVED_HEADER, value
    if not isinstance(value, dict | Members):
        return f"its {name!r} member is {json_type_name(value)}, not an object"
    queue: str | None = None
    for field, item in value.items() if isinstance(value, dict) else value:
        if field not in (_V1_QUEUE, "Machine"):
            continue
        if item is not None and (not isinstance(item, str) or has_lone_surrogate(item)):
            return f"its {name}.{field} member is {json_type_name(item)}, not text"
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
            fields = members_with_spans(body, start, end) or []
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
    start = skip_whitespace(body, 0)
    document, end = PLAIN_DECODER.raw_decode(body, start)
    if skip_whitespace(body, end) != len(body):
        raise ValueError(f"extra text after the value at position {end}")
    if not isinstance(document, dict):
        return None
    if _V1_TIME_TO_BE_RECEIVED in document or _V1_REPLY_TO_ADDRESS in document:
        members: Members = MEMBERS_DECODER.raw_decode(body, start)[0]
        return members
    return list(document.items())
