""".NET's text rules that the SQS transport's behaviour depends on, reproduced in Python.

The transport is C#: its strings are UTF-16, ``char.IsLetterOrDigit`` decides which characters
survive in a queue name, ``string.IsNullOrWhiteSpace`` which names and reply addresses count as
missing, ``long.TryParse`` which delays count, ``Convert.TryFromBase64String`` whether a body is
decoded, ``Encoding.UTF8`` how text
becomes bytes and back, and System.Text.Json's default encoder how every JSON text it writes is
escaped. Python's nearest equivalents differ at the edges (``str.isalnum`` accepts ``²``,
``str.isspace`` accepts U+001C, ``len`` counts an emoji once, ``json.dumps`` writes ``+`` as is),
and each difference changes a queue name, a classification or a byte on the wire. Hence one
module holding exactly .NET's rules.

Standard library only; ``unicodedata`` and ``binascii`` are imported on first use, because the
relay imports this module at cold start and only non-ASCII names and bodies need them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

_LETTER_OR_DIGIT_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"})

# char.IsWhiteSpace: U+0009-U+000D, U+0020, U+0085, U+00A0 and the categories Zs, Zl, Zp. Listed
# rather than looked up: those categories have not changed since Unicode 6.3, and Python's
# str.isspace differs (it also accepts U+001C-U+001F).
_WHITE_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

# Convert.FromBase64String skips these four anywhere in its input.
_BASE64_SKIPPED: Final = {ord(character): None for character in "\t\n\r "}
_BASE64_ALPHABET: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)
_BASE64_FIRST: Final = _BASE64_ALPHABET | frozenset("\t\n\r ")
"""What base64 text can start with: ``=`` only pads the end."""

# System.Text.Json's default encoder (JavaScriptEncoder.Default) writes only Basic Latin
# printable characters as they are, minus the HTML-sensitive ones; these have short escapes.
_SHORT_ESCAPES: Final = {
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
_HTML_SENSITIVE: Final = frozenset("\"&'+<>`")

# Number.IsWhite: what NumberStyles.AllowLeadingWhite and AllowTrailingWhite skip.
_NUMBER_WHITE: Final = "\t\n\v\f\r "
_INT64_MAX: Final = 2**63 - 1
_INT64_DIGITS: Final = len(str(_INT64_MAX))

_FIRST_SURROGATE: Final = 0xD800
_LAST_SURROGATE: Final = 0xDFFF
_LAST_BMP: Final = 0xFFFF


def is_null_or_white_space(text: str | None) -> bool:
    """``string.IsNullOrWhiteSpace``: ``None``, empty, or only .NET white space."""
    return text is None or all(character in _WHITE_SPACE for character in text)


def is_letter_or_digit(character: str) -> bool:
    """``char.IsLetterOrDigit`` for one UTF-16 code unit (a BMP character or a lone surrogate).

    True for the Unicode categories Lu, Ll, Lt, Lm, Lo and Nd, so ``é`` and ``٣`` count but
    ``²`` (No) and ``Ⅻ`` (Nl) do not. Python's ``unicodedata`` may know a different Unicode
    version than .NET, which matters only for characters assigned in between.
    """
    if character.isascii():
        return character.isalnum()
    import unicodedata  # noqa: PLC0415 (only non-ASCII text needs it)

    return unicodedata.category(character) in _LETTER_OR_DIGIT_CATEGORIES


def utf16_length(text: str) -> int:
    """``string.Length``: UTF-16 code units, so a character beyond U+FFFF counts twice."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for character in text if ord(character) > _LAST_BMP)


