"""The report a person reads: one self-contained HTML file with inline SVG charts.

Written with the standard library only, so the job needs nothing beyond PySpark where it runs
(EMR Serverless). Everything shown comes from the summary dict; every value from the logs is
HTML-escaped, since log text is untrusted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

BAR_WIDTH = 520
BAR_HEIGHT = 18
CHART_WIDTH = 880
CHART_HEIGHT = 220
COLORS = {"SUCCESS": "#2e7d32", "FAILURE": "#c62828"}
MAX_TABLE_ROWS = 50

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;
font-size:.9em;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:#c62828;font-weight:bold}.ok{color:#2e7d32;font-weight:bold}
code,pre{font-size:.85em;background:#f6f6f6;white-space:pre-wrap;word-break:break-all}
svg text{font-size:11px;font-family:system-ui,sans-serif}
"""


def render_report(summary: Mapping[str, Any]) -> str:
    """The whole HTML document."""
    sections = [
        _accounting(summary["accounting"], summary["input"]),
        _deliveries(summary["deliveries"]),
        _failures(summary["failures"]),
        _top_failing(summary["top_failing_destinations"]),
        _retries(summary["retries"]),
        _http_4xx(summary["http_4xx_success"]),
        _dwell(summary["dwell_ms"]),
        _lost(summary["lost"]),
        _duplicates(summary["duplicates"]),
        _series(summary["series"]),
        _rejects(summary["accounting"], summary["rejected_samples"]),
    ]
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<title>SNS delivery report</title>"
        f"<style>{_STYLE}</style></head><body><h1>SNS delivery report</h1>"
        + "".join(sections)
        + "</body></html>\n"
    )


def _accounting(accounting: Mapping[str, Any], inputs: Mapping[str, Any]) -> str:
    verdict = (
        "<span class='ok'>balanced</span>"
        if accounting["balanced"]
        else "<span class='bad'>NOT balanced: records were lost</span>"
    )
    rows = [
        ("files read", inputs["files"]),
        ("bytes read", inputs["bytes"]),
        ("records read", accounting["records_read"]),
        ("records parsed", accounting["records_parsed"]),
        ("records rejected", accounting["records_rejected"]),
    ]
    layouts = ", ".join(f"{escape(k)}: {v}" for k, v in inputs["files_by_layout"].items())
    return (
        f"<h2>Accounting</h2><p>read = parsed + rejected: {verdict}. Layouts: {layouts}.</p>"
        + _table(("", "count"), rows)
    )


def _deliveries(deliveries: Mapping[str, Any]) -> str:
    status = deliveries["by_status"]
    header = ("SUCCESS", "FAILURE", "total")
    topic_rows = [
        (r["topic"], r["SUCCESS"], r["FAILURE"], r["total"]) for r in deliveries["by_topic"]
    ]
    protocol_rows = [
        (r["protocol"], r["SUCCESS"], r["FAILURE"], r["total"]) for r in deliveries["by_protocol"]
    ]
    destination_rows = [
        (r["topic"], r["protocol"], r["destination"], r["SUCCESS"], r["FAILURE"], r["total"])
        for r in deliveries["by_destination"]
    ]
    return (
        f"<h2>Deliveries</h2><p>{deliveries['total']} deliveries: "
        f"{status['SUCCESS']} SUCCESS, {status['FAILURE']} FAILURE.</p>"
        "<h3>By topic</h3>"
        + _table(("topic", *header), topic_rows)
        + "<h3>By protocol</h3>"
        + _table(("protocol", *header), protocol_rows)
        + "<h3>By destination</h3>"
        + _stacked_bars(
            [(r["destination"], {s: r[s] for s in COLORS}) for r in deliveries["by_destination"]]
        )
        + _table(("topic", "protocol", "destination", *header), destination_rows)
    )


def _failures(failures: Mapping[str, Any]) -> str:
    provider = [
        (r["protocol"], r["status_code"], r["error_code"], r["count"])
        for r in failures["by_protocol_and_code"]
    ]
    return (
        f"<h2>Failures</h2><p>{failures['total']} failed deliveries.</p><h3>By cause</h3>"
        + _bars(list(failures["by_cause"].items()), COLORS["FAILURE"])
        + "<h3>By status code</h3>"
        + _table(("statusCode", "count"), list(failures["by_status_code"].items()))
        + "<h3>By protocol, status code and provider error code</h3>"
        + _table(("protocol", "statusCode", "error code", "count"), provider)
    )


def _top_failing(rows: Sequence[Mapping[str, Any]]) -> str:
    table = [
        (
            r["topic"],
            r["protocol"],
            r["destination"],
            r["failures"],
            r["total"],
            f"{r['failure_rate']:.2%}",
        )
        for r in rows
    ]
    return "<h2>Top failing destinations</h2>" + _table(
        ("topic", "protocol", "destination", "failures", "deliveries", "failure rate"),
        table,
    )


