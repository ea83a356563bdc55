"""IAM policies as the AWS SDK for .NET reads and writes them (``Amazon.Auth.AccessControlPolicy``),
which the transport uses for the input queue's policy.

A ``Policy`` has an id (usually none), a version (``2012-10-17``) and statements; a
``Statement`` has an id (a new statement gets a GUID without dashes), an effect, principals
(provider and id; ``new Principal("*")`` is provider ``AWS``), actions, resources and conditions
(type, key, values).

Writing (``ToJson``, ``JsonPolicyWriter``): ``Utf8JsonWriter`` indented (two spaces, ``\\n``),
``Version``, ``Id`` when set, ``Statement``; per statement ``Sid`` when set, ``Effect``,
``Principal`` (``"*"`` for the single anonymous principal, else an object of provider to id or
array of ids), ``Action``, ``Resource`` (a string for one, an array for more; left out when
none), ``Condition`` (type, then key, then a value or an array of values; conditions of one type
and key merged). Strings are escaped as System.Text.Json escapes them.

Reading (``FromJson``, ``JsonPolicyReader``): ``Id`` when a string, ``Statement`` when an array;
a statement without a string ``Effect`` is dropped, ``Allow`` is allow and anything else deny;
``Sid``, ``Action`` and ``Resource`` (string or array of strings), ``Condition`` (every type and
key; a value that is neither string nor array gives no values), ``Principal`` (``"*"`` is the
anonymous principal, an object gives provider/id pairs, ``{"AWS": "*"}`` included — so the
transport finds the statements it wrote). The version is
not read: every policy read has the default. This is the SDK 4 reader as fixed (the first v4
reader dropped non-anonymous principals and threw on a single resource, which would make the
transport's own policy unreadable).

Facts: the AWS SDK for .NET 4 ``sdk/src/Core/Amazon.Auth/AccessControlPolicy/Policy.cs``,
``Statement.cs``, ``Principal.cs``, ``Condition.cs``, ``ConditionFactory.cs``,
``Internal/JsonPolicyWriter.cs``, ``Internal/JsonPolicyReader.cs``; the shape in
NServiceBus.AmazonSQS 9.1.1 ``src/NServiceBus.Transport.SQS.Tests/ApprovalFiles/
PolicyExtensionsTests.*.approved.txt``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from local_aws.released_transport.dotnet.system_text_json import (
    JsonObject,
    parse_ordered,
    write_string,
)

DEFAULT_VERSION: Final = "2012-10-17"
ALLOW: Final = "Allow"
DENY: Final = "Deny"
AWS_PROVIDER: Final = "AWS"
ANONYMOUS_PROVIDER: Final = "__ANONYMOUS__"
ALL: Final = "*"
_INDENT: Final = "  "


@dataclass(frozen=True)
class Principal:
    """A principal: ``Principal("*")`` is every AWS principal (provider ``AWS``)."""

    id: str
    provider: str = AWS_PROVIDER


ANONYMOUS: Final = Principal(ALL, ANONYMOUS_PROVIDER)
"""``Principal.Anonymous``: written as ``"Principal": "*"``."""


@dataclass(frozen=True)
class Condition:
    """A condition: type (``ArnLike`` …), key (``aws:SourceArn`` …) and values."""

    type: str
    key: str
    values: tuple[str, ...]


def _new_statement_id() -> str:
    """A new statement's ``Sid``: ``Guid.NewGuid().ToString().Replace("-", "")``."""
    return uuid.uuid4().hex


@dataclass
class Statement:
    """A statement (mutable, as the SDK's lists are)."""

    effect: str
    id: str | None = field(default_factory=_new_statement_id)
    principals: list[Principal] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)


@dataclass
class Policy:
    """A policy (``new Policy()`` has no id, the default version and no statements)."""

    id: str | None = None
    version: str = DEFAULT_VERSION
    statements: list[Statement] = field(default_factory=list)

    def to_json(self) -> str:
        """``ToJson()`` (pretty-printed)."""
        members = [("Version", write_string(self.version))]
        if self.id is not None:
            members.append(("Id", write_string(self.id)))
        members.append(("Statement", _array([_statement(s) for s in self.statements], 1)))
        return _object(members, 0)


def _object(members: list[tuple[str, str]], depth: int) -> str:
    """An indented JSON object of already-written values."""
    if not members:
        return "{}"
    inner = _INDENT * (depth + 1)
    lines = [f"{inner}{write_string(name)}: {value}" for name, value in members]
    return "{\n" + ",\n".join(lines) + "\n" + _INDENT * depth + "}"


