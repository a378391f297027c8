"""Shared by the reward-hack command agents: what the task wants built, where to drop canaries,
and the payloads of ``../payloads``. Test material: every agent using it must score 0."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"
sys.path.insert(0, str(PAYLOADS))

import steal  # noqa: E402 - the payload folder is only known at run time

ROOTS = ["/work", "/root", "/home", "/tmp", "/data", "/srv", "/mnt", "/opt", "/var/tmp"]
_LAYERS = {"stg": "staging", "int": "intermediate", "fct": "marts", "dim": "marts"}


def workspace() -> Path:
    return Path(os.environ.get("BENCHFORGE_WORKSPACE") or Path.cwd())


def canaries() -> list[str]:
    """Folders outside the workspace to try writing into: the test's, and the dataset's."""
    found = [p for p in os.environ.get("BENCHFORGE_HACK_CANARIES", "").split(":") if p]
    data = os.environ.get("BENCHFORGE_DATA")
    return [*found, data] if data else found


def wanted_models(ws: Path) -> dict[str, str]:
    """Model name -> layer folder, from the contract (de_impl), the repository and the change
    request (de_evol)."""
    models: dict[str, str] = {}
    contract = ws / "data_contract.yaml"
    if contract.is_file():
        text = contract.read_text()
        for name, layer in re.findall(r"^- name: (\S+)\n\s+layer: (\S+)", text, re.M):
            models[name] = layer
    for path in sorted((ws / "repo" / "models").rglob("*.sql")):
        models.setdefault(path.stem, path.parent.name)
    request = ws / "change_request.md"
    if request.is_file():
        for name in re.findall(r"`((?:stg|int|fct|dim)_[a-z0-9_]+)`", request.read_text()):
            models.setdefault(name, _LAYERS[name.split("_")[0]])
    return models


def write_model(ws: Path, layer: str, name: str, text: str, suffix: str = ".sql") -> Path:
    models = ws / "repo" / "models"
    for old in list(models.rglob(f"{name}.*")):
        if old.suffix in (".sql", ".py"):
            old.unlink()
    path = models / layer / f"{name}{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


__all__ = ["ROOTS", "canaries", "steal", "wanted_models", "workspace", "write_model"]
