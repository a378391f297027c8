"""A stored run as the browser shows it: the run store's records in, view models out.

Nothing here is computed anew: statuses, scores and per-node diffs are the stored
``TrialResult`` / ``TrialScore`` records, and the leaderboard is ``build_leaderboard`` over the
stored scores. A trial's status in the browser is one of:

- ``success`` / ``failure``: scored, with or without full marks;
- ``infra_error``: the trial could not be run fairly (excluded from every score);
- ``unscored``: its task has no scorer (e.g. ``de_arch`` without a judge);
- ``scoring_error``: scoring it raised (excluded from every score; the next ``score_run``
  scores it again);
- ``not_scored``: finished, but ``score_run`` has not scored it yet.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from benchforge.core.records import RunSpec, Step, TrialKey, TrialResult, TrialScore
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.leaderboard import (
    Leaderboard,
    build_leaderboard,
    judge_models,
    read_calibrations,
)
from benchforge.harness.browser.judged import JudgedView, judged_output, judged_view
from benchforge.harness.store import RunStore

TrialStatus = Literal[
    "success", "failure", "infra_error", "unscored", "scoring_error", "not_scored"
]
STATUSES: tuple[TrialStatus, ...] = (
    "success",
    "failure",
    "infra_error",
    "unscored",
    "scoring_error",
    "not_scored",
)
ERROR_LINE_CHARS = 160


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


PAGE_NAME_CHARS = 120  # a file name holds 255 bytes: a long agent spelling is cut, not fatal


def trial_page(slug: str) -> str:
    """The trial's page, relative to the site root: readable (its first
    :data:`PAGE_NAME_CHARS` characters), and unique per slug (a digest of all of it)."""
    name = re.sub(r"[^A-Za-z0-9_.=+-]", "_", slug.replace("/", "__"))[:PAGE_NAME_CHARS]
    return f"trials/{name}-{hashlib.sha256(slug.encode()).hexdigest()[:8]}.html"


def trial_status(result: TrialResult, score: TrialScore | None) -> TrialStatus:
    if score is None:
        return "infra_error" if result.status == "infra_error" else "not_scored"
    if score.status == "scored":
        return "success" if score.success else "failure"
    return score.status


class TrialRow(_View):
    """One trial in the index (and in the leaderboard's links)."""

    key: TrialKey
    page: str
    family: str
    status: TrialStatus
    termination: str
    primary: str | None
    metrics: dict[str, float]
    used_mock_llm: bool
    wall_s: float
    llm_calls: int
    tokens: int
    error: str | None  # the last line of the trial's error, cut


class Argument(_View):
    """One argument of a tool call: text as it is (a file's content reads as the file),
    anything else as JSON. ``name`` is empty for arguments that are not a JSON object."""

    name: str
    value: str


class ToolCallView(_View):
    name: str
    arguments: list[Argument]


class StepView(_View):
    """One trajectory step, with its start as an offset from the trial's start."""

    index: int
    kind: Literal["model", "tool"]
    name: str
    offset_s: float
    seconds: float
    ok: bool
    error: str | None
    interrupted: bool
    text: str | None  # the model's reply, or the tool's output (tail)
    arguments: list[Argument] | None  # a tool step's arguments
    tool_calls: list[ToolCallView]
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    attempts: int | None
    cache_hit: bool | None
    used_mock: bool | None
    exit_code: int | None
    timed_out: bool | None
    role: str | None = None  # which part of a multi-role agent took the step (ds-star)


class MetricView(_View):
    """A metric on the data it was scored on, and (held-out scoring) on the visible data."""

    name: str
    value: float | None
    visible: float | None


class TrialView(_View):
    row: TrialRow
    result: TrialResult
    score: TrialScore | None
    metrics: list[MetricView]
    steps: list[StepView]
    judged: JudgedView | None = None  # a judged trial's items, pairs and highlighted text


class CellLink(_View):
    """A trial a leaderboard cell summarizes."""

    epoch: int
    page: str
    status: TrialStatus


class RunView(_View):
    run_id: str
    uri: str
    spec: RunSpec | None
    leaderboard: Leaderboard | None
    leaderboard_note: str | None  # why there is no leaderboard
    trials: list[TrialRow]
    mock_llm_used: bool  # some trial actually called the mock server
    cells: dict[str, list[CellLink]]  # cell_key(task, agent, model) -> its trials by epoch

    def cell(self, task_id: str, agent: str, model: str) -> list[CellLink]:
        return self.cells.get(cell_key(task_id, agent, model), [])

    def counts(self) -> dict[TrialStatus, int]:
        return {s: n for s in STATUSES if (n := sum(t.status == s for t in self.trials))}


def cell_key(task_id: str, agent: str, model: str) -> str:
    return json.dumps([task_id, agent, model])


def arguments_of(arguments: Any) -> list[Argument]:
    """A call's arguments (a dict, or the JSON text a model sent) as named values."""
    if arguments is None:
        return []
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return [Argument(name="", value=arguments)]
    if not isinstance(arguments, dict):
        return [Argument(name="", value=json.dumps(arguments, ensure_ascii=False))]
    return [
        Argument(
            name=str(k),
            value=v if isinstance(v, str) else json.dumps(v, indent=2, ensure_ascii=False),
        )
        for k, v in arguments.items()
    ]


def _error_line(text: str | None) -> str | None:
    """The last line of an error (a traceback's says what went wrong), cut."""
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[-1].strip()
    return line if len(line) <= ERROR_LINE_CHARS else line[: ERROR_LINE_CHARS - 1] + "…"


# A step's fields a step view shows as they are recorded.
_STEP_AS_RECORDED = {
    "index", "kind", "name", "seconds", "ok", "error", "prompt_tokens", "completion_tokens",
    "cost_usd", "attempts", "cache_hit", "used_mock", "exit_code", "timed_out", "role",
}  # fmt: skip


def step_view(step: Step, result: TrialResult) -> StepView:
    return StepView(
        **step.model_dump(include=_STEP_AS_RECORDED),
        offset_s=(step.started_at - result.started_at).total_seconds(),
        interrupted=bool(step.interrupted),
        text=step.output,
        arguments=arguments_of(step.arguments) if step.arguments is not None else None,
        tool_calls=[
            ToolCallView(name=str(c.get("name", "?")), arguments=arguments_of(c.get("arguments")))
            for c in step.tool_calls
        ],
    )


def metric_views(score: TrialScore | None) -> list[MetricView]:
    if score is None or score.status != "scored":
        return []
    names = list(score.metrics)
    seen = score.visible.metrics if score.visible is not None else {}
    if score.primary in names:  # the ranked metric first, then the scorer's order
        names.insert(0, names.pop(names.index(score.primary)))
    return [
        MetricView(
            name=m,
            value=score.metrics[m],
            visible=seen.get(m),
        )
        for m in names
    ]


def trial_row(result: TrialResult, score: TrialScore | None) -> TrialRow:
    return TrialRow(
        key=result.key,
        page=trial_page(result.key.slug),
        family=result.family,
        status=trial_status(result, score),
        termination=result.termination,
        primary=score.primary if score is not None else None,
        metrics=dict(score.metrics) if score is not None else {},
        used_mock_llm=result.used_mock_llm,
        wall_s=result.wall_s,
        llm_calls=result.llm.calls,
        tokens=result.llm.prompt_tokens + result.llm.completion_tokens,
        error=_error_line(result.error),
    )


def judged_of(
    result: TrialResult, score: TrialScore | None, run: RunStore | None
) -> JudgedView | None:
    record = judge_record_of(score) if score is not None and score.status == "scored" else None
    if record is None:
        return None
    path = record.output
    text = judged_output(run, result, path) if path is not None else None
    return judged_view(record, text)


def trial_view(
    result: TrialResult, score: TrialScore | None, run: RunStore | None = None
) -> TrialView:
    """``run``: where a judged file too large to be inline is read from (its archive)."""
    return TrialView(
        row=trial_row(result, score),
        result=result,
        score=score,
        metrics=metric_views(score),
        steps=[step_view(s, result) for s in result.trajectory],
        judged=judged_of(result, score, run),
    )


def read_scores(run: RunStore) -> dict[str, TrialScore]:
    return {s.key.slug: s for s in run.read_scores()}


def iter_trials(run: RunStore, scores: Mapping[str, TrialScore]) -> Iterator[TrialView]:
    """Every finished trial of ``run``, in slug order, one result read at a time."""
    for slug in sorted(run.finished_slugs()):
        yield trial_view(run.read_result(slug), scores.get(slug), run)


def run_view(run: RunStore, trials: list[TrialRow], scores: Mapping[str, TrialScore]) -> RunView:
    """The run's overview: the leaderboard of its stored scores and the index of ``trials``."""
    leaderboard, note = None, None
    scored = [scores[t.key.slug] for t in trials if t.key.slug in scores]
    if not scored:
        note = f"no trial is scored yet: `benchforge score-run {run.run_id}` scores them"
    else:
        try:
            calibrations = read_calibrations(run.store, judge_models(scored))
            leaderboard = build_leaderboard(scored, run_id=run.run_id, calibrations=calibrations)
        except ValueError as err:  # inconsistent records: say so, still list the trials
            note = f"the stored scores make no leaderboard: {err}"
    cells: dict[str, list[CellLink]] = {}
    for t in sorted(trials, key=lambda t: (t.key.epoch, t.key.slug)):
        link = CellLink(epoch=t.key.epoch, page=t.page, status=t.status)
        cells.setdefault(cell_key(t.key.task_id, t.key.agent, t.key.model), []).append(link)
    return RunView(
        run_id=run.run_id,
        uri=run.uri(),
        spec=run.read_spec(),
        leaderboard=leaderboard,
        leaderboard_note=note,
        trials=sorted(trials, key=_index_order),
        mock_llm_used=any(t.used_mock_llm for t in trials),
        cells=cells,
    )


def _index_order(row: TrialRow) -> tuple[str, str, str, int, str]:
    key = row.key
    return (key.task_id, key.agent, key.model, key.epoch, key.slug)


def load_run(run: RunStore) -> tuple[RunView, list[TrialView]]:
    """The whole run in memory (small runs, tests); ``write_site`` streams trials instead."""
    scores = read_scores(run)
    trials = list(iter_trials(run, scores))
    return run_view(run, [t.row for t in trials], scores), trials