def _array(values: list[str], depth: int) -> str:
    """An indented JSON array of already-written values."""
    if not values:
        return "[]"
    inner = _INDENT * (depth + 1)
    return "[\n" + ",\n".join(inner + value for value in values) + "\n" + _INDENT * depth + "]"


def _one_or_many(values: list[str], depth: int) -> str:
    """A string for one value, an array for more (the writer's rule for every list)."""
    written = [write_string(value) for value in values]
    return written[0] if len(written) == 1 else _array(written, depth)


def _statement(statement: Statement) -> str:
    """One statement at depth 2 (inside the ``Statement`` array)."""
    members: list[tuple[str, str]] = []
    if statement.id is not None:
        members.append(("Sid", write_string(statement.id)))
    members.append(("Effect", write_string(statement.effect)))
    if statement.principals:
        members.append(("Principal", _principals(statement.principals)))
    if statement.actions:
        members.append(("Action", _one_or_many(statement.actions, 3)))
    if statement.resources:
        members.append(("Resource", _one_or_many(statement.resources, 3)))
    if statement.conditions:
        members.append(("Condition", _conditions(statement.conditions)))
    return _object(members, 2)


def _principals(principals: list[Principal]) -> str:
    """``writePrincipals``: ``"*"`` for the single anonymous principal, else ids by provider."""
    if len(principals) == 1 and principals[0].provider == ANONYMOUS_PROVIDER:
        return write_string(ALL)
    by_provider: dict[str, list[str]] = {}
    for principal in principals:
        by_provider.setdefault(principal.provider, []).append(principal.id)
    return _object([(p, _one_or_many(ids, 4)) for p, ids in by_provider.items()], 3)


def _conditions(conditions: list[Condition]) -> str:
    """``writeConditions``: values merged per type and key; a key without values left out."""
    by_type: dict[str, dict[str, list[str]]] = {}
    for condition in conditions:
        by_type.setdefault(condition.type, {}).setdefault(condition.key, []).extend(
            condition.values
        )
    return _object(
        [
            (
                condition_type,
                _object([(k, _one_or_many(v, 5)) for k, v in keys.items() if v], 4),
            )
            for condition_type, keys in by_type.items()
        ],
        3,
    )


def _principal(provider: str, principal_id: str) -> Principal:
    """``new Principal(provider, id)``: an ``AWS`` id loses its dashes (account ids written
    ``1234-5678-9012``); ids of an array keep them (the three-argument constructor)."""
    if provider == AWS_PROVIDER:
        principal_id = principal_id.replace("-", "")
    return Principal(principal_id, provider)


def _strings(value: Any) -> list[str]:
    """A string, or the strings of an array; nothing otherwise."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _members(value: Any) -> list[tuple[str, Any]]:
    """An object's members (``EnumerateObject`` of anything else throws)."""
    if not isinstance(value, JsonObject):
        raise ValueError("The requested operation requires an element of type 'Object'.")
    return list(value)


def _property(document: JsonObject, name: str) -> Any:
    """``TryGetProperty``: the last member of that name, as ``JsonElement`` matches it (none
    reads as ``null``)."""
    found = None
    for member, value in document:
        if member == name:
            found = value
    return found


def _statement_from(document: Any) -> Statement | None:
    """``convertStatement``."""
    if not isinstance(document, JsonObject):
        return None
    effect = _property(document, "Effect")
    if not isinstance(effect, str):
        return None
    statement = Statement(ALLOW if effect == ALLOW else DENY)
    sid = _property(document, "Sid")
    if isinstance(sid, str):
        statement.id = sid
    statement.actions = _strings(_property(document, "Action"))
    statement.resources = _strings(_property(document, "Resource"))
    condition = _property(document, "Condition")
    if condition is not None:
        for condition_type, comparisons in _members(condition):
            for key, values in _members(comparisons):
                statement.conditions.append(Condition(condition_type, key, tuple(_strings(values))))
    principal = _property(document, "Principal")
    if principal == ALL:
        statement.principals.append(ANONYMOUS)
    elif principal is not None:
        for provider, ids in _members(principal):
            if isinstance(ids, str):
                statement.principals.append(_principal(provider, ids))
            else:
                statement.principals.extend(Principal(i, provider) for i in _strings(ids))
    return statement


def policy_from_json(text: str) -> Policy:
    """``Policy.FromJson``."""
    document = parse_ordered(text)
    policy = Policy()
    if not isinstance(document, JsonObject):
        raise ValueError("The requested operation requires an element of type 'Object'.")
    policy_id = _property(document, "Id")
    if isinstance(policy_id, str):
        policy.id = policy_id
    statements = _property(document, "Statement")
    if isinstance(statements, list):
        for item in statements:
            statement = _statement_from(item)
            if statement is not None:
                policy.statements.append(statement)
    return policy
