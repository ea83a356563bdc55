""".NET's ``TimeSpan`` text, as the SQS transport writes and reads time-to-be-received.

The transport writes a message's time to be received into the header
``NServiceBus.AmazonSQS.TimeToBeReceived`` with ``TimeSpan.ToString()`` (NServiceBus.AmazonSQS
9.1.1 ``TransportMessage.cs``), and the receiving endpoint reads it back with ``TimeSpan.Parse``
before it discards an expired message (``Receiving/InputQueuePump.cs``, ``IsMessageExpired``).
A relay that carries the remaining time from hop to hop must read what ``Parse`` reads, refuse
what it refuses (the receiver then fails on it as it would have), and write what ``ToString``
writes. A TimeSpan is a signed 64-bit count of 100 ns ticks; ticks are Python ints here.

:func:`parse_timespan` ports ``TimeSpanParse.TryParseTimeSpan`` (dotnet/runtime
``System/Globalization/TimeSpanParse.cs``) for the standard formats:

* the input is trimmed of .NET white space (``char.IsWhiteSpace``), and must not be empty;
* a tokenizer splits it into numbers (runs of ASCII digits, each below 2**28, counting leading
  zeros) and separators (runs of anything else): at most 5 numbers and 6 separators;
* the number of numbers picks the patterns, tried in order: the invariant positive and negative
  patterns (``[-][d.]hh:mm[:ss[.fffffff]]``, and the "app compat" ``hh:mm:.f`` and
  ``d.hh:mm:.f``), then the culture's (``d:h:mm:ss.FFFFFFF``, the same with ``-``); a pattern
  matches when every separator equals its literal, ordinally. With 3 or 4 numbers, a match whose
  values are out of range (hours over 23, minutes or seconds over 59, days over 10,675,199, a
  fraction over 7 digits without leading zeros, or a total past ``TimeSpan.MaxValue``) lets the
  next pattern try; with 1, 2 or 5 numbers the first match decides;
* a fraction is scaled to 7 digits; past 7 digits (only with leading zeros) it is rounded,
  away from zero, in double precision as .NET does.

The culture's patterns are those of the invariant culture and of ``en-US`` (decimal separator
``.``); an endpoint whose culture has another decimal separator also reads ``1:02:03:04,5``,
which no NServiceBus writer produces. ``TimeSpan.ToString()`` never writes culture-dependent
text, so the relay's own output reads the same in every culture.

Standard library only and no imports at all: the relay loads this module at cold start, and
reads a header of a few characters per message (the results are cached by text: endpoints send
the same few values again and again).
"""

from __future__ import annotations

import functools

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

TICKS_PER_MILLISECOND: Final = 10_000
TICKS_PER_SECOND: Final = 10_000_000
TIMESPAN_MAX_TICKS: Final = 2**63 - 1
"""``TimeSpan.MaxValue.Ticks``: a message "without" a time to be received carries this."""

_TICKS_PER_MINUTE: Final = 60 * TICKS_PER_SECOND
_TICKS_PER_HOUR: Final = 60 * _TICKS_PER_MINUTE
_TICKS_PER_DAY: Final = 24 * _TICKS_PER_HOUR
_MAX_MILLISECONDS: Final = TIMESPAN_MAX_TICKS // TICKS_PER_MILLISECOND
_MAX_DAYS: Final = 10_675_199
_MAX_HOURS: Final = 23
_MAX_MINUTES: Final = 59
_MAX_SECONDS: Final = 59
_MAX_FRACTION: Final = 9_999_999
_FRACTION_DIGITS: Final = 7
_NUMBER_LIMIT_BITS: Final = 0xF000_0000
"""A number token with any of these bits set overflowed (.NET stops at 268,435,455)."""
_MAX_NUMBERS: Final = 5
_MAX_SEPARATORS: Final = 6
_MAX_TOKENS: Final = 11

# char.IsWhiteSpace, which ReadOnlySpan<char>.Trim uses (Python's str.strip() differs).
_WHITE_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

_D, _H, _M, _S, _F = range(5)
"""Which field of a TimeSpan a number token fills: days, hours, minutes, seconds, fraction."""


def _patterns(
    day_hour: str, *, sign: str
) -> dict[int, tuple[tuple[tuple[str, ...], tuple[int, ...]], ...]]:
    """For one format's literals and sign: per count of numbers, the patterns in the order
    ``TimeSpanParse`` tries them, each as its separators and the fields its numbers fill."""
    return {
        1: (((sign, ""), (_D,)),),
        2: (((sign, ":", ""), (_H, _M)),),
        3: (
            ((sign, ":", ":", ""), (_H, _M, _S)),
            ((sign, day_hour, ":", ""), (_D, _H, _M)),
            ((sign, ":", ":.", ""), (_H, _M, _F)),
        ),
        4: (
            ((sign, ":", ":", ".", ""), (_H, _M, _S, _F)),
            ((sign, day_hour, ":", ":", ""), (_D, _H, _M, _S)),
            ((sign, day_hour, ":", ":.", ""), (_D, _H, _M, _F)),
        ),
        5: (((sign, day_hour, ":", ":", ".", ""), (_D, _H, _M, _S, _F)),),
    }


