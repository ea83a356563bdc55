"""The constructs' keywords checked at the boundary against their own type hints.

A team's app is Python without a type checker as often as with one, and aws-cdk-lib's bindings
accept much that they then turn into something else: a string where an enum member is meant
compares unequal to every member (``encryption="KMS"`` gave SSE-SQS), a string where a list is
meant is iterated character by character (``local_endpoints="Billing"`` gave seven endpoints),
a dict where a typed policy is meant fails deep inside with ``AttributeError``, and a value
out of aws-cdk-lib's range arrives as a JavaScript error that names aws-cdk-lib's property, not
our keyword. So every construct's keywords are checked, when it is called, against the hints
its signature already declares (one home: the signature), and

* an enum takes its members or their values, and nothing else;
* a ``Sequence`` refuses a string (and a mapping), and checks its items;
* a typed policy object takes its JSON form as a mapping (:data:`FROM_MAPPING`);
* a whole number refuses ``True`` and ``"10"``; an aws-cdk-lib interface (``IQueue``,
  ``ITopic``, ``IKey``) takes any object that implements it, made in this app or imported;
* aws-cdk-lib's own refusals (a visibility timeout over 12 hours, a retention no check of
  ours reads first) are re-raised naming the keyword whose value they refuse (:func:`cdk_refusals`).

A mistake is a ``TypeError`` (wrong kind of value) or ``ValueError`` (a value of the right kind
refused), whose message starts with the keyword and says what to pass. The same decorator
gives ``help()`` the real signature, with readable defaults, where jsii's metaclass would show
``(*args, **kwargs)``.
"""

from __future__ import annotations

import collections.abc
import contextlib
import dataclasses
import difflib
import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import typing_extensions
from aws_cdk import Duration, Size

from constructs_lib._private.references import foreign_stack_problem, stack_of
from cross_account_runtime.delivery_policy.policy import DeliveryPolicyError, HttpDeliveryPolicy

C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])

FROM_MAPPING: Mapping[type, Callable[[Mapping[str, Any]], object]] = {
    HttpDeliveryPolicy: HttpDeliveryPolicy.from_json,
}
"""Typed objects a keyword also takes in their JSON form, and how that form is read (and
checked: the reader's refusal is re-raised naming the keyword)."""


