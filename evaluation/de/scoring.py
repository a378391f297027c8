"""Execution scoring of a candidate dbt repository against a gold build: CS, CFS and SR.

- CS (component score): every candidate model is run alone on the *gold* upstream tables (its
  compiled SQL with references to other models rewritten to the gold relations) and compared.
- CFS (cascading failure score): the candidate repository is built end to end on a fresh copy
  of the raw data; a node scores only if it and every gold ancestor of it match.
- SR (success rate): 100 when every weighted node matches in the end-to-end build, else 0.
Per layer l: S_l = sum(w_t m_t) / sum(w_t); score = 100 * sum(a_l S_l) / sum(a_l) over layers
with weighted nodes. A node that fails to compile or build scores 0; nothing the candidate does
can crash the scorer or touch the gold build (each candidate build has its own DuckDB file).
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import duckdb
from pydantic import BaseModel

from benchforge.sandbox import SandboxBackend
from benchforge.sql import qualified, quote
from evaluation.dbt.manifest import DbtManifest, ModelNode, load_manifest
from evaluation.dbt.runner import DbtInvocation, NodeResult, run_dbt
from evaluation.de.compare import NodeComparison, Status, compare_relations
from evaluation.gold import GOLD_DB, copy_warehouse
from evaluation.tasks.models import DeScoring

CANDIDATE_DB = "cand.duckdb"
CS_DB = "cs.duckdb"


class NodeScore(BaseModel):
    name: str
    layer: str
    weight: float
    cs: NodeComparison
    cfs: NodeComparison
    cfs_blocked_by: list[str] = []  # failed gold ancestors that zero this node in CFS

    @property
    def cfs_score(self) -> bool:
        return self.cfs.matched and not self.cfs_blocked_by


class DeScore(BaseModel):
    cs: float
    cfs: float
    sr: float
    nodes: list[NodeScore]
    candidate_errors: list[str] = []
    seconds: dict[str, float] = {}

    def summary(self) -> str:
        return f"CS {self.cs:.2f} / CFS {self.cfs:.2f} / SR {self.sr:.0f}"


def layered_score(nodes: list[NodeScore], weights: DeScoring, passed: dict[str, bool]) -> float:
    layers: dict[str, tuple[float, float]] = {}
    for n in nodes:
        if n.weight <= 0:
            continue
        got, total = layers.get(n.layer, (0.0, 0.0))
        layers[n.layer] = (got + n.weight * passed[n.name], total + n.weight)
    by_layer: dict[str, float] = {str(k): v for k, v in weights.layer_weights.items()}
    alphas = {layer: by_layer.get(layer, 0.0) for layer in layers}
    norm = sum(alphas.values())
    if norm <= 0:
        return 0.0
    weighted = sum(alphas[layer] * got / total for layer, (got, total) in layers.items())
    return 100.0 * weighted / norm


def _missing(reason: str, status: Status = "missing") -> NodeComparison:
    return NodeComparison(status=status, reason=reason)


class _Timeout:
    """Interrupts a DuckDB statement that runs past ``seconds``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seconds: float):
        self.timer = threading.Timer(seconds, con.interrupt)

    def __enter__(self) -> None:
        self.timer.start()

    def __exit__(self, *_: object) -> None:
        self.timer.cancel()


