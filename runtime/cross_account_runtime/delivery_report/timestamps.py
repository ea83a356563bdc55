"""Lenient parsing of the timestamps SNS writes, as a Spark expression and its Python twin.

AWS's own samples show ``2024-08-27 10:10:33.576``, two fractional digits, and
``2022-05-12T2:12:44Z`` (a one-digit hour). Spark's string-to-timestamp cast accepts all of
them (space or ``T``, 1-2 digit fields, 0-9 fractional digits, optional ``Z`` or offset) with a
hand-written parser many times faster than a ``DateTimeFormatter`` pattern; ``try_cast`` yields
null instead of failing the job (Spark 4 runs in ANSI mode) so a bad value becomes a counted
reject. Values without a zone are UTC: the job pins the session time zone to UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from pyspark.sql import Column
from pyspark.sql import types as st

_PYTHON_PATTERN = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?$",
)


def lenient_timestamp(text: Column) -> Column:
    """Spark expression: the UTC timestamp in ``text``, or null if it is not one."""
    return text.try_cast(st.TimestampType())


def parse_lenient(text: str | None) -> datetime | None:
    """Python twin of :func:`lenient_timestamp` for the forms SNS writes (aware UTC, or None).

    Narrower than Spark's cast (no date-only values, no offsets): enough for references
    computed over records SNS or the sample generator wrote.
    """
    if text is None:
        return None
    match = _PYTHON_PATTERN.match(text.replace("T", " ").replace("Z", ""))
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            int((fraction or "0").ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        return None