# The invariant format's day separator is ".", the culture's (d':'h':'mm':'ss'.'FFFFFFF) ":";
# each is tried positive, then negative.
_FORMATS: Final = (
    _patterns(".", sign=""),
    _patterns(".", sign="-"),
    _patterns(":", sign=""),
    _patterns(":", sign="-"),
)
_FALLS_THROUGH: Final = frozenset({3, 4})
"""The counts of numbers whose matching patterns are tried until one's values fit."""


def format_timespan(ticks: int) -> str:
    """``TimeSpan.ToString()`` (the ``c`` format): ``[-][d.]hh:mm:ss[.fffffff]``."""
    sign = "-" if ticks < 0 else ""
    days, rest = divmod(abs(ticks), _TICKS_PER_DAY)
    hours, rest = divmod(rest, _TICKS_PER_HOUR)
    minutes, rest = divmod(rest, _TICKS_PER_MINUTE)
    seconds, fraction = divmod(rest, TICKS_PER_SECOND)
    text = f"{sign}{f'{days}.' if days else ''}{hours:02}:{minutes:02}:{seconds:02}"
    return f"{text}.{fraction:07}" if fraction else text


@functools.lru_cache(maxsize=256)
def parse_timespan(text: str) -> int | None:
    """``TimeSpan.Parse(text)`` in ticks, or ``None`` where it throws (``FormatException`` or
    ``OverflowException``): ``TimeSpan.TryParse``."""
    tokens = _tokens(text.strip(_WHITE_SPACE))
    if tokens is None:
        return None
    separators, numbers = tokens
    for patterns in _FORMATS:
        for literals, fields in patterns.get(len(numbers), ()):
            if literals != separators:
                continue
            ticks = _ticks(fields, numbers, negative=literals[0] == "-")
            if ticks is not None or len(numbers) not in _FALLS_THROUGH:
                return ticks
    return None


def _tokens(text: str) -> tuple[tuple[str, ...], list[tuple[int, int]]] | None:
    """The separators and the numbers (value, leading zeros) of ``text`` as
    ``TimeSpanTokenizer`` and ``TimeSpanRawInfo.ProcessToken`` collect them: a number first
    gets an empty separator before it, and one last an empty separator after it. ``None`` for
    an empty text, a number past the tokenizer's limit, or too many tokens."""
    if not text:
        return None
    separators: list[str] = []
    numbers: list[tuple[int, int]] = []
    position, end = 0, len(text)
    if "0" <= text[0] <= "9":
        separators.append("")
    while position < end:
        character = text[position]
        if "0" <= character <= "9":
            zeroes = 0
            while character == "0":
                zeroes += 1
                position += 1
                character = text[position] if position < end else ""
            value = 0
            while "0" <= character <= "9":
                value = value * 10 + ord(character) - 48
                if value & _NUMBER_LIMIT_BITS:
                    return None
                position += 1
                character = text[position] if position < end else ""
            numbers.append((value, zeroes))
        else:
            start = position
            position += 1
            while position < end and not "0" <= text[position] <= "9":
                position += 1
            separators.append(text[start:position])
        if len(numbers) > _MAX_NUMBERS or len(separators) + len(numbers) > _MAX_TOKENS:
            return None
    if "0" <= text[-1] <= "9":
        separators.append("")
    if len(separators) > _MAX_SEPARATORS or len(separators) + len(numbers) > _MAX_TOKENS:
        return None
    return tuple(separators), numbers


def _ticks(
    fields: tuple[int, ...], numbers: list[tuple[int, int]], *, negative: bool
) -> int | None:
    """``TryTimeToTicks`` with each number in its field (the others zero), negated for a
    negative pattern; ``None`` when a value is out of range or the total past a TimeSpan's."""
    values = [0, 0, 0, 0, 0]
    for field, (value, zeroes) in zip(fields, numbers, strict=True):
        if field == _F:
            fraction = _fraction(value, zeroes)
            if fraction is None:
                return None
            values[_F] = fraction
        else:
            values[field] = value
    days, hours, minutes, seconds, fraction = values
    if days > _MAX_DAYS or hours > _MAX_HOURS or minutes > _MAX_MINUTES or seconds > _MAX_SECONDS:
        return None
    milliseconds = (days * 86_400 + hours * 3_600 + minutes * 60 + seconds) * 1_000
    if milliseconds > _MAX_MILLISECONDS:
        return None
    ticks = milliseconds * TICKS_PER_MILLISECOND + fraction
    if ticks > TIMESPAN_MAX_TICKS:
        return None
    return -ticks if negative else ticks


def _fraction(value: int, zeroes: int) -> int | None:
    """``TimeSpanToken.NormalizeAndValidateFraction``: the fraction's digits as ticks."""
    if value == 0:
        return 0
    if zeroes == 0 and value > _MAX_FRACTION:
        return None
    digits = len(str(value)) + zeroes
    if digits <= _FRACTION_DIGITS:
        scaled: int = value * 10 ** (_FRACTION_DIGITS - digits)
        return scaled
    excess = digits - _FRACTION_DIGITS
    if excess > 9:
        # value < 2**28 < 10**9: the quotient is below 0.5 and rounds to 0.
        return 0
    # Math.Round(value / Math.Pow(10, excess), MidpointRounding.AwayFromZero), in doubles.
    quotient = value / 10.0**excess
    whole = int(quotient)
    return whole + 1 if quotient - whole >= 0.5 else whole
