#!/usr/bin/env bash
# The synth-only job, for CI: installs only what synth needs (`setup.sh --synth`: no PySpark,
# moto or DuckDB), then `cdk synth`, which reads the committed stack plan (never writes it) and
# runs cdk-nag and the quota gate, then cfn-lint on every template. Arguments go to `cdk synth`:
# `-c topology=<file>` synthesizes another topology (through <file>.stacks), `-o <dir>` writes
# elsewhere than cdk.out.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" --synth
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=cdk.out
previous=""
for argument in "$@"; do
  case "$previous" in -o | --output) out="$argument" ;; esac
  case "$argument" in --output=*) out="${argument#--output=}" ;; esac
  previous="$argument"
done

echo "== cdk synth (cdk-nag, the quota gate) into $out" >&2
cdk synth --quiet "$@"
echo "== cfn-lint" >&2
shopt -s nullglob
templates=("$out"/*.template.json)
if [ "${#templates[@]}" -eq 0 ]; then
  echo "synth: no templates in $out" >&2
  exit 1
fi
cfn-lint --config-file .cfnlintrc.yaml -- "${templates[@]}"
echo "synth: ${#templates[@]} templates in $out pass cdk-nag, the quota gate and cfn-lint" >&2
