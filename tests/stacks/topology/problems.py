"""What the topology parser refuses in a document, for tests of its validation."""

from __future__ import annotations

from typing import Any

import pytest

from stacks.topology import TopologyError, parse_topology


def problems_of(document: Any) -> list[tuple[str, str]]:
    """The ``(field, rule)`` problems parsing ``document`` raises; fails if it parses."""
    with pytest.raises(TopologyError) as caught:
        parse_topology(document, "topo.json")
    return caught.value.problems
