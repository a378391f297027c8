"""Execution scoring of a candidate dbt repository against a gold build: CS, CFS and SR.

- CS (component score): every candidate model is run alone, in the sandbox, on a fresh database
  holding only its gold parents and the raw tables it reads
  (:mod:`benchforge.evaluation.de.component`), and its result compared with the gold.
- CFS (cascading failure score): the candidate repository is built end to end on a fresh copy
  of the raw data (its seeds loaded first when the gold has seeds); a node scores only if it
  and every gold ancestor of it match.
- SR (success rate): 100 when every weighted node scores in CFS (it matches and so does every
  gold ancestor of it, weighted or not), else 0.
Per layer l: S_l = sum(w_t m_t) / sum(w_t); score = 100 * sum(a_l S_l) / sum(a_l) over layers
with weighted nodes. A node is weighted when its effective weight a_l * w_t is positive: a node
weight of 0 (``node_weights``, or outside a de_evol task's changed nodes) or a layer absent from
``layer_weights`` (or of weight 0) leaves it out of all three scores, except as an ancestor in
CFS and SR. Layers come from the task's layer mapping (``DeScoring.layers``).

A node that fails to compile or build scores 0; nothing the candidate does can crash the
scorer or touch the gold build: every execution of candidate code (dbt, hooks, Python models,
CS queries) is sandboxed, with the gold out of sight, and the scorer never opens a file in a
tree candidate code wrote: what it produced arrives as JSON and Parquet through collect steps
(:mod:`benchforge.evaluation.de.boundary`) and is compared in a database the scorer creates.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import duckdb
from pydantic import BaseModel

from benchforge.core.artifacts import LAYOUT
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import GOLD_DB, PACKAGES_DIR
from benchforge.core.sandbox import Isolation, ProcessBackend, SandboxBackend, default_backend
from benchforge.core.sql import qualified
from benchforge.evaluation.dbt.errors import dbt_error_summary
from benchforge.evaluation.dbt.manifest import (
    DbtManifest,
    ModelNode,
    assign_layers,
    load_manifest,
)
from benchforge.evaluation.dbt.packages import (
    DEFAULT_INSTALL_PATH,
    PackagesError,
    install_packages,
    install_path,
)
from benchforge.evaluation.dbt.runner import (
    DbtInvocation,
    DbtRunError,
    NodeResult,
    run_dbt,
    write_profile,
)
from benchforge.evaluation.de.boundary import (
    ScoringFolders,
    UnsafeCollectedFile,
    collected_file_path,
)
from benchforge.evaluation.de.collected import (
    CANDIDATE_DB,
    CollectedBuild,
    collect_build,
    helper_files,
)
from benchforge.evaluation.de.compare import (
    NodeComparison,
    Status,
    columns_of,
    compare_relations,
)
from benchforge.evaluation.de.component import (
    ComponentOutcome,
    ComponentRun,
    raw_fingerprints,
    raw_tables,
    run_components,
)
from benchforge.evaluation.de.cs_from_cfs import derivable, exactly_gold
from benchforge.evaluation.de.rounding import column_tolerances
from benchforge.evaluation.gold import copy_warehouse
from benchforge.evaluation.tasks.models import DeScoring

COMPARE_DB = "compare.duckdb"  # in the scorer's private folder, never mounted

log = logging.getLogger(__name__)


class ScoringError(BenchforgeError):
    """The scorer was called wrongly (not: the candidate is bad, which is a score)."""


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
    isolation: Isolation | None = None
    """How contained the candidate's code was while it was scored."""
    unsandboxed: bool = False
    """True when scoring ran without a sandbox (explicitly requested)."""
    scored_on: Literal["heldout", "visible"] = "visible"
    """The data scored on: the held-out seed, or the dataset the agent saw."""
    visible: DeScore | None = None
    """With ``scored_on == "heldout"``: the same candidate scored on the visible dataset."""
    reused: bool = False
    """Kept from an earlier scoring of the identical submission (see
    :mod:`benchforge.evaluation.de.score_cache`)."""
    cs_from_cfs: list[str] = []
    """Nodes whose CS is their CFS verdict: their end-to-end output and every input they are
    owed are exactly the gold's (:mod:`benchforge.evaluation.de.cs_from_cfs`)."""

    def summary(self) -> str:
        return f"CS {self.cs:.2f} / CFS {self.cfs:.2f} / SR {self.sr:.0f}"

    def without_examples(self) -> DeScore:
        """The score with no example rows (held-out rows stay held out; the counts and the
        differing columns remain); the visible-data score beside it keeps its examples."""
        nodes = [
            n.model_copy(update={"cs": n.cs.withheld(), "cfs": n.cfs.withheld()})
            for n in self.nodes
        ]
        return self.model_copy(update={"nodes": nodes})


