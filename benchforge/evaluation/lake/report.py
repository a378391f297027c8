"""A run's lake report: per (agent, model), accuracy per setting side by side, per answer type
and per difficulty, the pipeline-design score, the sub-task score, retrieval precision and
recall of the files its tools read against the gold files, and model calls, rounds to
sufficiency and cost per role; as tables and a plot, written as markdown, HTML and JSON beside
the run's leaderboard.

Counted like the leaderboard: only scored trials count (infra and scoring errors are no
results). Accuracy is the mean of the trials' ``accuracy`` (0-100); a column with no trial
shows "—", never 0. Per setting, ``accuracy_spread`` is task-weighted over repeated runs
(``aggregate.spread``): the mean over epochs ± the std of the epoch means, and a bootstrap
interval over tasks; the setting table shows "mean ± std".

Retrieval reads the trajectory: a file counts as read when a tool call names its lake path (a
``read_file`` path, or a path written in code). Paths built at run time (a glob) are not seen,
so retrieval is a lower bound of what was read; a trial that names no file has no precision.
Per-role usage and rounds are given by the caller (the agents layer reads them off ds-star's
trajectories: ``benchforge.agents.dsstar.usage``, through ``RunReportContext.trajectory_usage``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict

from benchforge.core.pages import Page, figure, markdown_table, plain_text, svg_markup
from benchforge.core.records import Step, TrialScore
from benchforge.core.records.trials import TrialResult
from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection
from benchforge.evaluation.lake.aggregate import Spread, spread
from benchforge.evaluation.lake.spec import LakePipelineTask

FAMILY = "lake_pipeline"
SETTINGS = ("full", "oracle", "trimmed", "obscured")
SUBTASKS = "subtasks"
Trial = tuple[TrialScore, TrialResult | None]
_PATH = re.compile(r"[\w./ ()-]+\.(?:csv|json|jsonl|parquet|md|txt)\b")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoleCost(_Frozen):
    """One role's model calls over an agent's trials (ds-star's roles; '-' for one-role
    agents)."""

    calls: int
    calls_per_trial: float
    cost_usd: float | None


class TrialFacts(_Frozen):
    """What the caller read off a trial's trajectory: model calls by role and the rounds to
    sufficiency (None: the agent has no verifier, or it never found the plan sufficient)."""

    calls_by_role: dict[str, int] = {}
    cost_by_role: dict[str, float | None] = {}
    rounds: int | None = None


class LakeRow(_Frozen):
    agent: str
    model: str
    trials: int
    accuracy_by_setting: dict[str, float | None]
    accuracy_spread: dict[str, Spread] = {}
    accuracy_by_type: dict[str, float | None]
    accuracy_by_difficulty: dict[str, float | None]
    pipeline_design: float | None
    subtasks: float | None
    retrieval_precision: float | None
    retrieval_recall: float | None
    rounds_mean: float | None
    roles: dict[str, RoleCost]
    cost_usd: float | None

    @property
    def label(self) -> str:
        return self.agent if self.model == "-" else f"{self.agent} / {self.model}"


class LakeReport(_Frozen):
    run_id: str
    settings: list[str]
    answer_types: list[str]
    rows: list[LakeRow]


def files_read(steps: Sequence[Step]) -> set[str]:
    """Lake paths the trajectory's tool calls name (``read_file`` paths, paths in code)."""
    found: set[str] = set()
    for step in steps:
        if step.kind != "tool" or not step.arguments:
            continue
        for value in step.arguments.values():
            if not isinstance(value, str):
                continue
            found.update(m.group(0).strip().removeprefix("./") for m in _PATH.finditer(value))
    return found


