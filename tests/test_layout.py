"""The layout is the architecture: libraries import no Prefect; data flows one way."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
LIBRARIES = ("synthesis", "evaluation", "agents")


def imports(package: str) -> dict[Path, set[str]]:
    found = {}
    for path in (ROOT / package).rglob("*.py"):
        text = path.read_text()
        found[path] = set(re.findall(r"^\s*(?:from|import)\s+([a-zA-Z_][\w]*)", text, re.M))
    return found


def test_libraries_import_no_prefect() -> None:
    for package in LIBRARIES:
        offenders = [str(p) for p, mods in imports(package).items() if "prefect" in mods]
        assert not offenders, offenders


def test_data_flows_one_way() -> None:
    # synthesis (spec -> data) never reaches up into evaluation, agents or flows.
    for path, mods in imports("synthesis").items():
        assert not mods & {"evaluation", "agents", "flows"}, path
    for path, mods in imports("evaluation").items():
        assert not mods & {"flows", "synthesis"}, path
