"""Lenient parsing of the timestamps SNS writes, as a Spark expression and its Python twin.

AWS's own samples show ``2024-08-27 10:10:33.576``, two fractional digits, and
``2022-05-12T2:12:44Z`` (a one-digit hour). One pattern with variable-width fields covers all
of them once ``T`` becomes a space and the ``Z`` goes; ``try_to_timestamp`` yields null
instead of failing the job (Spark 4 runs in ANSI mode) so a bad value becomes a counted reject.
All values are UTC; the job pins the session time zone to UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from pyspark.sql import Column
from pyspark.sql import functions as sf

SPARK_PATTERN = "yyyy-M-d H:m:s[.SSSSSS]"

_PYTHON_PATTERN = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?$",
)


def lenient_timestamp(text: Column) -> Column:
    """Spark expression: the UTC timestamp in ``text``, or null if it is not one."""
    return sf.try_to_timestamp(sf.translate(text, "TZ", " "), sf.lit(SPARK_PATTERN))


def parse_lenient(text: str | None) -> datetime | None:
    """Python twin of :func:`lenient_timestamp` (aware UTC datetime, or None)."""
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
