"""(Re)scoring stored trials, without re-running agents: submission in, ``TrialScore`` out.

Gold is prepared per task (built once, cached under ``work``) and given to the scorer only
here, after the agent has finished; it is never in a workspace. Scoring is deterministic, so
identical submissions (the oracle's or the null agent's epochs, say) share one score: the
:class:`ScoreMemo` keys scores by the submitted repository's content within a run, and executed
families keep theirs across runs (:mod:`benchforge.evaluation.de.score_cache`).

Each score keeps its family's breakdown (why every DE node matched or not, a judged family's
items), bounded so a score stays small however wide or wrong the tables are; a score on a
held-out dataset keeps the visible dataset's score beside it (``TrialScore.visible``).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from benchforge.core.digest import tree_digest
from benchforge.core.records import (
    ScoreBreakdown,
    ScoreStatus,
    TrialResult,
    TrialScore,
    VisibleScore,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.core.scratch import private_folder
from benchforge.evaluation.families import SubmissionScore, family_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.executor import rebuild_workspace
from benchforge.harness.score_store import ScoreIdentity, ScoreStore, trajectory_fingerprint
from benchforge.harness.store import RunStore

__all__ = [
    "GoldCache",
    "ScoreMemo",
    "score_trial",
    "scoring_error",
    "tree_digest",
    "trial_score",
]
T = TypeVar("T")
ERROR_CHARS = 2000  # a scoring error's detail: the exception's type and message, truncated


class GoldCache:
    """Gold per (task, dataset), prepared by the task's family on first use; thread-safe so
    chunks can share it."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self._lock = threading.Lock()
        self._gold: dict[tuple[str, str, str], Any] = {}

    def get(
        self, task: LoadedTask, dataset_dir: Path, datasets: Mapping[str, Path] | None = None
    ) -> Any:
        """``datasets``: every role -> folder, for a task with several (see ``prepare_gold``)."""
        roles = sorted((role, str(folder)) for role, folder in (datasets or {}).items())
        ident = (task.key, str(dataset_dir), repr(roles))
        with self._lock:
            if ident not in self._gold:
                self._gold[ident] = family_of(task).prepare_gold(
                    task, dataset_dir, self.work, datasets=datasets
                )
            return self._gold[ident]


class ScoreMemo:
    """Scores by (task, dataset, sandboxing, submission content); thread-safe, and a second
    identical submission waits for the first one's score instead of scoring again. With a
    ``store``, scores are also kept and found across runs by their content
    (:mod:`benchforge.harness.score_store`)."""

    def __init__(self, store: ScoreStore | None = None) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, ...], threading.Lock] = {}
        self._scores: dict[tuple[str, ...], Any] = {}

    def score(
        self,
        ident: tuple[str, ...],
        compute: Callable[[], T],
        identity: Callable[[], ScoreIdentity] | None = None,
    ) -> T:
        """``compute``'s score of ``ident``; ``identity`` (a SubmissionScore's content
        identity) looks it up in the store first and keeps what is computed."""
        with self._lock:
            key_lock = self._locks.setdefault(ident, threading.Lock())
        with key_lock:
            if ident not in self._scores:
                self._scores[ident] = self._stored_or_computed(compute, identity)
            score: T = self._scores[ident]
            return score

    def _stored_or_computed(
        self, compute: Callable[[], T], identity: Callable[[], ScoreIdentity] | None
    ) -> T:
        if self.store is None or identity is None:
            return compute()
        named = identity()
        kept = self.store.get(named)
        if kept is not None:
            return kept  # type: ignore[return-value]  # identity is given for SubmissionScores
        computed = compute()
        if isinstance(computed, SubmissionScore):
            self.store.put(named, computed)
        return computed


