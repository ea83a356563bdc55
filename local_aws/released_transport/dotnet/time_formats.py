"""Time as the transport and NServiceBus core write and read it.

Three forms reach the wire or an exception message:

* ``TimeSpan.ToString()`` (the invariant ``c`` format, ``[-][d.]hh:mm:ss[.fffffff]``): the
  ``NServiceBus.AmazonSQS.TimeToBeReceived`` header (``src/NServiceBus.Transport.SQS/
  TransportMessage.cs``) and the delay-queue start-up messages
  (``Receiving/DelayedMessagesPump.cs``). A TimeSpan is a count of 100 ns ticks; the model keeps
  ticks as ``int`` so ``TimeSpan.MaxValue`` (``10675199.02:48:05.4775807``) is exact.
* ``TimeSpan.Parse``: how the input pump reads that header back (``Receiving/InputQueuePump.cs``,
  ``IsMessageExpired``).
* Core's wire timestamp ``yyyy-MM-dd HH:mm:ss:ffffff Z`` in UTC
  (NServiceBus ``src/NServiceBus.Core/DateTimeOffsetHelper.cs``): ``NServiceBus.TimeSent``,
  ``NServiceBus.TimeOfFailure``, ``NServiceBus.Retries.Timestamp``,
  ``ServiceControl.Retry.Successful``. The parser requires the exact length and digits in every
  digit position.

Two more belong to the platform's plugins and ServiceControl:

* ``DateTime.Ticks``: 100 ns since 0001-01-01, what NServiceBus.Metrics.ServiceControl writes into
  its binary reports (``RingBuffer.cs``: ``DateTime.UtcNow.Ticks``).
* ``DateTime`` in System.Text.Json (the plugins' message bodies, ServiceControl reading them):
  ISO 8601 ``yyyy-MM-ddTHH:mm:ss[.fffffff]`` with the fraction's trailing zeros dropped and ``Z``
  for a UTC value; read back with an optional offset (``Z`` or ``±hh:mm``) and a date alone
  allowed. System.Text.Json reads a value without offset as unspecified and one with an offset
  as local time; the model reads both as the UTC instant they name (ServiceControl compares and
  stores them as such) (dotnet/runtime ``src/libraries/System.Text.Json/src/System/Text/Json/
  JsonHelpers.Date.cs``, ``Writer/JsonWriterHelper.Date.cs``).

A clock is a parameter wherever the transport reads ``DateTimeOffset.UtcNow``, so a test can
run a 20-minute delay without waiting.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware, in UTC."""

TICKS_PER_SECOND: Final = 10_000_000
TICKS_PER_MICROSECOND: Final = 10
TIMESPAN_MAX_TICKS: Final = 2**63 - 1
"""``TimeSpan.MaxValue.Ticks``."""

_TICKS_PER_DAY: Final = 86_400 * TICKS_PER_SECOND
_TICKS_PER_HOUR: Final = 3_600 * TICKS_PER_SECOND
_TICKS_PER_MINUTE: Final = 60 * TICKS_PER_SECOND
_FRACTION_DIGITS: Final = 7

_WIRE_FORMAT: Final = "%Y-%m-%d %H:%M:%S:%f Z"
_WIRE_LENGTH: Final = len("yyyy-MM-dd HH:mm:ss:ffffff Z")
_WIRE_DIGIT_POSITIONS: Final = frozenset(
    index for index, symbol in enumerate("yyyy-MM-dd HH:mm:ss:ffffff Z") if symbol in "yMdHmsf"
)
WIRE_FORMAT_ERROR: Final = "String was not recognized as a valid DateTime."
"""The ``FormatException`` message of ``DateTimeOffsetHelper.ToDateTimeOffset``."""

