"""Staging the runtime package for an asset, in a folder named by its content.

The same content always lands in the same folder, so CDK computes the same asset hash and an
unchanged package is not uploaded again; the folders live in a user cache outside any
installed package, reused across synths and projects.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import cross_account_runtime

RUNTIME_PACKAGE = Path(cross_account_runtime.__file__).resolve().parent
"""Where the runtime package is installed (or checked out), whichever is imported."""
RUNTIME_PACKAGE_NAME = cross_account_runtime.__name__
CACHE_ROOT = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "cross-account-messaging"
    / "lambda"
)
"""Staged code and layers, reused across synths and projects (outside any installed package)."""

StagedFiles = list[tuple[Path, Path]]
"""``(source, path in the asset)`` pairs."""


def runtime_files(*, only: Sequence[str] = (), leave_out: Sequence[str] = ()) -> StagedFiles:
    """Every module of the runtime package under its own name in the asset, keeping the
    package's ``__init__.py`` and, when ``only`` names subpackage folders (``"a/b"``), just
    those; folders in ``leave_out`` and everything below them are left out."""
    files: StagedFiles = []
    for path in sorted(RUNTIME_PACKAGE.rglob("*.py")):
        relative = path.relative_to(RUNTIME_PACKAGE)
        folder = relative.parent.as_posix()
        if any(_within(folder, excluded) for excluded in leave_out):
            continue
        if only and folder != "." and not any(_within(folder, kept) for kept in only):
            continue
        files.append((path, Path(RUNTIME_PACKAGE_NAME) / relative))
    return files


def _within(folder: str, ancestor: str) -> bool:
    return folder == ancestor or folder.startswith(ancestor + "/")


def stage_files(files: Sequence[tuple[Path, Path]], kind: str) -> Path:
    """Copy ``(source, target)`` files into a folder named by their content's hash.

    A folder is renamed into place only when complete, so an interrupted synth never leaves
    half a package behind.
    """
    digest = hashlib.sha256()
    for source, target in files:
        digest.update(str(target).encode() + b"\0" + source.read_bytes() + b"\0")
    staged = CACHE_ROOT / f"{kind}-{digest.hexdigest()[:16]}"
    if not staged.exists():
        building = building_folder(staged)
        for source, target in files:
            (building / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, building / target)
        publish(building, staged)
    return staged


def building_folder(staged: Path) -> Path:
    """An empty folder beside ``staged`` that only this process writes: two synths at once
    (the tests' workers, a team's parallel builds) each build their own copy."""
    building = staged.with_name(f"{staged.name}.{os.getpid()}.building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    return building


def publish(building: Path, staged: Path) -> None:
    """Rename the complete ``building`` folder to ``staged``; when another process got there
    first, its copy (of the same content) stays and this one is discarded."""
    try:
        building.rename(staged)
    except OSError:
        if not staged.exists():
            raise
        shutil.rmtree(building, ignore_errors=True)
