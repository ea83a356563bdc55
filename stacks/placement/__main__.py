"""The placement commands: the only writers of the stack plan, and the pre-deploy check.

``python -m stacks.placement <command> [--topology FILE]`` (the topology in ``cdk.json`` by
default; its plan is ``<topology>.stacks``):

- ``place``: record every new unit (where there is room, or in a new stack) and drop the
  entries of units no longer in the topology; converts a plan of an earlier release.
- ``start [--account NAME ...]``: begin the plan of accounts nothing is deployed in yet (every
  account without entries by default: a new organization).
- ``recover [--profile P ...] [--account NAME]``: rebuild the entries of each profile's account
  from its deployed stacks, keeping each deployed unit in its stack.
- ``check [--profile P ...] [--app DIR]``: before ``cdk deploy``, compare the assembly
  (``cdk.out``) with what each profile's account has deployed; refuse a move.
- ``retire --account NAME``: remove the account's last stacks that hold nothing (once
  destroyed), or every line of an account the topology no longer has.

Exit codes: 0 done, 1 the check refused, 2 bad input or a refusal, each problem on its own line
with its fix. ``--endpoint-url`` points the AWS calls elsewhere (the local AWS).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

import boto3
import botocore.exceptions

from stacks.placement.check import AssemblyError, check_deployed, read_assembly
from stacks.placement.deployed import DeployedError, caller_account, deployed_units
from stacks.placement.placing import Placement, place, recover, retire, start
from stacks.placement.plan_file import (
    PlanFile,
    PlanRecord,
    format_plan,
    read_earlier_plan,
    read_plan,
    write_plan,
)
from stacks.topology import Account, TopologyError, load_topology
from stacks.topology.parsing import CDK_JSON
from stacks.topology.stack_ids import stack_name, stack_number

READ_FROM_RESOURCES = "read from its resources (deployed before stacks recorded their units)"
EXIT_REFUSED_BY_CHECK = 1
EXIT_BAD_INPUT = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "profile", ()) is None:
        args.profile = [None]
    try:
        code: int = args.run(args)
    except (TopologyError, DeployedError, AssemblyError) as error:
        print(error, file=sys.stderr)
        return EXIT_BAD_INPUT
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
        print(f"{args.command}: AWS refused or could not be reached: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stacks.placement",
        description="Record which stack holds each unit, and check a deploy moves none.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "--topology",
            type=Path,
            default=CDK_JSON,
            help="the topology file; its plan is <file>.stacks (default: cdk.json's context)",
        )
        return sub

    def aws(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--profile",
            action="append",
            help="the AWS profile of an account, repeatable: one per account (default: the "
            "SDK's credentials)",
        )
        sub.add_argument("--endpoint-url", help="another endpoint for AWS (the local AWS)")

    sub = command("place", "Record new units and drop those gone; no recorded unit moves.")
    sub.set_defaults(run=_place)
    sub = command("start", "Begin the plan of accounts nothing is deployed in yet.")
    sub.add_argument("--account", action="append", default=[], help="an account (repeatable)")
    sub.set_defaults(run=_start)
    sub = command("recover", "Rebuild an account's entries from its deployed stacks.")
    aws(sub)
    sub.add_argument("--account", help="the topology's account (checked against the profile)")
    sub.set_defaults(run=_recover)
    sub = commands.add_parser(
        "check", help="Before a deploy: refuse an assembly that would move a deployed queue."
    )
    aws(sub)
    sub.add_argument("--app", type=Path, default=Path("cdk.out"), help="the cloud assembly")
    sub.set_defaults(run=_check)
    sub = command("retire", "Remove an account's last stacks that hold nothing, once destroyed.")
    sub.add_argument("--account", required=True, help="the topology's account")
    sub.set_defaults(run=_retire)
    return parser


def _place(args: argparse.Namespace) -> int:
    plan = PlanFile(args.topology)
    topology = load_topology(args.topology)
    record, earlier = _recorded(plan)
    return _write(plan, place(topology, record, plan, earlier=earlier))


def _start(args: argparse.Namespace) -> int:
    plan = PlanFile(args.topology)
    topology = load_topology(args.topology)
    return _write(plan, start(topology, read_plan(plan), plan, args.account))


def _recover(args: argparse.Namespace) -> int:
    plan = PlanFile(args.topology)
    topology = load_topology(args.topology)
    if args.account is not None and len(args.profile) > 1:
        print("recover: --account names the account of one --profile", file=sys.stderr)
        return EXIT_BAD_INPUT
    found: list[tuple[Account, dict[int, tuple[str, ...]]]] = []
    for profile in args.profile:
        session = boto3.session.Session(profile_name=profile)
        account_id = caller_account(session, args.endpoint_url)
        account = next((a for a in topology.accounts if a.id == account_id), None)
        if account is None or args.account not in (None, account.name):
            wanted = f"account {args.account}" if args.account else "an account of the topology"
            known = ", ".join(f"{a.name} {a.id}" for a in topology.accounts)
            print(
                f"recover: the credentials{f' of profile {profile}' if profile else ''} are AWS "
                f"account {account_id}, which is not {wanted} ({known}): pass the profile of "
                "the account to recover",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        stacks, deployed = deployed_units(
            session, topology, account, endpoint_url=args.endpoint_url
        )
        for stack in stacks:
            number = stack_number(account.name, stack.name)
            assert number is not None  # deployed_units read the account's stacks only
            how = "" if stack.units is not None else f", {READ_FROM_RESOURCES}"
            print(f"{stack.name}: {stack.status}, {len(deployed[number])} units{how}")
        if not stacks:
            print(f"{stack_name(account.name)}: not deployed in {account_id} ({account.region})")
        found.append((account, deployed))
    record, earlier = _recorded(plan, leaving_out=[account.name for account, _ in found])
    placement = None
    for account, deployed in found:
        placement = recover(topology, record, plan, account.name, deployed, earlier=earlier)
        record, earlier = placement.record, None
    assert placement is not None  # argparse gives at least one profile
    return _write(plan, placement)


def _check(args: argparse.Namespace) -> int:
    assembly = read_assembly(args.app)
    passed = True
    for profile in args.profile:
        session = boto3.session.Session(profile_name=profile)
        account_id = caller_account(session, args.endpoint_url)
        results = check_deployed(assembly, session, account_id, endpoint_url=args.endpoint_url)
        if not results:
            print(f"check: {args.app} holds no stack of AWS account {account_id}", file=sys.stderr)
            return EXIT_BAD_INPUT
        for result in results:
            print("\n".join(result.lines()))
        passed = passed and all(result.passed for result in results)
    return 0 if passed else EXIT_REFUSED_BY_CHECK


def _retire(args: argparse.Namespace) -> int:
    plan = PlanFile(args.topology)
    return _write(plan, retire(load_topology(args.topology), read_plan(plan), plan, args.account))


def _recorded(
    plan: PlanFile, *, leaving_out: Collection[str] = ()
) -> tuple[PlanRecord | None, dict[str, dict[str, int]] | None]:
    """The plan, or, where only an earlier release's JSON form exists, that form (to convert)."""
    if not plan.path.exists() and plan.earlier_path.exists():
        return None, read_earlier_plan(plan)
    return read_plan(plan, leaving_out=leaving_out), None


def _write(plan: PlanFile, placement: Placement) -> int:
    for line in placement.lines():
        print(line)
    text = format_plan(placement.record)
    current = plan.path.read_text(encoding="utf-8") if plan.path.exists() else None
    shown = _shown(plan.path)
    if text == current:
        print(f"{shown}: unchanged")
        return 0
    if plan.earlier_path.exists():
        print(f"{_shown(plan.earlier_path)}: converted to {shown}, and deleted (git rm it)")
    write_plan(plan, placement.record)
    print(f"{shown}: written; commit it with the topology")
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the working folder where it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
