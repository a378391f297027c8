"""What the candidate's end-to-end build left, carried across the trust boundary.

After the candidate's sandboxed dbt has run in ``candidate/``, a collect step (trusted code in
a sandbox seeing that tree read-only, see :mod:`benchforge.evaluation.de.boundary`) copies
dbt's ``manifest.json`` and ``run_results.json`` and exports every model relation the manifest
names as Parquet into a fresh ``collected-build/`` folder. The scorer reads only that folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel

from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.dbt.manifest import DbtManifest, parse_manifest
from benchforge.evaluation.dbt.runner import NodeResult, parse_results
from benchforge.evaluation.de.boundary import (
    ScoringFolders,
    UnsafeCollectedFile,
    collected_file_path,
    fresh_folder,
    read_collected_json,
)
from benchforge.evaluation.de.component import COLLECT_TIMEOUT_S, run_worker

CANDIDATE_DB = "cand.duckdb"
MANIFEST, RUN_RESULTS = "manifest.json", "run_results.json"


class CollectedBuild(BaseModel):
    folder: Path
    manifest: DbtManifest | None = None
    results: list[NodeResult] = []
    relations: dict[str, str] = {}  # "schema.alias" (lower case) -> Parquet file name
    relation_errors: dict[str, str] = {}  # "schema.alias" (lower case) -> why not exported
    raw_fingerprints: dict[str, str | None] = {}
    """"schema.table" (lower case) -> the raw table's fingerprint after the build
    (``cs_worker.fingerprint``): a build that changed its inputs shows here."""
    columns: dict[str, list[tuple[str, str]]] = {}
    """"schema.alias" (lower case) -> the relation's (column, type) in the candidate's
    database, in order, as the collect step read them."""
    problems: list[str] = []  # for the score's candidate errors

    def relation_file(self, schema: str, alias: str) -> str | None:
        return self.relations.get(f"{schema}.{alias}".lower())

    def relation_error(self, schema: str, alias: str) -> str | None:
        return self.relation_errors.get(f"{schema}.{alias}".lower())


def collect_build(
    folders: ScoringFolders,
    out: Path,
    dbt_work: str,
    sandbox: SandboxBackend,
    with_tables: bool,
    memory_mb: int = 2048,
    raw_tables: Sequence[tuple[str, str]] = (),
) -> CollectedBuild:
    """Collects ``candidate/<dbt_work>/target``'s artifacts (and, ``with_tables``, the model
    relations of the candidate's database) into the fresh folder ``out``."""
    fresh_folder(out)
    files = {MANIFEST: f"{dbt_work}/target/{MANIFEST}"}
    if with_tables:
        files[RUN_RESULTS] = f"{dbt_work}/target/{RUN_RESULTS}"
    plan: dict[str, Any] = {
        "mode": "collect_build",
        "dir": str(out),
        "root": str(folders.candidate),
        "files": files,
        "manifest": MANIFEST if with_tables else "",
        "database": CANDIDATE_DB,
        "database_name": Path(CANDIDATE_DB).stem,
        "raw_tables": [list(t) for t in raw_tables] if with_tables else [],
        "timeout_s": COLLECT_TIMEOUT_S,
        "threads": 2,
        "memory_mb": memory_mb,
    }
    plan_path = out / "plan.json"
    plan_path.write_text(json.dumps(plan))
    # Generous: it only copies tables, and never runs candidate SQL (views bind here, though).
    wall = COLLECT_TIMEOUT_S * 4 + 60
    _, failure = run_worker(sandbox, out, plan_path, wall, memory_mb, [folders.candidate])
    collected = CollectedBuild(folder=out)
    if failure is not None:
        collected.problems.append(f"collecting the candidate's build: {failure}")
    try:
        status = read_collected_json(out, "status.json")
    except UnsafeCollectedFile as err:
        collected.problems.append(f"collecting the candidate's build: {err}")
        return collected
    if not isinstance(status, dict):
        collected.problems.append("collecting the candidate's build: no status")
        return collected
    if status.get("failure"):
        collected.problems.append(str(status["failure"])[:300])
    copied = status.get("files")
    copied = copied if isinstance(copied, dict) else {}
    if copied.get(MANIFEST, "missing") is None:
        collected.manifest = _manifest(out, collected.problems)
    if with_tables and copied.get(RUN_RESULTS, "missing") is None:
        collected.results = _results(out, collected.problems)
    raw = status.get("raw")
    if isinstance(raw, dict):
        collected.raw_fingerprints = {
            str(k): v if isinstance(v, str) else None for k, v in raw.items()
        }
    for entry in status.get("relations") or []:
        if not isinstance(entry, dict):
            continue
        key = f"{entry.get('schema')}.{entry.get('name')}".lower()
        if isinstance(entry.get("file"), str):
            collected.relations[key] = entry["file"]
            columns = _column_list(entry.get("columns"))
            if columns is not None:
                collected.columns[key] = columns
        else:
            collected.relation_errors[key] = str(entry.get("error") or "not exported")[:300]
    return collected


def _column_list(found: object) -> list[tuple[str, str]] | None:
    if not isinstance(found, list):
        return None
    pairs = [tuple(p) for p in found if isinstance(p, list) and len(p) == 2]
    if len(pairs) != len(found) or not all(isinstance(v, str) for p in pairs for v in p):
        return None
    return [(str(name), str(kind)) for name, kind in pairs]


def _manifest(out: Path, problems: list[str]) -> DbtManifest | None:
    """The candidate's manifest: written by its sandboxed dbt, so any shape is possible."""
    try:
        return parse_manifest(read_collected_json(out, MANIFEST))
    except (UnsafeCollectedFile, ValueError, KeyError, TypeError, AttributeError) as err:
        problems.append(f"the candidate's dbt manifest is unreadable: {str(err)[:200]}")
        return None


def _results(out: Path, problems: list[str]) -> list[NodeResult]:
    try:
        return parse_results(read_collected_json(out, RUN_RESULTS))
    except (UnsafeCollectedFile, ValueError, KeyError, TypeError, AttributeError) as err:
        problems.append(f"the candidate's run_results.json is unreadable: {str(err)[:200]}")
        return []


def helper_files(collected: CollectedBuild, keys: set[str], dest: Path) -> dict[str, Path]:
    """Per-relation DuckDB files (table ``main.relation``) of the candidate's helper models
    ``keys`` ("schema.alias"), made by the scorer from the collected Parquet in ``dest``."""
    fresh_folder(dest)
    made: dict[str, Path] = {}
    for index, key in enumerate(sorted(keys)):
        file = collected.relations.get(key)
        if file is None:
            continue
        target = dest / f"h{index:04d}.duckdb"
        con = duckdb.connect(str(target))
        try:
            with collected_file_path(collected.folder, file) as path:
                con.execute(f"CREATE TABLE main.relation AS FROM read_parquet('{path}')")
        except (UnsafeCollectedFile, duckdb.Error):
            continue
        finally:
            con.close()
        made[key] = target
    return made
