"""Lambda code and dependency assets, built without Docker.

The function code asset holds the runtime package (:mod:`cross_account_runtime`) only (no tests, no dev dependencies,
not the Spark job), staged into a content-addressed folder so that an unchanged runtime gives
the same asset hash. Binary dependencies (``cryptography``) are installed by pip for the
function's platform (``--platform ... --only-binary=:all: --target``) into a cached layer
folder, so a synth downloads them once per requirement set, not once per synth.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

import cross_account_runtime

RUNTIME_PACKAGE_NAME = cross_account_runtime.__name__
RUNTIME_PACKAGE = Path(cross_account_runtime.__file__).resolve().parent
CACHE_ROOT = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "cross-account-messaging"
    / "lambda"
)
"""Staged code and layers, reused across synths and projects (outside any installed package)."""
LAMBDA_RUNTIME = lambda_.Runtime.PYTHON_3_14
LAMBDA_PYTHON_VERSION = "3.14"
LAMBDA_ARCHITECTURE = lambda_.Architecture.ARM_64
PIP_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64")
EXCLUDED_FROM_FUNCTIONS = ("delivery_report",)
"""Runtime subpackages that never run in Lambda (the Spark job runs on EMR Serverless)."""


def runtime_code(extra_packages: Sequence[Path] = ()) -> lambda_.Code:
    """The runtime package (and any extra package folders, e.g. a user's handler) as a
    Lambda code asset."""
    files = runtime_package_files(include_spark_job=False)
    for package in extra_packages:
        if not package.is_dir():
            raise ValueError(f"handler code: {package} is not a folder holding a Python package")
        files += [
            (path, Path(package.name) / path.relative_to(package))
            for path in sorted(package.rglob("*.py"))
        ]
    staged = stage_files(files, "code")
    return lambda_.Code.from_asset(str(staged))


def runtime_package_files(*, include_spark_job: bool) -> list[tuple[Path, Path]]:
    """``(source, path in the asset)`` for every module of the runtime package; the Spark
    job's subpackage only when asked for (functions never import it)."""
    return [
        (path, Path(RUNTIME_PACKAGE_NAME) / path.relative_to(RUNTIME_PACKAGE))
        for path in sorted(RUNTIME_PACKAGE.rglob("*.py"))
        if include_spark_job
        or path.relative_to(RUNTIME_PACKAGE).parts[0] not in EXCLUDED_FROM_FUNCTIONS
    ]


def stage_files(files: Sequence[tuple[Path, Path]], kind: str) -> Path:
    """Copy ``(source, target)`` files into a folder named by their content's hash.

    The same content always lands in the same folder, so CDK computes the same asset hash and
    an unchanged package is not uploaded again; a folder is renamed into place only when
    complete, so an interrupted synth never leaves half a package behind.
    """
    digest = hashlib.sha256()
    for source, target in files:
        digest.update(str(target).encode() + b"\0" + source.read_bytes() + b"\0")
    staged = CACHE_ROOT / f"{kind}-{digest.hexdigest()[:16]}"
    if not staged.exists():
        building = staged.with_name(staged.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        for source, target in files:
            (building / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, building / target)
        building.rename(staged)
    return staged


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
        building = staged.with_name(staged.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
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
        building.rename(staged)
    return lambda_.LayerVersion(
        scope,
        construct_id,
        code=lambda_.Code.from_asset(str(staged)),
        compatible_runtimes=[LAMBDA_RUNTIME],
        compatible_architectures=[LAMBDA_ARCHITECTURE],
        description=", ".join(requirements),
    )
