"""The ``NServiceBus.Transport.Sqs.ARN`` header: its codec and the send and receive steps.

An endpoint's transport address on the wire is a bare queue name, which says nothing about the
account or region the queue lives in. Rather than changing what old endpoints read, an
ARN-aware sender keeps the legacy value in place and adds one header listing, for each header
that carries its own address, the ARN to use instead (``name=value;name=value``, with ``=``
written ``==`` and ``;`` written ``;;``). ARN-aware receivers substitute those values before the
pipeline sees the message; old receivers ignore the header and keep working within an account.

The escaping has one blind spot: a separator that touches an escaped copy of itself forms an
odd run (``a===b`` is ``a=`` and ``b``, or ``a`` and ``=b``) whose split the text does not
record. Such text is ambiguous, so :func:`decode` refuses it rather than pick a reading another
implementation might not pick, and :func:`encode` refuses exactly the mappings that would
produce it: a name ending with ``=``, a value starting with ``=``, a value ending with ``;``
that is followed by another entry, and a name starting with ``;`` that follows another entry.

The module imports nothing at run time: it runs inside Lambda on every message, where import
time is paid on each cold start.
"""

from __future__ import annotations

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

ARN_HEADER: Final = "NServiceBus.Transport.Sqs.ARN"


class ArnHeaderError(ValueError):
    """The text of an ARN header is not in the ``name=value;name=value`` format.

    ``position`` is the 0-based index into the header text where the problem was found.
    """

    def __init__(self, position: int, problem: str) -> None:
        super().__init__(f"{ARN_HEADER} header, position {position}: {problem}")
        self.position = position
        self.problem = problem


class UnencodableEntryError(ValueError):
    """An entry the ARN header format cannot carry so that every reader reads it back."""

    def __init__(self, name: object, problem: str) -> None:
        super().__init__(f"{ARN_HEADER} entry {_shown(name)}: {problem}")
        self.name = name
        self.problem = problem


def encode(entries: Mapping[str, str]) -> str:
    """Write ``entries`` in the header format, in the mapping's order.

    Raises :class:`UnencodableEntryError` for the mappings whose text would be ambiguous (see
    the module docstring), so that ``decode(encode(m)) == m`` whenever this returns.
    """
    try:
        text = ";".join([name + "=" + value for name, value in entries.items()])
    except TypeError:
        text = ""
    if text.count("=") == len(entries) and text.count(";") == len(entries) - 1:
        # Only the separators: nothing to escape, so nothing can be ambiguous.
        return text
    return _encode_escaped(entries)


def _encode_escaped(entries: Mapping[str, str]) -> str:
    """Check and escape every entry; the general case of :func:`encode`."""
    parts = []
    previous: tuple[str, str] | None = None
    for name, value in entries.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise UnencodableEntryError(
                name,
                f"names and values must be text, got {type(name).__name__} = "
                f"{type(value).__name__}; convert them to str",
            )
        if name.endswith("="):
            raise UnencodableEntryError(
                name,
                "the name ends with '='; its escape '==' would touch the '=' separator and the "
                "text could not say where the name ends. Use a header name without a "
                "trailing '='",
            )
        if value.startswith("="):
            raise UnencodableEntryError(
                name,
                f"the value {_shown(value)} starts with '='; its escape '==' would touch the '=' "
                "separator and the text could not say where the value starts. A transport "
                "address never starts with '=': pass the address without it",
            )
        if previous is not None:
            if previous[1].endswith(";"):
                raise UnencodableEntryError(
                    previous[0],
                    f"the value {_shown(previous[1])} ends with ';' and another entry follows; its "
                    "escape ';;' would touch the ';' separator and the text could not say where "
                    "the value ends. Make it the last entry or drop the trailing ';'",
                )
            if name.startswith(";"):
                raise UnencodableEntryError(
                    name,
                    "the name starts with ';' and follows another entry; its escape ';;' would "
                    "touch the ';' separator and the text could not say where the name starts. "
                    "Make it the first entry or use a header name without a leading ';'",
                )
        previous = (name, value)
        parts.append(
            name.replace("=", "==").replace(";", ";;")
            + "="
            + value.replace("=", "==").replace(";", ";;")
        )
    return ";".join(parts)


def decode(text: str) -> dict[str, str]:
    """Read the header format into a dict, in the order of the text.

    Raises :class:`ArnHeaderError` naming the position and the problem for any text that
    :func:`encode` could not have written, ambiguous text included: it never guesses.
    """
    if not isinstance(text, str):
        raise ArnHeaderError(0, f"expected text, got {type(text).__name__}")
    if not text:
        return {}
    if "==" not in text and ";;" not in text:
        # Without escapes every '=' and ';' is a separator: a split is enough. Anything odd
        # falls through to the full parser, which reports it precisely.
        entries: dict[str, str] = {}
        for part in text.split(";"):
            name, separator, value = part.partition("=")
            if not separator or "=" in value or name in entries:
                break
            entries[name] = value
        else:
            return entries
    return _parse(text)[0]