def node_weight(scoring: DeScoring, name: str, scored: set[str] | None) -> float:
    """A node's own weight: ``node_weights`` (default 1), 0 outside ``scored`` when given."""
    return scoring.node_weights.get(name, 1.0) if scored is None or name in scored else 0.0


def layer_weight(scoring: DeScoring, layer: str) -> float:
    """A layer's weight; a layer ``layer_weights`` does not name weighs 0."""
    return float(scoring.layer_weights.get(layer, 0.0))


def is_weighted(node: NodeScore, scoring: DeScoring) -> bool:
    """Whether ``node`` counts in the scores: its node weight times its layer's is positive."""
    return node.weight > 0 and layer_weight(scoring, node.layer) > 0


def success_rate(nodes: list[NodeScore], scoring: DeScoring) -> float:
    """100 when there are weighted nodes and each scores in CFS, else 0. A failing node that
    weighs nothing still fails its weighted descendants (they are blocked in CFS)."""
    weighted = [n for n in nodes if is_weighted(n, scoring)]
    return 100.0 if weighted and all(n.cfs_score for n in weighted) else 0.0


def zero_weight_reasons(
    manifest: DbtManifest, scoring: DeScoring, scored: set[str] | None = None
) -> dict[str, str]:
    """Models that would be scored (in ``scored``, when given) but weigh nothing, with why:
    their layer (from ``scoring.layers``) has no weight in ``layer_weights``, or their node
    weight is 0. ``task validate`` warns about each: such a model's mistakes cost nothing."""
    layered = assign_layers(manifest, scoring.layers)
    reasons = {}
    for name, node in sorted(layered.models.items()):
        if scored is not None and name not in scored:
            continue
        if node_weight(scoring, name, scored) <= 0:
            reasons[name] = f"node_weights gives '{name}' weight 0"
        elif layer_weight(scoring, node.layer) <= 0:
            named = ", ".join(sorted(scoring.layer_weights))
            where = node.original_file_path or name
            reasons[name] = (
                f"{where} is in layer '{node.layer}', which layer_weights ({named}) "
                "weighs 0: map it with a layer rule (folder, tag or fqn) or weigh the layer"
            )
    return reasons


