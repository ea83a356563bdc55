"""Gunzip in Python workers, for gzip files Hadoop will not decompress (no ``.gz`` suffix).

Standard library only: the module is shipped to the workers by value (see ``inputs.py``), so
nothing here may import from this package.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from typing import Any

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def gunzip_members(data: bytes) -> tuple[bytes, str | None]:
    """Decompress every gzip member in ``data``; what decoded before an error is kept.

    Returns the text and None, or the text decoded so far and the reason the rest could not
    be (``gzip_corrupt`` or ``gzip_truncated``), so the caller can count it.
    """
    parts: list[bytes] = []
    rest = data
    while rest.strip(b"\x00"):
        decompressor = zlib.decompressobj(wbits=31)
        try:
            parts.append(decompressor.decompress(rest))
            parts.append(decompressor.flush())
        except zlib.error:
            return b"".join(parts), "gzip_corrupt"
        if not decompressor.eof:
            return b"".join(parts), "gzip_truncated"
        rest = decompressor.unused_data
    return b"".join(parts), None


def split_lines(text: str) -> list[str]:
    """Lines as Hadoop's line reader cuts them: at LF, CR or CRLF, no empty line at the end."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def gunzip_rows(
    row: Any,
    whole_text: bool,
) -> Iterable[tuple[str, str | None, str | None]]:
    path, content = str(row[0]), bytes(row[1])
    data, error = gunzip_members(content)
    text = data.decode("utf-8", errors="replace")
    if whole_text:
        yield path, text, None
    else:
        for line in split_lines(text):
            yield path, line, None
    if error is not None:
        yield path, None, error
