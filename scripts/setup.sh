#!/usr/bin/env bash
# Installs what the project needs, pinned, into .venv and node_modules; a no-op when nothing
# changed. Sourced by run.sh and test.sh so that both work on a fresh clone.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

find_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "setup: Python 3.11 or newer is required (none found on PATH)" >&2
  return 1
}

for tool in node npm java; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup: '$tool' is required on PATH (Node 20+, Java 17)" >&2; exit 1; }
done

stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

PY_STAMP="$(stamp_of requirements.txt requirements-dev.txt pyproject.toml)"
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.stamp 2>/dev/null)" != "$PY_STAMP" ]; then
  echo "setup: installing Python dependencies into .venv" >&2
  [ -x .venv/bin/python ] || "$(find_python)" -m venv .venv
  pip_install() {
    # This machine's pip configuration names local mirrors that may be absent: drop that noise.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@" \
      2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  }
  pip_install -r requirements-dev.txt
  pip_install --no-deps -e .
  echo "$PY_STAMP" > .venv/.stamp
fi

NODE_STAMP="$(stamp_of package.json package-lock.json)"
if [ ! -x node_modules/.bin/cdk ] || [ "$(cat node_modules/.stamp 2>/dev/null)" != "$NODE_STAMP" ]; then
  echo "setup: installing the CDK CLI into node_modules" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$NODE_STAMP" > node_modules/.stamp
fi

export PATH="$ROOT/.venv/bin:$ROOT/node_modules/.bin:$PATH"
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
export JSII_RUNTIME_PACKAGE_CACHE_ROOT="$ROOT/.cache/jsii"
export CDK_DISABLE_CLI_TELEMETRY=true
export NODE_NO_WARNINGS=1
