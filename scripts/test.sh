#!/usr/bin/env bash
# The test command: lint, type-check, then the whole pytest suite (synth gates, moto, Spark).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
echo "== ruff" >&2
ruff check .
ruff format --check .
echo "== mypy" >&2
mypy
echo "== pytest" >&2
# Two workers: the Spark tests and the tests on the deployed example, the two long groups, run
# side by side (tests/conftest.py keeps each group, and each other module, on one worker).
exec pytest -n 2 --dist loadgroup "$@"
