"""SNS topic names of NServiceBus events, as released endpoints derive them, checked at synth.

A released endpoint publishes an event to, and subscribes its queue to, the topic named after
the event's .NET type, found by name in its own account: the configured ``TopicNamePrefix`` and
the type's ``Type.FullName``, every character but letters, digits, ``-`` and ``_`` replaced by
``-`` (NServiceBus.AmazonSQS ``src/NServiceBus.Transport.SQS/TopicNameHelper.cs``:
``GetSnsTopicName``, ``GetSanitizedTopicName``; ``src/NServiceBus.Transport.SQS/TopicCache.cs``:
``GetTopicName``; the derivation itself is :mod:`cross_account_runtime.nservicebus.topic_name`).

So an event type must be written exactly as ``Type.FullName`` gives it, or the topic made for
it is one the transport never derives: C#'s ``Envelope<OrderBilled>`` would become the topic
``Envelope-OrderBilled-``, while the transport publishes ``Envelope<OrderBilled>`` to the one
named after ``Envelope`1[[OrderBilled, Contracts, Version=1.0.0.0, Culture=neutral,
PublicKeyToken=null]]``, and skips the event when it finds no such topic. ``Type.FullName``
writes a namespace with ``.``, a nested type with ``+``, a generic type's arity after a
backtick and its type arguments, each assembly-qualified, in double brackets; it never holds
C#'s ``<>``, keywords (``int``), ``global::`` or spaces outside an argument's assembly name.
"""

from __future__ import annotations

from typing import Final, NoReturn

from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX
from cross_account_runtime.nservicebus.topic_name import (
    MAX_TOPIC_NAME_LENGTH,
    TopicNameError,
    check_sns_topic_name,
    sns_topic_name,
)

__all__ = ["TopicNameError", "check_event_type", "event_topic_name", "topic_name_problem"]

_TOPIC_NAME_CHARACTERS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

FULL_NAME_EXAMPLE: Final = "MyCompany.Messages.OrderBilled"
GENERIC_FULL_NAME_EXAMPLE: Final = (
    "MyCompany.Messages.Envelope`1[[MyCompany.Messages.OrderBilled, MyCompany.Messages, "
    "Version=1.0.0.0, Culture=neutral, PublicKeyToken=null]]"
)
_CSHARP_ALIASES: Final = frozenset(
    [
        "bool",
        "byte",
        "sbyte",
        "char",
        "decimal",
        "double",
        "float",
        "int",
        "uint",
        "nint",
        "nuint",
        "long",
        "ulong",
        "short",
        "ushort",
        "object",
        "string",
        "dynamic",
        "void",
    ]
)
"""C#'s keywords for built-in types; ``Type.FullName`` names them ``System.Int32`` and so on."""
_HOW: Final = (
    "write the event's .NET full name as typeof(T).FullName gives it, e.g. "
    f"{FULL_NAME_EXAMPLE!r} (a nested type 'MyCompany.Messages.Outer+OrderBilled', a generic "
    f"one {GENERIC_FULL_NAME_EXAMPLE!r})"
)


def topic_name_problem(topic_name: str, *, fifo: bool) -> str | None:
    """What SNS refuses in a topic's name, or None: 1 to 256 ASCII letters, digits, ``-`` or
    ``_``, a FIFO topic's ``.fifo`` included in the 256 (SNS developer guide, "Creating an
    Amazon SNS topic")."""
    base = topic_name.removesuffix(FIFO_SUFFIX) if fifo else topic_name
    if (
        not base
        or len(topic_name) > MAX_TOPIC_NAME_LENGTH
        or not set(base) <= _TOPIC_NAME_CHARACTERS
    ):
        return (
            f"{topic_name!r}: SNS topic names use 1 to {MAX_TOPIC_NAME_LENGTH} ASCII letters, "
            "digits, '-' or '_'" + (", '.fifo' included" if fifo else "")
        )
    return None


def event_topic_name(event_type: str, topic_name_prefix: str = "") -> str:
    """The topic a released endpoint with ``topic_name_prefix`` publishes ``event_type`` to,
    if ``event_type`` is a .NET full type name (:func:`check_event_type`) and SNS accepts the
    name; raise :class:`TopicNameError` (a ``ValueError``) otherwise."""
    check_event_type(event_type)
    return check_sns_topic_name(sns_topic_name(event_type, topic_name_prefix))


