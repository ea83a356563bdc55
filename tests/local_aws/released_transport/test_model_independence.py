"""The model must not lean on what it judges: nothing in ``local_aws.released_transport``
imports the project's runtime, constructs or stacks."""

from __future__ import annotations

import ast
from pathlib import Path

import local_aws.released_transport

FORBIDDEN = ("cross_account_runtime", "constructs_lib", "stacks")


def _imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


def test_the_model_imports_nothing_of_the_project_under_test() -> None:
    package = Path(local_aws.released_transport.__file__).parent
    offending = {
        f"{path.name}: {module}"
        for path in package.glob("*.py")
        for module in _imported_modules(path)
        if module.split(".")[0] in FORBIDDEN
    }

    assert offending == set()
    assert len(list(package.glob("*.py"))) > 20
