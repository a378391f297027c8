"""A maintainer's dbt project before anything is built: is it one, and what does it hold.

``parse_project`` runs ``dbt parse`` (a few seconds, no data read) so that ``task validate``
knows every model's layer, tags and parents without a gold build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from benchforge.core.errors import BenchforgeError
from benchforge.evaluation.dbt.errors import dbt_error_summary
from benchforge.evaluation.dbt.manifest import DbtManifest, load_manifest
from benchforge.evaluation.dbt.packages import buildable
from benchforge.evaluation.dbt.runner import run_dbt

PROJECT_FILE = "dbt_project.yml"
PARSE_DB = "gold.duckdb"  # named like a gold build's, so relations render the same; never made


class DbtProjectError(BenchforgeError):
    """A folder that should be a dbt project is not one, or dbt cannot parse it."""


def require_dbt_project(repo: Path) -> Path:
    """``repo`` resolved, or an error saying what is missing (the folder, its
    ``dbt_project.yml``)."""
    repo = repo.expanduser().resolve()
    if not repo.is_dir():
        raise DbtProjectError(f"{repo}: no such folder (expected a dbt project)")
    if not (repo / PROJECT_FILE).is_file():
        hint = ""
        nested = sorted(p.parent for p in repo.glob(f"*/{PROJECT_FILE}"))
        if nested:
            hint = f"; did you mean {nested[0]}?"
        raise DbtProjectError(f"{repo} is not a dbt project: it has no {PROJECT_FILE}{hint}")
    return repo


def parse_project(repo: Path, work: Path, timeout_s: float = 300) -> DbtManifest:
    """The manifest of ``repo`` as ``dbt parse`` sees it with Benchforge's profile (on a
    DuckDB path under ``work`` that parsing never creates). Raises :class:`DbtProjectError`
    with dbt's own error line when the project does not parse."""
    repo = require_dbt_project(repo)
    work = work.resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    project = buildable(repo, work / "project")
    parsed = run_dbt(project, work / PARSE_DB, ["parse"], work, timeout_s=timeout_s)
    manifest = work / "target" / "manifest.json"
    if not parsed.ok or not manifest.is_file():
        raise DbtProjectError(f"dbt parse of {repo} failed: {dbt_error_summary(parsed)}")
    return load_manifest(manifest)
