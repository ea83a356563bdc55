"""The summary: what failed, what was retried, what was lost, and the accounting of rejects.

Spark computes a handful of small aggregates over the stored records in one query; the driver
folds them into one JSON-ready dict. Everything is sorted and rounded so the same records give byte-for-
byte the same JSON whichever layout they were read from (``comparable`` drops the parts that
describe the input files rather than the deliveries).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as sf

from cross_account_runtime.delivery_report.inputs import InputFile
from cross_account_runtime.delivery_report.normalize import SKIP_REASONS

PERCENTILES = (0.5, 0.95, 0.99)
TOP_DESTINATIONS = 10
SAMPLES = 20
REJECT_SAMPLES = 3
MAX_MINUTES_IN_SUMMARY = 7 * 24 * 60
STATUSES = ("SUCCESS", "FAILURE")
MINUTE_FORMAT = "yyyy-MM-dd'T'HH:mm'Z'"
"""Minutes leave Spark as UTC text: a collected timestamp would be shifted to the driver's zone."""
NO_CODE = "none"


@dataclass(frozen=True)
class Accounting:
    """Records read (counted as they left the readers) against parsed and rejected."""

    read: int
    parsed: int
    rejected: int

    @property
    def balanced(self) -> bool:
        return self.read == self.parsed + self.rejected


@dataclass(frozen=True)
class Aggregates:
    """What Spark hands back: small enough to hold on the driver."""

    facts: list[dict[str, Any]]
    dwell: list[dict[str, Any]]
    minutes: list[dict[str, Any]]
    per_destination: list[dict[str, Any]]
    lost_samples: list[dict[str, Any]]
    duplicate_samples: list[dict[str, Any]]
    reject_counts: list[dict[str, Any]]
    reject_samples: list[dict[str, Any]]


FACT_KEYS = (
    "topic",
    "protocol",
    "destination",
    "status",
    "cause",
    "error_code",
    "status_code",
    "attempts",
    "http_4xx_success",
)


def collect_aggregates(records: DataFrame, rejected: DataFrame) -> Aggregates:
    """Run every aggregation in one Spark query and fold the rows it returns.

    Each aggregation reads the stored Parquet for the columns it needs; they are put side by
    side in one union (each as a struct column of its own, null in the others' rows) so one
    action runs them all: their stages are scheduled together, filling the cores while the
    small ones wait on nothing, instead of one job after another each paying its fixed cost.
    """
    dwell_histogram = (
        records.filter(sf.col("dwell_ms").isNotNull())
        .groupBy("protocol", "dwell_ms")
        .agg(sf.count(sf.lit(1)).alias("n"))
    )
    ranked = rejected.withColumn(
        "rank",
        sf.row_number().over(
            Window.partitionBy("reject_reason").orderBy("source_file", "sample"),
        ),
    )
    parts: dict[str, DataFrame] = {
        "facts": records.groupBy(*FACT_KEYS).agg(sf.count(sf.lit(1)).alias("count")),
        "dwell": dwell_histogram.rollup("protocol").agg(
            sf.sum("n").alias("count"),
            sf.percentile("dwell_ms", list(PERCENTILES), sf.col("n")).alias("percentiles"),
            sf.max("dwell_ms").alias("max"),
            sf.grouping("protocol").alias("is_total"),
        ),
        "minutes": records.groupBy(
            sf.date_format(sf.date_trunc("minute", "delivered_at"), MINUTE_FORMAT).alias("minute"),
            "status",
        ).agg(sf.count(sf.lit(1)).alias("count")),
        "per_destination": _per_destination(records),
        "reject_counts": rejected.groupBy("reject_reason", "layout").agg(
            sf.count(sf.lit(1)).alias("count"),
        ),
        "reject_samples": ranked.filter(sf.col("rank") <= REJECT_SAMPLES).drop("rank"),
    }
    found = _collect_together(parts)
    per_destination_rows = found["per_destination"]
    return Aggregates(
        facts=found["facts"],
        dwell=found["dwell"],
        minutes=found["minutes"],
        per_destination=per_destination_rows,
        lost_samples=_samples(per_destination_rows, "lost_ids", lambda v: {"message_id": v}),
        duplicate_samples=_samples(per_destination_rows, "duplicate_ids", lambda v: v.asDict()),
        reject_counts=found["reject_counts"],
        reject_samples=found["reject_samples"],
    )