def zero_weight_models(
    manifest: DbtManifest, scoring: DeScoring, scored: set[str] | None = None
) -> list[str]:
    """The names of :func:`zero_weight_reasons`, sorted."""
    return sorted(zero_weight_reasons(manifest, scoring, scored))


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
    node_timeout_s: float | None = None,
    sandbox: SandboxBackend | None = None,
    unsandboxed: bool = False,
) -> DeScore:
    """Scores the dbt project in ``candidate``. ``scored_nodes`` limits the weighted nodes
    (de_evol weighs only the nodes its change touches); others get weight 0.

    Every execution of candidate code (dbt compile and run, hooks, Python models, the CS
    queries) happens in ``sandbox`` (default: the best backend this machine has), where the
    gold is not visible, and the scorer never opens what it wrote (see
    :mod:`benchforge.evaluation.de.boundary`). ``unsandboxed=True`` runs it as plain
    processes instead: a warning is logged and the score records it."""
    candidate, gold_folder = candidate.resolve(), gold_folder.resolve()
    dataset_dir, work_dir = dataset_dir.resolve(), work_dir.resolve()
    if work_dir.is_relative_to(candidate):
        raise ScoringError(f"the work folder {work_dir} is inside the candidate {candidate}")
    backend = _backend(sandbox, unsandboxed)
    folders = ScoringFolders.fresh(work_dir)
    gold = assign_layers(load_manifest(gold_folder / "manifest.json"), scoring.layers)
    if not gold.models:
        raise ScoringError(f"the gold build in {gold_folder} has no models")
    limits = time_limits(gold_folder, gold, node_timeout_s)
    timings: dict[str, float] = {}
    errors: list[str] = []
    build: CollectedBuild | None = None
    raw_db = dataset_dir / "warehouse.duckdb"
    raw = raw_tables(raw_db)
    if not (candidate / "dbt_project.yml").is_file():
        errors.append(f"{candidate} has no dbt_project.yml")
    else:
        candidate = _with_gold_packages(candidate, gold_folder, folders)
        build, seconds = _build_end_to_end(
            candidate, gold_folder, dataset_dir, folders, backend, limits, _end_to_end(gold), raw
        )
        timings |= seconds
        errors += build.problems
    with _comparison_db(folders, gold_folder / GOLD_DB) as con:
        t0 = time.perf_counter()
        cfs = _cfs_comparisons(con, gold, build, limits, scoring.rel_tol)
        timings["cfs_compare"] = time.perf_counter() - t0
        derived: frozenset[str] = frozenset()
        components = ComponentRun(outcomes={})
        if build is not None and build.manifest is not None:
            relations = {n: _in_db("gold", m) for n, m in gold.models.items()}
            identical = exactly_gold(con, gold, build.manifest, cfs, build.columns, relations)
            untouched = {
                key
                for key, print_ in raw_fingerprints(raw_db, raw).items()
                if print_ is not None and build.raw_fingerprints.get(key) == print_
            }
            derived = derivable(gold, build.manifest, identical, raw, untouched)
            node_limits = {n: limits.node_s(n) for n in gold.models}
            collected = build

            def helpers(keys: set[str]) -> dict[str, Path]:
                return helper_files(collected, keys, folders.private / "helpers")

            components = run_components(
                gold,
                build.manifest,
                gold_folder,
                raw_db,
                helpers,
                folders,
                backend,
                node_limits,
                skip=derived,
            )
            timings |= components.seconds
        t0 = time.perf_counter()
        nodes = _score_nodes(
            con, gold, build, components, cfs, derived, folders, scoring, scored_nodes, limits
        )
        timings["cs_compare"] = time.perf_counter() - t0
    isolation = components.isolation or backend.isolation()
    return DeScore(
        cs=layered_score(nodes, scoring, {n.name: n.cs.matched for n in nodes}),
        cfs=layered_score(nodes, scoring, {n.name: n.cfs_score for n in nodes}),
        sr=success_rate(nodes, scoring),
        nodes=nodes,
        candidate_errors=errors,
        seconds=timings,
        isolation=isolation,
        unsandboxed=unsandboxed,
        cs_from_cfs=sorted(derived),
    )


def _with_gold_packages(candidate: Path, gold_folder: Path, folders: ScoringFolders) -> Path:
    """The candidate as built: itself, or, when the gold uses dbt packages, a copy of it with
    the gold's vendored packages installed in place of whatever it shipped there (an agent's
    own ``dbt_packages/`` could hold any macro)."""
    vendored = gold_folder / PACKAGES_DIR
    if not vendored.is_dir():
        return candidate
    staged = folders.root / "project"
    skipped = shutil.ignore_patterns("target", "logs", "dbt_packages")
    shutil.copytree(candidate, staged, symlinks=True, ignore=skipped)
    try:
        where = install_path(staged)
    except PackagesError:
        where = DEFAULT_INSTALL_PATH  # dbt will say what is wrong with the file
    install_packages(vendored, staged, where)
    return staged


