#!/usr/bin/env bash
# The test command: lint + format check + types + import contracts + the test suite.
#   bash scripts/test.sh          the full loop (CI): every test
#   bash scripts/test.sh --fast   the fast loop: every test not marked slow (`pytestmark =
#                                 pytest.mark.slow` in its file; tests/README.md says which)
# Other arguments go to pytest.
set -euo pipefail
SECONDS=0
FAST=0
if [ "${1:-}" = "--fast" ]; then FAST=1; shift; fi
if [ "$FAST" = 1 ]; then LOOP="fast loop"; BUDGET=5; else LOOP="test command"; BUDGET=45; fi
trap 'echo "== $LOOP: $((SECONDS / 60)) min $((SECONDS % 60)) s (budget: $BUDGET min)"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
# One command per line: in an `a && b` list a failing `b` does not stop the script (set -e
# ignores every command of such a list but the last), so a lint error would pass unseen.
echo "== ruff"
ruff check .
ruff format --check .
echo "== mypy"
mypy
echo "== import-linter"
lint-imports
if [ "$FAST" = 1 ]; then
  echo "== pytest (not slow)" && pytest -q -n 2 --dist loadfile -m "not slow" "$@"
  exit 0
fi
echo "== sqlfluff"
sqlfluff lint dbt_projects task_specs/*/*/gold_v2 --processes 2
bash scripts/_chromium.sh || echo "no chromium: tests/harness/test_view.py will fail" >&2  # for test_view.py
bash scripts/_strace.sh || echo "no strace: the scorer open-path audit tests will fail" >&2
# Two workers, each test file on one of them (module fixtures such as the README's work
# folder stay shared within a file); the slowest tests are listed at the end.
echo "== pytest" && pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15 "$@"
