#!/usr/bin/env bash
# The fast loop (under 5 minutes here): scripts/test.sh --fast. Extra arguments go to pytest.
exec bash "$(dirname "${BASH_SOURCE[0]}")/test.sh" --fast "$@"
