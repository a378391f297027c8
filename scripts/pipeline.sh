#!/usr/bin/env bash
# The main job: the nightly evaluation on embedded defaults (DuckDB, ./artifacts, Prefect's
# ephemeral server, the Benchforge mock LLM server when no API key is configured):
# synthesize (or reuse) -> build gold -> verify tasks -> run agents -> score -> report.
# Extra arguments go to `benchforge nightly` (e.g. --suite de-ads, --agent oracle).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
exec benchforge nightly "$@"
