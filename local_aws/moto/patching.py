"""How a teaching replaces one of moto's methods: once, however often it registers.

Every teaching's ``register`` is idempotent (the server imports and registers them all; tests
register the ones they need again), so a replacement marks itself, and a method that already
carries the mark is left alone. The replacement keeps the original's name, docstring and
attributes (:func:`functools.wraps`), so teachings that replace the same method compose, each
calling the one it found.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def replacing(owner: Any, name: str, marker: str) -> Callable[[_F], _F]:
    """A decorator installing the function as ``owner.name`` unless the method there already
    carries ``marker`` (this teaching's, installed before); a class method of ``owner`` stays
    one. The function is returned as it was, so it can be read in its module."""

    def install(replacement: _F) -> _F:
        if getattr(getattr(owner, name), marker, False):
            return replacement
        found = inspect.getattr_static(owner, name)
        original = found.__func__ if isinstance(found, classmethod) else getattr(owner, name)
        wrapped = functools.wraps(original)(replacement)
        setattr(wrapped, marker, True)
        setattr(owner, name, classmethod(wrapped) if isinstance(found, classmethod) else wrapped)
        return replacement

    return install
