"""Column expressions about raw text shared by the layout readers and the record parser.

Spark's ``trim`` family trims spaces only; JSON text may end with a newline or carriage
return (pretty-printed pages, CRLF files), so these trim all JSON whitespace.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as sf

JSON_WHITESPACE = " \t\r\n"


def is_blank(text: Column) -> Column:
    """True for text that is empty or only whitespace."""
    return sf.trim(text, sf.lit(JSON_WHITESPACE)) == ""


def ends_object(text: Column) -> Column:
    """True when the text, trailing whitespace aside, ends with ``}``."""
    return sf.rtrim(text, sf.lit(JSON_WHITESPACE)).endswith("}")