def _build_end_to_end(
    candidate: Path,
    gold_folder: Path,
    dataset_dir: Path,
    folders: ScoringFolders,
    backend: SandboxBackend,
    limits: TimeLimits,
    end_to_end: list[str],
    raw: set[tuple[str, str]],
) -> tuple[CollectedBuild, dict[str, float]]:
    """The candidate's end-to-end build (then a compile of the models it skipped), each
    followed by its collect step; ``candidate/`` is never opened by the scorer after the first
    dbt invocation starts."""
    timings: dict[str, float] = {}
    problems: list[str] = []
    cand_db = folders.candidate / CANDIDATE_DB
    copy_warehouse(dataset_dir, cand_db)
    profiles = write_profile(folders.profiles)
    t0 = time.perf_counter()
    run = _dbt(
        candidate,
        cand_db,
        end_to_end,
        "run",
        folders,
        profiles,
        backend,
        gold_folder,
        problems,
        limits.build_s,
    )
    timings["cfs_build"] = time.perf_counter() - t0
    if run is not None and not run.ok:
        problems.append(f"dbt {end_to_end[0]}: " + _last_error(run))
    t0 = time.perf_counter()
    build = collect_build(
        folders, folders.collected_build, "run", backend, with_tables=True, raw_tables=sorted(raw)
    )
    timings["collect"] = time.perf_counter() - t0
    build.problems[:0] = problems
    if build.manifest is not None:
        # Models the run skipped (downstream of a failure) still need compiled SQL for CS.
        pending = sorted(n for n, m in build.manifest.models.items() if not m.compiled_code)
        if pending:
            t0 = time.perf_counter()
            _dbt(
                candidate,
                cand_db,
                ["compile", "--select", *pending],
                "compile",
                folders,
                profiles,
                backend,
                gold_folder,
                build.problems,
                limits.build_s,
            )
            out = folders.root / "collected-compile"
            compiled = collect_build(folders, out, "compile", backend, with_tables=False)
            if compiled.manifest is not None:
                build.manifest = _with_compiled(build.manifest, compiled.manifest)
            timings["compile"] = time.perf_counter() - t0
    return build, timings


TIME_FACTOR = 10.0
MIN_BUILD_S = 60.0
MIN_NODE_S = 30.0


class TimeLimits(BaseModel):
    build_s: float
    nodes: dict[str, float]
    default_node_s: float

    def node_s(self, name: str) -> float:
        return self.nodes.get(name, self.default_node_s)


def time_limits(gold_folder: Path, gold: DbtManifest, node_timeout_s: float | None) -> TimeLimits:
    """Limits scaled from the gold build's own times: the end-to-end build gets ``MIN_BUILD_S``
    (dbt's start-up and parse) plus ``TIME_FACTOR`` times the gold's model and seed execution
    times (``run_results.json``), so a slow start-up on a busy machine is not multiplied; each
    node ``TIME_FACTOR`` times its own (at least ``MIN_NODE_S``). Without run results, the
    build gets ``TIME_FACTOR`` times the whole gold build (``build.json``)."""
    results_file = gold_folder / "run_results.json"
    results = (
        json.loads(results_file.read_text()).get("results", []) if results_file.exists() else []
    )
    build_s = MIN_BUILD_S
    executed = [r for r in results if str(r.get("unique_id", "")).startswith(("model.", "seed."))]
    build_record = LAYOUT.gold_record_file(gold_folder)
    if executed:
        build_s += TIME_FACTOR * sum(float(r.get("execution_time") or 0) for r in executed)
    elif build_record.exists():
        seconds = float(json.loads(build_record.read_text()).get("seconds") or 0.0)
        build_s = max(MIN_BUILD_S, TIME_FACTOR * seconds)
    nodes: dict[str, float] = {}
    if node_timeout_s is None:
        by_id = {m.unique_id: m.name for m in gold.models.values()}
        for r in results:
            name = by_id.get(r.get("unique_id", ""))
            if name is not None:
                nodes[name] = max(MIN_NODE_S, TIME_FACTOR * float(r.get("execution_time") or 0))
    default = node_timeout_s if node_timeout_s is not None else MIN_NODE_S
    return TimeLimits(build_s=build_s, nodes=nodes, default_node_s=default)