def score_candidate(
    candidate: Path,
    gold_folder: Path,
    dataset_dir: Path,
    work_dir: Path,
    scoring: DeScoring,
    scored_nodes: set[str] | None = None,
    node_timeout_s: float = 600,
    sandbox: SandboxBackend | None = None,
) -> DeScore:
    """Scores the dbt project in ``candidate``. ``scored_nodes`` limits the weighted nodes
    (de_evol weighs only the nodes its change touches); others get weight 0. With a
    ``sandbox``, the candidate's dbt runs in it, the gold folder hidden."""
    if work_dir.exists():
        shutil.rmtree(work_dir)
    work_dir.mkdir(parents=True)
    gold = load_manifest(gold_folder / "manifest.json")
    timings: dict[str, float] = {}
    errors: list[str] = []
    cand_manifest: DbtManifest | None = None
    run: DbtInvocation | None = None
    cand_db = work_dir / CANDIDATE_DB
    if not (candidate / "dbt_project.yml").is_file():
        errors.append(f"{candidate} has no dbt_project.yml")
    else:
        copy_warehouse(dataset_dir, cand_db)
        profiles = _profiles(work_dir)
        t0 = time.perf_counter()
        run = run_dbt(candidate, cand_db, ["run"], work_dir / "run", profiles_dir=profiles,
                      sandbox=sandbox, hidden=[gold_folder])  # fmt: skip
        timings["cfs_build"] = time.perf_counter() - t0
        manifest_path = work_dir / "run" / "target" / "manifest.json"
        if manifest_path.exists():
            cand_manifest = load_manifest(manifest_path)
        if not run.ok:
            errors.append("dbt run: " + _last_error(run))
        if cand_manifest is not None:
            # Models the run skipped (downstream of a failure) still need compiled SQL for CS.
            pending = sorted(n for n, m in cand_manifest.models.items() if not m.compiled_code)
            if pending:
                t0 = time.perf_counter()
                run_dbt(candidate, cand_db, ["compile", "--select", *pending],
                        work_dir / "compile", profiles_dir=profiles, sandbox=sandbox,
                        hidden=[gold_folder])  # fmt: skip
                timings["compile"] = time.perf_counter() - t0
                cand_manifest = _with_compiled(cand_manifest, work_dir / "compile")
    t0 = time.perf_counter()
    nodes = _score_nodes(gold, gold_folder / GOLD_DB, cand_manifest, run, cand_db, work_dir,
                         scoring, scored_nodes, node_timeout_s)  # fmt: skip
    timings["compare"] = time.perf_counter() - t0
    weighted = [n for n in nodes if n.weight > 0]
    return DeScore(
        cs=layered_score(nodes, scoring, {n.name: n.cs.matched for n in nodes}),
        cfs=layered_score(nodes, scoring, {n.name: n.cfs_score for n in nodes}),
        sr=100.0 if weighted and all(n.cfs.matched for n in weighted) else 0.0,
        nodes=nodes,
        candidate_errors=errors,
        seconds=timings,
    )


def _with_compiled(manifest: DbtManifest, compile_dir: Path) -> DbtManifest:
    path = compile_dir / "target" / "manifest.json"
    if not path.exists():
        return manifest
    compiled = load_manifest(path)
    models = {
        name: node.model_copy(update={"compiled_code": compiled.models[name].compiled_code})
        if not node.compiled_code and name in compiled.models
        else node
        for name, node in manifest.models.items()
    }
    return manifest.model_copy(update={"models": models})


def _profiles(work_dir: Path) -> Path:
    from evaluation.dbt.runner import write_profile

    return write_profile(work_dir / "profiles")


def _last_error(invocation: DbtInvocation) -> str:
    lines = [ln for ln in invocation.log_tail.splitlines() if ln.strip()]
    errs = [ln for ln in lines if "error" in ln.lower()]
    return (errs or lines or ["(no output)"])[-1].strip()[:300]


