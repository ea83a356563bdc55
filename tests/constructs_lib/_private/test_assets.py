"""What each asset ships of the runtime package: the functions get the runtime without the
Spark job; the job gets itself without the sample-data generator or the functions' code; and
every import of the package inside an asset finds its module in that asset."""

from __future__ import annotations

import ast
from pathlib import Path

from constructs_lib._private.lambda_assets import NOT_IN_FUNCTIONS
from constructs_lib._private.spark_assets import ENTRY_SCRIPT, spark_job_package
from constructs_lib._private.staging import RUNTIME_PACKAGE_NAME, runtime_files, stage_files


def modules_in(folder: Path) -> set[str]:
    return {
        ".".join(path.relative_to(folder).with_suffix("").parts).removesuffix(".__init__")
        for path in folder.rglob("*.py")
    }


def package_imports(folder: Path) -> set[str]:
    """Every ``cross_account_runtime`` module the asset's code imports (at any depth)."""
    imported: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            imported.update(n for n in names if n.startswith(RUNTIME_PACKAGE_NAME))
    return imported


def unresolved(folder: Path) -> set[str]:
    """Imports of the package naming neither a module of the asset nor a name in one."""
    modules = modules_in(folder)
    return {
        name
        for name in package_imports(folder)
        if name not in modules and name.rpartition(".")[0] not in modules
    }


def test_the_job_ships_without_the_sample_generator_or_the_functions() -> None:
    package = spark_job_package()
    modules = modules_in(package)
    job = f"{RUNTIME_PACKAGE_NAME}.delivery_report"
    assert f"{job}.cli" in modules
    assert f"{job}.spark_entry" in modules
    assert not any(m.startswith(f"{job}.sample") for m in modules)
    assert {m for m in modules if not m.startswith(job)} == {RUNTIME_PACKAGE_NAME}
    assert unresolved(package) == set()
    assert ENTRY_SCRIPT.name == "spark_entry.py"
    assert ENTRY_SCRIPT.is_file()


def test_functions_ship_the_runtime_without_the_job() -> None:
    package = stage_files(runtime_files(leave_out=NOT_IN_FUNCTIONS), "code")
    modules = modules_in(package)
    assert f"{RUNTIME_PACKAGE_NAME}.relay.config" in modules
    assert f"{RUNTIME_PACKAGE_NAME}.sns_endpoint.signature" in modules
    assert not any(m.startswith(f"{RUNTIME_PACKAGE_NAME}.delivery_report") for m in modules)
    assert unresolved(package) == set()
