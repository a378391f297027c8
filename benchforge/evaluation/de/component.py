"""The component-score (CS) step: each candidate model run alone, in the sandbox, on exactly the
inputs it is owed.

For every gold node the candidate implements, the scorer materializes a fresh DuckDB file per
database name the candidate's compiled SQL uses, holding only:

- the gold output of the node's *gold parents* (the upstream models the gold manifest declares),
  under the names the candidate's SQL gives them;
- the raw tables it reads as sources, copied from the dataset's warehouse (never from the gold
  build, so a ``sources:`` entry pointing at a gold schema finds nothing);
- the seeds it refs, as the gold build loaded them (seeds are inputs, like raw tables);
- models only the candidate has (helpers), from the candidate's own end-to-end build.

Never the node's own gold, a descendant's, or the gold warehouse. The sandboxed worker
(:mod:`benchforge.evaluation.de.cs_worker`) then runs each node's compiled SQL, which must be
exactly one ``SELECT`` (parsed by DuckDB), with external access disabled and the configuration
locked, and stores the result. A collect step then exports each result as Parquet into a
fresh folder (:mod:`benchforge.evaluation.de.boundary`), from which the scorer loads it to
compare it with the gold (:mod:`benchforge.evaluation.de.scoring`): the scorer never opens the
worker's folders.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
from pydantic import BaseModel

from benchforge.core.sandbox import SandboxBackend, SandboxError, SandboxLimits, SandboxRequest
from benchforge.core.sandbox.models import Isolation
from benchforge.core.sql import qualified, quote
from benchforge.evaluation.dbt.manifest import DbtManifest, ModelNode
from benchforge.evaluation.de import cs_worker
from benchforge.evaluation.de.boundary import (
    ScoringFolders,
    UnsafeCollectedFile,
    fresh_folder,
    read_collected_json,
)

WORKER_SOURCE = Path(cs_worker.__file__).read_text()
GOLD_DB_NAME = "gold.duckdb"
COLLECT_TIMEOUT_S = 120.0  # exporting one relation (the collect step runs no candidate SQL)
_IDENTIFIER = re.compile(r'"((?:[^"]|"")*)"|([^."]+)')


class Relation(BaseModel):
    database: str
    schema_: str
    name: str


class NodeInput(BaseModel):
    source: str  # "gold:<schema>.<name>" (the gold build) or "cand:<schema>.<name>" (helpers)
    target: Relation  # where the candidate's SQL looks for it


class ComponentOutcome(BaseModel):
    """What the sandboxed run of one node produced."""

    output: str | None  # the collected Parquet file (in ``collected-cs``) of ``main.result``
    error: str | None = None


class ComponentRun(BaseModel):
    outcomes: dict[str, ComponentOutcome]
    isolation: Isolation | None = None
    seconds: dict[str, float] = {}


def parse_relation(relation: str) -> Relation | None:
    """``"db"."schema"."name"`` (as dbt renders it) -> its parts; None if not three parts."""
    parts = [
        quoted.replace('""', '"') if quoted else bare
        for quoted, bare in _IDENTIFIER.findall(relation)
    ]
    if len(parts) != 3:
        return None
    return Relation(database=parts[0], schema_=parts[1], name=parts[2])


def node_inputs(
    name: str, gold: DbtManifest, cand: DbtManifest, raw_tables: set[tuple[str, str]]
) -> list[NodeInput]:
    """The relations the candidate's version of ``name`` is owed (see the module doc)."""
    node = cand.models[name]
    inputs: list[NodeInput] = []
    for parent in gold.parents(name):
        theirs = cand.models.get(parent)
        target = parse_relation(theirs.relation) if theirs is not None else None
        if target is not None:
            g = gold.models[parent]
            inputs.append(NodeInput(source=f"gold:{g.schema_}.{g.alias}", target=target))
    source_ids = set(node.sources)
    for uid in source_ids:
        target = parse_relation(cand.sources.get(uid, ""))
        if target is not None and (target.schema_.lower(), target.name.lower()) in raw_tables:
            # Read from the gold build's untouched copy of the raw data: same tables, same rows.
            inputs.append(NodeInput(source=f"gold:{target.schema_}.{target.name}", target=target))
    for uid in node.seeds:
        target = parse_relation(cand.seeds.get(uid, ""))
        loaded = parse_relation(gold.seeds.get(uid, ""))
        if target is not None and loaded is not None:
            inputs.append(NodeInput(source=f"gold:{loaded.schema_}.{loaded.name}", target=target))
    for uid in node.depends_on:
        helper = cand.by_id.get(uid)
        if helper is None or helper.name in gold.models:
            continue  # gold models reach a node only as gold parents
        target = parse_relation(helper.relation)
        if target is not None:
            inputs.append(NodeInput(source=f"cand:{helper.schema_}.{helper.alias}", target=target))
    return inputs


