"""Lambda code and dependency assets, built without Docker.

The function code asset holds the runtime package (:mod:`cross_account_runtime`) only (no
tests, no dev dependencies, not the Spark job), staged by content so that an unchanged runtime
gives the same asset hash. A relay's asset holds only the subpackages the relay imports, and
its configuration file, so each relay function has an asset of its own whose hash changes
exactly when its modules or its routes do. Binary dependencies (``cryptography``) are installed by pip for the
function's platform (``--platform ... --only-binary=:all: --target``) into a cached layer
folder, so a synth downloads them once per requirement set, not once per synth.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from constructs_lib._private.staging import (
    CACHE_ROOT,
    building_folder,
    publish,
    runtime_files,
    stage_files,
)

LAMBDA_RUNTIME = lambda_.Runtime.PYTHON_3_14
LAMBDA_PYTHON_VERSION = "3.14"
LAMBDA_ARCHITECTURE = lambda_.Architecture.ARM_64
PIP_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64")
NOT_IN_FUNCTIONS = ("delivery_report",)
"""Runtime subpackages that never run in Lambda (the Spark job runs on EMR Serverless)."""
RELAY_PACKAGES = ("common", "nservicebus", "relay")
"""The runtime subpackages the relay imports (:mod:`cross_account_runtime.relay`): its asset
holds these alone, a third of the package's source less to upload and unpack."""


def runtime_code(extra_packages: Sequence[Path] = ()) -> lambda_.Code:
    """The runtime package (and any extra package folders, e.g. a user's handler) as a
    Lambda code asset."""
    files = runtime_files(leave_out=NOT_IN_FUNCTIONS)
    for package in extra_packages:
        if not package.is_dir():
            raise ValueError(f"handler code: {package} is not a folder holding a Python package")
        files += [
            (path, Path(package.name) / path.relative_to(package))
            for path in sorted(package.rglob("*.py"))
        ]
    return lambda_.Code.from_asset(str(stage_files(files, "code")))


def relay_code(file_name: str, configuration: str) -> lambda_.Code:
    """The relay's code asset: the modules it imports and ``configuration`` as the file
    ``file_name`` at the asset's root (``LAMBDA_TASK_ROOT``, beside the runtime package).

    The text is kept in the cache under its own hash, so that staging reads it like any other
    file and equal configurations share one copy.
    """
    content = configuration.encode()
    kept = CACHE_ROOT / "relay-configuration" / f"{hashlib.sha256(content).hexdigest()[:16]}.json"
    if not kept.exists():
        kept.parent.mkdir(parents=True, exist_ok=True)
        writing = kept.with_name(f"{kept.name}.{os.getpid()}.writing")
        writing.write_bytes(content)
        writing.replace(kept)
    files = [*runtime_files(only=RELAY_PACKAGES), (kept, Path(file_name))]
    return lambda_.Code.from_asset(str(stage_files(files, "relay")))


def dependencies_layer(
    scope: Construct, construct_id: str, requirements: Sequence[str]
) -> lambda_.LayerVersion:
    """A layer with pinned ``requirements`` installed for the functions' platform."""
    if not requirements or any("==" not in r for r in requirements):
        raise ValueError(f"requirements: pin every package with '==', got {list(requirements)}")
    key = hashlib.sha256(
        "\n".join([LAMBDA_PYTHON_VERSION, *PIP_PLATFORMS, *sorted(requirements)]).encode()
    ).hexdigest()[:16]
    staged = CACHE_ROOT / f"layer-{key}"
    if not staged.exists():
        building = building_folder(staged)
        platforms = [arg for platform in PIP_PLATFORMS for arg in ("--platform", platform)]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *platforms,
                "--implementation",
                "cp",
                "--python-version",
                LAMBDA_PYTHON_VERSION,
                "--only-binary=:all:",
                "--target",
                str(building / "python"),
                *requirements,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"installing {', '.join(requirements)} for Lambda ({LAMBDA_PYTHON_VERSION}, "
                f"{PIP_PLATFORMS[0]}) failed: {result.stderr.strip()[-2000:]}"
            )
        publish(building, staged)
    return lambda_.LayerVersion(
        scope,
        construct_id,
        code=lambda_.Code.from_asset(str(staged)),
        compatible_runtimes=[LAMBDA_RUNTIME],
        compatible_architectures=[LAMBDA_ARCHITECTURE],
        description=", ".join(requirements),
    )