def retrieval(read: set[str], gold: Sequence[str]) -> tuple[float | None, float | None]:
    """Precision and recall (0-100) of ``read`` against ``gold``."""
    hits = len(read & set(gold))
    precision = 100.0 * hits / len(read) if read else None
    recall = 100.0 * hits / len(gold) if gold else None
    return precision, recall


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def build_lake_report(
    run_id: str,
    trials: Sequence[Trial],
    *,
    difficulty_of: Mapping[str, str],
    facts: Mapping[str, TrialFacts] | None = None,
) -> LakeReport:
    """``difficulty_of``: task id -> easy / hard; ``facts``: trial slug -> its role usage."""
    facts = facts or {}
    groups: dict[tuple[str, str], list[Trial]] = defaultdict(list)
    for score, result in trials:
        if score.family == FAMILY and score.status == "scored":
            groups[(score.key.agent, score.key.model)].append((score, result))
    types: set[str] = set()
    rows = []
    for (agent, model), group in sorted(groups.items()):
        by_setting: dict[str, list[float]] = defaultdict(list)
        runs_by_setting: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
        by_type: dict[str, list[float]] = defaultdict(list)
        by_difficulty: dict[str, list[float]] = defaultdict(list)
        design, subtasks, precision, recall, rounds = [], [], [], [], []
        calls: dict[str, int] = defaultdict(int)
        costs: dict[str, float | None] = defaultdict(float)
        for score, result in group:
            detail = score.breakdown
            accuracy = score.metrics.get("accuracy")
            if detail is None or accuracy is None:
                continue
            mode = getattr(detail, "mode", "task")
            if mode == SUBTASKS:
                subtasks.append(accuracy)
            else:
                setting = str(getattr(detail, "setting", "?"))
                by_setting[setting].append(accuracy)
                runs_by_setting[setting].append((score.key.task_id, score.key.epoch, accuracy))
                kind = str(getattr(detail, "answer_type", "?"))
                types.add(kind)
                by_type[kind].append(accuracy)
                by_difficulty[difficulty_of.get(score.key.task_id, "?")].append(accuracy)
                if "pipeline_design" in score.metrics:
                    design.append(score.metrics["pipeline_design"])
                if result is not None:
                    gold = list(getattr(detail, "gold_files", []))
                    p, r = retrieval(files_read(result.trajectory), gold)
                    if p is not None:
                        precision.append(p)
                    if r is not None:
                        recall.append(r)
            fact = facts.get(score.key.slug)
            if fact is not None:
                if fact.rounds is not None:
                    rounds.append(float(fact.rounds))
                for role, n in fact.calls_by_role.items():
                    calls[role] += n
                    cost = fact.cost_by_role.get(role)
                    previous = costs[role]
                    costs[role] = None if cost is None or previous is None else previous + cost
        n = len(group)
        rows.append(
            LakeRow(
                agent=agent,
                model=model,
                trials=n,
                accuracy_by_setting={s: _mean(by_setting[s]) for s in SETTINGS},
                accuracy_spread={
                    s: spread(runs_by_setting[s]) for s in SETTINGS if runs_by_setting[s]
                },
                accuracy_by_type={t: _mean(v) for t, v in sorted(by_type.items())},
                accuracy_by_difficulty={d: _mean(by_difficulty[d]) for d in ("easy", "hard")},
                pipeline_design=_mean(design),
                subtasks=_mean(subtasks),
                retrieval_precision=_mean(precision),
                retrieval_recall=_mean(recall),
                rounds_mean=_mean(rounds),
                roles={
                    role: RoleCost(calls=c, calls_per_trial=c / n, cost_usd=costs[role])
                    for role, c in sorted(calls.items())
                },
                cost_usd=_total_cost([s for s, _ in group]),
            )
        )
    return LakeReport(run_id=run_id, settings=list(SETTINGS), answer_types=sorted(types), rows=rows)


def _total_cost(scores: Sequence[TrialScore]) -> float | None:
    costs = [s.cost_usd for s in scores]
    return None if any(c is None for c in costs) else math.fsum(c or 0.0 for c in costs)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _with_std(row: LakeRow, setting: str) -> str:
    figures = row.accuracy_spread.get(setting)
    if figures is None or figures.std is None:
        return _num(row.accuracy_by_setting.get(setting))
    return f"{_num(figures.mean)} ± {figures.std:.1f}"


def setting_table(report: LakeReport) -> tuple[list[str], list[list[str]]]:
    header = ["agent", "trials", *report.settings, "sub-tasks", "pipeline design"]
    rows = [
        [
            r.label,
            str(r.trials),
            *(_with_std(r, s) for s in report.settings),
            _num(r.subtasks),
            _num(r.pipeline_design),
        ]
        for r in report.rows
    ]
    return header, rows


