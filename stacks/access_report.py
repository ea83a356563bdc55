"""The effective access matrix, read back from the synthesized templates.

Local AWS (moto) neither stores queue policies nor enforces them, so who may send to and
receive from each queue is checked statically: this module reads what CloudFormation would be
given (the cloud assembly in ``cdk.out``), not what the code meant to write, and reports every
grant with its conditions. Tests compare the result with the topology's intent.

Run ``python -m stacks.access_report cdk.out --json access.json --markdown access.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from constructs_lib.queue_naming import (
    dead_letter_queue_name,
    ingress_queue_name,
    subscription_dead_letter_queue_name,
)
from runtime.relay_config import (
    ENV_DIRECTION,
    ENV_ROUTES,
    ROUTE_DEAD_LETTER_QUEUE,
    ROUTE_DESTINATION,
)
from stacks.topology import Account, Topology

PUBLISH_ACTIONS = frozenset({"sns:Publish", "sns:*"})
SUBSCRIBE_ACTIONS = frozenset({"sns:Subscribe", "sns:*"})
SEND_ACTIONS = frozenset({"sqs:SendMessage", "sqs:SendMessageBatch", "sqs:*"})
RECEIVE_ACTIONS = frozenset(
    {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:DeleteMessageBatch", "sqs:*"}
)


class AccessReportError(ValueError):
    """The cloud assembly holds something the report cannot read with certainty."""


@dataclass(frozen=True)
class _StackContext:
    name: str
    account: str
    region: str
    template: Mapping[str, Any]

    @property
    def partition(self) -> str:
        if self.region.startswith("cn-"):
            return "aws-cn"
        if self.region.startswith("us-gov-"):
            return "aws-us-gov"
        return "aws"

    @property
    def url_suffix(self) -> str:
        return "amazonaws.com.cn" if self.partition == "aws-cn" else "amazonaws.com"

    def queue_arn(self, logical_id: str) -> str:
        resource = self.template["Resources"].get(logical_id)
        if not resource or resource.get("Type") != "AWS::SQS::Queue":
            raise AccessReportError(f"{self.name}: {logical_id} is not a queue of this stack")
        name = resource.get("Properties", {}).get("QueueName")
        if not isinstance(name, str):
            raise AccessReportError(
                f"{self.name}: queue {logical_id} has no literal QueueName; the report "
                "needs named queues to compute their ARNs"
            )
        return f"arn:{self.partition}:sqs:{self.region}:{self.account}:{name}"

    def topic_arn(self, logical_id: str) -> str:
        name = self.template["Resources"][logical_id].get("Properties", {}).get("TopicName")
        if not isinstance(name, str):
            raise AccessReportError(f"{self.name}: topic {logical_id} has no literal TopicName")
        return f"arn:{self.partition}:sns:{self.region}:{self.account}:{name}"

    def ref(self, logical_id: str) -> str:
        """What ``Ref`` returns for the resource types that appear in policies."""
        resource_type = self.template["Resources"].get(logical_id, {}).get("Type")
        if resource_type == "AWS::SQS::Queue":
            name = self.queue_arn(logical_id).rsplit(":", 1)[1]
            return f"https://sqs.{self.region}.{self.url_suffix}/{self.account}/{name}"
        if resource_type == "AWS::SNS::Topic":
            return self.topic_arn(logical_id)
        raise AccessReportError(f"{self.name}: cannot resolve Ref {logical_id}")

    def role_arn(self, logical_id: str) -> str:
        name = self.template["Resources"][logical_id].get("Properties", {}).get("RoleName")
        return f"arn:{self.partition}:iam::{self.account}:role/{name or '<' + logical_id + '>'}"

    def key_arn(self, logical_id: str) -> str:
        return f"arn:{self.partition}:kms:{self.region}:{self.account}:key/<{logical_id}>"

    def resolve(self, value: Any) -> Any:
        """Resolve the intrinsics CDK writes into policies; refuse anything else."""
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, Mapping):
            return value
        if len(value) != 1:
            return {k: self.resolve(v) for k, v in value.items()}
        ((fn, arg),) = value.items()
        if fn == "Ref":
            pseudo = {
                "AWS::Partition": self.partition,
                "AWS::Region": self.region,
                "AWS::AccountId": self.account,
                "AWS::URLSuffix": self.url_suffix,
            }
            if arg in pseudo:
                return pseudo[arg]
            return self.ref(arg)
        if fn == "Fn::Join":
            separator, parts = arg
            return separator.join(str(self.resolve(p)) for p in parts)
        if fn == "Fn::GetAtt":
            logical_id, attribute = arg
            resource_type = self.template["Resources"].get(logical_id, {}).get("Type")
            if attribute == "Arn" and resource_type == "AWS::SQS::Queue":
                return self.queue_arn(logical_id)
            if attribute == "Arn" and resource_type == "AWS::KMS::Key":
                return self.key_arn(logical_id)
            if attribute == "Arn" and resource_type == "AWS::IAM::Role":
                return self.role_arn(logical_id)
            raise AccessReportError(f"{self.name}: cannot resolve Fn::GetAtt {arg}")
        if fn.startswith("Fn::") or fn == "Condition":
            raise AccessReportError(f"{self.name}: cannot resolve {fn} in a policy")
        return {fn: self.resolve(arg)}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _principals(principal: Any) -> list[dict[str, str]]:
    """Normalize a policy principal into ``{"account"|"service"|"arn"|"any": ...}`` entries."""
    if principal == "*":
        return [{"any": "*"}]
    result: list[dict[str, str]] = []
    for kind, values in principal.items():
        for value in _as_list(values):
            if kind == "AWS" and value == "*":
                result.append({"any": "*"})
            elif kind == "AWS" and value.endswith(":root"):
                result.append({"account": value.split(":")[4]})
            elif kind == "AWS" and value.isdigit():
                result.append({"account": value})
            elif kind == "AWS":
                result.append({"arn": value})
            elif kind == "Service":
                result.append({"service": value})
            else:
                result.append({kind.lower(): value})
    return result


def _grant_entries(
    statement: Mapping[str, Any], actions_of_interest: frozenset[str]
) -> list[dict[str, Any]]:
    """The grants of one Allow statement that cover ``actions_of_interest``.

    A service principal restricted by ``aws:SourceArn`` is reported as the topic it is
    restricted to; ``"*"`` restricted by ``aws:PrincipalOrgID``
    as the organization.
    """
    if not [a for a in _as_list(statement.get("Action", [])) if a in actions_of_interest]:
        return []
    conditions = statement.get("Condition", {})
    entries: list[dict[str, Any]] = []
    for principal in _principals(statement.get("Principal", {})):
        entry: dict[str, Any] = {
            "principal": _effective_principal(principal, conditions),
            "actions": sorted(_as_list(statement["Action"])),
        }
        if conditions:
            entry["conditions"] = conditions
        entries.append(entry)
    return entries


def _effective_principal(
    principal: dict[str, str], conditions: Mapping[str, Mapping[str, str]]
) -> dict[str, str]:
    org = conditions.get("StringEquals", {}).get("aws:PrincipalOrgID")
    if principal == {"any": "*"} and org:
        return {"organization": org}
    role = conditions.get("ArnEquals", {}).get("aws:PrincipalArn")
    if "account" in principal and role:
        return {"role": role}
    source = next(
        (
            pairs["aws:SourceArn"]
            for op, pairs in conditions.items()
            if op in ("ArnEquals", "ArnLike", "StringEquals") and "aws:SourceArn" in pairs
        ),
        None,
    )
    if principal == {"service": "sns.amazonaws.com"} and source:
        return {"topic": source}
    return principal


def _queue_entry(ctx: _StackContext, logical_id: str) -> dict[str, Any]:
    props = ctx.template["Resources"][logical_id].get("Properties", {})
    kms_key = props.get("KmsMasterKeyId")
    entry: dict[str, Any] = {
        "queue": ctx.queue_arn(logical_id),
        "stack": ctx.name,
        "owner": ctx.account,
        "encryption": "kms" if kms_key else "sqs-managed",
        "send": [],
        "receive": [],
        "denies_insecure_transport": False,
        "key_users": [],
    }
    if isinstance(kms_key, Mapping) and "Fn::GetAtt" in kms_key:
        key_id = kms_key["Fn::GetAtt"][0]
        key_policy = ctx.resolve(
            ctx.template["Resources"][key_id]["Properties"].get("KeyPolicy", {})
        )
        for statement in _as_list(key_policy.get("Statement", [])):
            if statement.get("Effect") != "Allow":
                continue
            conditions = statement.get("Condition", {})
            for principal in _principals(statement.get("Principal", {})):
                if principal == {"account": ctx.account}:
                    continue
                entry["key_users"].append(
                    {
                        "principal": _effective_principal(principal, conditions),
                        "actions": sorted(_as_list(statement["Action"])),
                        "conditions": conditions,
                    }
                )
    return entry


def read_assembly(assembly_dir: str | Path) -> list[_StackContext]:
    """The stacks of a cloud assembly with their account, region and template."""
    root = Path(assembly_dir)
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise AccessReportError(
            f"{root}: not a cloud assembly ({error}); run the synth first"
        ) from error
    stacks: list[_StackContext] = []
    for name, artifact in sorted(manifest.get("artifacts", {}).items()):
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        environment = artifact.get("environment", "")
        account, region = environment.removeprefix("aws://").split("/")
        if not account.isdigit():
            raise AccessReportError(
                f"{name}: environment {environment!r} is not concrete; stacks must name their "
                "account and region"
            )
        template_file = root / artifact["properties"]["templateFile"]
        template = json.loads(template_file.read_text(encoding="utf-8"))
        stacks.append(_StackContext(name, account, region, template))
    return stacks


def _topic_entry(ctx: _StackContext, logical_id: str) -> dict[str, Any]:
    props = ctx.template["Resources"][logical_id].get("Properties", {})
    return {
        "topic": ctx.topic_arn(logical_id),
        "stack": ctx.name,
        "owner": ctx.account,
        "encryption": "kms" if props.get("KmsMasterKeyId") else "none",
        "logged_protocols": sorted(c["Protocol"] for c in props.get("DeliveryStatusLogging", [])),
        "publish": [],
        "subscribe": [],
        "denies_insecure_transport": False,
    }


def _subscription_entry(ctx: _StackContext, resource: Mapping[str, Any]) -> dict[str, Any]:
    props = ctx.resolve(resource["Properties"])
    return {
        "topic": props["TopicArn"],
        "stack": ctx.name,
        "protocol": props["Protocol"],
        "endpoint": props["Endpoint"],
        "dead_letter_queue": props.get("RedrivePolicy", {}).get("deadLetterTargetArn"),
        "raw_message_delivery": bool(props.get("RawMessageDelivery", False)),
        "filter_policy": props.get("FilterPolicy"),
        "delivery_policy": props.get("DeliveryPolicy"),
    }


def _relay_edges(ctx: _StackContext, resource: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The queue-to-queue edges of a relay function (from its ``RELAY_ROUTES``)."""
    variables = resource.get("Properties", {}).get("Environment", {}).get("Variables", {})
    if ENV_ROUTES not in variables:
        return []
    routes = json.loads(ctx.resolve(variables[ENV_ROUTES]))
    role = ctx.resolve(resource["Properties"]["Role"])
    return [
        {
            "direction": variables[ENV_DIRECTION],
            "stack": ctx.name,
            "role": role,
            "from": source,
            "to": route[ROUTE_DESTINATION],
            "dead_letter_queue": route[ROUTE_DEAD_LETTER_QUEUE],
        }
        for source, route in routes.items()
    ]


