""".NET string rules the released transport inherits from its runtime.

A .NET ``string`` is a sequence of UTF-16 code units: ``Length``, indexing and every ``char``
test work on code units, so a character outside the Basic Multilingual Plane counts twice and
is tested as two surrogates. The transport's queue-name limit, its sanitizer, its size
arithmetic and its exception-message truncation all depend on that, and a Python ``str`` (a
sequence of code points) gives different answers unless it is looked at through these helpers.

Facts: Microsoft's documentation of ``Char.IsLetterOrDigit``, ``Char.IsWhiteSpace`` and
``Convert.TryFromBase64String``; dotnet/runtime
``src/libraries/System.Private.CoreLib/src/System/Number.Parsing.cs`` (``TrailingZeros``); how NServiceBus.AmazonSQS uses them is cited where used
(``src/NServiceBus.Transport.SQS/QueueCache.cs``, ``Receiving/TransportMessageExtensions.cs``,
``Sending/MessageDispatcher.cs``).
"""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Iterator
from typing import Final

_LETTER_OR_DIGIT_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"})
"""``Char.IsLetterOrDigit``: the general categories it accepts (not ``Nl``/``No``, unlike
Python's ``str.isalnum``)."""

_WHITESPACE_CATEGORIES: Final = frozenset({"Zs", "Zl", "Zp"})
_WHITESPACE_CONTROLS: Final = frozenset({0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0xA0})
"""``Char.IsWhiteSpace``: the separators plus these code points (Python's ``str.isspace``
also accepts U+001C..U+001F, .NET does not)."""

_BASE64_IGNORED: Final = str.maketrans("", "", "\t\n\r ")
"""``Convert.TryFromBase64String`` skips these four characters wherever they appear."""

_INTEGER: Final = re.compile(r"[\t\n\v\f\r ]*([+-]?[0-9]+)[\t\n\v\f\r ]*\x00*")
"""``NumberStyles.Integer``: optional white space (these six only), an optional sign, ASCII
digits; then, as .NET's parser allows "for compatibility", any number of trailing U+0000
(``Number.Parsing.cs``, ``TrailingZeros``; SQS refuses U+0000 in attribute values, so only a
hand-built message can carry one)."""

_BMP_LIMIT: Final = 0xFFFF
_SURROGATES: Final = range(0xD800, 0xE000)
_SUPPLEMENTARY: Final = re.compile("[\U00010000-\U0010ffff]")
_VALID_SQS_TEXT: Final = re.compile("[\t\n\r\u0020-\ud7ff\ue000-\ufffd]*")


def utf16_length(text: str) -> int:
    """``string.Length``: code units, two for a character beyond U+FFFF."""
    return len(text) + len(_SUPPLEMENTARY.findall(text))


def utf16_units(text: str) -> Iterator[int]:
    """The code units of ``text`` in order (a surrogate pair for a supplementary character)."""
    for character in text:
        code_point = ord(character)
        if code_point > _BMP_LIMIT:
            code_point -= 0x10000
            yield 0xD800 + (code_point >> 10)
            yield 0xDC00 + (code_point & 0x3FF)
        else:
            yield code_point


def utf16_truncate(text: str, max_units: int) -> str:
    """``value[..maxLength]``: the first ``max_units`` code units; a pair cut in half keeps its
    high surrogate, as .NET's slice does."""
    if utf16_length(text) <= max_units:
        return text
    units = list(utf16_units(text))[:max_units]
    return b"".join(unit.to_bytes(2, "little") for unit in units).decode(
        "utf-16-le", errors="surrogatepass"
    )


def utf8_bytes(text: str) -> bytes:
    """``Encoding.UTF8.GetBytes``: a surrogate pair held as two code points is one character,
    a lone surrogate becomes U+FFFD."""
    return (
        text.encode("utf-16-le", errors="surrogatepass")
        .decode("utf-16-le", errors="replace")
        .encode("utf-8")
    )


def is_letter_or_digit(code_unit: int) -> bool:
    """``Char.IsLetterOrDigit`` of one UTF-16 code unit (a surrogate is neither)."""
    if code_unit in _SURROGATES:
        return False
    return unicodedata.category(chr(code_unit)) in _LETTER_OR_DIGIT_CATEGORIES


def is_null_or_whitespace(text: str | None) -> bool:
    """``string.IsNullOrWhiteSpace``."""
    if text is None:
        return True
    return all(
        ord(character) in _WHITESPACE_CONTROLS
        or unicodedata.category(character) in _WHITESPACE_CATEGORIES
        for character in text
    )


def try_from_base64(text: str) -> bytes | None:
    """``Convert.TryFromBase64String``: the decoded bytes, or ``None`` when ``text`` is not
    base64 (standard alphabet, tab/LF/CR/space ignored anywhere, length a multiple of four
    once they are gone, ``=`` only as padding)."""
    compact = text.translate(_BASE64_IGNORED)
    if len(compact) % 4:
        return None
    try:
        return base64.b64decode(compact, validate=True)
    except ValueError:  # binascii.Error, and non-ASCII text, which no base64 alphabet holds
        return None


def is_valid_sqs_text(text: str) -> bool:
    """Whether the unwrapped dispatcher sends a body as text rather than base64.

    The transport tests ``^[\\u0009\\u000A\\u000D\\u0020-\\uD7FF\\uE000-\\uFFFD\\u10000-\\u10FFFF]*$``
    (``Sending/MessageDispatcher.cs``, ``ValidSqsCharacters``). .NET reads ``\\uXXXX`` as exactly
    four hex digits, so the last range is U+1000, ``0``-U+10FF, ``F``, ``F``: supplementary
    characters (two surrogates in .NET) are *not* accepted, and the class is U+0009, U+000A,
    U+000D, U+0020..U+D7FF and U+E000..U+FFFD.
    """
    return _VALID_SQS_TEXT.fullmatch(text) is not None


def try_parse_integer(text: str | None, bits: int = 32) -> int | None:
    """``int.TryParse`` (``bits=32``) or ``long.TryParse`` (``bits=64``) with the invariant
    culture: ``None`` when the text is not an integer in range (Python's ``int`` would also take
    ``1_000``, non-ASCII digits and white space .NET refuses, and has no range)."""
    match = _INTEGER.fullmatch(text or "")
    if match is None:
        return None
    value = int(match.group(1))
    limit = 1 << (bits - 1)
    return value if -limit <= value < limit else None