def raw_tables(raw_db: Path) -> set[tuple[str, str]]:
    """(schema, table) of the dataset's warehouse, lower case."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{raw_db}' AS raw (READ_ONLY)")
        return {(s.lower(), t.lower()) for s, t in _tables(con, "raw")}
    finally:
        con.close()


def raw_fingerprints(raw_db: Path, tables: set[tuple[str, str]]) -> dict[str, str | None]:
    """ "schema.table" -> the dataset's raw table's fingerprint, as the collect step takes the
    candidate's after its build (``cs_worker.fingerprint``)."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{raw_db}' AS raw (READ_ONLY)")
        return {
            f"{schema}.{table}": cs_worker.fingerprint(con, qualified("raw", schema, table))
            for schema, table in sorted(tables)
        }
    finally:
        con.close()


def _tables(con: duckdb.DuckDBPyConnection, database: str) -> set[tuple[str, str]]:
    rows = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ?", [database]
    ).fetchall()
    rows += con.execute(
        "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = ? "
        "AND NOT internal",
        [database],
    ).fetchall()
    return {(str(s), str(t)) for s, t in rows}


def _file_name(schema: str, table: str) -> str:
    return hashlib.sha256(f"{schema}\0{table}".encode()).hexdigest()[:20] + ".duckdb"


def export_relations(source_db: Path, folder: Path) -> dict[str, Path]:
    """One small DuckDB file per relation of ``source_db`` (table ``main.relation``), written
    once into ``folder`` (a marker records completion; concurrent scorers wait on a lock).
    The file is attached under its own stem, the catalog name dbt-duckdb wrote into the SQL of
    its views (a view of ``gold.duckdb`` reads ``"gold"."staging"."stg_x"``)."""
    database = source_db.stem
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "relations.json"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            con = duckdb.connect()
            try:
                con.execute(f"ATTACH '{source_db}' AS {quote(database)} (READ_ONLY)")
                found = {}
                for schema, table in sorted(_tables(con, database)):
                    name = _file_name(schema, table)
                    con.execute(f"ATTACH '{folder / name}' AS rel_out")
                    con.execute(
                        f"CREATE OR REPLACE TABLE rel_out.main.relation AS "
                        f"FROM {qualified(database, schema, table)}"
                    )
                    con.execute("DETACH rel_out")
                    found[f"{schema}.{table}"] = name
            finally:
                con.close()
            marker.write_text(json.dumps(found, indent=1, sort_keys=True))
    names: dict[str, str] = json.loads(marker.read_text())
    return {key.lower(): folder / name for key, name in names.items()}


class _Sources:
    """Where each owed input's data lives: per-relation files of the gold build (its models and
    its untouched copy of the raw tables) and of the candidate's own build (helpers)."""

    def __init__(self, gold: dict[str, Path], cand: dict[str, Path], raw: set[tuple[str, str]]):
        self.gold, self.cand, self.raw = gold, cand, raw

    def file(self, item: NodeInput) -> Path | None:
        kind, _, key = item.source.partition(":")
        return (self.cand if kind == "cand" else self.gold).get(key.lower())


def _materialize(folder: Path, inputs: list[NodeInput], sources: _Sources) -> list[dict[str, str]]:
    """Copies each owed relation's file into the node's folder; returns the worker's view list."""
    views: list[dict[str, str]] = []
    for index, item in enumerate(inputs):
        source = sources.file(item)
        if source is None:
            continue  # e.g. a helper its own build did not produce: the SQL fails to bind
        filename = f"in_{index}.duckdb"
        shutil.copyfile(source, folder / filename)
        views.append(
            {
                "file": filename,
                "database": item.target.database,
                "schema": item.target.schema_,
                "name": item.target.name,
            }
        )
    return views


def run_components(
    gold: DbtManifest,
    cand: DbtManifest,
    gold_folder: Path,
    raw_db: Path,
    helper_files: Callable[[set[str]], dict[str, Path]],
    folders: ScoringFolders,
    sandbox: SandboxBackend,
    timeouts: dict[str, float],
    memory_mb: int = 2048,
    skip: frozenset[str] = frozenset(),
) -> ComponentRun:
    """Runs every candidate node that has compiled SQL and a gold counterpart, but those in
    ``skip``, sandboxed, each
    for at most ``timeouts[node]`` seconds, then collects the results. ``helper_files`` gives
    the candidate's own helper relations ("schema.name") as per-relation DuckDB files made by
    the scorer (from its collected build, never from the candidate's database)."""
    work = fresh_folder(folders.components)
    names = [
        n
        for n in gold.topological()
        if n in cand.models and cand.models[n].compiled_code and n not in skip
    ]
    outcomes: dict[str, ComponentOutcome] = {}
    if not names:
        return ComponentRun(outcomes=outcomes)
    t0 = time.perf_counter()
    gold_files = export_relations(gold_folder / GOLD_DB_NAME, gold_folder / "relations")
    helpers = {
        f"{cand.models[h].schema_}.{cand.models[h].alias}".lower()
        for n in names
        for h in _helpers(n, gold, cand)
    }
    cand_files = helper_files(helpers) if helpers else {}
    raw = raw_tables(raw_db)
    sources = _Sources(gold_files, cand_files, raw)
    plan: list[dict[str, object]] = []
    # Reverse topological order: see cs_worker's module doc.
    for index, name in enumerate(reversed(names)):
        folder = work / f"n{index:04d}"
        folder.mkdir()
        views = _materialize(folder, node_inputs(name, gold, cand, raw), sources)
        plan.append(_plan_entry(name, folder, cand.models[name], views, timeouts[name], memory_mb))
    plan_path = work / "plan.json"
    plan_path.write_text(json.dumps({"nodes": plan}))
    t1 = time.perf_counter()
    wall = sum(timeouts[n] for n in names) + 60
    isolation, failure = run_worker(sandbox, work, plan_path, wall, memory_mb)
    t2 = time.perf_counter()
    # From here on ``work`` is the candidate's: only the collect step reads it.
    collected, collect_failure = _collect_components(
        sandbox, folders, [(str(e["name"]), Path(str(e["dir"])).name) for e in plan], memory_mb
    )
    for entry in plan:
        name = str(entry["name"])
        outcomes[name] = _outcome(collected.get(name), failure or collect_failure)
    return ComponentRun(
        outcomes=outcomes,
        isolation=isolation,
        seconds={
            "cs_inputs": t1 - t0,
            "cs_sandbox": t2 - t1,
            "cs_collect": time.perf_counter() - t2,
        },
    )