def _retries(retries: Mapping[str, Any]) -> str:
    by_destination = [
        (r["topic"], r["destination"], r["SUCCESS"], r["FAILURE"])
        for r in retries["by_destination"]
    ]
    return (
        f"<h2>Retried deliveries (attempts &gt; 1)</h2><p>{retries['retried']} retried: "
        f"{retries['retried_succeeded']} succeeded after retrying, {retries['retried_failed']} failed.</p>"
        + _table(("topic", "destination", "succeeded", "failed"), by_destination)
        + "<h3>By attempts</h3>"
        + _table(("attempts", "deliveries"), list(retries["by_attempts"].items()))
    )


def _http_4xx(section: Mapping[str, Any]) -> str:
    rows = [(r["topic"], r["destination"], r["count"]) for r in section["by_destination"]]
    return (
        "<h2>HTTP 4xx answers logged as SUCCESS</h2>"
        f"<p>{section['total']} deliveries: SNS does not retry a 4xx and logs it as a success; "
        "the endpoint rejected these messages.</p>"
        + _table(("statusCode", "count"), list(section["by_status_code"].items()))
        + _table(("topic", "destination", "count"), rows)
    )


def _dwell(dwell: Mapping[str, Any]) -> str:
    rows = [("all", *_dwell_row(dwell["all"]))]
    rows += [(protocol, *_dwell_row(stats)) for protocol, stats in dwell["by_protocol"].items()]
    return "<h2>Dwell time (ms)</h2>" + _table(
        ("protocol", "records", "p50", "p95", "p99", "max"), rows
    )


def _dwell_row(stats: Mapping[str, Any]) -> tuple[Any, ...]:
    return (stats["count"], stats["p50"], stats["p95"], stats["p99"], stats["max"])


def _lost(lost: Mapping[str, Any]) -> str:
    rows = [(r["topic"], r["destination"], r["lost"]) for r in lost["by_destination"]]
    samples = [(r["topic"], r["destination"], r["message_id"]) for r in lost["samples"]]
    return (
        f"<h2>Lost messages</h2><p>{lost['total']} (message, destination) pairs have no SUCCESS "
        "record: the message never arrived there (unless a DLQ caught it).</p>"
        + _table(("topic", "destination", "lost"), rows)
        + "<h3>Samples</h3>"
        + _table(("topic", "destination", "messageId"), samples)
    )


def _duplicates(duplicates: Mapping[str, Any]) -> str:
    rows = [
        (r["topic"], r["destination"], r["deliveries"], r["extra_records"])
        for r in duplicates["by_destination"]
    ]
    samples = [
        (r["topic"], r["destination"], r["message_id"], r["records"]) for r in duplicates["samples"]
    ]
    return (
        f"<h2>Deliveries logged more than once</h2><p>{duplicates['deliveries']} deliveries, "
        f"{duplicates['extra_records']} extra records.</p>"
        + _table(("topic", "destination", "deliveries", "extra records"), rows)
        + _table(("topic", "destination", "messageId", "records"), samples)
    )


def _series(series: Mapping[str, Any]) -> str:
    hours = series["per_hour"]
    parts = [
        "<h2>Over time (by delivery time)</h2><h3>Deliveries per hour</h3>",
        _line_chart([r["hour"] for r in hours], {s: [r[s] for r in hours] for s in COLORS}),
        "<h3>Failures per hour</h3>",
        _line_chart([r["hour"] for r in hours], {"FAILURE": [r["FAILURE"] for r in hours]}),
    ]
    minutes = series["per_minute"]
    if minutes is None:
        parts.append(
            f"<p>{series['minutes']} minutes: too many to chart here; see summary per hour.</p>"
        )
    else:
        parts.append("<h3>Failures per minute</h3>")
        parts.append(
            _line_chart(
                [r["minute"] for r in minutes], {"FAILURE": [r["FAILURE"] for r in minutes]}
            )
        )
    return "".join(parts)


