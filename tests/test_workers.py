"""The test suite's two workers share it out by group (``scripts/test.sh``: ``-n 2 --dist
loadgroup``; ``tests/conftest.py`` names the groups): a module's module-scoped fixtures (a
synthesized app, a deployment of its own) are built once, on the one worker that runs it whole.
pytest 9.2 reads a test's id where pytest-xdist 3.8 no longer writes the group, which split
every module over both workers and built each of those fixtures twice."""

from __future__ import annotations

import pytest


def test_a_module_runs_whole_on_one_worker(request: pytest.FixtureRequest) -> None:
    if not hasattr(request.config, "workerinput"):
        pytest.skip("only under pytest-xdist's workers, as scripts/test.sh runs the suite")
    assert request.node.nodeid.endswith("@tests/test_workers.py")
