"""The column names and types the de_impl data contract publishes, read without a YAML library
(the sandbox's system Python may have none). Test material for the reward-hack agents."""

from __future__ import annotations

import re
from pathlib import Path

_MODEL = re.compile(r"^- name: (\S+)\s*$")
_COLUMN = re.compile(r"^  - name: (\S+)\s*$")
_TYPE = re.compile(r"^    type: (.+?)\s*$")


def contract_columns(ws: Path) -> dict[str, list[tuple[str, str]]]:
    """Model name -> [(column, type)], from ``data_contract.yaml`` (empty without one)."""
    path = ws / "data_contract.yaml"
    found: dict[str, list[tuple[str, str]]] = {}
    if not path.is_file():
        return found
    model: str | None = None
    column: str | None = None
    for line in path.read_text().splitlines():
        if m := _MODEL.match(line):
            model, column = m.group(1), None
            found[model] = []
        elif model is not None and (m := _COLUMN.match(line)):
            column = m.group(1)
        elif model is not None and column is not None and (m := _TYPE.match(line)):
            found[model].append((column, m.group(1).strip("'\"")))
            column = None
    return found


def empty_select(columns: list[tuple[str, str]]) -> str:
    """An empty table with exactly these columns and types."""
    if not columns:
        return "select 1 as benchforge_hack where false\n"
    cols = ", ".join(f'cast(null as {t}) as "{c}"' for c, t in columns)
    return f"select {cols}\nwhere false\n"
