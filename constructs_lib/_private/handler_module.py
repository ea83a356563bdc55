"""A handler path checked at synth against the code the function will ship.

The SNS HTTPS endpoint imports its notification handler on a container's first delivery; a
path naming a module that is not in the code asset fails there, and the endpoint answers every
delivery 500 until the next deployment. The files the asset will hold are known at synth (the
runtime package and the ``handler_code`` folder), so the construct refuses such a path before
anything deploys: the module must be one of those files, and define the name after the colon.
The module is read, never imported: a team's handler may import what only Lambda has.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.sns_endpoint.handler_loading import handler_parts

RUNTIME_PACKAGE = "cross_account_runtime"


def require_handler_module(handler: str, handler_code: Path | None) -> None:
    """Refuse (``ValueError`` naming ``handler``) a path whose module the function would not
    ship or whose module does not define the name after the colon."""
    try:
        module_name, attribute = handler_parts(handler)
    except ConfigurationError as error:
        raise ValueError(f"handler: {error}") from None
    source = _module_file(module_name, handler_code)
    name = attribute.split(".")[0]
    if name not in _top_level_names(source):
        raise ValueError(
            f"handler: {source} defines no {name!r} at its top level; name the function after "
            "the colon as the module defines it"
        )


def _module_file(module_name: str, handler_code: Path | None) -> Path:
    """The file of ``module_name`` in the function's code: in the ``handler_code`` package, or
    in the runtime package."""
    package, _, rest = module_name.partition(".")
    if handler_code is not None and package == handler_code.name:
        base = handler_code.joinpath(*rest.split(".")) if rest else handler_code
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        raise ValueError(
            f"handler: module {module_name!r} is not in handler_code ({handler_code}): there is "
            f"no {base.relative_to(handler_code.parent)}.py; check the module's name"
        )
    if package == RUNTIME_PACKAGE:
        spec = importlib.util.find_spec(module_name)
        if spec is not None and spec.origin is not None:
            return Path(spec.origin)
    shipped = f"the handler_code package {handler_code.name!r}" if handler_code else "no package"
    raise ValueError(
        f"handler: module {module_name!r} would not be in the function's code, which holds "
        f"{RUNTIME_PACKAGE} and {shipped}; pass your package's folder as handler_code and "
        "start the handler with its name"
    )


def _top_level_names(source: Path) -> set[str]:
    """The names a module binds at its top level: functions, classes, assignments, imports."""
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names
