#!/usr/bin/env bash
# The fast loop (about 4 minutes): the test command's lint and type checks, then the unit-level
# test files (no whole-pipeline, README, shipped-task or reward-hack catalogue runs; those stay in
# scripts/test.sh and CI). Extra arguments go to pytest.
set -euo pipefail
SECONDS=0
trap 'echo "== fast loop: $((SECONDS / 60)) min $((SECONDS % 60)) s (budget: 5 min)"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
FAST_TESTS=(
  tests/core
  tests/agents
  tests/synthesis
  tests/anonymize
  tests/evaluation/calibration
  tests/evaluation/judges
  tests/evaluation/test_de_compare.py
  tests/evaluation/test_de_rounding.py
  tests/evaluation/test_export_relations.py
  tests/evaluation/test_hack_checks.py
  tests/evaluation/test_skeleton.py
  tests/evaluation/test_de_boundary.py
  tests/evaluation/test_leaderboard.py
  tests/harness/test_agent_mounts.py
)
echo "== ruff" && ruff check . && ruff format --check .
echo "== mypy" && mypy
echo "== import-linter" && lint-imports
echo "== pytest (fast selection)" && pytest -q -n 2 --dist loadfile "${FAST_TESTS[@]}" "$@"