_TIMESPAN_PATTERNS: Final = (
    re.compile(r"(?P<sign>-)?(?P<days>\d+)"),
    re.compile(
        r"(?P<sign>-)?(?:(?P<days>\d+)\.)?(?P<hours>\d+):(?P<minutes>\d+)"
        r"(?::(?P<seconds>\d+)(?:\.(?P<fraction>\d+))?)?"
    ),
    re.compile(
        r"(?P<sign>-)?(?P<days>\d+):(?P<hours>\d+):(?P<minutes>\d+):(?P<seconds>\d+)"
        r"(?:\.(?P<fraction>\d+))?"
    ),
)


DOTNET_EPOCH: Final = datetime(1, 1, 1, tzinfo=UTC)
"""``DateTime.MinValue`` as UTC (also ``DateTimeOffset.MinValue.UtcDateTime``): tick 0."""

_JSON_DATETIME: Final = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(?:T(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d{1,16}))?)?"
    r"(?P<offset>Z|[+-]\d{2}:\d{2})?)?"
)


class TimeSpanFormatError(ValueError):
    """``TimeSpan.Parse`` refused the text (``FormatException``/``OverflowException``)."""


@dataclass(frozen=True)
class TimeSpan:
    """A .NET ``TimeSpan``: a signed count of 100 ns ticks; ``str()`` is ``ToString()``."""

    ticks: int

    @classmethod
    def of(cls, duration: timedelta) -> TimeSpan:
        """A ``timedelta`` (microsecond precision) as a TimeSpan."""
        return cls(ticks_of(duration))

    def __str__(self) -> str:
        return format_timespan(self.ticks)

    def ceiling_seconds(self) -> int:
        """``Convert.ToInt64(Math.Ceiling(span.TotalSeconds))``."""
        return -(-self.ticks // TICKS_PER_SECOND)


TIMESPAN_MAX: Final = TimeSpan(TIMESPAN_MAX_TICKS)


def system_clock() -> datetime:
    """The real ``DateTimeOffset.UtcNow``."""
    return datetime.now(UTC)


def ticks_of(duration: timedelta) -> int:
    """A ``timedelta`` as TimeSpan ticks (microsecond precision, as Python keeps it)."""
    return (
        duration.days * 86_400 + duration.seconds
    ) * TICKS_PER_SECOND + duration.microseconds * TICKS_PER_MICROSECOND


def seconds_timespan(seconds: int) -> str:
    """``TimeSpan.FromSeconds(seconds).ToString()``."""
    return format_timespan(seconds * TICKS_PER_SECOND)


def format_timespan(ticks: int) -> str:
    """``TimeSpan.ToString()``: ``[-][d.]hh:mm:ss[.fffffff]``."""
    sign = "-" if ticks < 0 else ""
    remaining = abs(ticks)
    days, remaining = divmod(remaining, _TICKS_PER_DAY)
    hours, remaining = divmod(remaining, _TICKS_PER_HOUR)
    minutes, remaining = divmod(remaining, _TICKS_PER_MINUTE)
    seconds, fraction = divmod(remaining, TICKS_PER_SECOND)
    text = f"{sign}{f'{days}.' if days else ''}{hours:02}:{minutes:02}:{seconds:02}"
    return f"{text}.{fraction:07}" if fraction else text


def parse_timespan(text: str) -> int:
    """``TimeSpan.Parse`` with the invariant culture, in ticks.

    Accepts ``d``, ``[d.]hh:mm``, ``[d.]hh:mm:ss[.f…]`` and ``d:hh:mm:ss[.f…]`` with optional
    surrounding whitespace and a leading ``-``; hours 0-23, minutes and seconds 0-59, at most
    seven fraction digits; beyond ``TimeSpan.MaxValue`` is an overflow.
    """
    stripped = text.strip()
    for pattern in _TIMESPAN_PATTERNS:
        match = pattern.fullmatch(stripped)
        if match:
            break
    else:
        raise TimeSpanFormatError(f"String '{text}' was not recognized as a valid TimeSpan.")
    parts = match.groupdict()
    hours = int(parts.get("hours") or 0)
    minutes = int(parts.get("minutes") or 0)
    seconds = int(parts.get("seconds") or 0)
    fraction = parts.get("fraction") or ""
    if hours > 23 or minutes > 59 or seconds > 59 or len(fraction) > _FRACTION_DIGITS:
        raise TimeSpanFormatError(f"The TimeSpan string '{text}' could not be parsed.")
    ticks = (
        int(parts["days"] or 0) * _TICKS_PER_DAY
        + hours * _TICKS_PER_HOUR
        + minutes * _TICKS_PER_MINUTE
        + seconds * TICKS_PER_SECOND
        + int(fraction.ljust(_FRACTION_DIGITS, "0"))
    )
    if ticks > TIMESPAN_MAX_TICKS:
        raise TimeSpanFormatError(f"The TimeSpan string '{text}' was out of range.")
    return -ticks if parts["sign"] else ticks


def to_wire_format(moment: datetime) -> str:
    """``DateTimeOffsetHelper.ToWireFormattedString``: UTC, ``yyyy-MM-dd HH:mm:ss:ffffff Z``."""
    return moment.astimezone(UTC).strftime(_WIRE_FORMAT)


def from_wire_format(text: str) -> datetime:
    """``DateTimeOffsetHelper.ToDateTimeOffset``: exact length and digits where digits belong
    (the separators are not checked); an impossible date is an error too."""
    if len(text) != _WIRE_LENGTH or any(
        not ("0" <= text[index] <= "9") for index in _WIRE_DIGIT_POSITIONS
    ):
        raise ValueError(WIRE_FORMAT_ERROR)
    return datetime(
        int(text[0:4]),
        int(text[5:7]),
        int(text[8:10]),
        int(text[11:13]),
        int(text[14:16]),
        int(text[17:19]),
        int(text[20:26]),
        tzinfo=UTC,
    )


def from_epoch_milliseconds(text: str) -> datetime:
    """``MessageExtensions.GetAdjustedDateTimeFromServerSetAttributes`` with no clock skew: an
    SQS system attribute (``SentTimestamp``, ``ApproximateFirstReceiveTimestamp``) as a time."""
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=int(text))


