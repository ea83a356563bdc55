"""Column expressions about raw text shared by the layout readers and the record parser.

Spark's ``trim`` family trims spaces only, and with a set of characters to trim it walks the
whole string and allocates two index arrays per call -- per record that costs more than
parsing the JSON. So the common case (first or last character already decides) is checked
with ``substring``/``endswith`` and the full trim only runs for the rare remaining rows.
JSON text may end with a newline or carriage return (pretty-printed pages, CRLF files),
which is why the slow path trims all JSON whitespace.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as sf

JSON_WHITESPACE = " \t\r\n"


def is_blank(text: Column) -> Column:
    """True for text that is empty or only whitespace."""
    first = sf.substring(text, 1, 1)
    return sf.when(
        first.isin(*JSON_WHITESPACE, ""), sf.trim(text, sf.lit(JSON_WHITESPACE)) == ""
    ).otherwise(
        sf.lit(False),
    )


def ends_object(text: Column) -> Column:
    """True when the text, trailing whitespace aside, ends with ``}``."""
    return sf.when(text.endswith("}"), sf.lit(True)).otherwise(
        sf.rtrim(text, sf.lit(JSON_WHITESPACE)).endswith("}"),
    )
