"""Benchmark: what the delivery report costs per record, by size, against DuckDB and Python.

For each size (200,000 and 2,000,000 records by default; ``--sizes ...,20000000`` for the
largest) the export-layout data set is generated once into ``.cache/bench/`` (seeded,
streamed to disk), then the same summary is computed on the same files by:

- ``spark``: the real job through ``spark-submit``, end to end (JVM start included);
- ``spark_floor``: ``spark-submit`` of a script that only counts the lines of the same files,
  with the same settings -- what no Spark program over these files can beat on this machine;
- ``baseline``: with ``--baseline-revision REV``, the job as it was at git revision ``REV``
  (a worktree under ``.cache/bench/``), run beside today's on the same files;
- ``duckdb``: SQL over the gzip files;
- ``python``: one ``json.loads`` per line with the same rules (up to ``--python-max-records``:
  it holds every delivery key in memory).

The summaries must agree (``summary.comparable``); a mismatch raises. Prints one JSON object:
per size and engine the wall and CPU seconds, CPU microseconds per record, records per second
and both ratios to DuckDB; the Spark job's own phase timings; and what a day of the job costs
on EMR Serverless at 1, 10 and 100 million deliveries from the CPU per record measured at the
largest size (``emr_serverless_cost.py``). Run: ``.venv/bin/python bench/bench_delivery_report.py``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import bench_support
import duckdb
from emr_serverless_cost import cost_table

from constructs_lib.defaults import REPORT_MAX_VCPUS
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
SIZES = (200_000, 2_000_000)
PYTHON_MAX_RECORDS = 2_000_000
"""The plain-Python loop keeps every delivery key in a dict: past this it takes minutes and
gigabytes and is left out unless asked for."""
SEED = 7
EXPORT_GROUP = re.compile(r"(?:^|/)(sns/[^/]+/[^/]+/.+)/[^/]+/[^/]+/[^/]+$")


def ensure_data(records: int, seed: int) -> Path:
    """The export-layout data set of ``records`` records, generated once (its manifest says
    what is there); each size keeps its own folder so the largest is generated only once."""
    folder = CACHE / f"{records}-seed{seed}"
    manifest = folder / "manifest.json"
    if manifest.exists():
        found = json.loads(manifest.read_text())
        if (
            found.get("records") == records
            and found.get("seed") == seed
            and "export" in found.get("layouts", [])
        ):
            return folder / "export"
    shutil.rmtree(folder, ignore_errors=True)
    write_layouts(records=records, seed=seed, out=folder, layouts=("export",))
    return folder / "export"


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
class Measured:
    """One engine over one data set."""

    wall_s: float
    cpu_s: float

    def figures(self, records: int, duckdb: Measured | None) -> dict[str, float]:
        """Wall and CPU seconds, CPU per record, records per second and the ratios to DuckDB
        (records per second over DuckDB's; CPU per record over DuckDB's)."""
        found = {
            "wall_s": round(self.wall_s, 2),
            "cpu_s": round(self.cpu_s, 2),
            "cpu_us_per_record": round(self.cpu_s / records * 1e6, 2),
            "records_per_s": round(records / self.wall_s),
        }
        if duckdb is not None:
            found["rate_vs_duckdb"] = round(duckdb.wall_s / self.wall_s, 3)
            found["cpu_per_record_vs_duckdb"] = round(self.cpu_s / duckdb.cpu_s, 2)
        return found


@dataclass(frozen=True)
class Submitted(Measured):
    """What one ``spark-submit`` took (the CPU time of all its processes), and its output."""

    output: str


RUNTIME_ROOT = Path(spark_entry.__file__).resolve().parents[2]
ENTRY_IN_RUNTIME = Path(spark_entry.__file__).resolve().relative_to(RUNTIME_ROOT)


def spark_submit(script: Path, arguments: Sequence[str], runtime_root: Path) -> Submitted:
    """Run ``script`` with ``spark-submit`` and the job's settings, the job's package taken
    from ``runtime_root`` (today's, or a baseline revision's); raises if it fails."""
    venv_bin = Path(sys.executable).parent
    env = dict(os.environ)
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    env["PYSPARK_PYTHON"] = sys.executable
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(
        [str(runtime_root), *(p for p in inherited if Path(p).resolve() != RUNTIME_ROOT)]
    )
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


def run_spark(
    data: Path, output: Path, runtime_root: Path = RUNTIME_ROOT
) -> tuple[Submitted, dict[str, float], dict[str, Any]]:
    """spark-submit of the job: what it took, the timings it printed, the summary it wrote."""
    submitted = spark_submit(
        runtime_root / ENTRY_IN_RUNTIME,
        ["--input", str(data), "--output", str(output)],
        runtime_root,
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
        submitted = spark_submit(
            script, [data.as_uri(), str(max(files, os.cpu_count() or 1))], RUNTIME_ROOT
        )
    counted = [line for line in submitted.output.splitlines() if line.startswith("lines=")]
    if not counted:
        raise RuntimeError(f"the floor script printed no count:\n{submitted.output[-4000:]}")
    return submitted, int(counted[-1].removeprefix("lines="))


def baseline_runtime(revision: str) -> Path:
    """The runtime package as it was at git ``revision``, in a worktree beside the cache.

    Created once per commit; the job of that revision then runs on the same files, in the
    same run, as today's: figures measured minutes or machines apart are not comparable.
    """
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{revision}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = CACHE.parent / f"baseline-{commit[:12]}"
    if not (tree / "runtime").is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--force", "--detach", str(tree), commit],
            capture_output=True,
            text=True,
            check=True,
        )
    return tree / "runtime"


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


def _timed(run: Callable[[], Aggregates]) -> tuple[Aggregates, Measured]:
    started, cpu_started = time.perf_counter(), time.process_time()
    aggregates = run()
    return aggregates, Measured(time.perf_counter() - started, time.process_time() - cpu_started)


def _agree(name: str, reference: Mapping[str, Any], summary: Mapping[str, Any]) -> None:
    differences = _differences(reference, json.loads(json.dumps(comparable(summary))))
    if differences:
        raise AssertionError(f"{name} disagrees with Spark:\n" + "\n".join(differences[:20]))


def measure_size(records: int, seed: int, baseline: Path | None, python_max: int) -> dict[str, Any]:
    """Every engine over the data set of ``records`` records; raises if they disagree."""
    data = ensure_data(records, seed)
    files = data_files(data)
    output = CACHE.parent / "delivery_report_out"
    load_before = os.getloadavg()
    floor, floor_lines = run_spark_floor(data, len(files))
    spark, timings, spark_summary = run_spark(data, output)
    engines: dict[str, Measured] = {"spark": spark, "spark_floor": floor}
    reference = comparable(spark_summary)
    if baseline is not None:
        before, _, before_summary = run_spark(data, CACHE.parent / "baseline_out", baseline)
        engines["baseline"] = before
        _agree("the baseline revision", reference, before_summary)
    duck, engines["duckdb"] = _timed(lambda: run_duckdb(files))
    _agree("duckdb", reference, build_summary(duck, read=records, files=[]))
    if records <= python_max:
        plain, engines["python"] = _timed(lambda: run_python(files))
        _agree("python", reference, build_summary(plain, read=records, files=[]))
    load_after = os.getloadavg()
    parsed = spark_summary["accounting"]["records_parsed"]
    if parsed != records:
        raise AssertionError(f"Spark parsed {parsed} records of {records}")
    if floor_lines != spark_summary["accounting"]["records_read"]:
        raise AssertionError(
            f"the floor counted {floor_lines} lines, the job read "
            f"{spark_summary['accounting']['records_read']}"
        )
    figures: dict[str, Any] = {
        "records": records,
        "files": len(files),
        "gzip_bytes": sum(f.stat().st_size for f in files),
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in load_after],
        **{name: m.figures(records, engines["duckdb"]) for name, m in engines.items()},
        "spark_timings_s": {k: round(v, 2) for k, v in timings.items()},
        "spark_busy_share": round(spark.cpu_s / (spark.wall_s * (os.cpu_count() or 1)), 3),
        "summaries_agree": True,
    }
    if "baseline" in engines:
        figures["spark_rate_vs_baseline"] = round(engines["baseline"].wall_s / spark.wall_s, 3)
        figures["spark_cpu_vs_baseline"] = round(spark.cpu_s / engines["baseline"].cpu_s, 3)
    return figures


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give record counts separated by commas, e.g. 200000,2000000,20000000"
        ) from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every size must be at least 1")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=SIZES,
        help="record counts, comma-separated (default 200000,2000000; add 20000000 for the largest)",
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--baseline-revision",
        help="also run the job of this git revision on the same files (e.g. HEAD~3)",
    )
    parser.add_argument("--python-max-records", type=int, default=PYTHON_MAX_RECORDS)
    args = parser.parse_args(argv)
    try:
        baseline = baseline_runtime(args.baseline_revision) if args.baseline_revision else None
    except subprocess.CalledProcessError as error:
        parser.error(
            f"--baseline-revision {args.baseline_revision}: git could not check it out "
            f"({(error.stderr or '').strip() or error}); give a commit of this repository, "
            "e.g. HEAD~3"
        )
    sizes = {
        str(records): measure_size(records, args.seed, baseline, args.python_max_records)
        for records in sorted(args.sizes)
    }
    largest = sizes[str(max(args.sizes))]
    result: dict[str, Any] = {
        "machine": bench_support.machine(),
        "baseline_revision": args.baseline_revision,
        "sizes": sizes,
        "emr_serverless_per_day": cost_table(
            largest["spark"]["cpu_us_per_record"] / 1e6,
            largest["spark_busy_share"],
            REPORT_MAX_VCPUS,
        ),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