def _collect_together(parts: Mapping[str, DataFrame]) -> dict[str, list[dict[str, Any]]]:
    """The rows of every frame, by name, collected with a single action."""
    combined: DataFrame | None = None
    for name, frame in parts.items():
        packed = frame.select(sf.struct(*frame.columns).alias(name))
        combined = (
            packed if combined is None else combined.unionByName(packed, allowMissingColumns=True)
        )
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in parts}
    if combined is None:
        return found
    for row in combined.collect():
        for name in parts:
            value = row[name]
            if value is not None:
                found[name].append(value.asDict())
    return found


DELIVERY_KEY = ("topic", "destination", "message_id")


def _per_destination(records: DataFrame) -> DataFrame:
    """Lost and duplicated deliveries per (topic, destination), with sample message ids.

    A delivery is (topic, destination, messageId): one aggregation per delivery, then one
    per destination, in a single job.
    """
    deliveries = records.groupBy(*DELIVERY_KEY).agg(
        sf.count(sf.lit(1)).alias("records"),
        sf.bool_or(sf.col("status") == "SUCCESS").alias("delivered"),
    )
    lost = ~sf.col("delivered")
    duplicated = sf.col("records") > 1
    return deliveries.groupBy("topic", "destination").agg(
        sf.count_if(lost).alias("lost"),
        sf.count_if(duplicated).alias("duplicated"),
        sf.sum(sf.col("records") - 1).alias("extra_records"),
        _first_ids(sf.when(lost, sf.col("message_id"))).alias("lost_ids"),
        _first_ids(sf.when(duplicated, sf.struct("message_id", "records"))).alias("duplicate_ids"),
    )


def _first_ids(value: Column) -> Column:
    """The ``SAMPLES`` smallest non-null values of a group (sorted), for report samples."""
    return sf.slice(sf.array_sort(sf.collect_list(value)), 1, SAMPLES)


def _samples(
    rows: Sequence[Mapping[str, Any]],
    field: str,
    describe: Callable[[Any], dict[str, Any]],
) -> list[dict[str, Any]]:
    """The first ``SAMPLES`` entries over all destinations, by topic, destination, message."""
    found = [
        {"topic": row["topic"], "destination": row["destination"], **describe(value)}
        for row in rows
        for value in row[field]
    ]
    found.sort(key=lambda s: (s["topic"], s["destination"], s["message_id"]))
    return found[:SAMPLES]


def build_summary(
    aggregates: Aggregates,
    read: int,
    files: Sequence[InputFile],
) -> dict[str, Any]:
    """The summary dict (JSON-ready, deterministic)."""
    parsed = sum(int(f["count"]) for f in aggregates.facts)
    rejected = sum(int(r["count"]) for r in aggregates.reject_counts)
    accounting = Accounting(read=read, parsed=parsed, rejected=rejected)
    facts = aggregates.facts
    return {
        "accounting": _accounting(accounting, aggregates.reject_counts),
        "input": _input(files),
        "deliveries": _deliveries(facts),
        "failures": _failures(facts),
        "retries": _retries(facts),
        "http_4xx_success": _http_4xx(facts),
        "dwell_ms": _dwell(aggregates.dwell),
        "lost": _lost(aggregates),
        "duplicates": _duplicates(aggregates),
        "top_failing_destinations": _top_failing(facts),
        "series": _series(aggregates.minutes),
        "rejected_samples": _reject_samples(aggregates.reject_samples),
    }


