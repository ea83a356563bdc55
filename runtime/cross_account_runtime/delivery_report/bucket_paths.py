"""Where delivery logs and reports live in the analytics bucket.

One module for the three parties that must agree on it: the Firehose stream that writes the
logs (its S3 prefix expression), the scheduled job that reads one day of them and writes the
report, and the local demo that plays both roles. Firehose's ``!{timestamp:...}`` is the UTC
arrival time, so a day's prefix holds what arrived that day.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

LOG_PREFIX = "delivery-logs/"
"""Raw Firehose objects (CloudWatch Logs envelopes) by arrival day: ``delivery-logs/YYYY/MM/DD/``."""
ERROR_PREFIX = "delivery-logs-errors/"
"""What Firehose could not deliver or process, by error type and day."""
REPORT_PREFIX = "reports/"
"""One directory per analysed day: ``reports/YYYY-MM-DD/`` (summary, HTML report, Parquet)."""

FIREHOSE_PREFIX = LOG_PREFIX + "!{timestamp:yyyy/MM/dd}/"
FIREHOSE_ERROR_PREFIX = ERROR_PREFIX + "!{firehose:error-output-type}/!{timestamp:yyyy/MM/dd}/"


def bucket_name(account_id: str, region: str) -> str:
    """The analytics bucket's name: fixed, so every account's stack can compute its ARN."""
    return f"messaging-delivery-logs-{account_id}-{region}"


def day_prefix(day: date) -> str:
    """The prefix Firehose writes a UTC day's logs under."""
    return f"{LOG_PREFIX}{day:%Y/%m/%d}/"


def report_prefix(day: date) -> str:
    """Where the report of a day's logs goes."""
    return f"{REPORT_PREFIX}{day:%Y-%m-%d}/"


def previous_day(scheduled_time: str) -> date:
    """The UTC day before a schedule's ``<aws.scheduler.scheduled-time>`` (ISO 8601).

    A daily run just after midnight analyses the day that has just ended.
    """
    text = scheduled_time.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"scheduled time {scheduled_time!r} is not ISO 8601; pass e.g. 2026-11-23T00:15:00Z"
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return (moment - timedelta(days=1)).date()
