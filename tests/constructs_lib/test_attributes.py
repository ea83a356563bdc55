"""Every exported construct's public attributes appear in ``help()`` with a docstring: the
attributes a team reads first (``EndpointQueue.queue``, ``.dead_letter_queue``, ...) are no
less documented than its keywords."""

from __future__ import annotations

import ast
import inspect
import pydoc
import textwrap

import pytest
from constructs import Construct

import constructs_lib

PLAIN_TEXT: pydoc.TextDoc = pydoc.plaintext  # type: ignore[attr-defined]
"""help()'s text without its bold (pydoc's own plain-text renderer)."""


def exported_constructs() -> list[type]:
    return [
        value
        for name in constructs_lib.__all__
        if inspect.isclass(value := getattr(constructs_lib, name)) and issubclass(value, Construct)
    ]


def assigned_attributes(cls: type) -> set[str]:
    """The public attributes the class's own code sets (``self.x = ...``), its bases' in
    this package too."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("constructs_lib"):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if (
                        isinstance(element, ast.Attribute)
                        and isinstance(element.value, ast.Name)
                        and element.value.id == "self"
                        and not element.attr.startswith("_")
                    ):
                        names.add(element.attr)
    return names


@pytest.mark.parametrize("cls", exported_constructs(), ids=lambda cls: cls.__name__)
def test_each_public_attribute_is_documented_in_help(cls: type) -> None:
    shown = pydoc.render_doc(cls, renderer=PLAIN_TEXT)
    for name in sorted(assigned_attributes(cls)):
        member = inspect.getattr_static(cls, name, None)
        doc = inspect.getdoc(member) if member is not None else None
        assert doc, f"{cls.__name__}.{name} has no docstring help() shows"
        assert f"\n |  {name}\n |      {doc.splitlines()[0]}" in shown, f"{cls.__name__}.{name}"


def test_the_endpoint_queues_attributes_are_in_help() -> None:
    shown = pydoc.render_doc(constructs_lib.EndpointQueue, renderer=PLAIN_TEXT)
    for name in ("queue", "dead_letter_queue", "delay_queue", "encryption_key"):
        assert f"\n |  {name}\n |      " in shown
    for cls, name in (
        (constructs_lib.DeliveryLoggedTopic, "topic"),
        (constructs_lib.DeliveryLoggedTopic, "topic_arn"),
        (constructs_lib.CrossAccountQueueSubscription, "subscription"),
    ):
        assert f"\n |  {name}\n |      " in pydoc.render_doc(cls, renderer=PLAIN_TEXT)