def check_event_type(event_type: str) -> str:
    """Return ``event_type`` if it is written as ``Type.FullName`` writes an event's type;
    raise :class:`TopicNameError` saying what to write otherwise."""
    if not isinstance(event_type, str) or not event_type:
        raise TopicNameError(f"event type {event_type!r} is empty; {_HOW}")
    if "::" in event_type or event_type in _CSHARP_ALIASES:
        raise TopicNameError(
            f"event type {event_type!r} is C# syntax (an alias qualifier or a built-in type's "
            f"keyword), never a type's full name; {_HOW}"
        )
    if "<" in event_type or ">" in event_type:
        raise TopicNameError(
            f"event type {event_type!r} is written as C# writes a generic type; the transport "
            "names the topic after the CLR full name, whose type arguments are "
            f"assembly-qualified in double brackets: {_HOW}"
        )
    _FullNameReader(event_type).event_type()
    return event_type


class _FullNameReader:
    """Reads one ``Type.FullName``: ``Namespace.Type`N+Nested[[Argument, Assembly, ...], ...]``
    with each argument a full name too, arrays allowed among the arguments only."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def event_type(self) -> None:
        self.full_name(argument=False)
        rest = self.text[self.at :]
        if rest[:1].isspace():
            self.fail("a full name has no spaces but after the commas of a type argument")
        if rest:
            self.fail(f"{rest!r} cannot follow the type's name")

    def full_name(self, *, argument: bool) -> None:
        arity = self.type_name()
        if self.text.startswith("[[", self.at):
            if arity == 0:
                self.fail("type arguments follow a type with no generic arity ('`1')")
            arguments = self.type_arguments()
            if arguments != arity:
                self.fail(f"the type takes {arity} type argument(s), {arguments} given")
        elif arity:
            self.fail(
                "an open generic type is never an event's type (events are published as closed "
                "types); give its type arguments"
            )
        while self.text.startswith("[]", self.at):
            if not argument:
                self.fail("an array is never an event's type; give the event's own type")
            self.at += 2

    def type_name(self) -> int:
        """Namespace and names up to the type arguments; the generic arity they declare."""
        arity = 0
        separator = "."
        while True:
            self.identifier()
            if self.text.startswith("`", self.at):
                arity += self.arity()
                separator = "+"
            following = self.text[self.at : self.at + 1]
            if following == "+" or (following == "." and separator == "."):
                self.at += 1
                separator = "+" if following == "+" else separator
                continue
            return arity

    def identifier(self) -> None:
        start = self.at
        while self.at < len(self.text) and (
            self.text[self.at].isalnum() or self.text[self.at] == "_"
        ):
            self.at += 1
        name = self.text[start : self.at]
        if not name.isidentifier():
            found = self.text[self.at : self.at + 1] or "the end"
            self.fail(f"a name is expected at {found!r}")

    def arity(self) -> int:
        self.at += 1
        start = self.at
        while self.at < len(self.text) and self.text[self.at] in "0123456789":
            self.at += 1
        digits = self.text[start : self.at]
        if not digits or digits.startswith("0"):
            self.fail("a backtick is followed by the generic arity, e.g. '`1'")
        return int(digits)

    def type_arguments(self) -> int:
        self.at += 1
        count = 0
        while True:
            self.expect("[")
            self.full_name(argument=True)
            self.expect(", ")
            self.assembly_name()
            self.expect("]")
            count += 1
            if self.text.startswith(",", self.at):
                self.at += 1
                continue
            self.expect("]")
            return count

    def assembly_name(self) -> None:
        """``Name, Version=..., Culture=..., PublicKeyToken=...``: a name, then pairs."""
        end = self.text.find("]", self.at)
        if end < 0:
            self.fail("a type argument's assembly name ends with ']'")
        parts = self.text[self.at : end].split(", ")
        if not parts[0] or "=" in parts[0] or any("=" not in part for part in parts[1:]):
            self.fail(
                "a type argument is assembly-qualified: 'Type, Assembly, Version=..., "
                "Culture=..., PublicKeyToken=...'"
            )
        self.at = end

    def expect(self, text: str) -> None:
        if not self.text.startswith(text, self.at):
            found = self.text[self.at : self.at + len(text)] or "the end"
            self.fail(f"{text!r} is expected at {found!r}")
        self.at += len(text)

    def fail(self, problem: str) -> NoReturn:
        raise TopicNameError(
            f"event type {self.text!r} is not a .NET full type name ({problem}); {_HOW}"
        )
