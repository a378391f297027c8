"""What a task scores, read from its files alone: no dbt run, no gold build
(``TaskFamily.scored_work``; the catalogue page's "Nodes scored" column).

A catalogue page lists every task, so it cannot afford a gold build per task; the scorers'
own rules are cheap to mirror on the files:

- ``de_impl`` scores every model of the gold repository: the ``.sql`` / ``.py`` files under
  the project's ``model-paths`` (``dbt_project.yml``, default ``models``);
- ``de_evol`` scores the models gold v2 adds or whose SQL it edits
  (:func:`benchforge.evaluation.de.tasks.changed_nodes` compares the manifests' ``raw_code``,
  which is the model file's text; here the overlay's files are compared with the
  repository's, whitespace-normalized the same way);
- in both, a model given ``node_weights: {name: 0}`` is not scored and not counted;
- ``de_arch`` and ``da_open`` are judged: their size is the number of rubric items.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.tasks.models import DeScoring

MODEL_SUFFIXES = (".sql", ".py")
PROJECT_FILE = "dbt_project.yml"
_SKIPPED_DIRS = frozenset({"target", "dbt_packages", "logs", "__pycache__"})


class ScoredWork(BaseModel):
    """The units a task is scored on: model names or rubric item ids, and what they are."""

    model_config = ConfigDict(frozen=True)

    unit: str
    names: list[str]

    @property
    def count(self) -> int:
        return len(self.names)


def model_paths(project_file: Path) -> list[str]:
    """The project's ``model-paths`` (dbt's default: ``models``)."""
    try:
        data = read_yaml(project_file.read_text()) or {}
    except OSError as err:
        raise ConfigError(f"{project_file}: cannot read ({err.strerror or err})") from None
    paths = data.get("model-paths", ["models"]) if isinstance(data, dict) else ["models"]
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigError(f"{project_file}: model-paths must be a list of folders, got {paths!r}")
    return paths


def model_files(root: Path, folders: list[str]) -> dict[str, str]:
    """Model files under ``root``'s model folders: relative POSIX path -> text."""
    found: dict[str, str] = {}
    for folder in folders:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(root)
            if (
                path.is_file()
                and path.suffix in MODEL_SUFFIXES
                and not _SKIPPED_DIRS.intersection(rel.parts)
            ):
                found[rel.as_posix()] = path.read_text(errors="replace")
    return found


def _by_name(files: dict[str, str]) -> dict[str, str]:
    """dbt names a model after its file (dbt refuses two files of one name)."""
    return {Path(rel).stem: text for rel, text in files.items()}


def _normalized(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def repo_models(repo: Path) -> dict[str, str]:
    """Model name -> code of the dbt project at ``repo``."""
    return _by_name(model_files(repo, model_paths(repo / PROJECT_FILE)))


def evol_changed_models(repo: Path, overlay: Path, removed: list[str]) -> list[str]:
    """Models gold v2 (``repo`` minus ``removed``, with ``overlay`` copied over it) adds or
    whose code it edits, as :func:`~benchforge.evaluation.de.tasks.changed_nodes` finds them
    on the two builds' manifests."""
    v1 = repo_models(repo)
    v2_project = overlay / PROJECT_FILE if (overlay / PROJECT_FILE).is_file() else None
    folders = model_paths(v2_project or repo / PROJECT_FILE)
    files = model_files(repo, folders)
    for rel in removed:
        files.pop(Path(rel).as_posix(), None)
    files.update(model_files(overlay, folders))
    v2 = _by_name(files)
    return sorted(
        name
        for name, code in v2.items()
        if name not in v1 or _normalized(code) != _normalized(v1[name])
    )


def weighted(names: list[str], scoring: DeScoring) -> list[str]:
    return sorted(n for n in names if scoring.node_weights.get(n, 1.0) != 0)
