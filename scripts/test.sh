#!/usr/bin/env bash
# The test command: lint + format check + types + the test suite. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
echo "== ruff" && ruff check . && ruff format --check .
echo "== mypy" && mypy benchforge synthesis evaluation agents flows
echo "== pytest" && pytest -q "$@"