def _rejects(
    accounting: Mapping[str, Any], samples: Mapping[str, Sequence[Mapping[str, Any]]]
) -> str:
    rows = [
        (reason, count, "malformed") for reason, count in accounting["malformed_by_reason"].items()
    ]
    rows += [
        (reason, count, "skipped (expected)")
        for reason, count in accounting["skipped_by_reason"].items()
    ]
    parts = ["<h2>Rejected input</h2>", _table(("reason", "count", "kind"), rows)]
    for reason, items in samples.items():
        parts.append(f"<h3>{escape(reason)}</h3>")
        for item in items:
            parts.append(
                f"<p><code>{escape(str(item['source_file']))}</code> ({escape(str(item['layout']))})</p>"
                f"<pre>{escape(str(item['sample']))}</pre>",
            )
    return "".join(parts)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = []
    for row in rows[:MAX_TABLE_ROWS]:
        cells = "".join(
            f"<td class='n'>{value}</td>"
            if isinstance(value, int | float)
            else f"<td>{escape(str(value))}</td>"
            for value in row
        )
        body.append(f"<tr>{cells}</tr>")
    more = (
        f"<p>{len(rows) - MAX_TABLE_ROWS} more rows in summary.json</p>"
        if len(rows) > MAX_TABLE_ROWS
        else ""
    )
    return f"<table><tr>{head}</tr>{''.join(body)}</table>{more}"


def _bars(items: Sequence[tuple[str, int]], color: str) -> str:
    if not items:
        return "<p><em>none</em></p>"
    top = max(value for _, value in items) or 1
    label_width = 220
    height = BAR_HEIGHT * len(items) + 4
    bars = []
    for index, (label, value) in enumerate(items):
        y = index * BAR_HEIGHT
        width = max(1, round(BAR_WIDTH * value / top))
        bars.append(
            f"<text x='{label_width - 6}' y='{y + 13}' text-anchor='end'>{escape(str(label))}</text>"
            f"<rect x='{label_width}' y='{y + 2}' width='{width}' height='{BAR_HEIGHT - 4}' fill='{color}'/>"
            f"<text x='{label_width + width + 4}' y='{y + 13}'>{value}</text>",
        )
    return f"<svg width='{label_width + BAR_WIDTH + 80}' height='{height}' role='img'>{''.join(bars)}</svg>"


def _stacked_bars(items: Sequence[tuple[str, Mapping[str, int]]]) -> str:
    if not items:
        return "<p><em>none</em></p>"
    top = max(sum(values.values()) for _, values in items) or 1
    label_width = 360
    rows = []
    for index, (label, values) in enumerate(items[:MAX_TABLE_ROWS]):
        y = index * BAR_HEIGHT
        x: float = label_width
        rows.append(
            f"<text x='{label_width - 6}' y='{y + 13}' text-anchor='end'>{escape(_short(label))}</text>"
        )
        for status, color in COLORS.items():
            width = BAR_WIDTH * values.get(status, 0) / top
            if width > 0:
                rows.append(
                    f"<rect x='{x:.1f}' y='{y + 2}' width='{max(width, 1):.1f}' height='{BAR_HEIGHT - 4}' "
                    f"fill='{color}'><title>{status}: {values.get(status, 0)}</title></rect>",
                )
                x += width
    height = BAR_HEIGHT * min(len(items), MAX_TABLE_ROWS) + 4
    return f"<svg width='{label_width + BAR_WIDTH + 20}' height='{height}' role='img'>{''.join(rows)}</svg>"


def _line_chart(labels: Sequence[str], series: Mapping[str, Sequence[int]]) -> str:
    if not labels:
        return "<p><em>none</em></p>"
    left, bottom = 50, 30
    width, height = CHART_WIDTH - left - 10, CHART_HEIGHT - bottom - 10
    top = max((max(values) for values in series.values() if values), default=0) or 1
    step = width / max(1, len(labels) - 1)
    lines = []
    for name, values in series.items():
        points = " ".join(
            f"{left + i * step:.1f},{10 + height - height * v / top:.1f}"
            for i, v in enumerate(values)
        )
        lines.append(
            f"<polyline fill='none' stroke='{COLORS.get(name, '#1565c0')}' stroke-width='1.5' points='{points}'/>"
        )
    axis = (
        f"<line x1='{left}' y1='{10 + height}' x2='{left + width}' y2='{10 + height}' stroke='#999'/>"
        f"<line x1='{left}' y1='10' x2='{left}' y2='{10 + height}' stroke='#999'/>"
        f"<text x='{left - 4}' y='16' text-anchor='end'>{top}</text>"
        f"<text x='{left - 4}' y='{10 + height}' text-anchor='end'>0</text>"
        f"<text x='{left}' y='{CHART_HEIGHT - 8}'>{escape(labels[0])}</text>"
        f"<text x='{left + width}' y='{CHART_HEIGHT - 8}' text-anchor='end'>{escape(labels[-1])}</text>"
    )
    legend = " ".join(
        f"<tspan fill='{COLORS.get(name, '#1565c0')}'>&#9632; {escape(name)}</tspan>"
        for name in series
    )
    return (
        f"<svg width='{CHART_WIDTH}' height='{CHART_HEIGHT}' role='img'>{axis}{''.join(lines)}"
        f"<text x='{left + width / 2:.0f}' y='{CHART_HEIGHT - 8}' text-anchor='middle'>{legend}</text></svg>"
    )


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]
