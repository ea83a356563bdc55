#!/usr/bin/env bash
# The main job: synth every account's stack, run the gates, start a local AWS (moto on
# 127.0.0.1), bootstrap and deploy each account with the CDK CLI, print what was deployed and
# the access report. Stops everything it started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" --all
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python -m local_aws "$@"
