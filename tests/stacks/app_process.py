"""``app.py`` run as the CDK CLI runs it: a process of its own, the topology file in the context,
the assembly written where ``CDK_OUTDIR`` says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_app(topology_file: Path, outdir: Path) -> subprocess.CompletedProcess[str]:
    """``cdk synth -c topology=<topology_file> -o <outdir>``'s run of the app."""
    environment = {
        **os.environ,
        "CDK_CONTEXT_JSON": json.dumps({"topology": str(topology_file)}),
        "CDK_OUTDIR": str(outdir),
    }
    return subprocess.run(
        [sys.executable, "app.py"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
