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

from stacks.topology import Topology

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
            return self.queue_arn(arg)
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
    actions = sorted(a for a in _as_list(statement.get("Action", [])) if a in actions_of_interest)
    if not actions:
        return []
    conditions = statement.get("Condition", {})
    entries: list[dict[str, Any]] = []
    for principal in _principals(statement.get("Principal", {})):
        entry: dict[str, Any] = {
            "principal": principal,
            "actions": sorted(_as_list(statement["Action"])),
        }
        org = conditions.get("StringEquals", {}).get("aws:PrincipalOrgID")
        if principal == {"any": "*"} and org:
            entry["principal"] = {"organization": org}
        if conditions:
            entry["conditions"] = conditions
        entries.append(entry)
    return entries


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
            org = conditions.get("StringEquals", {}).get("aws:PrincipalOrgID")
            for principal in _principals(statement.get("Principal", {})):
                if principal == {"account": ctx.account}:
                    continue
                entry["key_users"].append(
                    {
                        "principal": (
                            {"organization": org}
                            if principal == {"any": "*"} and org
                            else principal
                        ),
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


def build_report(assembly_dir: str | Path) -> dict[str, Any]:
    """Every queue of the assembly with who may send, receive and use its key."""
    queues: dict[str, dict[str, Any]] = {}
    for ctx in read_assembly(assembly_dir):
        resources = ctx.template.get("Resources", {})
        by_logical_id: dict[str, dict[str, Any]] = {}
        for logical_id, resource in resources.items():
            if resource.get("Type") == "AWS::SQS::Queue":
                entry = _queue_entry(ctx, logical_id)
                by_logical_id[logical_id] = entry
                queues[entry["queue"]] = entry
        for resource in resources.values():
            if resource.get("Type") != "AWS::SQS::QueuePolicy":
                continue
            props = resource["Properties"]
            document = ctx.resolve(props["PolicyDocument"])
            for ref in props["Queues"]:
                entry = by_logical_id[ref["Ref"]]
                for statement in _as_list(document.get("Statement", [])):
                    if statement.get("Effect") == "Deny":
                        secure = statement.get("Condition", {}).get("Bool", {})
                        if secure.get("aws:SecureTransport") == "false":
                            entry["denies_insecure_transport"] = True
                        continue
                    entry["send"].extend(_grant_entries(statement, SEND_ACTIONS))
                    entry["receive"].extend(_grant_entries(statement, RECEIVE_ACTIONS))
    return {"queues": [queues[arn] for arn in sorted(queues)]}


def principal_set(grants: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The principals of a list of grants as comparable pairs."""
    return {next(iter(g["principal"].items())) for g in grants}


def expected_access(topology: Topology) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """What the topology means: per queue ARN, the principals that may send and receive.

    Senders in the queue's own account are authorized by IAM, so they have no policy grant;
    nobody outside the owner account may receive; dead-letter queues grant nobody.
    """
    expected: dict[str, dict[str, set[tuple[str, str]]]] = {}
    for queue in topology.all_queues:
        send = {("account", a) for a in topology.cross_account_senders(queue)}
        send |= {("organization", o) for o in topology.sender_organizations(queue)}
        expected[topology.queue_arn(queue)] = {"send": send, "receive": set()}
        account = topology.account(queue.account)
        dlq_arn = (
            f"arn:{account.partition}:sqs:{account.region}:{account.id}:"
            f"{queue.dead_letter_queue_name}"
        )
        expected[dlq_arn] = {"send": set(), "receive": set()}
    return expected


def actual_access(report: Mapping[str, Any]) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """The report reduced to the same shape as :func:`expected_access`."""
    return {
        q["queue"]: {"send": principal_set(q["send"]), "receive": principal_set(q["receive"])}
        for q in report["queues"]
    }


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


def to_markdown(report: Mapping[str, Any]) -> str:
    """A table per queue: who may send, receive and use the key, under which conditions."""
    lines = ["# Access report", ""]
    for q in report["queues"]:
        lines += [
            f"## `{q['queue']}`",
            "",
            f"Owner account `{q['owner']}` (its IAM principals, by their own policies); "
            f"encryption: {q['encryption']}; "
            f"non-TLS requests denied: {'yes' if q['denies_insecure_transport'] else 'NO'}.",
            "",
            "| access | principal | actions | conditions |",
            "|---|---|---|---|",
        ]
        rows = [("send", g) for g in q["send"]] + [("receive", g) for g in q["receive"]]
        rows += [("key", g) for g in q["key_users"]]
        if not rows:
            lines.append("| - | no grant beyond the owner account | - | - |")
        for access, grant in rows:
            lines.append(
                f"| {access} | {_describe(grant['principal'])} | "
                f"{', '.join(grant['actions'])} | {_conditions(grant)} |"
            )
        lines.append("")
    return "\n".join(lines)


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