def trial_score(
    result: TrialResult,
    status: ScoreStatus,
    *,
    detail: str | None = None,
    metrics: dict[str, float] | None = None,
    primary: str | None = None,
    success: bool | None = None,
    scored_on: str | None = None,
    scoring_sandbox: str | None = None,
    breakdown: ScoreBreakdown | None = None,
    visible: VisibleScore | None = None,
    score_reused: bool = False,
) -> TrialScore:
    """The score of ``result``: its key and what the agent spent, with the scorer's verdict."""
    return TrialScore(
        run_id=result.run_id,
        key=result.key,
        family=result.family,
        status=status,
        metrics=metrics or {},
        primary=primary,
        success=success,
        termination=result.termination,
        detail=detail,
        used_mock_llm=result.used_mock_llm,
        llm_calls=result.llm.calls,
        prompt_tokens=result.llm.prompt_tokens,
        completion_tokens=result.llm.completion_tokens,
        cost_usd=None if result.llm.unpriced_calls else result.llm.cost_usd,
        agent_wall_s=result.wall_s,
        scored_at=datetime.now(UTC),
        scored_on=scored_on,
        scoring_sandbox=scoring_sandbox,
        score_reused=score_reused,
        breakdown=breakdown,
        visible=visible,
    )


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
    judge: Judge | None = None,
    show_heldout_examples: bool = False,
    visible_too: bool = True,
    roles: Mapping[str, Path] | None = None,
    heldout_roles: Mapping[str, Path] | None = None,
) -> TrialScore:
    """Scores one finished trial by its task's family. With ``heldout_dir`` the metrics are
    those on the held-out dataset, and (``visible_too``) the visible dataset's are kept beside
    them (``TrialScore.visible``); the held-out score's breakdown keeps nothing that shows the
    held-out data (DE: example rows) unless ``show_heldout_examples``. ``roles`` and
    ``heldout_roles``: a task's datasets by role (visible and held-out), for a family that
    scores over several."""
    if result.status == "infra_error":
        return trial_score(result, "infra_error", detail=result.error)
    family = family_of(task)
    if family.unscored is not None:
        return trial_score(result, "unscored", detail=family.unscored)
    if family.judged and judge is None:
        return trial_score(result, "unscored", detail=f"{family.name} is judged: no judge given")
    judged = {"judge": judge} if family.judged else {}
    # a family that scores the way, not only the answer (milestones), gets the trajectory
    along: dict[str, Any] = {}
    trajectory_digest: str | None = None
    if getattr(family, "scores_trajectory", False):
        along = {"trajectory": result.trajectory, "termination": result.termination}
        trajectory_digest = trajectory_fingerprint(result)
    if dataset_dir is None:
        raise ValueError(f"{task.key}: no dataset to score against")
    trial_work = private_folder(work / "trials" / run.run_id, result.key.slug)
    candidate = rebuild_workspace(run, result, trial_work / "submission")
    submission = candidate / family.submission
    scores: dict[str, SubmissionScore] = {}
    memo = memo if memo is not None else ScoreMemo()
    try:
        digest = tree_digest(submission)
        visible = dataset_dir if visible_too or heldout_dir is None else None
        datasets = {"heldout": heldout_dir, "visible": visible}
        role_maps = {"heldout": dict(heldout_roles or {}), "visible": dict(roles or {})}
        for label, data in ((k, v) for k, v in datasets.items() if v is not None):
            by_role = role_maps[label] or None

            def compute(
                label: str = label, data: Path = data, by_role: dict[str, Path] | None = by_role
            ) -> SubmissionScore:
                return family.score(
                    task,
                    submission,
                    gold.get(task, data, by_role),
                    data,
                    trial_work / f"score-{label}",
                    sandbox=sandbox,
                    unsandboxed=unsandboxed,
                    answer=result.answer,
                    datasets=by_role,
                    **judged,
                    **along,
                )

            ident = (
                task.key,
                str(data),
                repr(sorted((by_role or {}).items())),
                str(unsandboxed),
                digest,
                result.answer or "",
                trajectory_digest or "",
            )

            def identity(
                data: Path = data, by_role: dict[str, Path] | None = by_role
            ) -> ScoreIdentity:
                assert memo is not None and memo.store is not None
                roles = by_role or {task.spec.primary_role: data}
                return memo.store.identity(
                    task, roles, digest, result.answer, judge, trajectory=trajectory_digest
                )

            kept = identity if memo.store is not None and not unsandboxed else None
            scores[label] = memo.score(ident, compute, kept)
    finally:
        shutil.rmtree(trial_work, ignore_errors=True)
    score = scores.get("heldout") or scores["visible"]
    seen = scores.get("visible") if "heldout" in scores else None
    breakdown = score.breakdown
    if breakdown is not None and "heldout" in scores and not show_heldout_examples:
        breakdown = breakdown.withheld()
    return trial_score(
        result,
        "scored",
        metrics=dict(score.metrics),
        primary=score.primary,
        success=score.success,
        scored_on="heldout" if "heldout" in scores else "visible",
        scoring_sandbox=score.sandbox,
        score_reused=all(s.reused for s in scores.values()),
        detail=score.detail,
        breakdown=breakdown,
        visible=VisibleScore(
            metrics=dict(seen.metrics), success=seen.success, breakdown=seen.breakdown
        )
        if seen is not None
        else None,
    )


def scoring_error(result: TrialResult, exc: Exception) -> TrialScore:
    """The score of a trial whose scoring raised ``exc``: status ``scoring_error``, the
    exception's type and message (truncated) as its detail. Not a 0: the leaderboard lists it
    apart and leaves it out of every mean, and the next ``score_run`` scores it again."""
    text = f"{type(exc).__name__}: {exc}"
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS - 1] + "…"
    return trial_score(result, "scoring_error", detail=text)
