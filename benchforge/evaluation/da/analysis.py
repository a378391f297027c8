"""The analysis database a ``da_open`` agent works on: the task's marts, copied out of the gold
build of its dataset into one small DuckDB file.

The agent gets analysis-ready tables, not the raw warehouse nor the whole gold build, so the
question is about analysis and the database holds nothing the task did not name (no staging
models, no raw tables to reverse-engineer). Anchors are evaluated on this same file, so what the
rubric cites is exactly what the agent can compute.

One folder per (marts, dataset version, repository version) under ``work/agent-data``, written
to a temporary folder and renamed into place: concurrent trials of the same task either find the
finished folder or build their own copy, and never read a half-written one.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import duckdb

from benchforge.core.sql import literal, qualified, quote
from benchforge.evaluation.da.errors import spec_error, task_file
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.tasks import gold_cache
from benchforge.evaluation.gold import dataset_version, repo_version
from benchforge.evaluation.judges.models import content_hash
from benchforge.evaluation.tasks.models import LoadedTask

ANALYSIS_DB = "analysis.duckdb"
AGENT_DATA = "agent-data"


def analysis_key(spec: DaOpenTask, dataset_dir: Path, repo: Path) -> str:
    """What the analysis database depends on: the marts, the dataset and the gold repository."""
    return content_hash(
        {
            "marts": sorted(spec.marts),
            "dataset": dataset_version(dataset_dir),
            "repo": repo_version(repo),
        }
    )


def analysis_db(task: LoadedTask, dataset_dir: Path, work: Path) -> Path:
    """The folder holding ``analysis.duckdb`` (the task's marts as tables of schema ``main``,
    same names) for ``dataset_dir``; built once from the gold build cached under
    ``work/gold``. A mart that the gold build lacks is a ``TaskSpecError`` on ``marts[i]``."""
    spec = _spec(task)
    root = work / AGENT_DATA
    folder = root / analysis_key(spec, dataset_dir, task.repo)
    if (folder / ANALYSIS_DB).is_file():
        return folder
    gold = gold_cache(work / "gold", spec.domain, task.repo, dataset_dir)
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.mkdir()
    try:
        _copy_marts(task, spec, gold, tmp / ANALYSIS_DB)
        try:
            os.rename(tmp, folder)
        except OSError:  # another trial finished first: its copy is the same
            if not (folder / ANALYSIS_DB).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _copy_marts(task: LoadedTask, spec: DaOpenTask, gold: Path, dest: Path) -> None:
    manifest = load_manifest(gold / "manifest.json")
    relations: list[tuple[str, str]] = []
    for i, name in enumerate(spec.marts):
        node = manifest.models.get(name)
        if node is None:
            raise spec_error(
                task_file(task),
                f"marts[{i}]",
                f"'{name}' is not a model of the gold build of {spec.repo}",
            )
        relations.append((name, qualified("gold", node.schema_, node.alias)))
    con = duckdb.connect(str(dest))
    try:
        con.execute(f"ATTACH {literal(str(gold / 'gold.duckdb'))} AS gold (READ_ONLY)")
        for name, relation in relations:
            con.execute(f"CREATE TABLE main.{quote(name)} AS SELECT * FROM {relation}")
        con.execute("DETACH gold")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _spec(task: LoadedTask) -> DaOpenTask:
    if not isinstance(task.spec, DaOpenTask):
        raise TypeError(f"{task.key} is a {task.spec.family} task, not a da_open task")
    return task.spec
