"""An organization deployed to the local AWS, every route carrying a request and its reply.

``python bench/bench_org_deploy.py [--accounts 10] [--endpoints-per-account 20]`` synthesizes an
organization built as ``topologies/org.json`` is (:func:`scale_topologies.organization`, here
with ``accounts`` accounts including Ops), runs the synth gates, deploys every stack of every
account to moto in server mode with the real CDK CLI, starts every endpoint (the model of the
released transport) and ServiceControl, and sends a request over every route across accounts,
all sent at once and each answered: the bridge carries both ways. Prints one JSON object with the time of each step.

Too slow for the test suite (minutes); the suite deploys the three-account example.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import bench_support
import scale_topologies

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from local_aws.deployment import deploy_all  # noqa: E402
from local_aws.lambda_poller import LambdaPoller  # noqa: E402
from local_aws.moto.server import MotoServer  # noqa: E402
from local_aws.scenarios.conversation import (  # noqa: E402
    REQUEST_TYPE,
    ConversationError,
    Handlers,
)
from local_aws.scenarios.peers import Peers  # noqa: E402
from local_aws.scenarios.traffic import conversation_pairs  # noqa: E402
from stacks.checks import gates  # noqa: E402
from stacks.placement.placing import new_organization_plan  # noqa: E402
from stacks.topology import parse_topology  # noqa: E402

T = TypeVar("T")


def exchange_all(peers: Peers, handlers: Handlers, pairs: Sequence[tuple[str, str]]) -> int:
    """Every sender sends its request at once, the peers and relays play until nothing moves,
    and every request must have reached its receiver and every reply its sender (one pass over
    the queues for all routes: exchanging them one at a time scans every queue of the
    organization per route). Returns the relay invocations."""
    sent = [
        (s, r, peers.endpoints[s].send(r, REQUEST_TYPE, json.dumps({"order": 42}).encode()))
        for s, r in pairs
    ]
    activity = peers.settle()
    for sender, receiver, message in sent:
        if handlers.delivered(receiver, message.message_id) is None:
            raise ConversationError(
                f"request {message.message_id} from {sender} did not reach {receiver}"
            )
        if handlers.reply_to(sender, message.message_id) is None:
            raise ConversationError(f"the reply of {receiver} to {sender} did not arrive")
    return len(activity.relay_functions())


def timed(steps: dict[str, float], name: str, action: Callable[[], T]) -> T:
    """Run ``action``, noting its wall seconds under ``name``."""
    started = time.perf_counter()
    result = action()
    steps[name] = round(time.perf_counter() - started, 1)
    print(f"{name}: {steps[name]} s", file=sys.stderr, flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accounts", type=int, default=10, help="including Ops (default 10)")
    parser.add_argument("--endpoints-per-account", type=int, default=20, help="default 20")
    arguments = parser.parse_args()
    if arguments.accounts < 3 or arguments.endpoints_per_account < 4:
        parser.error("--accounts: at least 3; --endpoints-per-account: at least 4")
    document = scale_topologies.organization(
        arguments.accounts, (arguments.accounts - 1) * arguments.endpoints_per_account
    )
    topology = parse_topology(document, source="generated organization")
    steps: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        plan = new_organization_plan(topology)
        assembly = timed(
            steps, "synth and gates", lambda: gates.synth(topology, plan, work / "cdk.out")
        )
        stacks = len(list(assembly.glob("*.template.json")))
        with MotoServer(work / "moto.log") as moto:
            accounts = timed(
                steps, "deploy", lambda: deploy_all(topology, assembly, moto.endpoint_url)
            )
            handlers = Handlers()
            peers = timed(
                steps,
                "start the endpoints and ServiceControl",
                lambda: Peers(
                    topology,
                    accounts,
                    LambdaPoller(list(accounts.values()), moto.endpoint_url),
                    handlers,
                ),
            )
            pairs = conversation_pairs(topology)
            done = timed(
                steps,
                "a request and its reply over every route",
                lambda: exchange_all(peers, handlers, pairs),
            )
    result: dict[str, Any] = {
        "machine": bench_support.machine(),
        "accounts": len(topology.accounts),
        "endpoints": len(topology.endpoints),
        "stacks": stacks,
        "routes_across_accounts": len(pairs),
        "answered": len(pairs),
        "relay_invocations": done,
        "seconds": steps,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