def _backend(sandbox: SandboxBackend | None, unsandboxed: bool) -> SandboxBackend:
    if unsandboxed:
        log.warning(
            "scoring WITHOUT a sandbox (explicitly requested): candidate code runs as this "
            "user with the host's filesystem and network; the score records it"
        )
        return ProcessBackend(notes=["unsandboxed scoring, explicitly requested"])
    return sandbox if sandbox is not None else default_backend()


def _dbt(
    candidate: Path,
    db: Path,
    args: list[str],
    name: str,
    folders: ScoringFolders,
    profiles: Path,
    backend: SandboxBackend,
    gold_folder: Path,
    errors: list[str],
    timeout_s: float,
) -> DbtInvocation | None:
    try:
        return run_dbt(
            candidate,
            db,
            args,
            folders.candidate / name,
            profiles_dir=profiles,
            sandbox=backend,
            hidden=[gold_folder],
            timeout_s=timeout_s,
            read_results=False,
        )
    except DbtRunError as err:
        errors.append(f"dbt {args[0]}: {err}")
        return None


def _with_compiled(manifest: DbtManifest, compiled: DbtManifest) -> DbtManifest:
    models = {
        name: node.model_copy(update={"compiled_code": compiled.models[name].compiled_code})
        if not node.compiled_code and name in compiled.models
        else node
        for name, node in manifest.models.items()
    }
    return manifest.model_copy(update={"models": models})


def _end_to_end(gold: DbtManifest) -> list[str]:
    """The candidate's end-to-end build: ``dbt run``; ``dbt build`` without tests when the gold
    loads seeds (inputs, like the raw tables: the candidate's own seed files are loaded first,
    in the same sandboxed invocation, as the gold build did)."""
    if not gold.seeds:
        return ["run"]
    return ["build", "--exclude-resource-type", "test", "--exclude-resource-type", "unit_test"]


def _last_error(invocation: DbtInvocation) -> str:
    """dbt's own error lines (``Compilation Error in model x: ...``), not just the heading."""
    return dbt_error_summary(invocation) or "(no error reported)"