def _collect_components(
    sandbox: SandboxBackend,
    folders: ScoringFolders,
    nodes: list[tuple[str, str]],
    memory_mb: int,
) -> tuple[dict[str, dict[str, object]], str | None]:
    """Each node's verdict and result, exported by the collect step into ``collected-cs``."""
    out = fresh_folder(folders.collected_components)
    plan = {
        "mode": "collect_components",
        "dir": str(out),
        "root": str(folders.components),
        "nodes": [{"name": name, "folder": folder} for name, folder in nodes],
        "timeout_s": COLLECT_TIMEOUT_S,
        "threads": 2,
        "memory_mb": memory_mb,
    }
    plan_path = out / "plan.json"
    plan_path.write_text(json.dumps(plan))
    wall = COLLECT_TIMEOUT_S * max(1, len(nodes)) + 60
    _, failure = run_worker(sandbox, out, plan_path, wall, memory_mb, [folders.components])
    try:
        status = read_collected_json(out, "status.json")
        found = status.get("nodes") if isinstance(status, dict) else None
    except UnsafeCollectedFile as err:
        return {}, failure or f"collecting the component results: {err}"
    if not isinstance(found, dict):
        return {}, failure or "collecting the component results: no node list"
    return {str(k): v for k, v in found.items() if isinstance(v, dict)}, failure


def _helpers(name: str, gold: DbtManifest, cand: DbtManifest) -> list[str]:
    found = []
    for uid in cand.models[name].depends_on:
        helper = cand.by_id.get(uid)
        if helper is not None and helper.name not in gold.models:
            found.append(helper.name)
    return found


def _plan_entry(
    name: str,
    folder: Path,
    node: ModelNode,
    views: list[dict[str, str]],
    timeout_s: float,
    memory_mb: int,
) -> dict[str, object]:
    own = parse_relation(node.relation)
    default = own.database if own is not None else None
    return {
        "name": name,
        "dir": str(folder),
        "sql": node.compiled_code or "",
        "inputs": views,
        "default_database": default,
        "timeout_s": timeout_s,
        "threads": 2,
        "memory_mb": memory_mb,
    }


def run_worker(
    sandbox: SandboxBackend,
    work: Path,
    plan_path: Path,
    wall_s: float,
    memory_mb: int,
    read_only: list[Path] | None = None,
) -> tuple[Isolation | None, str | None]:
    request = SandboxRequest(
        argv=[sys.executable, "-I", "-c", WORKER_SOURCE, str(plan_path)],
        workspace=work,
        read_only=read_only or [],
        env={"HOME": str(work)},
        limits=SandboxLimits(wall_s=wall_s, memory_mb=memory_mb + 1024, max_processes=64),
    )
    try:
        result = sandbox.run(request)
    except SandboxError as err:
        return None, f"the component sandbox could not start: {err}"
    if result.timed_out:
        return result.isolation, "the component run was stopped by its wall clock"
    if result.returncode != 0:
        detail = (result.stderr.strip() or result.stdout.strip())[-300:]
        return result.isolation, f"the component worker failed (exit {result.returncode}): {detail}"
    return result.isolation, None


def _outcome(collected: dict[str, object] | None, failure: str | None) -> ComponentOutcome:
    if collected is None:
        return ComponentOutcome(output=None, error=failure or "the component run did not finish")
    if collected.get("missing"):
        return ComponentOutcome(output=None, error=failure or "the component run did not finish")
    file = collected.get("file")
    if not collected.get("ok") or not isinstance(file, str):
        return ComponentOutcome(output=None, error=str(collected.get("error") or "failed"))
    return ComponentOutcome(output=file)
