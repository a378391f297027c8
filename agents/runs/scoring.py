"""(Re)scoring stored trials, without re-running agents: submission in, ``TrialScore`` out.

Gold is prepared per task (built once, cached under ``work``) and given to the scorer only
here, after the agent has finished; it is never in a workspace.
"""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path

from agents.protocol import TrialResult
from agents.runs.executor import rebuild_workspace
from agents.runs.store import RunStore
from benchforge.sandbox import SandboxBackend
from evaluation.de.tasks import TaskGold, prepare_gold, score_task
from evaluation.leaderboard.records import TrialScore
from evaluation.tasks.models import DeArchTask, LoadedTask

PRIMARY_DE_METRIC = "cs"


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


def score_trial(
    run: RunStore,
    result: TrialResult,
    task: LoadedTask,
    dataset_dir: Path | None,
    gold: GoldCache,
    work: Path,
    sandbox: SandboxBackend | None,
    unsandboxed: bool = False,
) -> TrialScore:
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
    task_gold = gold.get(task, dataset_dir)
    try:
        score = score_task(task, candidate / "repo", task_gold, dataset_dir, trial_work / "score",
                           sandbox=sandbox, unsandboxed=unsandboxed)  # fmt: skip
    finally:
        shutil.rmtree(trial_work, ignore_errors=True)
    metrics = {"cs": score.cs, "cfs": score.cfs, "sr": score.sr}
    return TrialScore.model_validate(
        {
            **base,
            "status": "scored",
            "metrics": metrics,
            "primary": PRIMARY_DE_METRIC,
            "success": score.sr >= 100.0,
            "scoring_sandbox": "none"
            if score.unsandboxed
            else (score.isolation.backend if score.isolation else None),
            "detail": "; ".join(score.candidate_errors)[:2000] or None,
        }
    )
