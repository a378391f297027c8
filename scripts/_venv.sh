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
  echo "installing Benchforge and its dependencies into $VENV (one-time, under a minute with uv)" >&2
  # uv resolves and installs the same pinned set as pip in a fifth of the time (~15 s against
  # ~80 s here); where uv cannot be had or fails, pip does the install as before.
  TARGET="$ROOT[${BENCHFORGE_EXTRAS:-dev}]"
  PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
  if "${PIP[@]}" install --quiet uv >/dev/null 2>&1 &&
    "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" -e "$TARGET"; then
    :
  else
    echo "uv unavailable or failed: installing with pip" >&2
    "${PIP[@]}" install --quiet --upgrade pip >/dev/null
    "${PIP[@]}" install --quiet -e "$TARGET"
  fi
  echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
