"""Synth time and the largest stack's resource count: the example, and 10 accounts x 50 endpoints.

Prints one JSON object. Each synth runs in a fresh process (as ``cdk synth`` does), so the
figures include Python start-up, jsii's Node process and cdk-nag.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_support

ROOT = Path(__file__).resolve().parent.parent
ACCOUNTS = 10
ENDPOINTS_PER_ACCOUNT = 50
ROUTES_PER_ENDPOINT = 3


def generated_topology() -> dict[str, Any]:
    """10 accounts x 50 endpoints; each endpoint sends to three endpoints of other accounts."""
    accounts = [
        {"name": f"Account{a:02d}", "id": f"{100000000000 + a:012d}", "region": "eu-west-1"}
        for a in range(ACCOUNTS)
    ]
    endpoints = [
        {
            "name": f"Service{a:02d}x{e:02d}",
            "account": f"Account{a:02d}",
            "queueNamePrefix": "prod-",
        }
        for a in range(ACCOUNTS)
        for e in range(ENDPOINTS_PER_ACCOUNT)
    ]
    routes = [
        {
            "from": f"Service{a:02d}x{e:02d}",
            "to": f"Service{(a + k) % ACCOUNTS:02d}x{(e * 7 + k) % ENDPOINTS_PER_ACCOUNT:02d}",
        }
        for a in range(ACCOUNTS)
        for e in range(ENDPOINTS_PER_ACCOUNT)
        for k in range(1, ROUTES_PER_ENDPOINT + 1)
    ]
    return {
        "accounts": [*accounts, {"name": "Ops", "id": "999999999999", "region": "eu-west-1"}],
        "endpoints": endpoints,
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": routes,
    }


def synth(topology_file: Path | None, outdir: Path) -> dict[str, Any]:
    """Synthesize in a fresh process and measure wall time and per-stack resource counts."""
    context = {"topology": str(topology_file)} if topology_file else {}
    env = {
        **os.environ,
        "CDK_OUTDIR": str(outdir),
        "CDK_CONTEXT_JSON": json.dumps(context),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    if not context:
        env.pop("CDK_CONTEXT_JSON")
    started = time.perf_counter()
    subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=env, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    counts = {
        path.name.removesuffix(".template.json"): len(json.loads(path.read_text())["Resources"])
        for path in outdir.glob("*.template.json")
    }
    return {
        "synth_seconds": round(seconds, 2),
        "stacks": len(counts),
        "largest_stack_resources": max(counts.values()),
        "cloudformation_limit": 500,
    }


def main() -> None:
    """Run both synths and print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        topology_file = work / "generated.json"
        topology_file.write_text(json.dumps(generated_topology()))
        result = {
            "machine": bench_support.machine(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "example": synth(None, work / "example"),
            "generated_10x50": synth(topology_file, work / "generated"),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
