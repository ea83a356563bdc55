"""Every mistake the topology can catch before synth, each a file in ``bad_topologies/``.

A case is a JSON document: ``topology`` (given to :func:`parse_topology`) and ``expect``, the
problems it must raise, each a ``field`` and a ``fragment`` of the rule; nothing else may be
reported (a field already reported causes no follow-on errors). Adding a case is adding a file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stacks.topology import TopologyError, parse_topology

CASES = Path(__file__).parent / "bad_topologies"


@pytest.mark.parametrize("case", sorted(p.stem for p in CASES.glob("*.json")))
def test_a_bad_topology_is_refused_with_exactly_its_problems(case: str) -> None:
    document = json.loads((CASES / f"{case}.json").read_text(encoding="utf-8"))
    with pytest.raises(TopologyError) as caught:
        parse_topology(document["topology"], f"{case}.json")
    problems = caught.value.problems
    expected = document["expect"]
    assert len(problems) == len(expected), problems
    for (field, rule), want in zip(problems, expected, strict=True):
        assert field == want["field"], (field, rule)
        assert want["fragment"] in rule, rule
