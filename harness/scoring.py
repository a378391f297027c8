"""(Re)scoring stored trials, without re-running agents: submission in, ``TrialScore`` out.

Gold is prepared per task (built once, cached under ``work``) and given to the scorer only
here, after the agent has finished; it is never in a workspace. Scoring is deterministic, so
identical submissions (the oracle's or the null agent's epochs, say) share one score: the
:class:`ScoreMemo` keys scores by the submitted repository's content.

Each score keeps why every node matched or not (``TrialScore.nodes``, see
:func:`node_details`), bounded so a score stays small however wide or wrong the tables are.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from benchforge.agents.protocol import TrialResult
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.de.compare import NodeComparison
from benchforge.evaluation.de.scoring import DeScore, NodeScore
from benchforge.evaluation.de.tasks import TaskGold, prepare_gold, score_task
from benchforge.evaluation.leaderboard.records import NodeCheck, NodeDetail, TrialScore
from benchforge.evaluation.tasks.models import DeArchTask, LoadedTask
from benchforge.harness.executor import rebuild_workspace
from benchforge.harness.store import RunStore

PRIMARY_DE_METRIC = "cs"
# Bounds of the per-node detail kept in a score.
EXAMPLE_ROWS = 3  # example rows per side
EXAMPLE_COLUMNS = 16  # columns per example row: the key and differing ones first
VALUE_CHARS = 120  # characters per example value
REASON_CHARS = 600
LIST_ITEMS = 50  # columns named per list (missing, extra, mismatching)


class GoldCache:
    """Gold per (task, dataset), prepared on first use; thread-safe so chunks can share it."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self._lock = threading.Lock()
        self._gold: dict[tuple[str, str], TaskGold] = {}

    def get(self, task: LoadedTask, dataset_dir: Path) -> TaskGold:
        ident = (task.key, str(dataset_dir))
        with self._lock:
            if ident not in self._gold:
                self._gold[ident] = prepare_gold(task, dataset_dir, self.work)
            return self._gold[ident]


def tree_digest(root: Path) -> str:
    """sha256 over every path under ``root`` with its content (a symlink: its target text)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(Path(dirpath, d))]):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix().encode()
            if path.is_symlink():
                h.update(b"L" + rel + b"\0" + os.readlink(path).encode() + b"\0")
            elif path.is_file():
                h.update(b"F" + rel + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


class ScoreMemo:
    """Scores by (task, dataset, sandboxing, submission content); thread-safe, and a second
    identical submission waits for the first one's score instead of scoring again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, ...], threading.Lock] = {}
        self._scores: dict[tuple[str, ...], DeScore] = {}

    def score(self, ident: tuple[str, ...], compute: Callable[[], DeScore]) -> DeScore:
        with self._lock:
            key_lock = self._locks.setdefault(ident, threading.Lock())
        with key_lock:
            if ident not in self._scores:
                self._scores[ident] = compute()
            return self._scores[ident]


def _base(result: TrialResult) -> dict[str, object]:
    key = result.key
    return {
        "run_id": result.run_id,
        "trial": key.slug,
        "suite": key.suite,
        "task_id": key.task_id,
        "task_version": key.task_version,
        "family": result.family,
        "agent": key.agent,
        "agent_config_hash": key.agent_config_hash,
        "model": key.model,
        "epoch": key.epoch,
        "termination": result.termination,
        "used_mock_llm": result.used_mock_llm,
        "llm_calls": result.llm.calls,
        "prompt_tokens": result.llm.prompt_tokens,
        "completion_tokens": result.llm.completion_tokens,
        "cost_usd": None if result.llm.unpriced_calls else result.llm.cost_usd,
        "agent_wall_s": result.wall_s,
        "scored_at": datetime.now(UTC),
    }


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_check(comparison: NodeComparison) -> NodeCheck:
    """The stored form of a comparison: at most ``EXAMPLE_ROWS`` example rows a side, of at
    most ``EXAMPLE_COLUMNS`` columns (the pairing key and the differing columns kept first,
    then gold's order), values cut to ``VALUE_CHARS``."""
    c = comparison
    names = list(dict.fromkeys(k for row in [*c.examples_gold, *c.examples_candidate] for k in row))
    wanted = [k for k in (c.mismatch_key, *c.column_mismatches) if k is not None and k in names]
    kept = set(list(dict.fromkeys([*wanted, *names]))[:EXAMPLE_COLUMNS])

    def rows(examples: list[dict[str, str]]) -> list[dict[str, str]]:
        return [
            {k: _cut(v, VALUE_CHARS) for k, v in row.items() if k in kept}
            for row in examples[:EXAMPLE_ROWS]
        ]

    return NodeCheck(
        status=c.status,
        reason=_cut(c.reason, REASON_CHARS),
        missing_columns=c.missing_columns[:LIST_ITEMS],
        extra_columns=c.extra_columns[:LIST_ITEMS],
        type_mismatches=dict(list(c.type_mismatches.items())[:LIST_ITEMS]),
        gold_rows=c.gold_rows,
        candidate_rows=c.candidate_rows,
        differing_rows=c.differing_rows,
        column_mismatches=dict(list(c.column_mismatches.items())[:LIST_ITEMS]),
        mismatch_key=c.mismatch_key,
        examples_gold=rows(c.examples_gold),
        examples_candidate=rows(c.examples_candidate),
        omitted_columns=len(names) - len(kept),
    )


