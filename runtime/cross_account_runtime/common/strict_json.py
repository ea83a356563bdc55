"""A ``json`` object hook that refuses a name repeated within one object.

``json`` silently keeps the last value of a repeated name. Two readers can resolve such a
document differently (a verifier and a handler reading one SNS body apart), and in a
configuration a repeated name is a mistake to report (a route or an endpoint listed twice), not
one to resolve. Standard library only, and nothing but this function, so the relay's cold start
pays nothing for it.
"""

from __future__ import annotations


def object_without_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """The ``object_pairs_hook`` for :func:`json.loads`: the object as a ``dict``, or a
    :class:`ValueError` naming the repeated name (``json.loads`` callers already treat a
    ``ValueError`` as invalid JSON)."""
    result: dict[str, object] = {}
    for name, value in pairs:
        if name in result:
            raise ValueError(f"the name {name!r} appears twice in one object")
        result[name] = value
    return result
