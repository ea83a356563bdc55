"""A JSON document given as a file's bytes: one clear problem for each way it can be wrong.

The JSON parser's own messages ("Expecting value", "Expecting ',' delimiter") name neither the
mistake nor the fix, and it silently keeps the last of two equal names in one object. Used by
every reader of a user's JSON file (the topology, the delivery-policy preview), so each says
the same thing about the same mistake. Standard library only.
"""

from __future__ import annotations

import json

from cross_account_runtime.common.strict_json import object_without_duplicates

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

WHOLE_DOCUMENT: Final = "<file>"
"""The ``where`` of a problem with the document as a whole."""


class JsonDocumentError(ValueError):
    """The bytes are no JSON document: ``where`` (:data:`WHOLE_DOCUMENT` or
    ``<line L, column C>``) and ``rule``, the mistake and its fix."""

    def __init__(self, where: str, rule: str) -> None:
        super().__init__(f"{where}: {rule}")
        self.where = where
        self.rule = rule


def decode_json_document(raw: bytes, what: str) -> Any:
    """The JSON value in ``raw``, UTF-8 (a byte-order mark is fine); ``what`` names the
    document in the fix for an empty one (``"the topology"``)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise JsonDocumentError(
            WHOLE_DOCUMENT,
            f"is not UTF-8 (byte 0x{raw[error.start]:02x} on line {line}); save it as UTF-8",
        ) from error
    if not text.strip():
        raise JsonDocumentError(WHOLE_DOCUMENT, f"is empty; write {what} as one JSON object")
    try:
        return json.loads(text, object_pairs_hook=object_without_duplicates)
    except json.JSONDecodeError as error:
        raise JsonDocumentError(
            f"<line {error.lineno}, column {error.colno}>",
            f"is not valid JSON: {_explain(text, error)}",
        ) from error
    except ValueError as error:
        # object_without_duplicates: a name given twice in one object.
        raise JsonDocumentError(
            WHOLE_DOCUMENT, f"{error}; the JSON parser would keep only the last, so remove one"
        ) from error


def _explain(text: str, error: json.JSONDecodeError) -> str:
    """The parser's message, with the likely mistake where it is a common one."""
    before = text[: error.pos].rstrip()
    if before.endswith("0") and text[error.pos : error.pos + 1].isdigit():
        return (
            f"{error.msg}: a JSON number cannot start with 0; write account ids (and any "
            'number with a leading zero) as strings, e.g. "012345678901"'
        )
    if error.msg.startswith("Expecting property name") and before.endswith(","):
        return f"{error.msg}: remove the comma before the closing brace"
    if error.msg.startswith("Expecting value") and before.endswith(","):
        return f"{error.msg}: remove the comma before the closing bracket"
    return error.msg
