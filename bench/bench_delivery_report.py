"""Benchmark: the delivery-report summary by the Spark job, by DuckDB and by a plain-Python loop.

Generates 2,000,000 records in the export-task layout once into ``.cache/bench/`` (seeded),
then computes the same summary three ways on the same files:

- Spark: the real job through ``spark-submit`` (end to end, JVM start included) and the job's
  own time without the JVM start-up (``total_s`` it reports);
- the Spark floor: ``spark-submit`` of a script that only counts the lines of the same files,
  with the same settings -- what no Spark program over these files can beat on this machine;
- DuckDB: SQL over the gzip files (``duckdb`` from the dev requirements);
- Python: one ``json.loads`` per line with the same classification rules.

The three summaries must agree (``summary.comparable``); a mismatch raises. Prints one JSON
object with records per second for each, the CPU seconds each used (steadier than wall time
when other work shares the machine) and the load average around the run. Run: ``.venv/bin/python bench/bench_delivery_report.py``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb

from cross_account_runtime.delivery_report import spark_entry
from cross_account_runtime.delivery_report.causes import (
    CAUSE_RULES,
    ERROR_CODE_PATTERNS,
    OTHER_CAUSE,
    classify,
    error_code,
)
from cross_account_runtime.delivery_report.job import LOCAL_JAVA_OPTIONS
from cross_account_runtime.delivery_report.sample.writers import write_layouts
from cross_account_runtime.delivery_report.summary import (
    FACT_KEYS,
    PERCENTILES,
    SAMPLES,
    Aggregates,
    build_summary,
    comparable,
)
from cross_account_runtime.delivery_report.timestamps import parse_lenient

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench" / "delivery_report"
RECORDS = 2_000_000
SEED = 7
EXPORT_GROUP = re.compile(r"(?:^|/)(sns/[^/]+/[^/]+/.+)/[^/]+/[^/]+/[^/]+$")


def ensure_data(records: int, seed: int) -> Path:
    """The export-layout data set, generated once (the manifest says what is there)."""
    manifest = CACHE / "manifest.json"
    if manifest.exists():
        found = json.loads(manifest.read_text())
        if (
            found.get("records") == records
            and found.get("seed") == seed
            and "export" in found.get("layouts", [])
        ):
            return CACHE / "export"
    shutil.rmtree(CACHE, ignore_errors=True)
    write_layouts(records=records, seed=seed, out=CACHE, layouts=("export",))
    return CACHE / "export"


def data_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.gz"))


SPARK_SETTINGS: tuple[str, ...] = (
    "--master",
    "local[*]",
    "--driver-memory",
    "6g",
    "--conf",
    "spark.ui.enabled=false",
    "--conf",
    "spark.log.level=WARN",
    "--conf",
    f"spark.driver.extraJavaOptions={LOCAL_JAVA_OPTIONS}",
)
"""The job's documented ``spark-submit`` settings for a small machine in ``local[*]``, used for
the job and for the floor alike; the Java options are the ones the job sets in local mode."""

FLOOR_SCRIPT = """\
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("floor").getOrCreate()
spark.conf.set("spark.sql.files.minPartitionNum", sys.argv[2])
reader = spark.read.option("recursiveFileLookup", "true").option("pathGlobFilter", "*.gz")
lines = reader.text(sys.argv[1]).count()
print(f"lines={lines}")
spark.stop()
"""
"""The cheapest Spark program over the same files: start, gunzip and count the lines, stop.