class _RefusedError(Exception):
    """A value that does not fit a hint; ``kind`` is the exception the keyword raises."""

    def __init__(self, kind: type[Exception], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def checked(cls: C) -> C:
    """Check ``cls``'s constructor keywords (a construct's ``__init__``, a dataclass's fields)
    against their hints whenever it is called, and show its real signature in ``help()``."""
    init = cls.__dict__["__init__"]
    source = cls if dataclasses.is_dataclass(cls) else init
    checked_init = _checking(init, lambda: typing.get_type_hints(source))
    cls.__init__ = checked_init  # type: ignore[misc]
    signature = inspect.signature(checked_init)
    cls.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    return cls


def checked_keywords(function: F) -> F:
    """Check a method's keywords (``add_*``, ``from_*``) against their hints when called."""
    target = function.__func__ if isinstance(function, classmethod) else function
    wrapped = _checking(target, lambda: typing.get_type_hints(target))
    return typing.cast(F, classmethod(wrapped) if isinstance(function, classmethod) else wrapped)


def check_keyword(keyword: str, value: object, hint: object) -> Any:
    """``value`` as ``keyword`` takes it (an enum's value becomes its member, a policy's JSON
    form the policy); raise ``TypeError``/``ValueError`` naming ``keyword`` otherwise."""
    try:
        return _fit(value, hint)
    except _RefusedError as refusal:
        raise refusal.kind(f"{keyword}: {refusal.message}") from None


@contextlib.contextmanager
def cdk_refusals(phrases: Mapping[str, str]) -> Iterator[None]:
    """Re-raise an error aws-cdk-lib raises inside the block as a ``ValueError`` naming our
    keyword: ``phrases`` maps words of aws-cdk-lib's message (``"retention period"``) to the
    keyword that gave the value, for a block where the keywords' names alone would mislead
    (a dead-letter queue's retention is ``dead_letter_retention_period``)."""
    try:
        yield
    except RuntimeError as error:
        keyword = _keyword_of(error, phrases)
        if keyword is None:
            raise
        raise ValueError(f"{keyword}: aws-cdk-lib refuses it: {_cdk_reason(error)}") from None


def _checking(
    function: Callable[..., Any], read_hints: Callable[[], Mapping[str, object]]
) -> Callable[..., Any]:
    """``function`` (a method: its first parameter is not checked) checking its keywords
    against the hints ``read_hints`` gives, read at the first call: a method's hints may name
    its own class, which does not exist yet when it is decorated."""
    signature = inspect.signature(function)
    names = list(signature.parameters)[1:]

    @functools.cache
    def hints() -> tuple[Mapping[str, object], dict[str, str]]:
        known = read_hints()
        keywords = {name: name.replace("_", " ") for name in names if name in known}
        return known, keywords_by_phrase(keywords)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        unknown = [name for name in kwargs if name not in signature.parameters]
        if unknown:
            raise TypeError(
                f"{function.__qualname__}: unexpected keyword argument "
                + "; ".join(f"{name!r}{_suggestion(name)}" for name in unknown)
            )
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{function.__qualname__}: {error}") from None
        known, phrases = hints()
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if name not in known or name not in names or kind is inspect.Parameter.VAR_KEYWORD:
                continue
            if kind is inspect.Parameter.VAR_POSITIONAL:
                bound.arguments[name] = tuple(
                    _one_of_many(function, name, index, item, known[name])
                    for index, item in enumerate(value)
                )
            else:
                bound.arguments[name] = check_keyword(name, value, known[name])
        with cdk_refusals(phrases):
            result = function(*bound.args, **bound.kwargs)
        # After the call, so that a construct's own refusal of a resource of another account
        # (naming what to use there) comes first.
        _refuse_foreign_stacks(bound.arguments, names)
        return result

    def _suggestion(unknown: str) -> str:
        """The keyword meant by a misspelt one, if one is close."""
        close = difflib.get_close_matches(unknown, names, n=1)
        return f" (did you mean {close[0]}?)" if close else ""

    call.__signature__ = _readable(signature)  # type: ignore[attr-defined]
    return call


def _refuse_foreign_stacks(arguments: Mapping[str, Any], names: Sequence[str]) -> None:
    """Refuse a keyword holding a resource of a stack of another account
    (:func:`~constructs_lib._private.references.foreign_stack_problem`); the stack is the
    ``scope``'s for a constructor or importer, the construct's own for a method."""
    where = arguments.get("scope", next(iter(arguments.values()), None))
    here = stack_of(where) if getattr(where, "node", None) is not None else None
    if here is None:
        return
    for name in names:
        if name != "scope" and name in arguments:
            problem = foreign_stack_problem(name, arguments[name], here)
            if problem is not None:
                raise ValueError(problem)


def _one_of_many(
    function: Callable[..., Any], name: str, index: int, item: object, hint: object
) -> Any:
    """One of a method's ``*name`` arguments; a list given as one of them is named as such."""
    if isinstance(item, list | tuple | set) and hint is str:
        raise TypeError(
            f"{name}: give each as its own argument ({function.__name__}(*{name})), "
            f"not a {type(item).__name__}"
        )
    return check_keyword(f"{name}[{index}]", item, hint)


def keywords_by_phrase(keywords: Mapping[str, str]) -> dict[str, str]:
    """Each keyword under the words aws-cdk-lib's messages would use for it
    (``visibility_timeout``: ``"visibility timeout"``), longest first so that the most
    specific one wins."""
    return {
        phrase: name
        for name, phrase in sorted(keywords.items(), key=lambda item: -len(item[1]))
        if " " in phrase
    }


def _keyword_of(error: RuntimeError, phrases: Mapping[str, str]) -> str | None:
    """The keyword an aws-cdk-lib error names, or ``None`` for an error not raised through
    jsii or naming none."""
    if not _raised_by_jsii(error):
        return None
    text = str(error).lower()
    return next((keyword for phrase, keyword in phrases.items() if phrase in text), None)


def _raised_by_jsii(error: BaseException) -> bool:
    """Whether the error came out of aws-cdk-lib's JavaScript (jsii raises ``RuntimeError``)."""
    trace = error.__traceback__
    while trace is not None:
        if "/jsii/" in trace.tb_frame.f_code.co_filename.replace("\\", "/"):
            return True
        trace = trace.tb_next
    return False


def _cdk_reason(error: RuntimeError) -> str:
    """aws-cdk-lib's reasons without its construct paths and JavaScript frames."""
    lines = [line.strip() for line in str(error).splitlines()]
    reasons = [line.lstrip("- ") for line in lines if line.startswith("- ")]
    return "; ".join(reasons) or lines[0]


# Fitting a value to a hint -------------------------------------------------------------------


def _fit(value: object, hint: object) -> Any:
    """``value`` fitted to ``hint``, first as it is, then converted (an enum's value, a
    policy's JSON form)."""
    if hint is Any or hint is object:
        return value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _fit_union(value, typing.get_args(hint))
    if hint is type(None):
        if value is None:
            return None
        raise _RefusedError(TypeError, f"expected None, got {_shown(value)}")
    if origin is not None:
        return _fit_generic(value, origin, typing.get_args(hint))
    if isinstance(hint, type):
        return _fit_class(value, hint)
    return value


def _fit_union(value: object, options: tuple[object, ...]) -> Any:
    if value is None and type(None) in options:
        return None
    refusals: list[_RefusedError] = []
    for option in options:
        if option is type(None):
            continue
        try:
            return _fit(value, option)
        except _RefusedError as refusal:
            refusals.append(refusal)
    if len(refusals) == 1:
        raise refusals[0]
    wanted = " or ".join(_name(option) for option in options)
    values = [r for r in refusals if r.kind is ValueError]
    if values:
        raise values[0]
    raise _RefusedError(TypeError, f"expected {wanted}, got {_shown(value)}")


def _fit_generic(value: object, origin: object, args: tuple[object, ...]) -> Any:
    if origin in (collections.abc.Sequence, list, tuple, collections.abc.Iterable):
        if isinstance(value, str | bytes):
            raise _RefusedError(
                TypeError, f"expected a list, got the string {value!r}; write [{value!r}]"
            )
        if isinstance(value, Mapping) or not isinstance(value, collections.abc.Iterable):
            raise _RefusedError(TypeError, f"expected a list, got {_shown(value)}")
        items = list(value)
        item_hint = args[0] if args else Any
        fitted = []
        for index, item in enumerate(items):
            try:
                fitted.append(_fit(item, item_hint))
            except _RefusedError as refusal:
                raise _RefusedError(refusal.kind, f"[{index}]: {refusal.message}") from None
        unchanged = all(a is b for a, b in zip(fitted, items, strict=True))
        return value if unchanged and isinstance(value, list | tuple) else tuple(fitted)
    if origin in (collections.abc.Mapping, dict):
        if not isinstance(value, Mapping):
            raise _RefusedError(TypeError, f"expected a mapping (a dict), got {_shown(value)}")
        return value
    return value


def _fit_class(value: object, hint: type) -> Any:
    if issubclass(hint, enum.Enum):
        return _fit_enum(value, hint)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _RefusedError(TypeError, f"expected True or False, got {_shown(value)}")
    if hint is int or hint is float:
        wanted = "a whole number" if hint is int else "a number"
        accepted = int if hint is int else int | float
        if isinstance(value, bool) or not isinstance(value, accepted):
            raise _RefusedError(TypeError, f"expected {wanted}, got {_shown(value)}")
        return value
    if hint in FROM_MAPPING and isinstance(value, Mapping):
        try:
            return FROM_MAPPING[hint](value)
        except (DeliveryPolicyError, ValueError) as error:
            raise _RefusedError(ValueError, f"{error}") from None
    if _is_protocol(hint):
        if _implements(value, hint):
            return value
        raise _RefusedError(TypeError, f"expected {_name(hint)}, got {_shown(value)}")
    if isinstance(value, hint):
        return value
    if hint is Path and isinstance(value, str):
        return Path(value)
    raise _RefusedError(TypeError, f"expected {_name(hint)}, got {_shown(value)}")


def _fit_enum(value: object, hint: type[enum.Enum]) -> enum.Enum:
    if isinstance(value, hint):
        return value
    members = list(hint)
    for member in members:
        if isinstance(value, str) and not isinstance(value, enum.Enum) and value == member.value:
            return member
    choices = ", ".join(f"{hint.__name__}.{m.name} ({m.value!r})" for m in members)
    kind = ValueError if isinstance(value, str) else TypeError
    raise _RefusedError(
        kind, f"{_shown(value)} is not a member of {hint.__name__}; use one of {choices}"
    )


def _is_protocol(hint: type) -> bool:
    return bool(getattr(hint, "_is_protocol", False))


def _implements(value: object, protocol: type) -> bool:
    """Whether ``value`` implements ``protocol``: by ``isinstance`` for a runtime-checkable
    protocol of ours, by the members of its class for aws-cdk-lib's interfaces (which jsii
    declares as protocols ``isinstance`` refuses)."""
    if getattr(protocol, "_is_runtime_protocol", False):
        return isinstance(value, protocol)
    members = _protocol_members(protocol)
    # An object jsii returns for several interfaces at once (``Alias.from_alias_name``)
    # delegates to one proxy per interface.
    delegates = vars(value).get("_delegates") if hasattr(value, "__dict__") else None
    classes = [type(d) for d in delegates] if isinstance(delegates, list) else [type(value)]
    return all(any(hasattr(cls, member) for cls in classes) for member in members)


@functools.cache
def _protocol_members(protocol: type) -> frozenset[str]:
    """An aws-cdk-lib interface's public members, gathered once per interface (every
    construct's call checks its keywords)."""
    return frozenset(
        member
        for member in typing_extensions.get_protocol_members(protocol)
        if not member.startswith("_")
    )


def _name(hint: object) -> str:
    if hint is type(None):
        return "None"
    if isinstance(hint, type):
        module = hint.__module__
        if module.startswith("aws_cdk."):
            return f"{module.removeprefix('aws_cdk.')}.{hint.__name__}"
        if module == "aws_cdk":
            return f"aws_cdk.{hint.__name__}"
        return hint.__name__
    return str(hint).replace("typing.", "").replace("collections.abc.", "")


def _shown(value: object) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return f"{type(value).__name__} {value!r}"
    return f"a {type(value).__module__}.{type(value).__qualname__}"


# Signatures help() can read ------------------------------------------------------------------


class _Shown:
    """A default as the code writing it would (``Duration.days(4)``), not as an object's
    address."""

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return self._text


_DURATION_UNITS = (("days", 86_400), ("hours", 3_600), ("minutes", 60), ("seconds", 1))
_SIZE_UNITS = (("gibibytes", 1024**3), ("mebibytes", 1024**2), ("kibibytes", 1024), ("bytes", 1))


def _readable(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` with its defaults as code writes them and its annotations as the source
    writes them (``Duration | None``, not a quoted string)."""

    def shown(parameter: inspect.Parameter) -> inspect.Parameter:
        if isinstance(parameter.annotation, str):
            parameter = parameter.replace(annotation=_Shown(parameter.annotation))
        if parameter.default is not parameter.empty:
            parameter = parameter.replace(default=_readable_default(parameter.default))
        return parameter

    return signature.replace(
        parameters=[shown(parameter) for parameter in signature.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )


def _readable_default(default: object) -> object:
    if isinstance(default, Duration):
        seconds = int(default.to_seconds())
        unit, size = next((u, s) for u, s in _DURATION_UNITS if seconds % s == 0)
        return _Shown(f"Duration.{unit}({seconds // size})")
    if isinstance(default, Size):
        total = int(default.to_kibibytes()) * 1024
        unit, size = next((u, s) for u, s in _SIZE_UNITS if total % s == 0)
        return _Shown(f"Size.{unit}({total // size})")
    if isinstance(default, enum.Enum):
        return _Shown(f"{type(default).__name__}.{default.name}")
    return default
