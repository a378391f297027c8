"""The component-score (CS) step: each candidate model run alone, in the sandbox, on exactly the
inputs it is owed.

For every gold node the candidate implements, the scorer materializes a fresh DuckDB file per
database name the candidate's compiled SQL uses, holding only:

- the gold output of the node's *gold parents* (the upstream models the gold manifest declares),
  under the names the candidate's SQL gives them;
- the raw tables it reads as sources, copied from the dataset's warehouse (never from the gold
  build, so a ``sources:`` entry pointing at a gold schema finds nothing);
- models only the candidate has (helpers), from the candidate's own end-to-end build.

Never the node's own gold, a descendant's, or the gold warehouse. The sandboxed worker
(:mod:`evaluation.de.cs_worker`) then runs each node's compiled SQL, which must be exactly one
``SELECT`` (parsed by DuckDB), with external access disabled and the configuration locked, and
stores the result; the scorer compares it with the gold afterwards (:mod:`evaluation.de.scoring`).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import duckdb
from pydantic import BaseModel

from benchforge.sandbox import SandboxBackend, SandboxError, SandboxLimits, SandboxRequest
from benchforge.sandbox.models import Isolation
from benchforge.sql import qualified, quote
from evaluation.dbt.manifest import DbtManifest, ModelNode
from evaluation.de import cs_worker

WORKER_SOURCE = Path(cs_worker.__file__).read_text()
_IDENTIFIER = re.compile(r'"((?:[^"]|"")*)"|([^."]+)')


class Relation(BaseModel):
    database: str
    schema_: str
    name: str


class NodeInput(BaseModel):
    source: str  # qualified relation in the scorer's connection (gold / raw / cand)
    target: Relation  # where the candidate's SQL looks for it


class ComponentOutcome(BaseModel):
    """What the sandboxed run of one node produced."""

    output: Path | None  # the DuckDB file holding ``main.result``
    error: str | None = None


class ComponentRun(BaseModel):
    outcomes: dict[str, ComponentOutcome]
    isolation: Isolation | None = None
    seconds: dict[str, float] = {}


def parse_relation(relation: str) -> Relation | None:
    """``"db"."schema"."name"`` (as dbt renders it) -> its parts; None if not three parts."""
    parts = [quoted.replace('""', '"') if quoted else bare for quoted, bare in
             _IDENTIFIER.findall(relation)]  # fmt: skip
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
            inputs.append(NodeInput(source=qualified("gold", g.schema_, g.alias), target=target))
    source_ids = set(node.sources)
    for uid in source_ids:
        target = parse_relation(cand.sources.get(uid, ""))
        if target is not None and (target.schema_.lower(), target.name.lower()) in raw_tables:
            inputs.append(
                NodeInput(source=qualified("raw", target.schema_, target.name), target=target)
            )
    for uid in node.depends_on:
        helper = cand.by_id.get(uid)
        if helper is None or helper.name in gold.models:
            continue  # gold models reach a node only as gold parents
        target = parse_relation(helper.relation)
        if target is not None:
            inputs.append(
                NodeInput(source=qualified("cand", helper.schema_, helper.alias), target=target)
            )
    return inputs


def _tables(con: duckdb.DuckDBPyConnection, database: str) -> set[tuple[str, str]]:
    rows = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ?", [database]
    ).fetchall()
    rows += con.execute(
        "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = ?", [database]
    ).fetchall()
    return {(str(s).lower(), str(t).lower()) for s, t in rows}


def _materialize(
    con: duckdb.DuckDBPyConnection, folder: Path, inputs: list[NodeInput],
    available: set[tuple[str, str, str]],
) -> dict[str, str]:  # fmt: skip
    """Writes one input file per database name; returns database name -> file name."""
    files: dict[str, str] = {}
    by_db: dict[str, list[NodeInput]] = {}
    for item in inputs:
        by_db.setdefault(item.target.database, []).append(item)
    for index, (database, items) in enumerate(sorted(by_db.items())):
        filename = f"in_{index}.duckdb"
        con.execute(f"ATTACH '{folder / filename}' AS node_in")
        try:
            made: set[str] = set()
            for item in items:
                db, schema, table = _split_source(item.source)
                if (db, schema.lower(), table.lower()) not in available:
                    continue  # e.g. a candidate helper its own build did not produce
                if item.target.schema_ not in made:
                    con.execute(f"CREATE SCHEMA IF NOT EXISTS node_in.{quote(item.target.schema_)}")
                    made.add(item.target.schema_)
                target = qualified("node_in", item.target.schema_, item.target.name)
                con.execute(f"CREATE OR REPLACE TABLE {target} AS FROM {item.source}")
        finally:
            con.execute("DETACH node_in")
        files[database] = filename
    return files


def _split_source(source: str) -> tuple[str, str, str]:
    rel = parse_relation(source)
    assert rel is not None, source
    return rel.database, rel.schema_, rel.name


def run_components(
    gold: DbtManifest,
    cand: DbtManifest,
    gold_db: Path,
    raw_db: Path,
    cand_db: Path | None,
    work: Path,
    sandbox: SandboxBackend,
    timeout_s: float,
    memory_mb: int = 2048,
) -> ComponentRun:
    """Runs every candidate node that has compiled SQL and a gold counterpart, sandboxed."""
    import time

    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    names = [n for n in gold.topological() if n in cand.models and cand.models[n].compiled_code]
    outcomes: dict[str, ComponentOutcome] = {}
    if not names:
        return ComponentRun(outcomes=outcomes)
    t0 = time.perf_counter()
    plan: list[dict[str, object]] = []
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{gold_db}' AS gold (READ_ONLY)")
        con.execute(f"ATTACH '{raw_db}' AS raw (READ_ONLY)")
        databases = ["gold", "raw"]
        if cand_db is not None and cand_db.exists():
            con.execute(f"ATTACH '{cand_db}' AS cand (READ_ONLY)")
            databases.append("cand")
        available = {(db, s, t) for db in databases for s, t in _tables(con, db)}
        raw_tables = {(s, t) for db, s, t in available if db == "raw"}
        # Reverse topological order: see cs_worker's module doc.
        for index, name in enumerate(reversed(names)):
            folder = work / f"n{index:04d}"
            folder.mkdir()
            inputs = node_inputs(name, gold, cand, raw_tables)
            files = _materialize(con, folder, inputs, available)
            plan.append(_plan_entry(name, folder, cand.models[name], files, timeout_s, memory_mb))
    finally:
        con.close()
    plan_path = work / "plan.json"
    plan_path.write_text(json.dumps({"nodes": plan}))
    t1 = time.perf_counter()
    isolation, failure = _run_worker(sandbox, work, plan_path, len(plan), timeout_s, memory_mb)
    t2 = time.perf_counter()
    for entry in plan:
        name, folder = str(entry["name"]), Path(str(entry["dir"]))
        outcomes[name] = _outcome(folder, failure)
    return ComponentRun(
        outcomes=outcomes,
        isolation=isolation,
        seconds={"cs_inputs": t1 - t0, "cs_sandbox": t2 - t1},
    )


def _plan_entry(
    name: str, folder: Path, node: ModelNode, files: dict[str, str], timeout_s: float,
    memory_mb: int,
) -> dict[str, object]:  # fmt: skip
    own = parse_relation(node.relation)
    default = own.database if own is not None and own.database in files else None
    return {
        "name": name,
        "dir": str(folder),
        "sql": node.compiled_code or "",
        "inputs": files,
        "default_database": default,
        "timeout_s": timeout_s,
        "threads": 2,
        "memory_mb": memory_mb,
    }


def _run_worker(
    sandbox: SandboxBackend, work: Path, plan_path: Path, nodes: int, timeout_s: float,
    memory_mb: int,
) -> tuple[Isolation | None, str | None]:  # fmt: skip
    request = SandboxRequest(
        argv=[sys.executable, "-I", "-c", WORKER_SOURCE, str(plan_path)],
        workspace=work,
        env={"HOME": str(work)},
        limits=SandboxLimits(
            wall_s=min(timeout_s * nodes, 6 * 3600) + 60,
            memory_mb=memory_mb + 1024,
            max_processes=64,
        ),
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


def _outcome(folder: Path, failure: str | None) -> ComponentOutcome:
    status_path = folder / "status.json"
    if not status_path.exists():
        return ComponentOutcome(output=None, error=failure or "the component run did not finish")
    status = json.loads(status_path.read_text())
    if not status.get("ok"):
        return ComponentOutcome(output=None, error=str(status.get("error") or "failed"))
    return ComponentOutcome(output=folder / "out.duckdb")
