"""A new user's path to a first synth, and what the install weighs.

Prints one JSON object: the seconds of each step a team takes from nothing (an empty virtual
environment, ``pip install <checkout>[gates]`` as the README says, the README's example written
to ``app.py``, ``python app.py``), their sum, the size of the wheel and of the environment's
``site-packages``, and what installing added to the checkout's ``git status --porcelain
--ignored`` (nothing, unless someone works in the checkout meanwhile). Everything but the checkout's reading happens in a temporary
directory. pip's cache is the machine's unless ``--cold`` is given (then every wheel is
downloaded again, as on a new machine); the app runs on the project's Node (an LTS jsii
supports, as the README asks of the user's) unless ``--node`` names another. Not run in CI:
it downloads aws-cdk-lib and takes a minute or more.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import bench_support

REPOSITORY = bench_support.REPOSITORY
README_SECTION = "## Use the constructs in your own app"


def readme_example() -> str:
    """The Python block of the README's section on using the constructs in one's own app (the
    block ``tests/test_installed_package.py`` runs)."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    section = readme.split(README_SECTION, 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def checkout_status() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--ignored"],
        cwd=REPOSITORY,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def timed(
    command: list[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> float:
    """Seconds ``command`` takes; its failure ends the bench with its output."""
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=cwd)
    if result.returncode != 0:
        sys.exit(
            f"{' '.join(command[:4])} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        )
    return time.perf_counter() - start


def size_mb(folder: Path) -> float:
    total = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    return round(total / 1e6, 1)


def user_environment(node: Path) -> dict[str, str]:
    """The shell of a user who has not sourced the project's setup: no project folders on
    ``PATH``, no virtual environment; jsii runs ``node``."""
    project = {str(REPOSITORY / ".venv" / "bin"), str(REPOSITORY / "node_modules" / ".bin")}
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("VIRTUAL_ENV", "PYTHONPATH") and not name.startswith("JSII_")
    }
    environment["PATH"] = os.pathsep.join(
        folder for folder in environment["PATH"].split(os.pathsep) if folder not in project
    )
    environment["JSII_NODE"] = str(node)
    return environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="install without pip's cache")
    parser.add_argument(
        "--node",
        type=Path,
        default=REPOSITORY / "node_modules" / ".bin" / "node",
        help="the Node jsii runs (default: the project's)",
    )
    arguments = parser.parse_args()
    python = sys.base_prefix + "/bin/python3"
    environment = user_environment(arguments.node)
    node_version = subprocess.run(
        [str(arguments.node), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()

    with tempfile.TemporaryDirectory(prefix="consumer-") as temporary:
        work = Path(temporary)
        venv = work / "venv"
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
        cache = ["--no-cache-dir"] if arguments.cold else []
        before = checkout_status()
        seconds = {"create_venv": timed([python, "-m", "venv", str(venv)], env=environment)}
        seconds["pip_install"] = timed(
            [*pip, "install", *cache, f"{REPOSITORY}[gates]"], env=environment, cwd=work
        )
        written = sorted(set(checkout_status().splitlines()) - set(before.splitlines()))
        start = time.perf_counter()
        app = work / "app" / "app.py"
        app.parent.mkdir()
        app.write_text(readme_example(), encoding="utf-8")
        seconds["write_example"] = time.perf_counter() - start
        seconds["first_synth"] = timed(
            [str(venv / "bin" / "python"), "app.py", str(app.parent / "cdk.out")],
            env=environment,
            cwd=app.parent,
        )
        timed([*pip, "wheel", "--no-deps", "-w", str(work / "dist"), str(REPOSITORY)])
        (wheel,) = (work / "dist").glob("*.whl")
        (site_packages,) = venv.glob("lib/python*/site-packages")
        print(
            json.dumps(
                {
                    "bench": "consumer_install",
                    "machine": bench_support.machine(),
                    "pip_cache": "none" if arguments.cold else "the machine's",
                    "node": node_version,
                    "seconds": {name: round(value, 2) for name, value in seconds.items()},
                    "new_user_path_s": round(sum(seconds.values()), 1),
                    "new_in_checkout_status": written,
                    "wheel_kb": round(wheel.stat().st_size / 1e3, 1),
                    "site_packages_mb": size_mb(site_packages),
                    "package_mb": {
                        name: size_mb(site_packages / name)
                        for name in ("constructs_lib", "cross_account_runtime")
                    },
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