def breakdown_table(report: LakeReport) -> tuple[list[str], list[list[str]]]:
    header = ["agent", "easy", "hard", *report.answer_types]
    rows = [
        [
            r.label,
            _num(r.accuracy_by_difficulty.get("easy")),
            _num(r.accuracy_by_difficulty.get("hard")),
            *(_num(r.accuracy_by_type.get(t)) for t in report.answer_types),
        ]
        for r in report.rows
    ]
    return header, rows


def cost_table(report: LakeReport) -> tuple[list[str], list[list[str]]]:
    header = [
        "agent",
        "retrieval precision",
        "retrieval recall",
        "rounds",
        "calls per role",
        "cost (USD)",
    ]
    rows = [
        [
            r.label,
            _num(r.retrieval_precision),
            _num(r.retrieval_recall),
            _num(r.rounds_mean),
            ", ".join(f"{k} {v.calls_per_trial:.1f}" for k, v in r.roles.items()) or "—",
            "—" if r.cost_usd is None else f"{r.cost_usd:.4f}",
        ]
        for r in report.rows
    ]
    return header, rows


NOTE = (
    "Accuracy (0-100) per setting, per difficulty and per answer type: the mean over scored "
    "trials; — where no trial was scored. Retrieval: files named by tool calls vs the gold "
    "files (paths built at run time are not seen). Calls per role per trial."
)


def to_markdown(report: LakeReport) -> str:
    parts = [
        f"## Lake questions: {report.run_id}",
        NOTE,
        markdown_table(*setting_table(report)),
        "### By difficulty and answer type",
        markdown_table(*breakdown_table(report)),
        "### Retrieval, rounds and cost",
        markdown_table(*cost_table(report)),
    ]
    return "\n\n".join(parts) + "\n"


def setting_plot(report: LakeReport) -> Markup | None:
    """Grouped bars: each (agent, model)'s accuracy per setting."""
    if not report.rows:
        return None
    fig = figure(7.0, 0.8 + 0.5 * len(report.rows))
    ax = fig.add_subplot()
    with plain_text():
        height = 0.8 / len(report.settings)
        positions = np.arange(len(report.rows))
        for i, setting in enumerate(report.settings):
            values = [r.accuracy_by_setting.get(setting) for r in report.rows]
            ax.barh(
                positions + i * height,
                [v or 0.0 for v in values],
                height=height,
                label=setting,
            )
        ax.set_yticks(positions + 0.4 - height / 2, [r.label[:36] for r in report.rows])
        ax.set_xlim(0, 100)
        ax.set_xlabel("accuracy")
        ax.invert_yaxis()
        ax.legend(loc="lower right", fontsize="small")
    return svg_markup(fig, "accuracy per setting")


PAGE = Page(
    template="lake_report.html.j2", folders=(Path(__file__).parent / "templates",), kind="lake"
)


def to_html(report: LakeReport) -> str:
    return PAGE.render(
        f"Lake questions: {report.run_id}",
        report=report,
        note=NOTE,
        settings=setting_table(report),
        breakdown=breakdown_table(report),
        costs=cost_table(report),
        plot=setting_plot(report),
    )


def run_section(context: RunReportContext) -> RunReportSection:
    """The run's lake report as its section: the trials' results, their tasks' difficulty,
    and each trial's model calls by role."""
    trials: list[Trial] = context.trials()
    difficulty = {}
    for score, _ in trials:
        spec = context.load_spec(score.key.suite, score.key.task_id)
        if isinstance(spec, LakePipelineTask):
            difficulty[score.key.task_id] = spec.difficulty
    facts = {}
    for score, result in trials:
        if result is not None:
            usage = context.trajectory_usage(result.trajectory)
            facts[score.key.slug] = TrialFacts(**usage.model_dump())
    report = build_lake_report(context.run_id, trials, difficulty_of=difficulty, facts=facts)
    return RunReportSection.of_report("lake-report", report, to_markdown(report), to_html(report))
