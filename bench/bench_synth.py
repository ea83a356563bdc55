"""Synth time, CPU and peak memory by organization size, today's tree beside an earlier revision.

``python bench/bench_synth.py [--sizes 3x50,10x200,30x500] [--baseline-revision REV]`` prints
one JSON object. Each size is an organization built as ``topologies/org.json`` is
(:func:`scale_topologies.organization`: ServiceControl's queues and the analytics in Ops, a
ring of relay routes, a central endpoint, event topics subscribed across accounts, large
messages), with that many accounts and about that many released endpoints.

Each synth runs ``app.py`` in a fresh process, as ``cdk synth`` does, so the figures include
Python's start-up, jsii's Node process and the gates that run inside synth (cdk-nag). Measured
per synth: wall seconds, CPU seconds of the process and its children (jsii's Node process
included), and peak memory: the largest sum of the resident set sizes of the process tree,
sampled every 50 ms from ``/proc``. A synth that fails reports its seconds and its last line
(an earlier revision refuses the larger sizes).

The baseline runs from a git worktree of ``REV`` beside the cache, with this checkout's virtual
environment: the same Python packages, the other revision's code.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Final

import bench_support
import scale_topologies

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench" / "synth"
BASELINE_REVISION: Final = "f3781b9"
"""The revision before the organization-scale work (issue 25)."""
DEFAULT_SIZES: Final = "3x50,10x200,30x500"
SAMPLE_SECONDS: Final = 0.05
GOAL_SECONDS: Final = 180
GOAL_MEMORY_MB: Final = 2048


def tree_rss_kb(root: int) -> int:
    """The resident set sizes of ``root`` and its descendants, summed (kB)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields.get("PPid", "0").strip())
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) if "VmRSS" in fields else 0
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return sum(rss.get(pid, 0) for pid in tree)


def synth(tree: Path, document: dict[str, Any], outdir: Path) -> dict[str, Any]:
    """``app.py`` of ``tree`` on the topology ``document``, measured. The topology is written
    into ``outdir``'s folder with, for a tree whose synth reads a committed plan, a new
    organization's plan written by its placement command first (unmeasured)."""
    outdir.mkdir(parents=True)
    topology_file = outdir.parent / f"{outdir.name}.json"
    topology_file.write_text(json.dumps(document), encoding="utf-8")
    environment = {
        **os.environ,
        "CDK_OUTDIR": str(outdir),
        "CDK_CONTEXT_JSON": json.dumps({"topology": str(topology_file)}),
        "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "runtime")]),
    }
    if (tree / "stacks" / "placement" / "__main__.py").is_file():
        subprocess.run(
            [sys.executable, "-m", "stacks.placement", "start", "--topology", str(topology_file)],
            cwd=tree,
            env=environment,
            capture_output=True,
            check=True,
        )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "app.py"],
        cwd=tree,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kb(process.pid))
            time.sleep(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    done.set()
    sampler.join()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    figures: dict[str, Any] = {
        "ok": process.returncode == 0,
        "wall_s": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        "peak_memory_mb": round(peak / 1024),
    }
    if process.returncode != 0:
        lines = [line for line in output.splitlines() if line.strip()]
        figures["failure"] = lines[-1][:300] if lines else f"exit {process.returncode}"
        return figures
    counts = {
        path.name.removesuffix(".template.json"): len(json.loads(path.read_text())["Resources"])
        for path in outdir.glob("*.template.json")
    }
    figures["stacks"] = len(counts)
    figures["largest_stack_resources"] = max(counts.values())
    return figures


def baseline_tree(revision: str) -> Path:
    """A worktree of ``revision`` beside the cache, made once per commit."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{revision}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = CACHE / f"baseline-{commit[:12]}"
    if not (tree / "app.py").is_file():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--force", "--detach", str(tree), commit],
            capture_output=True,
            text=True,
            check=True,
        )
    return tree


def sizes(text: str) -> list[tuple[int, int]]:
    """``3x50,10x200`` as (accounts, endpoints) pairs."""
    pairs = []
    for item in text.split(","):
        accounts, _, endpoints = item.partition("x")
        pairs.append((int(accounts), int(endpoints)))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help=f"default {DEFAULT_SIZES}")
    parser.add_argument("--baseline-revision", default=BASELINE_REVISION)
    parser.add_argument("--no-baseline", action="store_true", help="measure today's tree only")
    arguments = parser.parse_args()
    try:
        chosen = sizes(arguments.sizes)
    except ValueError:
        parser.error(f"--sizes: write accounts x endpoints, as {DEFAULT_SIZES}")
    trees = {"today": ROOT}
    if not arguments.no_baseline:
        trees["baseline"] = baseline_tree(arguments.baseline_revision)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for accounts, endpoints in chosen:
            document = scale_topologies.organization(accounts, endpoints)
            label = f"{accounts} accounts, {len(document['endpoints'])} endpoints"
            results[label] = {
                name: synth(tree, document, work / f"{name}-{accounts}x{endpoints}")
                for name, tree in trees.items()
            }
    print(
        json.dumps(
            {
                "machine": bench_support.machine(),
                "baseline_revision": None if arguments.no_baseline else arguments.baseline_revision,
                "goal": {"wall_s": GOAL_SECONDS, "peak_memory_mb": GOAL_MEMORY_MB},
                "sizes": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
