"""The constructs' API reference and the example each construct's docstring shows.

The reference is pdoc's rendering of the docstrings of what ``constructs_lib`` exports (each
construct's keywords with their defaults, its attributes, its example), written to
``build/api/`` (git-ignored) with every warning an error, so a docstring pdoc cannot render
fails the suite instead of a reader. Each exported construct's class docstring holds one
example, run here as a reader would paste it: its own ``App()``, synthesized in this process,
whose jsii kernel the other construct tests have started already, so the examples cost seconds.
Rebuild the reference by hand with ``pytest tests/constructs_lib/test_api_reference.py -k
reference`` (``python -m pdoc`` alone misses the exports the package loads on first use).
"""

from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import pdoc
import pdoc.render
import pytest
from aws_cdk import App
from constructs import Construct

import constructs_lib

ROOT = Path(__file__).resolve().parents[2]
API_REFERENCE = ROOT / "build" / "api"
EXAMPLE = re.compile(r"^Example:\n\n```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
"""An example block of a docstring (as :func:`inspect.getdoc` dedents it)."""


def exported_constructs() -> list[str]:
    return [
        name
        for name in constructs_lib.__all__
        if inspect.isclass(value := getattr(constructs_lib, name)) and issubclass(value, Construct)
    ]


def example_of(name: str) -> str:
    """The one example of ``name``'s class docstring."""
    examples: list[str] = EXAMPLE.findall(inspect.getdoc(getattr(constructs_lib, name)) or "")
    assert len(examples) == 1, f"{name}'s docstring needs one 'Example:' block, has {examples}"
    return examples[0]


def test_every_exported_construct_is_in_the_list_the_examples_run() -> None:
    assert len(exported_constructs()) >= 13


@pytest.mark.parametrize("name", exported_constructs())
def test_each_constructs_example_synthesizes_in_an_app_of_its_own(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(compile(example_of(name), f"<{name} example>", "exec"), namespace)
    app = namespace.get("app")
    assert isinstance(app, App), f"{name}'s example names its App 'app'"
    assert app.synth().stacks
    construct = getattr(constructs_lib, name)
    assert any(isinstance(node, construct) for node in app.node.find_all())


def resolve_lazy_exports() -> None:
    """Put each exported name in the package's namespace, as ``from constructs_lib import *``
    resolves it: pdoc reads ``__all__``'s names from the module's ``__dict__``, where a name the
    package's ``__getattr__`` loads on first use (``MessagingChecks``, which needs cdk-nag) is
    missing, and would warn that it is no submodule."""
    for name in constructs_lib.__all__:
        vars(constructs_lib).setdefault(name, getattr(constructs_lib, name))


def test_the_api_reference_builds_without_a_warning() -> None:
    resolve_lazy_exports()
    pdoc.render.configure(docformat="restructuredtext")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdoc.pdoc("constructs_lib", output_directory=API_REFERENCE)
    page = (API_REFERENCE / "constructs_lib.html").read_text(encoding="utf-8")
    for name in constructs_lib.__all__:
        assert f'id="{name}"' in page, name
    assert page.count("Example:") >= len(exported_constructs())