Its time is what no Spark job over these files can go below on this machine."""


@dataclass(frozen=True)
class Submitted:
    """What one ``spark-submit`` took: wall time, CPU time of all its processes, its output."""

    wall_s: float
    cpu_s: float
    output: str


def spark_submit(script: Path, arguments: Sequence[str]) -> Submitted:
    """Run ``script`` with ``spark-submit`` and the job's settings; raises if it fails."""
    venv_bin = Path(sys.executable).parent
    env = dict(os.environ)
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    env["PYSPARK_PYTHON"] = sys.executable
    runtime_root = Path(spark_entry.__file__).resolve().parents[2]
    env["PYTHONPATH"] = f"{runtime_root}{os.pathsep}{env.get('PYTHONPATH', '')}"
    command = [str(venv_bin / "spark-submit"), *SPARK_SETTINGS, str(script), *arguments]
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    cpu = _children_cpu_s() - cpu_before
    if result.returncode != 0:
        raise RuntimeError(f"spark-submit failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return Submitted(wall_s=wall, cpu_s=cpu, output=result.stdout + "\n" + result.stderr)


def _children_cpu_s() -> float:
    """User + system CPU seconds of the waited-for child processes (the JVM and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_spark(data: Path, output: Path) -> tuple[Submitted, dict[str, float], dict[str, Any]]:
    """spark-submit of the job: what it took, the timings it printed, the summary it wrote."""
    submitted = spark_submit(
        Path(spark_entry.__file__),
        ["--input", str(data), "--output", str(output)],
    )
    found = [
        line[line.index('{"timings"') :]
        for line in submitted.output.splitlines()
        if '{"timings"' in line
    ]
    if not found:
        raise RuntimeError(f"spark-submit printed no timings:\n{submitted.output[-4000:]}")
    timings = json.loads(found[-1])["timings"]
    summary = json.loads((output / "summary.json").read_text())
    return submitted, {k: float(v) for k, v in timings.items()}, summary


def run_spark_floor(data: Path, files: int) -> tuple[Submitted, int]:
    """spark-submit of ``FLOOR_SCRIPT`` over the data: what it took and the lines it counted."""
    with tempfile.TemporaryDirectory() as directory:
        script = Path(directory) / "floor.py"
        script.write_text(FLOOR_SCRIPT, encoding="utf-8")
        submitted = spark_submit(script, [data.as_uri(), str(max(files, os.cpu_count() or 1))])
    counted = [line for line in submitted.output.splitlines() if line.startswith("lines=")]
    if not counted:
        raise RuntimeError(f"the floor script printed no count:\n{submitted.output[-4000:]}")
    return submitted, int(counted[-1].removeprefix("lines="))


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _cause_sql() -> str:
    """The cause rules as a SQL CASE, from the same table the Spark job uses."""
    branches = []
    for rule in CAUSE_RULES:
        conditions = []
        if rule.response_contains:
            texts = " OR ".join(
                f"contains(lower(coalesce(response, '')), {_sql_text(t)})"
                for t in rule.response_contains
            )
            conditions.append(f"({texts})")
        if rule.status_range is not None:
            conditions.append(
                f"coalesce(status_code BETWEEN {rule.status_range[0]} AND {rule.status_range[1]}, false)"
            )
        if rule.protocols:
            conditions.append(f"protocol IN ({', '.join(_sql_text(p) for p in rule.protocols)})")
        branches.append(f"WHEN {' AND '.join(conditions)} THEN {_sql_text(rule.cause)}")
    return f"CASE WHEN status = 'FAILURE' THEN CASE {' '.join(branches)} ELSE {_sql_text(OTHER_CAUSE)} END END"


RECORD_STRUCTURE = json.dumps(
    {
        "notification": {"messageId": "VARCHAR", "topicArn": "VARCHAR", "timestamp": "VARCHAR"},
        "delivery": {
            "destination": "VARCHAR",
            "providerResponse": "VARCHAR",
            "dwellTimeMs": "BIGINT",
            "attempts": "BIGINT",
            "statusCode": "BIGINT",
            "smsType": "VARCHAR",
            "phoneCarrier": "VARCHAR",
        },
        "status": "VARCHAR",
    },
)


def run_duckdb(files: Sequence[Path]) -> Aggregates:
    connection = duckdb.connect()
    file_list = "[" + ", ".join(_sql_text(str(f)) for f in files) + "]"
    error_codes = ", ".join(
        f"nullif(regexp_extract(response, {_sql_text(p)}, 1), '')" for p in ERROR_CODE_PATTERNS
    )
    connection.execute(
        f"""
        CREATE TEMP TABLE r AS
        WITH raw AS (
            SELECT filename, line FROM read_csv({file_list}, columns={{'line': 'VARCHAR'}}, header=false,
                delim='\\x01', quote='', escape='', auto_detect=false, filename=true)
        ), parsed AS (
            SELECT filename, json_transform(substr(line, strpos(line, ' ') + 1), {_sql_text(RECORD_STRUCTURE)}) AS j
            FROM raw
        ), flat AS (
            SELECT
                nullif(trim(j.notification.topicArn), '') AS topic_arn,
                regexp_replace(regexp_extract(filename, {_sql_text(EXPORT_GROUP.pattern)}, 1), '/Failure$', '') AS grp,
                trim(j.notification.messageId) AS message_id,
                trim(j.delivery.destination) AS destination,
                j.delivery.providerResponse AS response,
                j.delivery.dwellTimeMs AS dwell_ms,
                j.delivery.attempts AS attempts,
                j.delivery.statusCode AS status_code,
                j.delivery.smsType AS sms_type,
                j.delivery.phoneCarrier AS phone_carrier,
                j.status AS status,
                try_cast(j.notification.timestamp AS TIMESTAMP) AS published_at
            FROM parsed
        ), derived AS (
            SELECT *,
                coalesce(topic_arn, CASE WHEN grp LIKE 'sns/%/%/%' THEN
                    'arn:' || CASE WHEN split_part(grp, '/', 2) LIKE 'cn-%' THEN 'aws-cn'
                                   WHEN split_part(grp, '/', 2) LIKE 'us-gov-%' THEN 'aws-us-gov' ELSE 'aws' END
                    || ':sns:' || split_part(grp, '/', 2) || ':' || split_part(grp, '/', 3) || ':'
                    || substr(grp, length(split_part(grp, '/', 1) || split_part(grp, '/', 2) || split_part(grp, '/', 3)) + 4)
                END, '(unknown)') AS topic,
                CASE
                    WHEN destination LIKE 'arn:%' AND split_part(destination, ':', 3) = 'sqs' THEN 'sqs'
                    WHEN destination LIKE 'arn:%' AND split_part(destination, ':', 3) = 'lambda' THEN 'lambda'
                    WHEN destination LIKE 'arn:%' AND split_part(destination, ':', 3) = 'firehose' THEN 'firehose'
                    WHEN destination LIKE 'arn:%' AND split_part(destination, ':', 3) = 'sns'
                        AND contains(destination, ':endpoint/') THEN 'application'
                    WHEN lower(split_part(substr(destination, 1, 8), ':', 1)) IN ('https', 'http')
                        AND contains(destination, '://') THEN 'http/s'
                    WHEN destination LIKE '+%' OR sms_type IS NOT NULL OR phone_carrier IS NOT NULL THEN 'sms'
                    ELSE 'unknown'
                END AS protocol,
                published_at + to_milliseconds(coalesce(dwell_ms, 0)) AS delivered_at
            FROM flat
        )
        SELECT *,
            {_cause_sql()} AS cause,
            CASE WHEN status = 'FAILURE' THEN coalesce({error_codes}) END AS error_code,
            coalesce(status = 'SUCCESS' AND protocol = 'http/s' AND status_code BETWEEN 400 AND 499, false)
                AS http_4xx_success
        FROM derived
        """,
    )
    keys = ", ".join(FACT_KEYS)
    facts = _dicts(connection, f"SELECT {keys}, count(*) AS count FROM r GROUP BY ALL")
    quantiles = "[" + ", ".join(str(p) for p in PERCENTILES) + "]"
    dwell = _dicts(
        connection,
        f"""SELECT protocol, count(*) AS count, quantile_cont(dwell_ms, {quantiles}) AS percentiles,
                max(dwell_ms) AS max, grouping(protocol) AS is_total
            FROM r WHERE dwell_ms IS NOT NULL GROUP BY ROLLUP (protocol)""",
    )
    minutes = _dicts(
        connection,
        """SELECT strftime(date_trunc('minute', delivered_at), '%Y-%m-%dT%H:%MZ') AS minute, status,
                count(*) AS count FROM r GROUP BY ALL""",
    )
    per_destination = _dicts(
        connection,
        f"""WITH d AS (
                SELECT topic, destination, message_id, count(*) AS records, bool_or(status = 'SUCCESS') AS delivered
                FROM r GROUP BY ALL)
            SELECT topic, destination,
                count(*) FILTER (WHERE NOT delivered) AS lost,
                count(*) FILTER (WHERE records > 1) AS duplicated,
                sum(records - 1) AS extra_records,
                list(message_id ORDER BY message_id) FILTER (WHERE NOT delivered)[1:{SAMPLES}] AS lost_ids,
                list({{'message_id': message_id, 'records': records}} ORDER BY message_id)
                    FILTER (WHERE records > 1)[1:{SAMPLES}] AS duplicate_ids
            FROM d GROUP BY ALL""",
    )
    for row in per_destination:
        row["lost_ids"] = row["lost_ids"] or []
        row["duplicate_ids"] = row["duplicate_ids"] or []
    return _aggregates(facts, dwell, minutes, per_destination)


def _dicts(connection: Any, sql: str) -> list[dict[str, Any]]:
    cursor = connection.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _aggregates(
    facts: list[dict[str, Any]],
    dwell: list[dict[str, Any]],
    minutes: list[dict[str, Any]],
    per_destination: list[dict[str, Any]],
) -> Aggregates:
    """Aggregates as the job folds them, with samples chosen the job's way."""
    lost = [
        {"topic": r["topic"], "destination": r["destination"], "message_id": m}
        for r in per_destination
        for m in r["lost_ids"]
    ]
    duplicates = [
        {"topic": r["topic"], "destination": r["destination"], **d}
        for r in per_destination
        for d in r["duplicate_ids"]
    ]
    order = ("topic", "destination", "message_id")
    lost.sort(key=lambda s: tuple(s[k] for k in order))
    duplicates.sort(key=lambda s: tuple(s[k] for k in order))
    return Aggregates(
        facts=facts,
        dwell=dwell,
        minutes=minutes,
        per_destination=per_destination,
        lost_samples=lost[:SAMPLES],
        duplicate_samples=duplicates[:SAMPLES],
        reject_counts=[],
        reject_samples=[],
    )


def _python_protocol(destination: str, delivery: Mapping[str, Any]) -> str:
    is_arn = destination.startswith("arn:")
    service = destination.split(":")[2] if is_arn and destination.count(":") >= 2 else ""
    if is_arn and service in {"sqs", "lambda", "firehose"}:
        return service
    if is_arn and service == "sns" and ":endpoint/" in destination:
        return "application"
    if destination[:8].split(":", 1)[0].lower() in {"https", "http"} and "://" in destination:
        return "http/s"
    if (
        destination.startswith("+")
        or delivery.get("smsType") is not None
        or delivery.get("phoneCarrier") is not None
    ):
        return "sms"
    return "unknown"


def _python_topic(arn: str | None, path: str) -> str:
    if arn and arn.strip():
        return arn.strip()
    match = EXPORT_GROUP.search(path)
    if match is None:
        return "(unknown)"
    parts = match.group(1).removesuffix("/Failure").split("/", 3)
    if len(parts) < 4:
        return "(unknown)"
    region = parts[1]
    partition = (
        "aws-cn"
        if region.startswith("cn-")
        else "aws-us-gov"
        if region.startswith("us-gov-")
        else "aws"
    )
    return f"arn:{partition}:sns:{region}:{parts[2]}:{parts[3]}"


def _lines(files: Sequence[Path]) -> Iterator[tuple[str, str]]:
    for path in files:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                yield str(path), line


def run_python(files: Sequence[Path]) -> Aggregates:
    facts: Counter[tuple[Any, ...]] = Counter()
    dwell_values: dict[str, list[int]] = defaultdict(list)
    minutes: Counter[tuple[str, str]] = Counter()
    deliveries: dict[tuple[str, str, str], list[int]] = {}
    for path, line in _lines(files):
        record = json.loads(line[line.index(" ") + 1 :])
        notification, delivery, status = (
            record["notification"],
            record["delivery"],
            record["status"],
        )
        destination = delivery["destination"].strip()
        protocol = _python_protocol(destination, delivery)
        topic = _python_topic(notification.get("topicArn"), path)
        code, response = delivery.get("statusCode"), delivery.get("providerResponse")
        dwell, attempts = delivery.get("dwellTimeMs"), delivery.get("attempts")
        http_4xx = (
            status == "SUCCESS" and protocol == "http/s" and code is not None and 400 <= code <= 499
        )
        cause = classify(status, protocol, code, response)
        facts[
            (
                topic,
                protocol,
                destination,
                status,
                cause,
                error_code(status, response),
                code,
                attempts,
                http_4xx,
            )
        ] += 1
        if dwell is not None:
            dwell_values[protocol].append(dwell)
        published = parse_lenient(notification["timestamp"])
        if published is None:
            raise ValueError(f"unparseable timestamp in {path}: {notification['timestamp']!r}")
        delivered = published + timedelta(milliseconds=dwell or 0)
        minutes[(f"{delivered:%Y-%m-%dT%H:%M}Z", status)] += 1
        key = (topic, destination, notification["messageId"].strip())
        counts = deliveries.setdefault(key, [0, 0])
        counts[0] += 1
        counts[1] |= status == "SUCCESS"
    per_destination: dict[tuple[str, str], dict[str, Any]] = {}
    for (topic, destination, message_id), (records, delivered_flag) in sorted(deliveries.items()):
        row = per_destination.setdefault(
            (topic, destination),
            {
                "topic": topic,
                "destination": destination,
                "lost": 0,
                "duplicated": 0,
                "extra_records": 0,
                "lost_ids": [],
                "duplicate_ids": [],
            },
        )
        row["extra_records"] += records - 1
        if not delivered_flag:
            row["lost"] += 1
            if len(row["lost_ids"]) < SAMPLES:
                row["lost_ids"].append(message_id)
        if records > 1:
            row["duplicated"] += 1
            if len(row["duplicate_ids"]) < SAMPLES:
                row["duplicate_ids"].append({"message_id": message_id, "records": records})
    all_values = sorted(v for values in dwell_values.values() for v in values)
    dwell = [_dwell_row(None, all_values)] + [
        _dwell_row(protocol, sorted(values)) for protocol, values in dwell_values.items()
    ]
    return _aggregates(
        [dict(zip((*FACT_KEYS, "count"), (*key, n), strict=True)) for key, n in facts.items()],
        dwell,
        [{"minute": m, "status": s, "count": n} for (m, s), n in minutes.items()],
        list(per_destination.values()),
    )


def _dwell_row(protocol: str | None, values: Sequence[int]) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "count": len(values),
        "percentiles": [_linear_percentile(values, p) for p in PERCENTILES],
        "max": values[-1],
        "is_total": 1 if protocol is None else 0,
    }


