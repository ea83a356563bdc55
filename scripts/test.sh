#!/usr/bin/env bash
# The test command: lint and the layering (docs/architecture.md), then the type check beside the
# whole pytest suite (synth gates, moto, Spark); fails if either fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" --all
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "== ruff" >&2
ruff check .
ruff format --check .
echo "== import-linter" >&2
lint-imports --no-cache

# mypy takes a core for a minute or more on a fresh clone, while the tests leave part of the
# machine idle (waiting on the CDK CLI, moto and the JVM): run side by side, mypy costs little.
mypy_log="$(mktemp)"
trap 'rm -f "$mypy_log"' EXIT
mypy >"$mypy_log" 2>&1 &
mypy_pid=$!

echo "== pytest (mypy beside it)" >&2
# Two workers: the Spark tests and the tests on the deployed example, the two long groups, run
# side by side (tests/conftest.py keeps each group, and each other module, on one worker).
pytest_status=0
pytest -n 2 --dist loadgroup "$@" || pytest_status=$?

mypy_status=0
wait "$mypy_pid" || mypy_status=$?
echo "== mypy" >&2
cat "$mypy_log"
if [ "$mypy_status" -ne 0 ] || [ "$pytest_status" -ne 0 ]; then
  echo "test: mypy exited $mypy_status, pytest exited $pytest_status" >&2
  exit 1
fi
