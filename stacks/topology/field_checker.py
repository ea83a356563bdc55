"""Collects validation problems with the path of the field each one is about.

A topology is one large document; reporting every problem at once, each with its path
(``topology.endpoints[2].account``), saves an operator a round trip per typo.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any


class FieldChecker:
    """Collects problems with their field paths so one run reports all of them."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []
        self.invalid: dict[str, set[str]] = {}
        """Names declared with a problem already reported, by kind (``account``,
        ``endpoint``): a reference to one is not reported again as unknown."""

    def declared_invalid(self, what: str, name: str | None) -> None:
        """``name`` was declared but its declaration failed; references to it stay quiet."""
        if name:
            self.invalid.setdefault(what, set()).add(name)

    def is_invalid(self, what: str, name: object) -> bool:
        """Whether ``name`` is a declared ``what`` whose declaration already failed."""
        return isinstance(name, str) and name in self.invalid.get(what, set())

    def fail(self, path: str, rule: str) -> None:
        """Record one problem."""
        self.problems.append((path, rule))

    def obj(self, value: Any, path: str) -> Mapping[str, Any] | None:
        """``value`` if it is an object, else record the problem and return None."""
        if not isinstance(value, Mapping):
            self.fail(path, f"must be an object, got {type(value).__name__}")
            return None
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        """``value`` if it is a list, else record the problem and return an empty list."""
        if not isinstance(value, list):
            self.fail(path, f"must be a list, got {type(value).__name__}")
            return []
        return value

    def objects(
        self, value: Any, path: str, allowed: Iterable[str] | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """``(path, item)`` for each item of the list at ``value`` that is an object, its
        fields checked against ``allowed`` when given; every other item is a problem."""
        for index, item in enumerate(self.array(value, path)):
            item_path = f"{path}[{index}]"
            obj = self.obj(item, item_path)
            if obj is None:
                continue
            if allowed is not None:
                self.unknown_keys(obj, allowed, item_path)
            yield item_path, obj

    def string(
        self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = True
    ) -> str | None:
        """The string at ``obj[key]``; a missing required key or a non-string is a problem."""
        if key not in obj:
            if required:
                self.fail(f"{path}.{key}", "is required")
            return None
        value = obj[key]
        if not isinstance(value, str):
            self.fail(f"{path}.{key}", f"must be a string, got {type(value).__name__}")
            return None
        return value

    def unknown_keys(self, obj: Mapping[str, Any], allowed: Iterable[str], path: str) -> None:
        """Refuse fields the schema does not know: a misspelt optional field must not be
        ignored silently."""
        for key in obj:
            if key not in allowed:
                self.fail(
                    f"{path}.{key}", f"unknown field; allowed fields: {', '.join(sorted(allowed))}"
                )

    def boolean(self, obj: Mapping[str, Any], key: str, path: str, default: bool) -> bool:
        """The boolean at ``obj[key]`` (``default`` when absent)."""
        value = obj.get(key, default)
        if not isinstance(value, bool):
            self.fail(f"{path}.{key}", "must be true or false")
            return default
        return value

    def integer(
        self, obj: Mapping[str, Any], key: str, path: str, *, default: int, low: int, high: int
    ) -> int:
        """The whole number at ``obj[key]`` within ``low..high`` (``default`` when absent)."""
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.fail(f"{path}.{key}", f"must be a whole number from {low} to {high}")
            return default
        return value

    def reference(
        self, obj: Mapping[str, Any], key: str, path: str, known: Collection[str], what: str
    ) -> str | None:
        """The name at ``obj[key]`` if it names one of ``known`` (declared elsewhere in the
        document); otherwise the problem lists what is declared, so the fix is in sight."""
        value = self.string(obj, key, path)
        if self.is_invalid(what, value):
            return None
        if value is not None and value not in known:
            declared = ", ".join(sorted(known)) or "none"
            self.fail(f"{path}.{key}", f"unknown {what} {value!r}; declared {what}s: {declared}")
            return None
        return value