def to_ticks(moment: datetime) -> int:
    """``DateTime.Ticks`` of the UTC time ``moment``."""
    return ticks_of(moment.astimezone(UTC) - DOTNET_EPOCH)


def to_json_datetime(moment: datetime) -> str:
    """A UTC ``DateTime`` as System.Text.Json writes it: ``yyyy-MM-ddTHH:mm:ss``, the seven
    fraction digits without trailing zeros (none when all are zero), then ``Z``."""
    utc = moment.astimezone(UTC)
    fraction = f"{utc.microsecond * TICKS_PER_MICROSECOND:07}".rstrip("0")
    return (
        f"{utc.year:04}-{utc.month:02}-{utc.day:02}T{utc.hour:02}:{utc.minute:02}:{utc.second:02}"
        + (f".{fraction}" if fraction else "")
        + "Z"
    )


def from_json_datetime(text: str) -> datetime:
    """A ``DateTime`` System.Text.Json accepts (see the module text), as a UTC time; the
    fraction is kept to the microsecond. Raises ``ValueError`` for anything else."""
    unsupported = f"The JSON value '{text}' is not in a supported DateTime format."
    match = _JSON_DATETIME.fullmatch(text)
    if match is None:
        raise ValueError(unsupported)
    parts = match.groupdict()
    fraction = (parts["fraction"] or "").ljust(6, "0")[:6]
    try:
        moment = datetime(
            int(parts["year"]),
            int(parts["month"]),
            int(parts["day"]),
            int(parts["hour"] or 0),
            int(parts["minute"] or 0),
            int(parts["second"] or 0),
            int(fraction),
            tzinfo=UTC,
        )
    except ValueError as impossible:
        raise ValueError(unsupported) from impossible
    offset = parts["offset"]
    if offset and offset != "Z":
        sign = -1 if offset[0] == "-" else 1
        moment -= sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
    return moment