def stamp_outgoing(
    headers: Mapping[str, str], local_address: str, local_arn: str
) -> dict[str, str]:
    """The send side: record ``local_arn`` for every header that carries ``local_address``.

    Returns a new dict. The entries already in the ARN header are kept (a message may cross
    several ARN-aware endpoints, each adding its own); a fresh entry for the same name
    replaces the old one. Without a matching header the ARN header is neither added nor
    touched.
    """
    if not local_address:
        raise ValueError(
            "local_address is empty; pass the transport address of the endpoint's main "
            "receive queue (the value its headers carry, e.g. 'MyEndpoint')"
        )
    if not local_arn:
        raise ValueError(
            "local_arn is empty; pass the ARN of the endpoint's main receive queue, e.g. "
            "'arn:aws:sqs:us-east-1:123456789012:MyEndpoint'"
        )
    result = dict(headers)
    if local_address not in result.values():
        return result
    matches = [
        name for name, value in result.items() if value == local_address and name != ARN_HEADER
    ]
    if not matches:
        return result
    existing = result.get(ARN_HEADER)
    entries = _decode_entries(existing) if existing is not None else {}
    for name in matches:
        entries[name] = local_arn
    result[ARN_HEADER] = encode(entries)
    return result


def substitute_incoming(headers: Mapping[str, str]) -> dict[str, str]:
    """The receive side: every header named in the ARN header takes its ARN value.

    Returns a new dict. The ARN header stays, so a message forwarded as-is keeps telling the
    next ARN-aware endpoint the same thing; a header named there but absent from the message
    is added.
    """
    result = dict(headers)
    text = result.get(ARN_HEADER)
    if text is None:
        return result
    result.update(_decode_entries(text))
    return result


def _decode_entries(text: str) -> dict[str, str]:
    """Decode an ARN header found on a message, refusing an entry for the header itself.

    Substituting the ARN header would destroy the list it comes from, so such text is
    malformed rather than something to act on.
    """
    entries = decode(text)
    if ARN_HEADER in entries:
        raise ArnHeaderError(
            _parse(text)[1][ARN_HEADER],
            f"the entry names the {ARN_HEADER} header itself; only the headers that carry a "
            "transport address may be listed: remove that entry",
        )
    return entries


def _parse(text: str) -> tuple[dict[str, str], dict[str, int]]:
    """Parse ``text`` run by run; return the entries and the position each entry starts at.

    A run of ``=`` or ``;`` of even length is escapes only; of length one, a separator; odd
    and longer, a separator touching escapes, which is ambiguous. Every character is looked
    at once, so hostile text costs linear time.
    """
    entries: dict[str, str] = {}
    starts: dict[str, int] = {}
    end = len(text)
    chunks: list[str] = []
    name = ""
    in_name = True
    entry_start = 0
    position = 0
    next_equals = text.find("=")
    next_semicolon = text.find(";")
    while True:
        if next_equals < 0:
            special = end if next_semicolon < 0 else next_semicolon
        elif next_semicolon < 0:
            special = next_equals
        else:
            special = min(next_equals, next_semicolon)
        chunks.append(text[position:special])
        if special == end:
            if in_name:
                raise ArnHeaderError(
                    entry_start,
                    f"the entry {_shown(''.join(chunks))} has no '=' between name and value; write "
                    "entries as name=value (a literal '=' is written '==')",
                )
            _add_entry(entries, starts, name, "".join(chunks), entry_start)
            return entries, starts
        character = text[special]
        run_end = special + 1
        while run_end < end and text[run_end] == character:
            run_end += 1
        length = run_end - special
        chunks.append(character * (length // 2))
        position = run_end
        if character == "=":
            next_equals = text.find("=", run_end)
        else:
            next_semicolon = text.find(";", run_end)
        if length % 2 == 0:
            continue
        if character == "=" and not in_name:
            raise ArnHeaderError(
                special,
                f"an unescaped '=' in the value of {_shown(name)}; a value holds no separator, so a "
                "literal '=' is written '=='",
            )
        if character == ";" and in_name:
            raise ArnHeaderError(
                special,
                f"an unescaped ';' in the name {_shown(''.join(chunks))} before any '='; write "
                "entries as name=value and a literal ';' as ';;'",
            )
        if character == ";" and run_end == end:
            raise ArnHeaderError(
                run_end - 1,
                "the text ends with the separator ';'; remove it (a literal ';' at the end of "
                "a value is written ';;')",
            )
        if length > 1:
            first, second = ("name", "value") if character == "=" else ("value", "name")
            raise ArnHeaderError(
                special,
                f"ambiguous run of {length} {character!r}: the separator touches an escaped "
                f"{character!r}, and the text does not say whether that belongs to the "
                f"{first} before it or the {second} after it. The format cannot carry a name "
                "ending with '=', a value starting with '=', or a ';' next to the ';' between "
                "two entries",
            )
        if in_name:
            name = "".join(chunks)
        else:
            _add_entry(entries, starts, name, "".join(chunks), entry_start)
            entry_start = run_end
        chunks = []
        in_name = not in_name


def _add_entry(
    entries: dict[str, str], starts: dict[str, int], name: str, value: str, start: int
) -> None:
    """Add one parsed entry, refusing a second entry for the same header."""
    if name in entries:
        raise ArnHeaderError(
            start,
            f"the name {_shown(name)} appears twice (first entry at position {starts[name]}); each "
            "header may be listed once",
        )
    entries[name] = value
    starts[name] = start


def _shown(field: object, limit: int = 60) -> str:
    """Quote a field for an error message, shortened so hostile input cannot flood logs."""
    if isinstance(field, str) and len(field) > limit:
        return repr(field[:limit]) + f"... ({len(field)} characters)"
    return repr(field)
