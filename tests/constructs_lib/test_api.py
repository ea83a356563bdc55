"""The package's API: every public construct and type is exported, and every keyword a
construct takes is documented once in its signature's docstring, ending in its default (as
aws-cdk-lib's ``QueueProps`` are)."""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator

import pytest
from constructs import Construct

import constructs_lib

SKIPPED_PARAMETERS = {"self", "cls", "scope", "construct_id"}


def public_modules() -> Iterator[str]:
    """The package's modules, those of its construct families' packages too, but not
    ``_private`` (nor any other module or package named with ``_``)."""
    for module in pkgutil.walk_packages(constructs_lib.__path__, f"{constructs_lib.__name__}."):
        if not any(part.startswith("_") for part in module.name.split(".")):
            yield module.name


def public_types() -> set[str]:
    """Classes defined in the public modules: constructs, enums, protocols and props."""
    names = set()
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and value.__module__ == module_name
                and not name.startswith("_")
                and not issubclass(value, Exception)
            ):
                names.add(name)
    return names


def test_every_public_construct_and_type_is_exported() -> None:
    assert public_types() <= set(constructs_lib.__all__)


def test_relays_and_importable_protocols_are_exported() -> None:
    for name in ("CrossAccountRelay", "RelayDirection", "RelayRoute", "IEndpointQueue"):
        assert name in constructs_lib.__all__
        assert getattr(constructs_lib, name) is not None


def documented_callables() -> Iterator[tuple[str, Callable[..., object]]]:
    """Each construct's constructor and ``from_*`` importers (every parameter), and its
    ``add_*`` methods (their keywords)."""
    for name in constructs_lib.__all__:
        value = getattr(constructs_lib, name)
        if not (inspect.isclass(value) and issubclass(value, Construct)):
            continue
        yield f"{name}.__init__", value.__init__
        for member_name, member in inspect.getmembers(value):
            if member_name.startswith(("from_", "add_")) and callable(member):
                yield f"{name}.{member_name}", member


def parameter_docs(docstring: str) -> dict[str, str]:
    """``:param name: text`` blocks, each up to the next field or the end."""
    blocks = re.split(r"^\s*:param ", docstring, flags=re.MULTILINE)[1:]
    docs = {}
    for block in blocks:
        name, _, text = block.partition(":")
        docs[name.strip()] = " ".join(re.split(r"\n\s*:\w", text)[0].split())
    return docs


@pytest.mark.parametrize(("where", "function"), list(documented_callables()))
def test_every_keyword_is_documented_once_ending_in_its_default(
    where: str, function: Callable[..., object]
) -> None:
    docstring = inspect.getdoc(function) or ""
    docs = parameter_docs(docstring)
    every_one = not where.rsplit(".", maxsplit=1)[-1].startswith("add_")
    parameters = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.name not in SKIPPED_PARAMETERS
        and p.kind is not p.VAR_POSITIONAL
        and (every_one or p.kind is p.KEYWORD_ONLY)
    ]
    if not parameters:
        return
    for parameter in parameters:
        assert parameter.name in docs, f"{where}: :param {parameter.name}: is missing"
        assert docstring.count(f":param {parameter.name}:") == 1, where
        if parameter.default is not parameter.empty:
            text = docs[parameter.name]
            assert "Default:" in text, f"{where}: {parameter.name} does not end in its default"
            assert text.rindex("Default:") > 0, where


def test_closed_sets_are_str_enums_so_logs_and_templates_read_the_same() -> None:
    for name in constructs_lib.__all__:
        value = getattr(constructs_lib, name)
        if inspect.isclass(value) and issubclass(value, enum.Enum):
            assert issubclass(value, enum.StrEnum), name
