# Sourced by the other scripts: makes sure .venv exists and holds this checkout's dependencies.
# Reinstalls when pyproject.toml or this script changes (a stamp file records the hash it
# installed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${BENCHFORGE_PYTHON:-$(command -v python3.11 || command -v python3)}"
STAMP="$VENV/.benchforge-installed"
# (this script is part of what was installed: a venv an older version of it made is redone)
WANT="$(cat "$ROOT/pyproject.toml" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
WANT="$WANT-${BENCHFORGE_EXTRAS:-dev}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "installing Benchforge and its dependencies into $VENV (one-time, under a minute with uv)" >&2
  # uv resolves and installs the same pinned set as pip in a fraction of the time; where uv
  # cannot be had or fails, pip does the install as before. --compile-bytecode as pip does:
  # with PYTHONDONTWRITEBYTECODE set (as on these machines) nothing would write the .pyc files
  # later, and every process would compile prefect, dbt and GE from source (the test command
  # ran far slower).
  TARGET="$ROOT[${BENCHFORGE_EXTRAS:-dev}]"
  PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
  if "${PIP[@]}" install --quiet uv >/dev/null 2>&1 &&
    "$VENV/bin/uv" pip install --quiet --compile-bytecode --python "$VENV/bin/python" \
      -e "$TARGET"; then
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