def starts_with_ordinal(text: str, prefix: str) -> bool:
    """``text.StartsWith(prefix, StringComparison.Ordinal)``, compared in UTF-16 code units
    (which differs from Python's code points only for text with lone surrogates)."""
    if text.isascii() and prefix.isascii():
        return text.startswith(prefix)
    return _utf16(text).startswith(_utf16(prefix))


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate that is not half of a pair, which System.Text.Json
    refuses to read into a string (``InvalidOperationException``)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def try_parse_int64(text: str | None) -> int | None:
    """``long.TryParse(text, out value)``: the value, or ``None`` where it returns false.

    ``NumberStyles.Integer`` with invariant signs, as dotnet/runtime's
    ``Number.TryParseBinaryIntegerStyle`` reads it (``System/Number.Parsing.cs``): white space
    (U+0009-U+000D and U+0020 only) before and after, one ``-`` or ``+`` right before the
    digits, ASCII digits only, then any number of trailing NUL characters; a value outside
    ``long``'s range is a failure. Python's ``int()`` also takes ``1_200``, other scripts'
    digits, ``\x1c`` as white space, and any size.
    """
    if not text:
        return None
    body = text.lstrip(_NUMBER_WHITE).rstrip("\0").rstrip(_NUMBER_WHITE)
    negative = body[:1] == "-"
    digits = body[1:] if body[:1] in ("-", "+") else body
    if not (digits.isascii() and digits.isdigit()):
        return None
    significant = digits.lstrip("0")
    if len(significant) > _INT64_DIGITS:
        return None
    value = int(significant or "0")
    if value > _INT64_MAX + negative:
        return None
    return -value if negative else value


def try_from_base64(text: str) -> bytes | None:
    """``Convert.TryFromBase64String``: the decoded bytes, or ``None`` if ``text`` is not
    base64 by .NET's rules.

    Tab, line feed, carriage return and space are skipped anywhere; what remains must be the
    standard alphabet, a multiple of 4 long, with at most two ``=`` at the end. So ``"abcd"``
    decodes (to 3 bytes) and ``"Body Contents"`` does too (the space is skipped).
    """
    if text and text[0] not in _BASE64_FIRST:
        # Neither a skipped character nor a digit: a JSON or text body fails at once.
        return None
    skipped = " " in text or "\n" in text or "\r" in text or "\t" in text
    compact = text.translate(_BASE64_SKIPPED) if skipped else text
    if len(compact) % 4 or not compact.isascii():
        return None
    if len(compact) - len(compact.rstrip("=")) > 2:
        return None
    import binascii  # noqa: PLC0415 (only body decoding needs it)

    try:
        # Strict: only the alphabet, "=" only at the end; in C, where a set test is not.
        return binascii.a2b_base64(compact, strict_mode=True)
    except binascii.Error:
        return None


def utf8_bytes(text: str) -> bytes:
    """``Encoding.UTF8.GetBytes``: a lone surrogate becomes U+FFFD rather than an error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _utf16(text).decode("utf-16-le", "replace").encode("utf-8")


def utf8_text(data: bytes) -> str:
    """``Encoding.UTF8.GetString``: each invalid sequence becomes U+FFFD (both .NET and Python
    replace maximal invalid subparts, as Unicode recommends)."""
    return data.decode("utf-8", "replace")


def json_string(text: str) -> str:
    """``text`` as a JSON string literal the way System.Text.Json's default encoder writes it.

    Basic Latin printable characters stay, except ``"&'+<>``` and the backtick, which become
    ``\\u0022``-style escapes; backslash and the controls with short forms use them; every other
    character is ``\\uXXXX`` in upper-case hex, a character beyond U+FFFF as its surrogate pair.
    A lone surrogate raises ``ValueError``, as .NET refuses to write invalid UTF-16.
    """
    parts = ['"']
    for position, character in enumerate(text):
        code = ord(character)
        if 0x20 <= code < 0x7F and character not in _HTML_SENSITIVE and character != "\\":
            parts.append(character)
        elif character in _SHORT_ESCAPES:
            parts.append(_SHORT_ESCAPES[character])
        elif _FIRST_SURROGATE <= code <= _LAST_SURROGATE:
            raise ValueError(
                f"{text!r} has a lone surrogate U+{code:04X} at position {position}; "
                "System.Text.Json refuses to write invalid UTF-16"
            )
        elif code > _LAST_BMP:
            high, low = divmod(code - 0x10000, 0x400)
            parts.append(f"\\u{_FIRST_SURROGATE + high:04X}\\u{0xDC00 + low:04X}")
        else:
            parts.append(f"\\u{code:04X}")
    parts.append('"')
    return "".join(parts)


def _utf16(text: str) -> bytes:
    """``text`` as UTF-16 code units (little endian), lone surrogates kept as themselves."""
    return text.encode("utf-16-le", "surrogatepass")