def _score_nodes(
    gold: DbtManifest, gold_db: Path, cand: DbtManifest | None, run: DbtInvocation | None,
    cand_db: Path, work_dir: Path, scoring: DeScoring, scored: set[str] | None, timeout: float,
) -> list[NodeScore]:  # fmt: skip
    con = duckdb.connect(str(work_dir / CS_DB))
    con.execute(f"ATTACH '{gold_db}' AS gold (READ_ONLY)")
    if cand is not None and cand_db.exists():
        con.execute(f"ATTACH '{cand_db}' AS cand (READ_ONLY)")
    # Candidate SQL runs in this process: no files, no network, no settings changes from it.
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    statuses = {r.unique_id: r for r in (run.results if run else [])}
    rewrite = _relation_map(gold, cand) if cand is not None else {}
    results: dict[str, NodeScore] = {}
    try:
        for name in gold.topological():
            g = gold.models[name]
            weight = (
                scoring.node_weights.get(name, 1.0) if scored is None or name in scored else 0.0
            )
            c = cand.models.get(name) if cand is not None else None
            if c is None:
                reason = "the candidate has no model of this name"
                cs = cfs = _missing(reason)
            else:
                cs = _component(con, g, c, rewrite, scoring.rel_tol, timeout)
                cfs = _cascading(con, g, c, statuses, scoring.rel_tol, timeout)
            results[name] = NodeScore(name=name, layer=g.layer, weight=weight, cs=cs, cfs=cfs)
    finally:
        con.close()
    for name, node in results.items():
        node.cfs_blocked_by = sorted(a for a in gold.ancestors(name) if not results[a].cfs.matched)
    return [results[n] for n in gold.topological()]


def _relation_map(gold: DbtManifest, cand: DbtManifest) -> dict[str, str]:
    """Candidate relations (as compiled) -> the gold relations they stand for."""
    mapping: dict[str, str] = {}
    for name, node in cand.models.items():
        if name in gold.models and node.relation:
            mapping[node.relation] = _in_db("gold", gold.models[name])
    for relation in cand.sources.values():
        # Sources read the untouched raw copy inside the gold build, never the candidate's.
        parts = [p.strip('"') for p in relation.split(".")]
        if len(parts) == 3:
            mapping[relation] = qualified("gold", parts[1], parts[2])
    return mapping


def _in_db(db: str, node: ModelNode) -> str:
    return qualified(db, node.schema_, node.alias)


def _component(
    con: duckdb.DuckDBPyConnection, g: ModelNode, c: ModelNode, rewrite: dict[str, str],
    rel_tol: float, timeout: float,
) -> NodeComparison:  # fmt: skip
    if not c.compiled_code:
        return _missing("the model did not compile", "build_error")
    sql = c.compiled_code.strip().rstrip(";")
    for old in sorted(rewrite, key=len, reverse=True):
        sql = sql.replace(old, rewrite[old])
    target = qualified("cs", g.schema_, g.alias).replace('"cs"', '"cs"')
    try:
        with _Timeout(con, timeout):
            con.execute(f"CREATE SCHEMA IF NOT EXISTS cs.{quote(g.schema_)}")
            con.execute(f"CREATE OR REPLACE TABLE {target} AS SELECT * FROM (\n{sql}\n) AS _node")
    except duckdb.Error as err:
        return _missing(f"failed on gold inputs: {str(err).splitlines()[0][:300]}", "build_error")
    return _compare(con, g, target, rel_tol, timeout)


def _cascading(
    con: duckdb.DuckDBPyConnection, g: ModelNode, c: ModelNode, statuses: dict[str, NodeResult],
    rel_tol: float, timeout: float,
) -> NodeComparison:  # fmt: skip
    result = statuses.get(c.unique_id)
    status = result.status if result else None
    if status != "success":
        message = (result.message if result else None) or "not built"
        return _missing(f"end-to-end build: {status or 'not run'}: {str(message)[:300]}",
                        "build_error")  # fmt: skip
    if c.schema_ != g.schema_:
        return _missing(
            f"built in schema '{c.schema_}', the contract puts it in '{g.schema_}'",
            "schema_mismatch",
        )
    return _compare(con, g, _in_db("cand", c), rel_tol, timeout)


def _compare(
    con: duckdb.DuckDBPyConnection, g: ModelNode, candidate: str, rel_tol: float, timeout: float
) -> NodeComparison:
    try:
        with _Timeout(con, timeout):
            return compare_relations(con, _in_db("gold", g), candidate, rel_tol)
    except duckdb.Error as err:
        return _missing(f"could not compare: {str(err).splitlines()[0][:300]}", "build_error")
