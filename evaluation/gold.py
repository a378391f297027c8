"""Gold builds: a gold dbt repository built on a copy of a dataset's warehouse.

A build folder holds ``gold.duckdb`` (raw + every model), ``manifest.json``,
``run_results.json``, ``catalog.json`` and the dbt docs site (``docs/index.html``), plus
its record (:class:`~benchforge.core.records.GoldBuild`, ``build.json``, written last)
describing what was built from what. Builds are keyed by the dataset version (a hash of its
table checksums) and the repository version (a hash of its files).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from benchforge.core.artifacts import LAYOUT
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import GOLD_DB, DatasetRecord, GoldBuild
from benchforge.evaluation.dbt.runner import DbtInvocation, NodeResult, run_dbt

REPO_SUFFIXES = {".sql", ".yml", ".yaml", ".md", ".csv", ".py"}


class GoldBuildError(BenchforgeError):
    """``dbt build`` of a gold repository failed: the message names the failing nodes."""


def repo_version(repo: Path) -> str:
    """Hash of the repository's source files (not its target/ or logs/)."""
    h = hashlib.sha256()
    for path in sorted(p for p in repo.rglob("*") if p.is_file()):
        rel = path.relative_to(repo)
        if rel.parts[0] in ("target", "logs", "dbt_packages") or path.suffix not in REPO_SUFFIXES:
            continue
        h.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def dataset_version(dataset_dir: Path) -> str:
    """Hash of the dataset's table checksums, read from its completion record."""
    record = DatasetRecord.model_validate_json(LAYOUT.dataset_record_file(dataset_dir).read_text())
    checksums = json.dumps(record.table_checksums, sort_keys=True).encode()
    return hashlib.sha256(checksums).hexdigest()[:16]


def copy_warehouse(dataset_dir: Path, dest: Path) -> Path:
    source = dataset_dir / "warehouse.duckdb"
    if not source.is_file():
        raise BenchforgeError(f"{dataset_dir} has no warehouse.duckdb (is it a dataset?)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    return dest


def build_gold(
    domain: str, repo: Path, dataset_dir: Path, out: Path, docs: bool = True
) -> GoldBuild:
    """Runs ``dbt build`` (models + tests) of ``repo`` on a copy of the dataset's warehouse.
    A build that yields no models is an error, never an empty gold."""
    repo, dataset_dir, out = repo.resolve(), dataset_dir.resolve(), out.resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    db = copy_warehouse(dataset_dir, out / GOLD_DB)
    work = out / "_dbt"
    build = run_dbt(repo, db, ["build"], work)
    failures = build.failed()
    if not build.ok or failures:
        names = ", ".join(
            f"{r.unique_id} ({r.status}: {(r.message or '')[:120]})" for r in failures
        )
        raise GoldBuildError(f"dbt build of {repo} failed: {names or build.log_tail[-1500:]}")
    if _count(build, "model.") == 0:
        raise GoldBuildError(
            f"dbt build of {repo} built no models (is it a dbt project with models/?): "
            f"{build.log_tail[-800:]}"
        )
    for name in ("manifest.json", "run_results.json"):
        shutil.copyfile(work / "target" / name, out / name)
    if docs:
        _docs(repo, db, work, out)
    shutil.rmtree(work, ignore_errors=True)
    record = GoldBuild(
        domain=domain,
        repo=str(repo),
        repo_version=repo_version(repo),
        dataset_version=dataset_version(dataset_dir),
        folder=out,
        seconds=build.seconds,
        models=_count(build, "model."),
        tests=_count(build, "test.") + _count(build, "unit_test."),
    )
    LAYOUT.gold_record_file(out).write_text(record.model_dump_json(indent=2) + "\n")
    return record


def _docs(repo: Path, db: Path, work: Path, out: Path) -> None:
    docs = run_dbt(repo, db, ["docs", "generate"], work)
    if not docs.ok:
        raise GoldBuildError(f"dbt docs generate failed for {repo}: {docs.log_tail[-800:]}")
    site = out / "docs"
    site.mkdir()
    for name in ("index.html", "catalog.json", "manifest.json"):
        shutil.copyfile(work / "target" / name, site / name)
    shutil.copyfile(work / "target" / "catalog.json", out / "catalog.json")


def _count(invocation: DbtInvocation, prefix: str) -> int:
    return sum(1 for r in invocation.results if r.unique_id.startswith(prefix))


def load_gold(folder: Path) -> GoldBuild:
    return GoldBuild.model_validate_json(LAYOUT.gold_record_file(folder).read_text())


__all__ = ["GoldBuildError", "NodeResult", "build_gold", "load_gold"]
