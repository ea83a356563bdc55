"""What is wrong with a gzip file, in words an operator can act on.

Hadoop's gzip codec fails on a damaged ``.gz`` with ``Unexpected end of input stream`` or
``invalid block type``; Python's ``gzip`` module reads the same bytes and tells a file cut
short (an interrupted copy or upload: copy it again) from one that is damaged or not gzip at
all, and how far it got.
"""

from __future__ import annotations

import gzip
import io
import zlib

CHUNK_BYTES = 1 << 20
"""Decompressed text is read and dropped a chunk at a time: only the error matters."""


def gzip_damage(data: bytes) -> str | None:
    """Why ``data`` is not readable gzip (every member to its end), or None if it is."""
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        try:
            while stream.read(CHUNK_BYTES):
                pass
        except EOFError:
            return (
                f"truncated gzip: the file ends after {len(data):,} bytes, "
                "before the end of its compressed stream"
            )
        except (gzip.BadGzipFile, zlib.error) as error:
            return f"corrupt gzip: {error}"
    return None
