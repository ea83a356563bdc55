#!/usr/bin/env bash
# Installs what the project needs, pinned, into .venv and node_modules, then puts both first on
# PATH; a no-op when nothing changed. run.sh, test.sh and synth.sh source it, so each works on a
# fresh clone; source it yourself to get the same environment in your shell.
#
#   source scripts/setup.sh          everything: the main job's and the tests' install
#                                    (requirements-dev.txt: PySpark, moto, DuckDB, the test tools)
#   source scripts/setup.sh --synth  only what `cdk synth` and its gates need
#                                    (requirements-synth.txt), as scripts/synth.sh does
#
# Needs Python 3.11+ and npm on PATH (npm runs on the machine's Node, 20 or newer), and Java 17
# for the full install (Spark). The CDK CLI and aws-cdk-lib's jsii kernel run on the project's
# own Node, an LTS jsii supports, pinned in package.json and installed from the npm registry, so
# the machine's Node only runs npm and no end-of-life banner needs silencing.
#
# The install runs in a subshell: sourcing this file changes neither the shell's options nor its
# working directory, only the variables exported at the end. A script that sources it passes its
# mode explicitly: sourced without arguments, it would read the script's own.

_setup_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

(
  set -euo pipefail
  cd "$_setup_root"

  case "${1:-}" in
    "" | --all) mode=all ;;
    --synth) mode=synth ;;
    *) echo "setup: unknown argument '$1' (use --synth for the synth-only install)" >&2; exit 2 ;;
  esac

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

  command -v npm >/dev/null 2>&1 || {
    echo "setup: 'npm' is required on PATH (with the Node 20 or newer it runs on): it installs the CDK CLI and the project's own Node" >&2
    exit 1
  }
  if [ "$mode" = all ]; then
    command -v java >/dev/null 2>&1 || {
      echo "setup: 'java' (Java 17) is required on PATH for Spark; 'scripts/setup.sh --synth' installs only what synth needs" >&2
      exit 1
    }
  fi

  stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
  UV_VERSION=0.13.9

  # A full install holds everything the synth-only one does, so it satisfies both.
  SYNTH_STAMP="synth uv $UV_VERSION $(stamp_of requirements-synth.txt requirements.txt pyproject.toml)"
  ALL_STAMP="all uv $UV_VERSION $(stamp_of requirements-synth.txt requirements.txt requirements-dev.txt pyproject.toml)"
  if [ "$mode" = synth ]; then
    wanted="$SYNTH_STAMP" requirements=requirements-synth.txt
  else
    wanted="$ALL_STAMP" requirements=requirements-dev.txt
  fi
  installed="$(cat .venv/.stamp 2>/dev/null || true)"
  if [ ! -x .venv/bin/python ] || { [ "$installed" != "$wanted" ] && [ "$installed" != "$ALL_STAMP" ]; }; then
    echo "setup: installing Python dependencies ($requirements) into .venv" >&2
    [ -x .venv/bin/python ] || "$(find_python)" -m venv .venv
    # uv installs the pinned requirements: on a machine with no cache it takes a quarter of
    # pip's time (parallel downloads, and no byte-compiling of some 400 MB of aws-cdk-lib and
    # PySpark that Python compiles as it imports), which a fresh clone and CI pay every time.
    # uv itself comes pinned, by pip, into the venv. This machine's pip configuration may name
    # local mirrors that are absent: that noise is dropped.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION" \
      2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    uv_install() { .venv/bin/uv pip install --quiet --python .venv/bin/python "$@"; }
    uv_install -r "$requirements"
    uv_install --no-deps -e .
    echo "$wanted" > .venv/.stamp
  fi

  pinned_node="v$(.venv/bin/python -c 'import json; print(json.load(open("package.json"))["devDependencies"]["node"])')"
  node_of_project() { node_modules/.bin/node --version 2>/dev/null || true; }
  NODE_STAMP="$(stamp_of package.json package-lock.json)"
  if [ ! -x node_modules/.bin/cdk ] || [ "$(node_of_project)" != "$pinned_node" ] ||
     [ "$(cat node_modules/.stamp 2>/dev/null)" != "$NODE_STAMP" ]; then
    echo "setup: installing the CDK CLI and Node $pinned_node into node_modules" >&2
    # npm runs on the machine's Node: the project's own is what `npm ci` replaces.
    PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$PWD/node_modules/.bin" | paste -sd:)"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    if [ "$(node_of_project)" != "$pinned_node" ]; then
      echo "setup: node_modules/.bin/node is not Node $pinned_node after 'npm ci': the 'node' package installs its binary in an install script, which npm's ignore-scripts setting skips" >&2
      exit 1
    fi
    echo "$NODE_STAMP" > node_modules/.stamp
  fi
) || { unset _setup_root; return 1 2>/dev/null || exit 1; }

export PATH="$_setup_root/.venv/bin:$_setup_root/node_modules/.bin:$PATH"
# jsii (aws-cdk-lib's Python bindings) runs $JSII_NODE, else the first `node` on PATH.
export JSII_NODE="$_setup_root/node_modules/.bin/node"
export JSII_RUNTIME_PACKAGE_CACHE_ROOT="$_setup_root/.cache/jsii"
export CDK_DISABLE_CLI_TELEMETRY=true
export NODE_NO_WARNINGS=1
unset _setup_root
