#!/usr/bin/env bash
# Makes sure headless Chromium is here for tests/harness/test_view.py (it opens the run browser's pages):
# installs Debian's `chromium` package when /usr/bin/chromium is missing. Needs root (CI runs as
# root); elsewhere it says what to run and leaves it to the test to fail.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "scripts/_chromium.sh: /usr/bin/chromium is missing; install it with" \
    "'sudo apt-get install -y --no-install-recommends chromium' (tests/harness/test_view.py needs it)" >&2
  exit 0
fi
echo "installing chromium (for tests/harness/test_view.py; one-time)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version >&2
