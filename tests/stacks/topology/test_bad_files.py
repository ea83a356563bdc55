"""A topology file that is not a JSON document gets one line naming the mistake and the fix.

The cases are files in ``bad_files/``: ``<case>.json`` is given to :func:`load_topology`, and
``<case>.expect`` holds the expected problem's field (first line) and a fragment of its rule
(second line). Adding a case is adding two files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stacks.topology import TopologyError, load_topology

CASES = Path(__file__).parent / "bad_files"


@pytest.mark.parametrize("case", sorted(p.stem for p in CASES.glob("*.json")))
def test_a_bad_file_is_one_problem_naming_the_mistake(case: str) -> None:
    field, fragment = (CASES / f"{case}.expect").read_text(encoding="utf-8").splitlines()[:2]
    with pytest.raises(TopologyError) as caught:
        load_topology(CASES / f"{case}.json")
    ((found_field, rule),) = caught.value.problems
    assert found_field.startswith(field), (found_field, rule)
    assert fragment in rule, rule


def test_a_byte_order_mark_is_fine(tmp_path: Path, document: dict[str, object]) -> None:
    path = tmp_path / "topology.json"
    path.write_text("\ufeff" + json.dumps(document), encoding="utf-8")
    assert load_topology(path).accounts