def _apply_policy(
    ctx: _StackContext,
    document: Mapping[str, Any],
    entry: dict[str, Any],
    kinds: Mapping[str, frozenset[str]],
) -> None:
    """Add an Allow statement's grants to ``entry`` by kind; note a TLS-only Deny."""
    for statement in _as_list(ctx.resolve(document).get("Statement", [])):
        if statement.get("Effect") == "Deny":
            secure = statement.get("Condition", {}).get("Bool", {})
            if secure.get("aws:SecureTransport") == "false":
                entry["denies_insecure_transport"] = True
            continue
        for kind, actions in kinds.items():
            entry[kind].extend(_grant_entries(statement, actions))


def build_report(assembly_dir: str | Path) -> dict[str, Any]:
    """Every queue and topic of the assembly: who may send, receive, publish and subscribe,
    who may use each key, and every subscription (the topic-to-endpoint edges)."""
    queues: dict[str, dict[str, Any]] = {}
    topics: dict[str, dict[str, Any]] = {}
    subscriptions: list[dict[str, Any]] = []
    relays: list[dict[str, Any]] = []
    queue_kinds = {"send": SEND_ACTIONS, "receive": RECEIVE_ACTIONS}
    topic_kinds = {"publish": PUBLISH_ACTIONS, "subscribe": SUBSCRIBE_ACTIONS}
    for ctx in read_assembly(assembly_dir):
        resources = ctx.template.get("Resources", {})
        by_logical_id: dict[str, dict[str, Any]] = {}
        for logical_id, resource in resources.items():
            if resource.get("Type") == "AWS::SQS::Queue":
                by_logical_id[logical_id] = queues.setdefault(
                    ctx.queue_arn(logical_id), _queue_entry(ctx, logical_id)
                )
            elif resource.get("Type") == "AWS::SNS::Topic":
                by_logical_id[logical_id] = topics.setdefault(
                    ctx.topic_arn(logical_id), _topic_entry(ctx, logical_id)
                )
            elif resource.get("Type") == "AWS::SNS::Subscription":
                subscriptions.append(_subscription_entry(ctx, resource))
            elif resource.get("Type") == "AWS::Lambda::Function":
                relays.extend(_relay_edges(ctx, resource))
        for resource in resources.values():
            props = resource.get("Properties", {})
            if resource.get("Type") == "AWS::SQS::QueuePolicy":
                for ref in props["Queues"]:
                    _apply_policy(
                        ctx, props["PolicyDocument"], by_logical_id[ref["Ref"]], queue_kinds
                    )
            elif resource.get("Type") == "AWS::SNS::TopicPolicy":
                for ref in props["Topics"]:
                    _apply_policy(
                        ctx, props["PolicyDocument"], by_logical_id[ref["Ref"]], topic_kinds
                    )
    return {
        "queues": [queues[arn] for arn in sorted(queues)],
        "topics": [topics[arn] for arn in sorted(topics)],
        "subscriptions": sorted(
            subscriptions, key=lambda s: (s["topic"], s["protocol"], str(s["endpoint"]))
        ),
        "relays": sorted(relays, key=lambda r: (r["from"], r["to"])),
    }