def node_detail(node: NodeScore) -> NodeDetail:
    return NodeDetail(
        name=node.name,
        layer=node.layer,
        weight=node.weight,
        cs_matched=node.cs.matched,
        cfs_matched=node.cfs_score,
        cs=node_check(node.cs),
        cfs=node_check(node.cfs),
        cfs_blocked_by=node.cfs_blocked_by[:LIST_ITEMS],
    )


def node_details(score: DeScore) -> list[NodeDetail]:
    """Why each node of ``score`` matched or not, in the scorer's (topological) order."""
    return [node_detail(n) for n in score.nodes]


def score_trial(
    run: RunStore,
    result: TrialResult,
    task: LoadedTask,
    dataset_dir: Path | None,
    gold: GoldCache,
    work: Path,
    sandbox: SandboxBackend | None,
    unsandboxed: bool = False,
    heldout_dir: Path | None = None,
    memo: ScoreMemo | None = None,
) -> TrialScore:
    """Scores one finished trial. With ``heldout_dir`` the metrics are those on the held-out
    dataset, and the visible dataset's are kept beside them as ``<metric>_visible``."""
    base = _base(result)
    if result.status == "infra_error":
        return TrialScore.model_validate({**base, "status": "infra_error", "detail": result.error})
    if isinstance(task.spec, DeArchTask):
        detail = "de_arch blueprints are judged on a rubric; no LLM judge is configured"
        return TrialScore.model_validate({**base, "status": "unscored", "detail": detail})
    if dataset_dir is None:
        raise ValueError(f"{task.key}: no dataset to score against")
    trial_work = work / "trials" / run.run_id / result.key.slug
    candidate = rebuild_workspace(run, result, trial_work / "submission")
    scores: dict[str, DeScore] = {}
    memo = memo if memo is not None else ScoreMemo()
    try:
        digest = tree_digest(candidate / "repo")
        datasets = {"heldout": heldout_dir, "visible": dataset_dir}
        for label, data in ((k, v) for k, v in datasets.items() if v is not None):

            def compute(label: str = label, data: Path = data) -> DeScore:
                return score_task(
                    task,
                    candidate / "repo",
                    gold.get(task, data),
                    data,
                    trial_work / f"score-{label}",
                    sandbox=sandbox,
                    unsandboxed=unsandboxed,
                )

            ident = (task.key, str(data), str(unsandboxed), digest)
            scores[label] = memo.score(ident, compute)
    finally:
        shutil.rmtree(trial_work, ignore_errors=True)
    score = scores.get("heldout", scores["visible"])
    metrics = {"cs": score.cs, "cfs": score.cfs, "sr": score.sr}
    if "heldout" in scores:
        visible = scores["visible"]
        metrics |= {"cs_visible": visible.cs, "cfs_visible": visible.cfs, "sr_visible": visible.sr}
    return TrialScore.model_validate(
        {
            **base,
            "status": "scored",
            "metrics": metrics,
            "primary": PRIMARY_DE_METRIC,
            "success": score.sr >= 100.0,
            "scored_on": "heldout" if "heldout" in scores else "visible",
            "scoring_sandbox": "none"
            if score.unsandboxed
            else (score.isolation.backend if score.isolation else None),
            "detail": "; ".join(score.candidate_errors)[:2000] or None,
            "nodes": node_details(score),
            "nodes_visible": node_details(scores["visible"]) if "heldout" in scores else [],
        }
    )
