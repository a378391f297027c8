#!/usr/bin/env bash
# The main job: the end-to-end pipeline on embedded defaults (DuckDB, ./artifacts, Prefect's
# ephemeral server). Extra arguments go to `benchforge pipeline` (e.g. --scale 0.1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
exec benchforge pipeline "$@"
