"""What the benches share: cold-import timing of runtime modules, the runtime package as an
earlier revision had it, and the machine's identity.

Import time is what a Lambda cold start pays, so it is measured in fresh interpreters on a copy
of the runtime package as a function's code asset holds it (without the Spark job), in a
temporary directory: the repository is left alone, and
``bytecode_cached`` alone decides whether compiled code is there (a package that ships ``.pyc``
files) or is compiled from source on every start (a read-only Lambda file system caches none).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping
from io import BytesIO
from pathlib import Path

import cross_account_runtime

RUNTIME_PACKAGE = Path(cross_account_runtime.__file__).resolve().parent
REPOSITORY = RUNTIME_PACKAGE.parent.parent
NOT_IN_FUNCTIONS = ("delivery_report", "__pycache__")
"""What a function's code asset leaves out of the runtime package (the Spark job runs on EMR)."""


def runtime_at(revision: str, directory: Path) -> Path:
    """The ``runtime`` folder as it was at git ``revision``, extracted (``git archive``) into
    ``directory``: an earlier revision measured beside today's, in the same run, on the same
    machine, each in its own interpreter."""
    archive = subprocess.run(
        ["git", "archive", revision, "runtime"], cwd=REPOSITORY, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(directory, filter="data")
    return directory / "runtime"


def import_milliseconds(
    code: str,
    *,
    bytecode_cached: bool,
    runs: int,
    environment: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Median and minimum of what ``code`` prints (seconds) times 1,000, over ``runs`` fresh
    interpreters after one warm-up, with the runtime package copied in.

    ``environment`` replaces the variables of the same names (and every ``AWS_`` variable of
    this process is dropped when it names any), so a bench can pin credentials and regions.
    """
    with tempfile.TemporaryDirectory() as directory:
        shutil.copytree(
            RUNTIME_PACKAGE,
            Path(directory) / RUNTIME_PACKAGE.name,
            ignore=shutil.ignore_patterns(*NOT_IN_FUNCTIONS),
        )
        drop_aws = any(name.startswith("AWS_") for name in environment or {})
        variables = {
            name: value
            for name, value in os.environ.items()
            if name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
            and not (drop_aws and name.startswith("AWS_"))
        }
        variables.update(environment or {})
        variables["PYTHONPATH"] = directory
        if not bytecode_cached:
            variables["PYTHONDONTWRITEBYTECODE"] = "1"

        def once() -> float:
            completed = subprocess.run(
                [sys.executable, "-c", code],
                check=True,
                cwd=directory,
                env=variables,
                capture_output=True,
                text=True,
            )
            return float(completed.stdout) * 1e3

        once()
        samples = [once() for _ in range(runs)]
    return {"median_ms": round(statistics.median(samples), 3), "min_ms": round(min(samples), 3)}


def cpu_model() -> str:
    """The processor's model name, as ``lscpu`` shows it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, object]:
    """The facts a figure needs beside it: cores, processor, Python."""
    return {"cpus": os.cpu_count(), "cpu_model": cpu_model(), "python": platform.python_version()}
