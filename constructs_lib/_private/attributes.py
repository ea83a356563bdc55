"""A construct's public attributes, documented where ``help()`` shows them.

``help(EndpointQueue)`` lists a class's properties and other data descriptors with their
docstrings, but not the attributes a constructor sets (``self.queue = ...``), which are what a
team reads first (the queue to grant, the key, the dead-letter queue to alarm on). Declared as
an :class:`Attribute` on the class, each keeps its plain assignment in the constructor and
gets its one-line docstring in ``help()`` (``pydoc.render_doc``), as aws-cdk-lib's own
attributes (``Queue.queueArn``) carry theirs.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Attribute(Generic[T]):
    """An attribute a construct sets in its constructor (or later, once), with its docstring.

    A data descriptor: ``help()`` lists it under "Data descriptors defined here" with the
    docstring given; reading it before it is set raises ``AttributeError`` as a plain
    attribute would."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Attribute[T]: ...

    @overload
    def __get__(self, instance: object, owner: type) -> T: ...

    def __get__(self, instance: object | None, owner: type) -> Attribute[T] | T:
        if instance is None:
            return self
        try:
            value: T = vars(instance)[self._name]
        except KeyError:
            raise AttributeError(self._name) from None
        return value

    def __set__(self, instance: Any, value: T) -> None:
        vars(instance)[self._name] = value