def comparable(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a summary that depend on the deliveries only, not on the input layout.

    Dropped: the file inventory, reject samples (they name files), and the counts of read,
    rejected and skipped units, which differ by layout (Firehose has health-check envelopes).
    """
    result = {k: v for k, v in summary.items() if k not in {"input", "rejected_samples"}}
    accounting = summary["accounting"]
    result["accounting"] = {
        "records_parsed": accounting["records_parsed"],
        "malformed_by_reason": accounting["malformed_by_reason"],
    }
    return result


def _accounting(accounting: Accounting, counts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    by_reason: Counter[str] = Counter()
    by_layout: dict[str, Counter[str]] = defaultdict(Counter)
    for row in counts:
        by_reason[row["reject_reason"]] += int(row["count"])
        by_layout[row["layout"]][row["reject_reason"]] += int(row["count"])
    return {
        "records_read": accounting.read,
        "records_parsed": accounting.parsed,
        "records_rejected": accounting.rejected,
        "balanced": accounting.balanced,
        "malformed_by_reason": _sorted(
            {k: v for k, v in by_reason.items() if k not in SKIP_REASONS}
        ),
        "skipped_by_reason": _sorted({k: v for k, v in by_reason.items() if k in SKIP_REASONS}),
        "rejected_by_layout": {k: _sorted(v) for k, v in sorted(by_layout.items())},
    }


def _input(files: Sequence[InputFile]) -> dict[str, Any]:
    read = [f for f in files if f.layout is not None]
    layouts = Counter(f.layout.value for f in read if f.layout is not None)
    return {
        "files": len(read),
        "bytes": sum(f.size for f in read),
        "files_by_layout": _sorted(layouts),
        "files_gunzipped_in_python": sum(1 for f in read if f.gunzip_in_python),
        "files_not_detected": sorted(f.path for f in read if not f.detected),
        "files_skipped": [{"path": f.path, "reason": f.skipped} for f in files if f.layout is None],
    }


def _deliveries(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_status: Counter[str] = Counter()
    by_topic: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    by_protocol: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    by_destination: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for fact in facts:
        count, status = int(fact["count"]), fact["status"]
        by_status[status] += count
        by_topic[(fact["topic"],)][status] += count
        by_protocol[(fact["protocol"],)][status] += count
        by_destination[(fact["topic"], fact["protocol"], fact["destination"])][status] += count
    return {
        "total": sum(by_status.values()),
        "by_status": _status_counts(by_status),
        "by_topic": _status_table(("topic",), by_topic),
        "by_protocol": _status_table(("protocol",), by_protocol),
        "by_destination": _status_table(("topic", "protocol", "destination"), by_destination),
    }


def _failures(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_cause: Counter[str] = Counter()
    by_code: Counter[str] = Counter()
    by_error: Counter[str] = Counter()
    provider: Counter[tuple[str, str, str]] = Counter()
    for fact in facts:
        if fact["status"] != "FAILURE":
            continue
        count = int(fact["count"])
        code = _code(fact["status_code"])
        by_cause[fact["cause"]] += count
        by_code[code] += count
        if fact["error_code"] is not None:
            by_error[fact["error_code"]] += count
        provider[(fact["protocol"], code, fact["error_code"] or NO_CODE)] += count
    return {
        "total": sum(by_cause.values()),
        "by_cause": _sorted(by_cause),
        "by_status_code": _sorted(by_code),
        "by_error_code": _sorted(by_error),
        "by_protocol_and_code": [
            {"protocol": p, "status_code": c, "error_code": e, "count": n}
            for (p, c, e), n in sorted(provider.items(), key=lambda item: (-item[1], item[0]))
        ],
    }


def _retries(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_attempts: Counter[int] = Counter()
    outcome: Counter[str] = Counter()
    by_destination: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for fact in facts:
        attempts = fact["attempts"]
        if attempts is None or attempts <= 1:
            continue
        count = int(fact["count"])
        by_attempts[int(attempts)] += count
        outcome[fact["status"]] += count
        by_destination[(fact["topic"], fact["destination"])][fact["status"]] += count
    return {
        "retried": sum(outcome.values()),
        "retried_succeeded": outcome["SUCCESS"],
        "retried_failed": outcome["FAILURE"],
        "by_attempts": {str(k): v for k, v in sorted(by_attempts.items())},
        "by_destination": _status_table(("topic", "destination"), by_destination),
    }


def _http_4xx(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_code: Counter[str] = Counter()
    by_destination: Counter[tuple[str, str]] = Counter()
    for fact in facts:
        if not fact["http_4xx_success"]:
            continue
        count = int(fact["count"])
        by_code[_code(fact["status_code"])] += count
        by_destination[(fact["topic"], fact["destination"])] += count
    return {
        "total": sum(by_code.values()),
        "by_status_code": _sorted(by_code),
        "by_destination": [
            {"topic": t, "destination": d, "count": n}
            for (t, d), n in sorted(by_destination.items(), key=lambda item: (-item[1], item[0]))
        ],
    }


def _dwell(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {"all": _dwell_stats(None), "by_protocol": {}}
    for row in rows:
        stats = _dwell_stats(row)
        if row["is_total"]:
            result["all"] = stats
        else:
            result["by_protocol"][row["protocol"]] = stats
    result["by_protocol"] = dict(sorted(result["by_protocol"].items()))
    return result


def _dwell_stats(row: Mapping[str, Any] | None) -> dict[str, Any]:
    if row is None:
        return {"count": 0, "p50": None, "p95": None, "p99": None, "max": None}
    p50, p95, p99 = (round(float(value), 3) for value in row["percentiles"])
    return {"count": int(row["count"]), "p50": p50, "p95": p95, "p99": p99, "max": int(row["max"])}


def _lost(aggregates: Aggregates) -> dict[str, Any]:
    rows = [r for r in aggregates.per_destination if r["lost"]]
    return {
        "total": sum(int(r["lost"]) for r in rows),
        "by_destination": [
            {"topic": r["topic"], "destination": r["destination"], "lost": int(r["lost"])}
            for r in sorted(rows, key=lambda r: (-int(r["lost"]), r["topic"], r["destination"]))
        ],
        "samples": [_delivery_key(r) for r in aggregates.lost_samples],
    }


def _duplicates(aggregates: Aggregates) -> dict[str, Any]:
    rows = [r for r in aggregates.per_destination if r["duplicated"]]
    return {
        "deliveries": sum(int(r["duplicated"]) for r in rows),
        "extra_records": sum(int(r["extra_records"]) for r in rows),
        "by_destination": [
            {
                "topic": r["topic"],
                "destination": r["destination"],
                "deliveries": int(r["duplicated"]),
                "extra_records": int(r["extra_records"]),
            }
            for r in sorted(
                rows, key=lambda r: (-int(r["duplicated"]), r["topic"], r["destination"])
            )
        ],
        "samples": [
            {**_delivery_key(r), "records": int(r["records"])} for r in aggregates.duplicate_samples
        ],
    }


def _delivery_key(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "topic": row["topic"],
        "destination": row["destination"],
        "message_id": row["message_id"],
    }


def _top_failing(facts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    totals: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for fact in facts:
        totals[(fact["topic"], fact["protocol"], fact["destination"])][fact["status"]] += int(
            fact["count"]
        )
    failing = [(key, counts) for key, counts in totals.items() if counts["FAILURE"]]
    failing.sort(key=lambda item: (-item[1]["FAILURE"], item[0]))
    return [
        {
            "topic": topic,
            "protocol": protocol,
            "destination": destination,
            "failures": counts["FAILURE"],
            "total": counts.total(),
            "failure_rate": round(counts["FAILURE"] / counts.total(), 6),
        }
        for (topic, protocol, destination), counts in failing[:TOP_DESTINATIONS]
    ]


def _series(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    minutes: dict[str, Counter[str]] = defaultdict(Counter)
    hours: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        minute: str | None = row["minute"]
        minutes[minute or "unknown"][row["status"]] += int(row["count"])
        hour = "unknown" if minute is None else f"{minute[:13]}:00Z"
        hours[hour][row["status"]] += int(row["count"])
    per_minute = [{"minute": k, **_status_counts(v)} for k, v in sorted(minutes.items())]
    return {
        "per_hour": [{"hour": k, **_status_counts(v)} for k, v in sorted(hours.items())],
        "per_minute": per_minute if len(per_minute) <= MAX_MINUTES_IN_SUMMARY else None,
        "minutes": len(per_minute),
    }


def _reject_samples(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    samples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in sorted(
        rows, key=lambda r: (r["reject_reason"], r["source_file"], r["sample"] or "")
    ):
        samples[row["reject_reason"]].append(
            {"layout": row["layout"], "source_file": row["source_file"], "sample": row["sample"]},
        )
    return dict(sorted(samples.items()))


def _status_counts(counts: Mapping[str, int]) -> dict[str, int]:
    return {status: int(counts.get(status, 0)) for status in STATUSES}


def _status_table(
    names: tuple[str, ...],
    groups: Mapping[tuple[str, ...], Counter[str]],
) -> list[dict[str, Any]]:
    rows = [
        {**dict(zip(names, key, strict=True)), **_status_counts(counts), "total": counts.total()}
        for key, counts in groups.items()
    ]
    return sorted(rows, key=lambda r: (-int(r["total"]), *(str(r[n]) for n in names)))


def _sorted(counts: Mapping[Any, int]) -> dict[str, int]:
    """Counts keyed by name, largest first, ties by name: stable across runs."""
    return {
        str(k): int(v) for k, v in sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    }


def _code(status_code: int | None) -> str:
    return NO_CODE if status_code is None else str(status_code)