@contextmanager
def _comparison_db(folders: ScoringFolders, gold_db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The scorer's comparison database, in its private folder, with the gold attached
    read-only: the collected Parquet of what the candidate produced is loaded here one table at
    a time (no candidate SQL is bound here, no candidate-written file is opened)."""
    con = duckdb.connect(str(folders.private / COMPARE_DB))
    try:
        con.execute(f"SET temp_directory = '{folders.private / 'spill'}'")
        con.execute(f"ATTACH '{gold_db}' AS gold (READ_ONLY)")
        yield con
    finally:
        con.close()


def _cfs_comparisons(
    con: duckdb.DuckDBPyConnection,
    gold: DbtManifest,
    build: CollectedBuild | None,
    limits: TimeLimits,
    rel_tol: float,
) -> dict[str, NodeComparison]:
    """Each gold node's end-to-end output compared with the gold's."""
    cand = build.manifest if build is not None else None
    statuses = {r.unique_id: r for r in (build.results if build else [])}
    found = {}
    for name in gold.topological():
        c = cand.models.get(name) if cand is not None else None
        if c is None or build is None:
            found[name] = _missing("the candidate has no model of this name")
        else:
            g = gold.models[name]
            found[name] = _cascading(con, g, c, statuses, build, rel_tol, limits.node_s(name))
    return found


def _score_nodes(
    con: duckdb.DuckDBPyConnection,
    gold: DbtManifest,
    build: CollectedBuild | None,
    components: ComponentRun,
    cfs: dict[str, NodeComparison],
    derived: frozenset[str],
    folders: ScoringFolders,
    scoring: DeScoring,
    scored: set[str] | None,
    limits: TimeLimits,
) -> list[NodeScore]:
    """Each node's CS comparison (its CFS one for the ``derived`` nodes) beside its CFS."""
    cand = build.manifest if build is not None else None
    results: dict[str, NodeScore] = {}
    for name in gold.topological():
        g = gold.models[name]
        c = cand.models.get(name) if cand is not None else None
        if c is None:
            cs = cfs[name]
        elif name in derived:
            cs = cfs[name].model_copy()
        else:
            outcome = components.outcomes.get(name)
            cs = _component(con, g, c, outcome, folders, scoring.rel_tol, limits.node_s(name))
        weight = node_weight(scoring, name, scored)
        results[name] = NodeScore(name=name, layer=g.layer, weight=weight, cs=cs, cfs=cfs[name])
    for name, node in results.items():
        node.cfs_blocked_by = sorted(a for a in gold.ancestors(name) if not results[a].cfs.matched)
    return [results[n] for n in gold.topological()]


def _in_db(db: str, node: ModelNode) -> str:
    return qualified(db, node.schema_, node.alias)


def _component(
    con: duckdb.DuckDBPyConnection,
    g: ModelNode,
    c: ModelNode,
    outcome: ComponentOutcome | None,
    folders: ScoringFolders,
    rel_tol: float,
    timeout: float,
) -> NodeComparison:
    if not c.compiled_code:
        return _missing("the model did not compile", "build_error")
    if outcome is None or outcome.output is None:
        error = outcome.error if outcome is not None else "not run"
        return _missing(error or "not run", "build_error")
    return _compare_collected(
        con, g, folders.collected_components, outcome.output, rel_tol, timeout
    )


def _cascading(
    con: duckdb.DuckDBPyConnection,
    g: ModelNode,
    c: ModelNode,
    statuses: dict[str, NodeResult],
    build: CollectedBuild,
    rel_tol: float,
    timeout: float,
) -> NodeComparison:
    result = statuses.get(c.unique_id)
    status = result.status if result else None
    if status != "success":
        message = (result.message if result else None) or "not built"
        return _missing(
            f"end-to-end build: {status or 'not run'}: {str(message)[:300]}", "build_error"
        )
    if c.schema_ != g.schema_:
        return _missing(
            f"built in schema '{c.schema_}', the contract puts it in '{g.schema_}'",
            "schema_mismatch",
        )
    file = build.relation_file(c.schema_, c.alias)
    if file is None:
        why = build.relation_error(c.schema_, c.alias) or "not in the candidate's database"
        return _missing(f"reading the candidate's build: {why}", "build_error")
    return _compare_collected(con, g, build.folder, file, rel_tol, timeout)


def _compare_collected(
    con: duckdb.DuckDBPyConnection,
    g: ModelNode,
    folder: Path,
    file: str,
    rel_tol: float,
    timeout: float,
) -> NodeComparison:
    """Compares the collected Parquet ``folder/file``, read by the comparison database through
    its checked descriptor (never by path), with the gold node."""
    try:
        with collected_file_path(folder, file) as path:
            return _compare(con, g, f"read_parquet('{path}')", rel_tol, timeout)
    except UnsafeCollectedFile as err:
        return _missing(f"the collected output is unusable: {err}", "build_error")


def _compare(
    con: duckdb.DuckDBPyConnection, g: ModelNode, candidate: str, rel_tol: float, timeout: float
) -> NodeComparison:
    try:
        with _Timeout(con, timeout):
            gold = _in_db("gold", g)
            rounded = column_tolerances(g.compiled_code or g.raw_code, columns_of(con, gold))
            return compare_relations(con, gold, candidate, rel_tol, column_abs_tol=rounded)
    except duckdb.Error as err:
        return _missing(f"could not compare: {str(err).splitlines()[0][:300]}", "build_error")
