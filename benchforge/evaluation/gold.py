"""Gold builds: a gold dbt repository built on a copy of a dataset's warehouse.

A build folder holds ``gold.duckdb`` (raw + every model), ``manifest.json``,
``run_results.json``, ``catalog.json`` and the dbt docs site (``docs/index.html``; a build
with ``docs=False``, as scoring caches its golds, has neither until :func:`add_docs`), plus
its record (:class:`~benchforge.core.records.GoldBuild`, ``build.json``, written last)
describing what was built from what. Builds are keyed by the dataset version (a hash of its
table checksums) and the repository version (a hash of its files).

Any dbt project builds: dbt runs with Benchforge's profile and target whatever the project
names (:mod:`benchforge.evaluation.dbt.runner`), ``dbt build`` loads its seeds, and a build
is stored only once every model, seed and snapshot of its manifest is in ``gold.duckdb``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.artifacts import LAYOUT
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import GOLD_DB, PACKAGES_DIR, DatasetRecord, GoldBuild
from benchforge.evaluation.dbt.errors import dbt_error_summary
from benchforge.evaluation.dbt.packages import buildable, install_packages, vendored_packages
from benchforge.evaluation.dbt.project import require_dbt_project
from benchforge.evaluation.dbt.runner import DbtInvocation, NodeResult, run_dbt
from benchforge.evaluation.dbt.warehouse import missing_relations, unreadable_sources

REPO_SUFFIXES = {".sql", ".yml", ".yaml", ".md", ".csv", ".py"}


class GoldBuildError(BenchforgeError):
    """``dbt build`` of a gold repository failed, or left relations of its manifest unbuilt:
    the message gives dbt's own error lines and names the nodes."""


class NotADatasetError(BenchforgeError):
    """A folder given as a dataset is not one (no completion record or no warehouse)."""


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
    path = LAYOUT.dataset_record_file(dataset_dir)
    if not path.is_file():
        raise NotADatasetError(
            f"{dataset_dir} is not a dataset: it has no {path.name} (make one with "
            "`benchforge synth` or `benchforge dataset import`)"
        )
    record = DatasetRecord.model_validate_json(path.read_text())
    checksums = json.dumps(record.table_checksums, sort_keys=True).encode()
    return hashlib.sha256(checksums).hexdigest()[:16]


