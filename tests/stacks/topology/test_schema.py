"""``topology.schema.json`` describes the document the parser reads: the same fields in every
object (a key added to one and not the other fails here, naming where), the committed
topologies valid against it, and ``"$schema"`` accepted by both, so an editor can point at it."""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from stacks.topology import TopologyError, parse_topology
from stacks.topology.field_checker import FieldChecker

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "topology.schema.json").read_text(encoding="utf-8"))
ORG = json.loads((ROOT / "topologies" / "org.json").read_text(encoding="utf-8"))


def every_field_document(example: Mapping[str, Any]) -> dict[str, Any]:
    """The example with every optional object the parser knows: a DLQ of its own, a route
    from an organization, an HTTPS and a Lambda subscription, alarms, large messages, keys."""
    document = copy.deepcopy(dict(example))
    document["$schema"] = "../topology.schema.json"
    document["endpoints"][0]["deadLetterQueue"] = {"queueName": "Sales-errors"}
    document["routes"].append({"fromOrganization": "o-a1b2c3d4e5", "to": "Billing"})
    document["topics"][0]["subscriptions"].append(
        {
            "name": "Archive",
            "protocol": "lambda",
            "functionArn": "arn:aws:lambda:us-east-1:222222222222:function:Archive",
        }
    )
    document["alarms"] = {"maxMessageAgeSeconds": 600}
    document["largeMessages"] = {"expirationDays": 10}
    document["keys"] = "perAccount"
    return document


def checked_objects(document: Mapping[str, Any]) -> list[tuple[str, frozenset[str], Any]]:
    """Every object whose fields the parser checks: its path, the fields it accepts, itself."""
    seen: list[tuple[str, frozenset[str], Any]] = []
    original = FieldChecker.unknown_keys

    def recording(self: FieldChecker, obj: Any, allowed: Any, path: str) -> None:
        seen.append((path, frozenset(allowed), obj))
        original(self, obj, allowed, path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FieldChecker, "unknown_keys", recording)
        # The fields are checked whatever else the document gets wrong.
        with contextlib.suppress(TopologyError):
            parse_topology(document)
    return seen


def resolve(node: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], str]:
    """A node, or the definition it refers to (``$ref``), and where that is."""
    while "$ref" in node:
        where = node["$ref"]
        node = SCHEMA["$defs"][where.rsplit("/", 1)[-1]]
    return node, where


def schema_node(path: str, obj: Any) -> tuple[str, Mapping[str, Any]]:
    """The schema of the object at a parser path (``topology.topics[0].subscriptions[1]``),
    and where in the schema it is (a subscription's branch chosen by its protocol)."""
    node: Mapping[str, Any] = SCHEMA
    where = "#"
    for part in re.findall(r"\.(\$?\w+)|\[\d+\]", path.removeprefix("topology")):
        node, where = resolve(node, where)
        if part:
            node, where = node["properties"][part], f"{where}/properties/{part}"
        else:
            node, where = node["items"], f"{where}/items"
    node, where = resolve(node, where)
    if "oneOf" in node:
        (index,) = [
            i
            for i, branch in enumerate(node["oneOf"])
            if branch["properties"]["protocol"]["const"] == obj.get("protocol")
        ]
        node, where = node["oneOf"][index], f"{where}/oneOf/{index}"
    return where, node


def closed_objects(node: Mapping[str, Any], where: str = "#") -> Iterator[str]:
    """Where the schema has an object of known fields (``additionalProperties`` false)."""
    if node.get("additionalProperties") is False:
        yield where
    for key, child in node.get("properties", {}).items():
        yield from closed_objects(child, f"{where}/properties/{key}")
    if "items" in node:
        yield from closed_objects(node["items"], f"{where}/items")
    for index, branch in enumerate(node.get("oneOf", [])):
        yield from closed_objects(branch, f"{where}/oneOf/{index}")


def test_every_object_has_the_same_fields_in_the_schema_and_the_parser(
    example_document: dict[str, Any],
) -> None:
    compared: set[str] = set()
    for document in (every_field_document(example_document), ORG):
        for path, accepted, obj in checked_objects(document):
            where, node = schema_node(path, obj)
            described = frozenset(node["properties"])
            assert described == accepted, (
                f"{path} ({where}): only the schema has {sorted(described - accepted)}, "
                f"only the parser {sorted(accepted - described)}"
            )
            compared.add(where)
    in_schema = set(closed_objects(SCHEMA)) | {
        where
        for name, definition in SCHEMA["$defs"].items()
        for where in closed_objects(definition, f"#/$defs/{name}")
    }
    assert in_schema - compared == set(), "objects of the schema no document here exercised"


@pytest.mark.parametrize("name", ["example", "every field", "organization"])
def test_the_committed_topologies_are_valid_against_the_schema(
    example_document: dict[str, Any], name: str
) -> None:
    document = {
        "example": example_document,
        "every field": every_field_document(example_document),
        "organization": ORG,
    }[name]
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(document)) == []


def test_a_misspelt_field_is_refused_by_both(example_document: dict[str, Any]) -> None:
    document = copy.deepcopy(example_document)
    document["endpoints"][0]["arnAwre"] = True

    (error,) = jsonschema.Draft202012Validator(SCHEMA).iter_errors(document)
    assert "arnAwre" in error.message
    with pytest.raises(TopologyError, match=r"topology\.endpoints\[0\]\.arnAwre"):
        parse_topology(document)


def test_the_schema_key_is_accepted_by_the_parser(example_document: dict[str, Any]) -> None:
    document = {"$schema": "../topology.schema.json", **example_document}

    assert parse_topology(document) == parse_topology(example_document)
