"""Reading a topology file: one clear line for each way the file itself can be wrong.

The JSON parser's own messages ("Expecting value", "Expecting ',' delimiter") name neither the
mistake nor the fix, and it silently keeps the last of two equal names in one object, so a
second ``"routes"`` would drop the first list. Each problem here is reported as the file's, with
its line and column where there is one, before any field is looked at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cross_account_runtime.common.strict_json import object_without_duplicates

FILE_FIELD = "<file>"
"""The problem path of a problem with the file as a whole."""


class DocumentError(ValueError):
    """The file cannot be read as a JSON document: ``field`` and ``rule`` as the topology's
    problems are."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


def read_document(path: str | Path) -> Any:
    """The JSON value in the UTF-8 file ``path`` (a byte-order mark is fine)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise DocumentError(FILE_FIELD, f"cannot be read: {error.strerror}") from error
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DocumentError(
            FILE_FIELD,
            f"is not UTF-8 (byte 0x{raw[error.start]:02x} on line {line}); save it as UTF-8",
        ) from error
    if not text.strip():
        raise DocumentError(FILE_FIELD, "is empty; write the topology as one JSON object")
    try:
        return json.loads(text, object_pairs_hook=object_without_duplicates)
    except json.JSONDecodeError as error:
        raise DocumentError(
            f"<line {error.lineno}, column {error.colno}>",
            f"is not valid JSON: {_explain(text, error)}",
        ) from error
    except ValueError as error:
        # object_without_duplicates: a name given twice in one object.
        raise DocumentError(
            FILE_FIELD, f"{error}; the JSON parser would keep only the last, so remove one"
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
