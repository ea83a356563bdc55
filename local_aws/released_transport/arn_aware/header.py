"""The ``NServiceBus.Transport.Sqs.ARN`` header of the seed's ARN-aware ("New") transport.

No released transport writes or reads it: it is the design of seed 000 (open issue
Particular/NServiceBus.AmazonSQS#2365). Its value lists, for headers that carry a transport
address, the queue ARN to use instead: ``name=value;name2=value2``, with ``=`` written ``==``
and ``;`` written ``;;`` inside names and values.

The seed gives no reading rule for a separator next to an escaped copy of itself (``a===b`` is
``a=`` → ``b`` or ``a`` → ``=b``). This model reads the way a plain left-to-right scanner does:
a doubled character is always an escape, so ``a===b`` is ``a=`` → ``b``. Header names and queue
ARNs contain neither character, so the header an endpoint writes never meets the question.
Entries read later replace earlier ones with the same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

ARN_HEADER: Final = "NServiceBus.Transport.Sqs.ARN"
_SEPARATOR: Final = "="
_ENTRY_END: Final = ";"


class ArnHeaderFormatError(ValueError):
    """The header's text is not in the ``name=value;…`` format."""


def _escaped(text: str) -> str:
    return text.replace(_SEPARATOR, _SEPARATOR * 2).replace(_ENTRY_END, _ENTRY_END * 2)


def format_arn_header(entries: Mapping[str, str]) -> str:
    """The header value for ``entries``, in the mapping's order."""
    return _ENTRY_END.join(
        f"{_escaped(name)}{_SEPARATOR}{_escaped(value)}" for name, value in entries.items()
    )


def parse_arn_header(text: str) -> dict[str, str]:
    """The entries of a header value; an empty value has none."""
    entries: dict[str, str] = {}
    name: str | None = None
    current: list[str] = []
    index = 0
    while index < len(text):
        character = text[index]
        doubled = index + 1 < len(text) and text[index + 1] == character
        if character in (_SEPARATOR, _ENTRY_END) and doubled:
            current.append(character)
            index += 2
            continue
        if character == _SEPARATOR:
            if name is not None:
                raise ArnHeaderFormatError(
                    f"{ARN_HEADER}: a second unescaped '=' at position {index} of {text!r}"
                )
            name, current = "".join(current), []
        elif character == _ENTRY_END:
            if name is None:
                raise ArnHeaderFormatError(
                    f"{ARN_HEADER}: an entry without '=' ends at position {index} of {text!r}"
                )
            entries[name] = "".join(current)
            name, current = None, []
        else:
            current.append(character)
        index += 1
    if name is not None:
        entries[name] = "".join(current)
    elif current:
        raise ArnHeaderFormatError(f"{ARN_HEADER}: the last entry of {text!r} has no '='")
    return entries
