"""A teaching replaces a method once however often it registers; a class method stays one;
two teachings replacing one method compose, each calling the one it found."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from local_aws.moto.patching import replacing


class Backend:
    def send(self, text: str) -> str:
        return text

    @classmethod
    def create(cls, name: str) -> str:
        return f"{cls.__name__}:{name}"


def teach(marker: str, suffix: str) -> Callable[[], None]:
    def register() -> None:
        original = Backend.send

        @replacing(Backend, "send", marker)
        def send(self: Backend, text: str) -> str:
            return original(self, text) + suffix

    return register


def test_a_teaching_registered_twice_replaces_the_method_once() -> None:
    register = teach("_first", "!")
    before = Backend.send
    try:
        register()
        register()
        assert Backend().send("hi") == "hi!"
        assert Backend.send.__name__ == "send"
    finally:
        Backend.send = before  # type: ignore[method-assign]


def test_two_teachings_compose_and_neither_is_applied_twice() -> None:
    first, second = teach("_first", "!"), teach("_second", "?")
    before = Backend.send
    try:
        first()
        second()
        first()
        second()
        assert Backend().send("hi") == "hi!?"
    finally:
        Backend.send = before  # type: ignore[method-assign]


def test_a_class_method_stays_a_class_method() -> None:
    before: Any = Backend.__dict__["create"]
    try:
        original = Backend.create

        @replacing(Backend, "create", "_created")
        def create(cls: type[Backend], name: str) -> str:
            return original(name).upper()

        assert isinstance(Backend.__dict__["create"], classmethod)
        assert Backend.create("x") == "BACKEND:X"
    finally:
        Backend.create = before  # type: ignore[method-assign]