def copy_warehouse(dataset_dir: Path, dest: Path) -> Path:
    source = dataset_dir / "warehouse.duckdb"
    if not source.is_file():
        raise NotADatasetError(f"{dataset_dir} has no warehouse.duckdb (is it a dataset?)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    return dest


def build_gold(
    domain: str, repo: Path, dataset_dir: Path, out: Path, docs: bool = True
) -> GoldBuild:
    """Runs ``dbt build`` (seeds, models, snapshots, tests) of ``repo`` on a copy of the
    dataset's warehouse, into ``out``. A build that fails, yields no models, or leaves a
    relation of its manifest out of ``gold.duckdb`` is an error, never a stored gold."""
    repo = require_dbt_project(repo)
    dataset_dir, out = dataset_dir.resolve(), out.resolve()
    data_version = dataset_version(dataset_dir)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    db = copy_warehouse(dataset_dir, out / GOLD_DB)
    work = out / "_dbt"
    project = _with_packages(repo, out, work)
    build = run_dbt(project, db, ["build"], work)
    failures = build.failed()
    if not build.ok or failures:
        failed = f" [failed: {', '.join(r.unique_id for r in failures)}]" if failures else ""
        raise GoldBuildError(
            f"dbt build of {repo} failed: {dbt_error_summary(build)}{failed}"
            + _source_hint(work / "target" / "manifest.json", db)
        )
    if _count(build, "model.") == 0:
        raise GoldBuildError(
            f"dbt build of {repo} built no models (is it a dbt project with models/?): "
            f"{dbt_error_summary(build) or build.log_tail[-800:]}"
        )
    manifest = work / "target" / "manifest.json"
    missing = missing_relations(manifest, db)
    if missing:
        listed = ", ".join(f"{n.unique_id} (at {n.where})" for n in missing[:20])
        more = f" and {len(missing) - 20} more" if len(missing) > 20 else ""
        raise GoldBuildError(
            f"dbt build of {repo} reported success, but {len(missing)} relations of its "
            f"manifest are not in the gold warehouse {db.name}: {listed}{more}. Models must "
            "build into the profile's database (no database: config, no hook dropping them)"
        )
    for name in ("manifest.json", "run_results.json"):
        shutil.copyfile(work / "target" / name, out / name)
    if docs:
        _docs(project, db, work, out)
    shutil.rmtree(work, ignore_errors=True)
    record = GoldBuild(
        domain=domain,
        repo=str(repo),
        repo_version=repo_version(repo),
        dataset_version=data_version,
        folder=out,
        seconds=build.seconds,
        models=_count(build, "model."),
        tests=_count(build, "test.") + _count(build, "unit_test."),
    )
    LAYOUT.gold_record_file(out).write_text(record.model_dump_json(indent=2) + "\n")
    return record


def _source_hint(manifest: Path, db: Path) -> str:
    """Why the project's sources may not resolve on the dataset, when that is the cause."""
    if not manifest.is_file():
        return ""
    problems = unreadable_sources(manifest, db)
    return "\n" + "\n".join(problems) if problems else ""


def _with_packages(repo: Path, out: Path, work: Path) -> Path:
    """The project dbt builds (:func:`buildable`). Vendored packages are kept in the build
    (``dbt_packages/``): the scorer installs them into every submission it builds."""
    project = buildable(repo, work / "project")
    vendored = vendored_packages(repo)
    if vendored is not None:
        install_packages(vendored, out, PACKAGES_DIR)
    return project


def add_docs(repo: Path, folder: Path) -> None:
    """Generate the catalog and docs site of a gold build made without them (``docs=False``,
    as scoring builds its golds), against its own ``gold.duckdb``; a no-op when it has them."""
    folder = folder.resolve()
    if (folder / "catalog.json").is_file():
        return
    work = folder / "_dbt"
    try:
        _docs(
            _with_packages(require_dbt_project(repo), folder, work), folder / GOLD_DB, work, folder
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _docs(repo: Path, db: Path, work: Path, out: Path) -> None:
    docs = run_dbt(repo, db, ["docs", "generate"], work)
    if not docs.ok:
        raise GoldBuildError(f"dbt docs generate failed for {repo}: {dbt_error_summary(docs)}")
    site = out / "docs"
    site.mkdir()
    for name in ("index.html", "catalog.json", "manifest.json"):
        shutil.copyfile(work / "target" / name, site / name)
    shutil.copyfile(work / "target" / "catalog.json", out / "catalog.json")


class BuildCounts(BaseModel):
    """What a gold build ran, by kind, from its ``run_results.json``."""

    models: int
    tests: int
    seeds: int
    snapshots: int

    def summary(self) -> str:
        return f"{self.models} models, {self.tests} tests, {self.seeds} seeds" + (
            f", {self.snapshots} snapshots" if self.snapshots else ""
        )


def build_counts(run_results: str | bytes) -> BuildCounts:
    """Counts of the nodes in a gold build's ``run_results.json`` (its text)."""
    ids = [str(r.get("unique_id", "")) for r in json.loads(run_results).get("results", [])]

    def count(*prefixes: str) -> int:
        return sum(1 for i in ids if i.startswith(prefixes))

    return BuildCounts(
        models=count("model."),
        tests=count("test.", "unit_test."),
        seeds=count("seed."),
        snapshots=count("snapshot."),
    )


def _count(invocation: DbtInvocation, prefix: str) -> int:
    return sum(1 for r in invocation.results if r.unique_id.startswith(prefix))


def load_gold(folder: Path) -> GoldBuild:
    return GoldBuild.model_validate_json(LAYOUT.gold_record_file(folder).read_text())


__all__ = [
    "BuildCounts",
    "GoldBuildError",
    "NodeResult",
    "NotADatasetError",
    "build_counts",
    "build_gold",
    "load_gold",
]