def principal_set(grants: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The principals of a list of grants as comparable pairs."""
    return {next(iter(g["principal"].items())) for g in grants}


Access = dict[str, dict[str, set[tuple[str, str]]]]


def expected_access(topology: Topology) -> Access:
    """What the topology means: per queue and topic ARN, the principals of each grant kind.

    Senders and publishers in the resource's own account are authorized by IAM, so they have
    no policy grant; nobody outside the owner account may receive; an endpoint's DLQ grants
    nobody; a queue subscribed to a topic admits that topic; a subscription's DLQ admits that
    topic; other accounts may subscribe only their own queues.
    """
    expected: Access = {}
    for queue in topology.all_queues:
        account = topology.account(queue.account)
        send = {("account", a) for a in topology.cross_account_senders(queue)}
        send |= {("organization", o) for o in topology.sender_organizations(queue)}
        send |= {("topic", topology.topic_arn(t)) for t, _ in topology.queue_subscriptions(queue)}
        expected[topology.queue_arn(queue)] = {"send": send, "receive": set()}
        expected[_sqs_arn(account, queue.dead_letter_queue_name)] = {
            "send": set(),
            "receive": set(),
        }
    for route in topology.relay_routes:
        assert route.sender is not None
        sender_account = topology.account(topology.endpoint(route.sender).account)
        receiver = topology.endpoint(route.receiver)
        shadow = receiver.queue_name
        for name in (shadow, dead_letter_queue_name(shadow)):
            expected[topology.sqs_arn(sender_account.name, name)] = {
                "send": set(),
                "receive": set(),
            }
        ingress = ingress_queue_name(receiver.queue_name)
        role = ("role", topology.relay_role_arn(sender_account, "outbound"))
        ingress_arn = topology.sqs_arn(receiver.account, ingress)
        expected.setdefault(ingress_arn, {"send": set(), "receive": set()})["send"].add(role)
        expected[topology.sqs_arn(receiver.account, dead_letter_queue_name(ingress))] = {
            "send": set(),
            "receive": set(),
        }
    for topic in topology.topics:
        publish = {("account", a) for a in topology.cross_account_publishers(topic)}
        publish |= {("organization", o) for o in topic.publisher_organizations}
        subscribe = {("account", a) for a in topology.subscriber_accounts(topic)}
        expected[topology.topic_arn(topic)] = {"publish": publish, "subscribe": subscribe}
        for subscription in topic.subscriptions:
            owner = (
                topology.endpoint(subscription.endpoint).account
                if subscription.endpoint
                else topic.account
            )
            dlq = subscription_dead_letter_queue_name(topic.topic_name, subscription.name)
            expected[_sqs_arn(topology.account(owner), dlq)] = {
                "send": {("topic", topology.topic_arn(topic))},
                "receive": set(),
            }
    return expected


def _sqs_arn(account: Account, queue_name: str) -> str:
    return f"arn:{account.partition}:sqs:{account.region}:{account.id}:{queue_name}"


def expected_relay_edges(topology: Topology) -> set[tuple[str, str, str]]:
    """(direction, from, to) for every relay hop: shadow queue to the remote ingress queue,
    ingress queue to the endpoint queue."""
    edges: set[tuple[str, str, str]] = set()
    for route in topology.relay_routes:
        assert route.sender is not None
        receiver = topology.endpoint(route.receiver)
        sender_account = topology.endpoint(route.sender).account
        ingress = topology.sqs_arn(receiver.account, ingress_queue_name(receiver.queue_name))
        edges.add(("outbound", topology.sqs_arn(sender_account, receiver.queue_name), ingress))
        edges.add(("inbound", ingress, topology.queue_arn(receiver)))
    return edges


def actual_relay_edges(report: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """The report's relay hops in the shape of :func:`expected_relay_edges`."""
    return {(r["direction"], r["from"], r["to"]) for r in report["relays"]}


def actual_access(report: Mapping[str, Any]) -> Access:
    """The report reduced to the same shape as :func:`expected_access`."""
    actual: Access = {
        q["queue"]: {"send": principal_set(q["send"]), "receive": principal_set(q["receive"])}
        for q in report["queues"]
    }
    for t in report["topics"]:
        actual[t["topic"]] = {
            "publish": principal_set(t["publish"]),
            "subscribe": principal_set(t["subscribe"]),
        }
    return actual


def _describe(principal: Mapping[str, str]) -> str:
    kind, value = next(iter(principal.items()))
    return f"{kind} `{value}`"


def _conditions(grant: Mapping[str, Any]) -> str:
    conditions = grant.get("conditions")
    if not conditions:
        return "none"
    return "; ".join(
        f"{op} {key}={value}" for op, pairs in conditions.items() for key, value in pairs.items()
    )


def _grant_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    lines = ["| access | principal | actions | conditions |", "|---|---|---|---|"]
    if not rows:
        lines.append("| - | no grant beyond the owner account | - | - |")
    for access, grant in rows:
        lines.append(
            f"| {access} | {_describe(grant['principal'])} | "
            f"{', '.join(grant['actions'])} | {_conditions(grant)} |"
        )
    return [*lines, ""]


def _header(entry: Mapping[str, Any]) -> str:
    return (
        f"Owner account `{entry['owner']}` (its IAM principals, by their own policies); "
        f"encryption: {entry['encryption']}; "
        f"non-TLS requests denied: {'yes' if entry['denies_insecure_transport'] else 'NO'}."
    )


def to_markdown(report: Mapping[str, Any]) -> str:
    """A table per queue and topic (who may send, receive, publish, subscribe, use the key,
    under which conditions), then the subscriptions: every topic-to-endpoint edge."""
    lines = ["# Access report", "", "## Queues", ""]
    for q in report["queues"]:
        rows = [("send", g) for g in q["send"]] + [("receive", g) for g in q["receive"]]
        rows += [("key", g) for g in q["key_users"]]
        lines += [f"### `{q['queue']}`", "", _header(q), "", *_grant_table(rows)]
    lines += ["## Topics", ""]
    for t in report["topics"]:
        rows = [("publish", g) for g in t["publish"]] + [("subscribe", g) for g in t["subscribe"]]
        logged = ", ".join(t["logged_protocols"]) or "none"
        lines += [
            f"### `{t['topic']}`",
            "",
            _header(t) + f" Delivery status logged for: {logged}.",
            "",
            *_grant_table(rows),
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
        "## Relays (account bridge)",
        "",
        "| direction | from | to | role |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['direction']} | `{r['from']}` | `{r['to']}` | `{r['role']}` |"
        for r in report["relays"]
    ]
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    """Write the access report of a cloud assembly as JSON and Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("assembly", help="the cloud assembly directory (cdk.out)")
    parser.add_argument("--json", type=Path, help="write the JSON report here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown report here")
    args = parser.parse_args(argv)
    try:
        report = build_report(args.assembly)
    except AccessReportError as error:
        print(f"access report: {error}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(to_markdown(report), encoding="utf-8")
    if not args.json and not args.markdown:
        print(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