def _linear_percentile(ordered: Sequence[int], fraction: float) -> float:
    """Linear interpolation between closest ranks, as Spark's ``percentile`` and DuckDB's
    ``quantile_cont`` compute it."""
    position = fraction * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return float(ordered[low])
    return (high - position) * ordered[low] + (position - low) * ordered[high]


def _differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = []
        for key in sorted(set(expected) | set(actual)):
            found += _differences(expected.get(key), actual.get(key), f"{path}/{key}")
        return found
    return [] if expected == actual else [f"{path}: {str(expected)[:200]} != {str(actual)[:200]}"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=RECORDS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    data = ensure_data(args.records, args.seed)
    files = data_files(data)
    size = sum(f.stat().st_size for f in files)
    output = CACHE.parent / "delivery_report_out"
    load_before = os.getloadavg()
    floor, floor_lines = run_spark_floor(data, len(files))
    spark, timings, spark_summary = run_spark(data, output)
    started, cpu_started = time.perf_counter(), time.process_time()
    duck = build_summary(run_duckdb(files), read=args.records, files=[])
    duck_seconds = time.perf_counter() - started
    duck_cpu = time.process_time() - cpu_started
    started, cpu_started = time.perf_counter(), time.process_time()
    plain = build_summary(run_python(files), read=args.records, files=[])
    python_seconds = time.perf_counter() - started
    python_cpu = time.process_time() - cpu_started
    load_after = os.getloadavg()
    reference = comparable(spark_summary)
    for name, summary in (("duckdb", duck), ("python", plain)):
        differences = _differences(reference, json.loads(json.dumps(comparable(summary))))
        if differences:
            raise AssertionError(f"{name} disagrees with Spark:\n" + "\n".join(differences[:20]))
    records = spark_summary["accounting"]["records_parsed"]
    if records != args.records:
        raise AssertionError(f"Spark parsed {records} records of {args.records}")
    if floor_lines != spark_summary["accounting"]["records_read"]:
        raise AssertionError(
            f"the floor counted {floor_lines} lines, the job read "
            f"{spark_summary['accounting']['records_read']}"
        )

    def rate(seconds: float, cpu_seconds: float | None = None) -> dict[str, float]:
        figures = {"seconds": round(seconds, 2), "records_per_s": round(records / seconds)}
        if cpu_seconds is not None:
            figures["cpu_s"] = round(cpu_seconds, 2)
        return figures

    print(
        json.dumps(
            {
                "records": records,
                "files": len(files),
                "gzip_bytes": size,
                "nproc": os.cpu_count(),
                "cpu": _cpu_model(),
                "load_average_before": [round(v, 2) for v in load_before],
                "load_average_after": [round(v, 2) for v in load_after],
                "spark_end_to_end": rate(spark.wall_s, spark.cpu_s),
                "spark_without_jvm_startup": rate(timings["total_s"]),
                "spark_floor": rate(floor.wall_s, floor.cpu_s),
                "duckdb": rate(duck_seconds, duck_cpu),
                "python_json": rate(python_seconds, python_cpu),
                "spark_timings_s": {k: round(v, 2) for k, v in timings.items()},
                "summaries_agree": True,
            },
            indent=2,
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
