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
from pyspark.sql import types as st

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


def parse_single_object(text: Column, schema: st.StructType) -> Column:
    """Parse ``text`` as exactly one JSON object: an array of ``schema`` structs, or null.

    Spark's JSON reader stops after the first value and ignores what follows, so the text is
    wrapped in ``[...]``: a second object or trailing text then breaks the array (null) or
    adds elements, and :func:`is_single_object` rejects the row. Jackson finds that while it
    parses, where looking for ``}{`` in every record took a tenth of the job's CPU.
    """
    return sf.from_json(sf.concat(sf.lit("["), text, sf.lit("]")), st.ArrayType(schema))


def is_single_object(parsed: Column, text: Column) -> Column:
    """True when :func:`parse_single_object` found one object and nothing after it.

    ``ends_object`` catches text after a closing ``]`` (``{...}] junk``), which the array
    parse would ignore.
    """
    return sf.coalesce(
        (sf.size(parsed) == 1) & ends_object(text) & sf.get(parsed, 0).isNotNull(),
        sf.lit(False),
    )
