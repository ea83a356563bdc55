"""The report as Markdown: a table per queue and topic, then the subscriptions, the relays, the
paths into ServiceControl's queues and the delivery logs, for a reviewer to read beside the
code."""

from __future__ import annotations

from collections.abc import Sequence

from stacks.checks.access_report.records import (
    AccessReport,
    DeliveryLogsRecord,
    Grant,
    KeyUser,
    PrefixGrant,
    Principal,
    QueueRecord,
    SubscriptionFilterRecord,
    TopicRecord,
)


def _describe(principal: Principal) -> str:
    kind, value = next(iter(principal.items()))
    return f"{kind} `{value}`"


def _conditions_text(grant: Grant | KeyUser | PrefixGrant) -> str:
    conditions = grant.get("conditions")
    if not conditions:
        return "none"
    return "; ".join(
        f"{op} {key}={value}" for op, pairs in conditions.items() for key, value in pairs.items()
    )


def _grant_table(rows: Sequence[tuple[str, Grant | KeyUser]]) -> list[str]:
    lines = ["| access | principal | actions | conditions |", "|---|---|---|---|"]
    if not rows:
        lines.append("| - | no grant beyond the owner account | - | - |")
    for access, grant in rows:
        lines.append(
            f"| {access} | {_describe(grant['principal'])} | "
            f"{', '.join(grant['actions'])} | {_conditions_text(grant)} |"
        )
    return [*lines, ""]


def _owner_line(record: QueueRecord | TopicRecord) -> str:
    return (
        f"Owner account `{record['owner']}` (its IAM principals, by their own policies); "
        f"encryption: {record['encryption']}; "
        f"non-TLS requests denied: {'yes' if record['denies_insecure_transport'] else 'NO'}."
    )


def _yes_no(value: bool | None) -> str:
    if value is None:
        return "unknown"
    return "yes" if value else "NO"


def _admission_text(subscription_filter: SubscriptionFilterRecord) -> str:
    """Whether the destination admits the log group; unknown both where the destination is
    outside the assembly and where its grants leave it open (an organization, a condition, one
    role of the account), so the two are told apart."""
    if not subscription_filter["destination_in_assembly"]:
        return "destination not in the assembly"
    return _yes_no(subscription_filter["admitted"])


def _prefixes_text(prefixes: Sequence[str]) -> str:
    return ", ".join(f"`{p or '(every key)'}`" for p in prefixes) or "-"


def _delivery_logs_markdown(logs: DeliveryLogsRecord) -> list[str]:
    """The delivery-log edges: log group to destination (admitted or not), destination through
    Firehose to S3, and per log bucket who may read, write and delete which prefixes."""
    lines = ["## Delivery logs", ""]
    if not any(logs.values()):
        return [
            *lines,
            "No subscription filter, destination or Firehose stream: delivery logs stay in "
            "their accounts.",
            "",
        ]
    lines += [
        "### Subscription filters (log group to destination)",
        "",
        "| log group | account | destination | admitted by the destination | created by |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| `{f['log_group']}` | {f['account']} | `{f['destination']}` | "
        f"{_admission_text(f)} | {f['stack']} |"
        for f in logs["subscription_filters"]
    ]
    lines += [
        "",
        "### Destinations (to Firehose, to S3)",
        "",
        "| destination | admits | target | records to | failures to | role may put records |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{d['destination']}` | "
        f"{', '.join(_describe(g['principal']) for g in d['admits']) or 'owner account only'} | "
        f"`{d['target']}` | `{d['location']}` | `{d['error_location']}` | "
        f"{_yes_no(d['role_may_put_records'])} |"
        for d in logs["destinations"]
    ]
    lines += [
        "",
        "### Firehose streams",
        "",
        "| stream | bucket | records to | failures to | role | role may write there |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{s['stream']}` | `{s['bucket_arn']}` | `{s['location']}` | "
        f"`{s['error_location']}` | `{s['role']}` | {_yes_no(s['role_may_write'])} |"
        for s in logs["streams"]
    ]
    for bucket in logs["buckets"]:
        lines += [
            "",
            f"### Log bucket `{bucket['bucket']}`",
            "",
            f"Defined in {bucket['stack'] or 'no stack of the assembly'}; non-TLS requests "
            f"denied: {_yes_no(bucket['denies_insecure_transport'])}.",
            "",
            "| principal | assumed by | reads | writes | deletes | conditions |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {_describe(g['principal'])} | "
            f"{', '.join(_describe(p) for p in g['assumed_by']) or '-'} | "
            f"{_prefixes_text(g['read'])} | {_prefixes_text(g['write'])} | "
            f"{_prefixes_text(g['delete'])} | {_conditions_text(g)} |"
            for g in bucket["access"]
        ]
    return [*lines, ""]


def to_markdown(report: AccessReport) -> str:
    """A table per queue and topic (who may send, receive, publish, subscribe, use the key,
    under which conditions), then the subscriptions (every topic-to-endpoint edge), the relays
    and the delivery logs."""
    lines = ["# Access report", "", "## Queues", ""]
    for q in report["queues"]:
        queue_rows: list[tuple[str, Grant | KeyUser]] = [("send", g) for g in q["send"]]
        queue_rows += [("receive", g) for g in q["receive"]]
        queue_rows += [("key", g) for g in q["key_users"]]
        lines += [f"### `{q['queue']}`", "", _owner_line(q), "", *_grant_table(queue_rows)]
    lines += ["## Topics", ""]
    for t in report["topics"]:
        topic_rows = [("publish", g) for g in t["publish"]]
        topic_rows += [("subscribe", g) for g in t["subscribe"]]
        logged = ", ".join(t["logged_protocols"]) or "none"
        lines += [
            f"### `{t['topic']}`",
            "",
            _owner_line(t) + f" Delivery status logged for: {logged}.",
            "",
            *_grant_table(topic_rows),
        ]
    lines += [
        "## Subscriptions (topic to endpoint)",
        "",
        "| topic | protocol | endpoint | dead-letter queue | created by |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| `{s['topic']}` | {s['protocol']} | `{s['endpoint']}` | "
        f"`{s['dead_letter_queue']}` | {s['stack']} |"
        for s in report["subscriptions"]
    ]
    lines += [
        "",
        "## Events (publisher to topic to subscriber queue)",
        "",
        "| event | publisher | topic | subscriber queue | how |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| `{e['event_type']}` | `{publisher}` | `{e['topic']}` | `{queue}` | {how} |"
        for e in report["events"]
        for publisher in e["publishers"]
        for queue, how in (
            *((q, "native (SNS)") for q in e["subscriber_queues"]),
            *((q, "message-driven (bridge)") for q in e["message_driven_subscribers"]),
        )
    ]
    lines += [
        "",
        "## Relays (account bridge)",
        "",
        "| direction | from | to | role |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['direction']} | `{r['from']}` | `{r['to']}` | `{r['role']}` |"
        for r in report["relays"]
    ]
    lines += [
        "",
        "## Platform queues (ServiceControl)",
        "",
        "Endpoints of a platform queue's own account send to it directly (IAM); those of every "
        "other account send to a shadow of their own account, by the name their transport "
        "resolves.",
        "",
        "| kind | queue | from account | shadow | ingress |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {q['kind']} | `{q['queue']}` | {p['account']} | `{p['shadow']}` | `{p['ingress']}` |"
        for q in report["platform_queues"]
        for p in q["paths"]
    ]
    lines += ["", *_delivery_logs_markdown(report["delivery_logs"])]
    return "\n".join(lines)
