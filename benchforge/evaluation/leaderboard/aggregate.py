"""Scored trials -> a ranked leaderboard.

Why the averages are shaped the way they are:
- **Task-balanced.** Every mean is taken over epochs within a task first, then over tasks, so
  a task that happened to get more scored epochs (another task lost some to infra errors) does
  not weigh more. The success rate is task-balanced the same way, which makes it equal pass@1.
- **Infra errors are not results.** A trial that could not be run fairly is left out of every
  mean and of pass@k's n, and listed; a task whose trials were all infra errors is left out of
  the row (``tasks_scored < tasks_attempted``), never counted as 0. Unscored trials (no scorer
  yet) are listed the same way, and so are scoring errors (scoring the trial raised: a fault of
  the scorer or the harness, so nothing is known about the answer; a 0 would blame the agent,
  and a rescore retries them). An agent that crashed or timed out *is* scored: that is the
  scorer's business, not ours.
- **pass@k** uses the unbiased estimator per task (see ``stats``), averaged over the tasks
  with at least k graded epochs; with none, the value is None rather than a silent 0.
- **The CI** is a seeded percentile bootstrap over the per-task primary means, so it reflects
  the spread across tasks and the same input always renders the same report.

Bad input raises ``ValueError`` instead of producing a quietly wrong table: no trials at all,
trials from another run, a trial counted twice, a scored trial without its primary metric or
with a non-finite value, one task id with two versions, or one (agent, model) with two configs.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from benchforge.core.errors import BenchforgeError
from benchforge.core.records import TrialScore
from benchforge.evaluation.judges.breakdown import JudgeIdentity, judge_record_of
from benchforge.evaluation.leaderboard.calibrations import CalibrationEntry, calibration_status
from benchforge.evaluation.leaderboard.models import (
    JudgedTaskRow,
    JudgeLine,
    Leaderboard,
    LeaderboardRow,
    TaskCell,
    TaskResult,
    TrialIssue,
)
from benchforge.evaluation.leaderboard.stats import bootstrap_mean_ci, mean, pass_at_k

CI_LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
# Means that differ only by float noise (summation order) count as tied in the ranking.
_RANK_DIGITS = 9

RowKey = tuple[str, str]  # (agent, model)


class LeaderboardError(BenchforgeError, ValueError):
    """The scores make no leaderboard (none yet, or inconsistent records); a ValueError too,
    as it always was."""


def build_leaderboard(
    scores: Sequence[TrialScore],
    *,
    run_id: str,
    title: str | None = None,
    mock_llm_used: bool | None = None,
    bootstrap_seed: int = BOOTSTRAP_SEED,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
    calibrations: Sequence[CalibrationEntry] | None = None,
) -> Leaderboard:
    """Aggregate one run's trial scores into a leaderboard.

    ``mock_llm_used`` can only add the mock flag: it is True when any trial used the mock LLM
    whatever the argument says, so a caller cannot hide that scores came from scripted replies.
    Raises ``ValueError`` on empty input (a run with no trials is an upstream failure, not an
    empty leaderboard) and on the inconsistencies listed in the module docstring.
    ``calibrations``: the stored calibrations (``read_calibrations``) that say whether each
    judge passed; None: not looked up (the judges' status reads "calibration not checked").
    """
    _validate(scores, run_id)

    by_row: dict[RowKey, list[TrialScore]] = defaultdict(list)
    for s in scores:
        by_row[(s.key.agent, s.key.model)].append(s)

    cells: dict[RowKey, dict[str, TaskCell]] = {
        key: {
            task_id: _cell(key, trials)
            for task_id, trials in sorted(_group_by_task(row_trials).items())
        }
        for key, row_trials in by_row.items()
    }
    max_epochs = max(c.n_epochs for row_cells in cells.values() for c in row_cells.values())

    rows = [
        _row(
            key,
            by_row[key],
            cells[key],
            max_epochs=max_epochs,
            seed=bootstrap_seed,
            resamples=bootstrap_resamples,
        )
        for key in by_row
    ]
    rows = _rank(rows)

    scored = [s for s in scores if s.status == "scored"]
    return Leaderboard(
        run_id=run_id,
        title=title or f"Benchforge leaderboard: {run_id}",
        mock_llm_used=bool(mock_llm_used) or any(s.used_mock_llm for s in scores),
        mock_judge_used=any((r := judge_record_of(s)) and r.used_mock_llm for s in scores),
        n_trials=len(scores),
        suites=sorted({s.key.suite for s in scores}),
        primary_metrics=sorted({s.primary for s in scored if s.primary is not None}),
        metric_names=sorted({m for s in scored for m in s.columns()}),
        max_epochs=max_epochs,
        ci_level=CI_LEVEL,
        bootstrap_resamples=bootstrap_resamples,
        bootstrap_seed=bootstrap_seed,
        rows=rows,
        tasks=_tasks(scores, cells, rows),
        infra_errors=_issues(scores, "infra_error"),
        unscored=_issues(scores, "unscored"),
        scoring_errors=_issues(scores, "scoring_error"),
        judged=_judged(scored),
        judges=_judges(scored, calibrations),
        judged_metrics=sorted({m for s in scored if judge_record_of(s) for m in s.columns()}),
    )


def _judges(
    scored: Sequence[TrialScore], calibrations: Sequence[CalibrationEntry] | None
) -> list[JudgeLine]:
    """One line per judge (kind, model, prompt version) that judged a scored trial."""
    groups: dict[tuple[str, str, str], list[tuple[TrialScore, JudgeIdentity]]] = defaultdict(list)
    for s in scored:
        record = judge_record_of(s)
        for j in record.judges if record is not None else []:
            groups[(j.judge, j.model, j.prompt_version)].append((s, j))
    return [
        JudgeLine(
            judge=judge,
            model=model,
            prompt_version=prompt,
            rubric_versions=sorted({j.rubric_version for _, j in uses if j.rubric_version}),
            modes=sorted({j.mode for _, j in uses if j.mode}),
            tasks=sorted({s.key.task_id for s, _ in uses}),
            trials=len({s.key.slug for s, _ in uses}),
            calibration=calibration_status(calibrations, judge, model, prompt),
        )
        for (judge, model, prompt), uses in sorted(groups.items())
    ]


def _judged(scored: Sequence[TrialScore]) -> list[JudgedTaskRow]:
    groups: dict[tuple[str, str, str], list[TrialScore]] = defaultdict(list)
    for s in scored:
        if judge_record_of(s) is not None:
            groups[(s.key.task_id, s.key.agent, s.key.model)].append(s)
    rows = []
    for (task_id, agent, model), trials in sorted(groups.items()):
        records = [r for t in trials if (r := judge_record_of(t)) is not None]
        costs = [r.cost_usd for r in records]
        rows.append(
            JudgedTaskRow(
                task_id=task_id,
                agent=agent,
                model=model,
                trials=len(trials),
                judge_requests=sum(r.requests for r in records),
                judge_cache_hits=sum(r.cache_hits for r in records),
                judge_cost_usd=None if None in costs else math.fsum(c or 0.0 for c in costs),
                unscored_items=sum(len(r.unscored) for r in records),
                pairs=sum(r.pairs for r in records),
                inconsistent_pairs=sum(r.inconsistent_pairs for r in records),
                disagreements=sum(len(r.disagreements) for r in records),
                injection_flags=sum(len(r.injection_flags) for r in records),
            )
        )
    return rows


def _validate(scores: Sequence[TrialScore], run_id: str) -> None:
    if not scores:
        raise LeaderboardError(
            f"no trial scores for run {run_id!r}: nothing to put on a leaderboard"
        )
    runs = sorted({s.run_id for s in scores})
    if runs != [run_id]:
        raise LeaderboardError(f"trial scores must all come from run {run_id!r}; got runs {runs}")

    seen_trials: set[str] = set()
    seen_epochs: set[tuple[str, str, str, int]] = set()
    config: dict[RowKey, str] = {}
    task_identity: dict[str, tuple[str, str, str]] = {}
    task_primary: dict[str, str] = {}
    for s in scores:
        if s.key.slug in seen_trials:
            raise LeaderboardError(f"trial {s.key.slug!r} appears twice")
        seen_trials.add(s.key.slug)
        epoch_key = (s.key.agent, s.key.model, s.key.task_id, s.key.epoch)
        if epoch_key in seen_epochs:
            raise LeaderboardError(
                f"two trials for agent {s.key.agent!r}, model {s.key.model!r}, "
                f"task {s.key.task_id!r}, epoch {s.key.epoch} (second: {s.key.slug!r})"
            )
        seen_epochs.add(epoch_key)

        known_hash = config.setdefault((s.key.agent, s.key.model), s.key.agent_config_hash)
        if known_hash != s.key.agent_config_hash:
            raise LeaderboardError(
                f"agent {s.key.agent!r} with model {s.key.model!r} ran with two configs "
                f"({known_hash} and {s.key.agent_config_hash}); give the variants distinct names"
            )
        identity = (s.key.suite, s.family, s.key.task_version)
        known_identity = task_identity.setdefault(s.key.task_id, identity)
        if known_identity != identity:
            raise LeaderboardError(
                f"task {s.key.task_id!r} appears as (suite, family, version) {known_identity} "
                f"and {identity}"
            )

        if s.status != "scored":
            continue
        if s.primary is None or s.primary not in s.metrics:
            raise LeaderboardError(
                f"scored trial {s.key.slug!r} lacks its primary metric "
                f"(primary={s.primary!r}, metrics={sorted(s.metrics)})"
            )
        bad = {m: v for m, v in s.metrics.items() if not math.isfinite(v)}
        if bad:
            raise LeaderboardError(f"scored trial {s.key.slug!r} has non-finite metrics {bad}")
        known_primary = task_primary.setdefault(s.key.task_id, s.primary)
        if known_primary != s.primary:
            raise LeaderboardError(
                f"task {s.key.task_id!r} is ranked by two primary metrics: "
                f"{known_primary!r} and {s.primary!r}"
            )


def _group_by_task(trials: Sequence[TrialScore]) -> dict[str, list[TrialScore]]:
    out: dict[str, list[TrialScore]] = defaultdict(list)
    for s in trials:
        out[s.key.task_id].append(s)
    return out


def _cell(key: RowKey, trials: Sequence[TrialScore]) -> TaskCell:
    """One (agent, model) on one task: means over the scored epochs only."""
    scored = [s for s in trials if s.status == "scored"]
    per_metric: dict[str, list[float]] = defaultdict(list)
    for s in scored:
        for name, value in s.columns().items():
            per_metric[name].append(value)
    graded = [s.success for s in scored if s.success is not None]
    return TaskCell(
        agent=key[0],
        model=key[1],
        n_epochs=len(trials),
        n_scored=len(scored),
        n_infra_error=sum(s.status == "infra_error" for s in trials),
        n_unscored=sum(s.status == "unscored" for s in trials),
        n_scoring_error=sum(s.status == "scoring_error" for s in trials),
        primary_mean=mean([s.primary_score for s in scored if s.primary_score is not None]),
        metrics={name: math.fsum(vs) / len(vs) for name, vs in sorted(per_metric.items())},
        successes=sum(graded),
        n_success_known=len(graded),
    )


def _row(
    key: RowKey,
    trials: Sequence[TrialScore],
    cells: dict[str, TaskCell],
    *,
    max_epochs: int,
    seed: int,
    resamples: int,
) -> LeaderboardRow:
    scored_cells = [c for c in cells.values() if c.n_scored]
    primaries = [c.primary_mean for c in scored_cells if c.primary_mean is not None]

    per_metric: dict[str, list[float]] = defaultdict(list)
    for c in scored_cells:
        for name, value in c.metrics.items():
            per_metric[name].append(value)

    graded = [c for c in scored_cells if c.n_success_known]
    success_rate = mean([c.successes / c.n_success_known for c in graded])
    pass_k: dict[int, float | None] = {
        k: mean(
            [pass_at_k(c.n_success_known, c.successes, k) for c in graded if c.n_success_known >= k]
        )
        for k in range(1, max_epochs + 1)
    }

    scored = [s for s in trials if s.status == "scored"]
    cost_partial = any(s.cost_usd is None and s.llm_calls > 0 for s in scored)
    cost_known = math.fsum(s.cost_usd for s in scored if s.cost_usd is not None)
    prompt_tokens = sum(s.prompt_tokens for s in scored)
    completion_tokens = sum(s.completion_tokens for s in scored)
    return LeaderboardRow(
        rank=None,
        agent=key[0],
        model=key[1],
        agent_config_hash=trials[0].key.agent_config_hash,
        tasks_attempted=len(cells),
        tasks_scored=len(scored_cells),
        trials=len(trials),
        trials_scored=len(scored),
        infra_errors=sum(s.status == "infra_error" for s in trials),
        unscored=sum(s.status == "unscored" for s in trials),
        scoring_errors=sum(s.status == "scoring_error" for s in trials),
        primary_mean=mean(primaries),
        primary_ci=bootstrap_mean_ci(primaries, resamples=resamples, seed=seed, level=CI_LEVEL),
        metrics={name: math.fsum(vs) / len(vs) for name, vs in sorted(per_metric.items())},
        success_rate=success_rate,
        pass_at_k=pass_k,
        llm_calls=sum(s.llm_calls for s in scored),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
        cost_usd=None if cost_partial else cost_known,
        cost_partial=cost_partial,
        cost_usd_known=cost_known,
        mean_agent_wall_s=mean([s.agent_wall_s for s in scored]),
        terminations=dict(sorted(Counter(s.termination for s in trials).items())),
    )


def _rank(rows: list[LeaderboardRow]) -> list[LeaderboardRow]:
    """Best mean primary score first; ties by success rate, then by agent and model name.

    Rows with nothing scored have no rank and come last, in name order.
    """

    def key(r: LeaderboardRow) -> tuple[bool, float, bool, float, str, str]:
        primary = round(r.primary_mean, _RANK_DIGITS) if r.primary_mean is not None else 0.0
        success = round(r.success_rate, _RANK_DIGITS) if r.success_rate is not None else 0.0
        return (
            r.primary_mean is None,
            -primary,
            r.success_rate is None,
            -success,
            r.agent,
            r.model,
        )

    ordered = sorted(rows, key=key)
    return [
        r.model_copy(update={"rank": i + 1 if r.primary_mean is not None else None})
        for i, r in enumerate(ordered)
    ]


def _tasks(
    scores: Sequence[TrialScore],
    cells: dict[RowKey, dict[str, TaskCell]],
    rows: Sequence[LeaderboardRow],
) -> list[TaskResult]:
    first: dict[str, TrialScore] = {}
    primary: dict[str, str] = {}
    for s in scores:
        first.setdefault(s.key.task_id, s)
        if s.status == "scored" and s.primary is not None:
            primary.setdefault(s.key.task_id, s.primary)
    return [
        TaskResult(
            task_id=task_id,
            suite=s.key.suite,
            family=s.family,
            task_version=s.key.task_version,
            primary=primary.get(task_id),
            cells=[
                cells[(r.agent, r.model)][task_id]
                for r in rows
                if task_id in cells[(r.agent, r.model)]
            ],
        )
        for task_id, s in sorted(first.items())
    ]


def _issues(scores: Sequence[TrialScore], status: str) -> list[TrialIssue]:
    return [
        TrialIssue(
            trial=s.key.slug,
            agent=s.key.agent,
            model=s.key.model,
            task_id=s.key.task_id,
            epoch=s.key.epoch,
            termination=s.termination,
            detail=s.detail,
        )
        for s in sorted(
            scores, key=lambda s: (s.key.agent, s.key.model, s.key.task_id, s.key.epoch, s.key.slug)
        )
        if s.status == status
    ]
