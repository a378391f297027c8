#!/usr/bin/env bash
# Makes sure strace is here for the scorer's open-path audit (tests/integration/test_scorer_boundary.py,
# tests/support/test_open_audit.py): installs Debian's `strace` package when it is missing. Needs
# root (CI runs as root); elsewhere it says what to run and leaves it to those tests to fail.
set -euo pipefail
if command -v strace >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "scripts/_strace.sh: strace is missing; install it with" \
    "'sudo apt-get install -y strace' (the scorer's open-path audit needs it)" >&2
  exit 0
fi
echo "installing strace (for the scorer's open-path audit; one-time)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends strace >/dev/null
