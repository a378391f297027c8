# Sourced by the other scripts: makes sure .venv exists and holds this checkout's dependencies.
# Reinstalls when pyproject.toml changes (a stamp file records the hash it installed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${BENCHFORGE_PYTHON:-$(command -v python3.11 || command -v python3)}"
STAMP="$VENV/.benchforge-installed"
WANT="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)-${BENCHFORGE_EXTRAS:-dev}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "installing Benchforge and its dependencies into $VENV (one-time, a few minutes)" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[${BENCHFORGE_EXTRAS:-dev}]"
  echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
