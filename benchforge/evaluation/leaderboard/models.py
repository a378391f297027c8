"""The leaderboard as data: what ``build_leaderboard`` produces and every renderer reads.

The renderers (markdown, HTML, JSON) only format these models; every number is computed once,
in ``aggregate``, so the three renderings can never disagree. Conventions:
- metric values and primary scores are on the scorers' 0-100 scale;
- rates (success rate, pass@k) are fractions in [0, 1];
- ``None`` means "nothing to average" (e.g. every trial of a task was an infra error), never 0;
- a scoring error (scoring the trial raised: a scorer or harness fault, not the agent's answer)
  is counted apart like an infra error: listed, left out of every mean, never a 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def row_label(agent: str, model: str) -> str:
    """How an (agent, model) pair is named in tables and plots; model '-' means no model."""
    return agent if model == "-" else f"{agent} · {model}"


class TrialIssue(_Frozen):
    """A trial that produced no score: an infra error, an unscored task or a scoring error,
    with the reason."""

    trial: str
    agent: str
    model: str
    task_id: str
    epoch: int
    termination: str
    detail: str | None = None


class TaskCell(_Frozen):
    """One (agent, model) on one task: its epochs, averaged over the scored ones."""

    agent: str
    model: str
    n_epochs: int  # trials of any status
    n_scored: int
    n_infra_error: int
    n_unscored: int
    n_scoring_error: int = 0  # scoring raised; left out like infra errors (default: old JSON)
    primary_mean: float | None  # None: no scored epoch (never counted as 0)
    metrics: dict[str, float]  # per-metric means over the scored epochs that report it
    successes: int  # scored epochs with success True
    n_success_known: int  # scored epochs whose success is not None (pass@k's n)

    @property
    def label(self) -> str:
        return row_label(self.agent, self.model)


class TaskResult(_Frozen):
    """One task across the leaderboard: a cell per (agent, model) that attempted it."""

    task_id: str
    suite: str
    family: str
    task_version: str
    primary: str | None  # the task's primary metric (None if no epoch was scored)
    cells: list[TaskCell]  # in ranking order

    def cell(self, agent: str, model: str) -> TaskCell | None:
        return next((c for c in self.cells if (c.agent, c.model) == (agent, model)), None)


class LeaderboardRow(_Frozen):
    """One (agent, model): the task-balanced means and the counts behind them."""

    rank: int | None  # 1-based; None when nothing was scored (listed last)
    agent: str
    model: str
    agent_config_hash: str
    tasks_attempted: int  # distinct tasks with any trial
    tasks_scored: int  # distinct tasks with at least one scored trial
    trials: int
    trials_scored: int
    infra_errors: int
    unscored: int
    scoring_errors: int = 0  # trials whose scoring raised (default: leaderboards saved before)
    primary_mean: float | None  # mean over tasks of the per-task mean primary score
    primary_ci: tuple[float, float] | None  # bootstrap CI over tasks; None with < 2 tasks
    metrics: dict[str, float]  # per metric: mean over tasks of the per-task means
    success_rate: float | None  # mean over tasks of the per-task success fraction
    pass_at_k: dict[int, float | None]  # k = 1..Leaderboard.max_epochs
    llm_calls: int  # the totals below are over scored trials
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float | None  # None when partial: some scored trial made calls at unknown cost
    cost_partial: bool
    cost_usd_known: float  # the sum of the known costs (a lower bound when partial)
    mean_agent_wall_s: float | None  # over scored trials
    terminations: dict[str, int]  # over all trials, whatever their status

    @property
    def label(self) -> str:
        return row_label(self.agent, self.model)


class JudgedTaskRow(_Frozen):
    """How one task's judged trials of one (agent, model) were judged: judge requests and
    cost, items the judge could not score, GSB pairs whose two orders disagreed, anchored items
    where the judge and the code check disagreed, injection attempts caught."""

    task_id: str
    agent: str
    model: str
    trials: int
    judge_requests: int
    judge_cache_hits: int
    judge_cost_usd: float | None  # None: some judge call had an unknown price
    unscored_items: int
    pairs: int
    inconsistent_pairs: int
    disagreements: int
    injection_flags: int


CalibrationState = Literal["passed", "failed", "never", "unchecked"]


class JudgeCalibrationStatus(_Frozen):
    """Whether a judge (model + prompt version of its kind) passed calibration: the latest
    stored calibration of it decides (``calibrations.calibration_status``). ``unchecked``: the
    leaderboard was built without looking at the calibration store."""

    state: CalibrationState
    report: str | None = None  # the calibration report's artifact key
    calibrated_at: datetime | None = None
    reasons: list[str] = []  # why the promotion gate refused it

    @property
    def label(self) -> str:
        return {
            "passed": "calibrated and passed",
            "failed": "calibrated and failed",
            "never": "never calibrated",
            "unchecked": "calibration not checked",
        }[self.state]


class JudgeLine(_Frozen):
    """One judge behind the judged metrics: its kind (rubric, gsb, architecture), model and
    prompt version, the rubric versions it judged on, and its calibration status."""

    judge: str
    model: str
    prompt_version: str
    rubric_versions: list[str]
    modes: list[str]
    tasks: list[str]
    trials: int
    calibration: JudgeCalibrationStatus


class Leaderboard(_Frozen):
    """A run's leaderboard: ranked rows, the per-task table, and the trials left out."""

    run_id: str
    title: str
    mock_llm_used: bool
    mock_judge_used: bool = False  # a judged score came from the mock server's judge
    n_trials: int
    suites: list[str]
    primary_metrics: list[str]  # the primary metric names in use (one per family, usually)
    metric_names: list[str]  # every metric any scored trial reported, sorted
    max_epochs: int  # the most trials any (agent, model) has on one task; pass@k's largest k
    ci_level: float
    bootstrap_resamples: int
    bootstrap_seed: int
    rows: list[LeaderboardRow]  # in ranking order
    tasks: list[TaskResult]  # sorted by task id
    infra_errors: list[TrialIssue]
    unscored: list[TrialIssue]
    scoring_errors: list[TrialIssue] = []  # scoring raised: listed, in no mean, never 0
    judged: list[JudgedTaskRow] = []  # judged families only, by task then agent
    judges: list[JudgeLine] = []  # the judges behind the judged metrics
    judged_metrics: list[str] = []  # metrics some judged trial reported

    @property
    def ranking(self) -> list[tuple[str, str]]:
        """(agent, model) pairs, best first."""
        return [(r.agent, r.model) for r in self.rows]

    def row(self, agent: str, model: str) -> LeaderboardRow:
        for r in self.rows:
            if (r.agent, r.model) == (agent, model):
                return r
        raise KeyError(f"no leaderboard row for agent {agent!r}, model {model!r}")

    def task(self, task_id: str) -> TaskResult:
        for t in self.tasks:
            if t.task_id == task_id:
                return t
        raise KeyError(f"no task {task_id!r} in the leaderboard")
