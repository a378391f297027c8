"""A run's DAB report: per (agent, model), pass@k per query and stratified (query -> dataset ->
overall), cost and latency, the tool-call mix, and the failure modes of its failed trials, as a
table and a plot. Built from stored records (scores, trial results) and the failure labels;
written as markdown, HTML and JSON beside the run's leaderboard.

Counted like the leaderboard: only scored trials whose success is known count (infra errors
and scoring errors are no results), so a query's n is its graded trials.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict

from benchforge.core.pages import Page, figure, markdown_table, plain_text, svg_markup
from benchforge.core.records import TrialScore
from benchforge.core.records.trials import TrialResult
from benchforge.evaluation.dab.failure_modes import FAILURE_MODES, FailureLabel, classify_failure
from benchforge.evaluation.dab.metrics import ToolMix, query_pass_at_k, stratified_mean, tool_mix
from benchforge.evaluation.dab.spec import DabQueryTask
from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.leaderboard.stats import mean

FAMILY = "dab_query"
INFRA = "infra_error"  # a failed trial the judge could not label: counted apart
MAX_JUDGED_PER_QUERY = 5  # DAB judges up to five failed trajectories per query and agent
MODE_COLORS = {
    "before_planning": "#9e9e9e",
    "plan": "#1565c0",
    "data_selection": "#6a1b9a",
    "implementation": "#ef6c00",
    "runtime": "#c62828",
}
Trial = tuple[TrialScore, TrialResult | None]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QueryPass(_Frozen):
    task_id: str
    dataset: str
    n: int  # graded trials
    c: int  # passed
    pass_at_k: dict[int, float]  # k = 1..n


class DabRow(_Frozen):
    """One (agent, model) over the run's dab_query tasks."""

    agent: str
    model: str
    trials: int  # graded
    queries: list[QueryPass]
    pass_at_k: dict[int, float | None]  # stratified; k up to the most trials of a query
    pass_at_1_by_dataset: dict[str, float]
    cost_usd: float | None  # None: some trial's cost is unknown
    cost_usd_known: float
    mean_latency_s: float | None
    tools: ToolMix
    failures: dict[str, int]  # failure mode (or "infra_error") -> failed trials

    @property
    def label(self) -> str:
        return self.agent if self.model == "-" else f"{self.agent} · {self.model}"


class DabReport(_Frozen):
    run_id: str
    rows: list[DabRow]
    failures: list[FailureLabel]
    max_k: int


def graded(trials: Sequence[Trial]) -> list[Trial]:
    """The dab_query trials with a known success."""
    return [
        (s, r)
        for s, r in trials
        if s.family == FAMILY and s.status == "scored" and s.success is not None
    ]


def failed(trials: Sequence[Trial]) -> list[tuple[TrialScore, TrialResult]]:
    """Graded trials that failed and whose result (the trajectory) is stored."""
    return [(s, r) for s, r in graded(trials) if s.success is False and r is not None]


def gold_of(score: TrialScore) -> str:
    # The family's breakdown (DabAnswerDetail) carries the gold as a sentence; it is read by
    # name because the family module imports this package, not the other way round.
    return str(getattr(score.breakdown, "expected", "") or "(unknown)")


async def classify_failures(
    trials: Sequence[Trial],
    *,
    questions: Mapping[str, str],
    judge: Judge | None,
    max_judged_per_query: int = MAX_JUDGED_PER_QUERY,
) -> list[FailureLabel]:
    """A label for every failed trial: by code, or by the judge for the first
    ``max_judged_per_query`` of each (query, agent, model) by epoch (the rest: an
    infrastructure error saying so, never a guessed mode)."""
    labels = []
    judged: Counter[tuple[str, str, str]] = Counter()
    for score, result in sorted(failed(trials), key=lambda t: t[0].key.slug):
        key = (score.key.task_id, score.key.agent, score.key.model)
        use_judge = judge if judged[key] < max_judged_per_query else None
        label = await classify_failure(
            result,
            question=questions.get(score.key.task_id, "(unknown)"),
            gold=gold_of(score),
            judge=use_judge,
        )
        if label.source == "judge":
            judged[key] += 1
            if use_judge is None and judge is not None:
                label = label.model_copy(
                    update={"infra_error": f"over {max_judged_per_query} judged per query"}
                )
        labels.append(label)
    return labels


def _row(
    agent: str,
    model: str,
    trials: list[Trial],
    dataset_of: Mapping[str, str],
    labels: list[FailureLabel],
) -> DabRow:
    by_task: dict[str, list[TrialScore]] = defaultdict(list)
    for score, _ in trials:
        by_task[score.key.task_id].append(score)
    queries = [
        QueryPass(
            task_id=task,
            dataset=dataset_of[task],
            n=len(scores),
            c=sum(1 for s in scores if s.success),
            pass_at_k=query_pass_at_k(len(scores), sum(1 for s in scores if s.success)),
        )
        for task, scores in sorted(by_task.items())
    ]
    max_k = max(q.n for q in queries)
    pass_k: dict[int, float | None] = {}
    for k in range(1, max_k + 1):
        values = {q.task_id: q.pass_at_k[k] for q in queries if q.n >= k}
        pass_k[k] = stratified_mean(values, dataset_of).overall
    pass_1 = stratified_mean({q.task_id: q.pass_at_k[1] for q in queries}, dataset_of)
    costs = [s.cost_usd for s, _ in trials]
    tools = ToolMix()
    for _, result in trials:
        if result is not None:
            tools = tools.plus(tool_mix(result.trajectory))
    failures = Counter(label.mode or INFRA for label in labels)
    return DabRow(
        agent=agent,
        model=model,
        trials=len(trials),
        queries=queries,
        pass_at_k=pass_k,
        pass_at_1_by_dataset=pass_1.by_dataset,
        cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
        cost_usd_known=sum(c or 0.0 for c in costs),
        mean_latency_s=mean([s.agent_wall_s for s, _ in trials]),
        tools=tools,
        failures={mode: failures[mode] for mode in (*FAILURE_MODES, INFRA) if failures[mode]},
    )


def build_dab_report(
    run_id: str,
    trials: Sequence[Trial],
    *,
    dataset_of: Mapping[str, str],
    failures: Sequence[FailureLabel] = (),
) -> DabReport:
    """The report of the run's graded dab_query trials; ``dataset_of``: task id -> its
    dataset (the stratum)."""
    rows_trials: dict[tuple[str, str], list[Trial]] = defaultdict(list)
    for trial in graded(trials):
        rows_trials[(trial[0].key.agent, trial[0].key.model)].append(trial)
    rows = [
        _row(
            agent,
            model,
            row_trials,
            dataset_of,
            [f for f in failures if (f.agent, f.model) == (agent, model)],
        )
        for (agent, model), row_trials in sorted(rows_trials.items())
    ]
    rows.sort(key=lambda r: -(r.pass_at_k.get(1) or 0.0))
    return DabReport(
        run_id=run_id,
        rows=rows,
        failures=sorted(failures, key=lambda f: f.trial),
        max_k=max((max(r.pass_at_k) for r in rows), default=0),
    )


# ----------------------------------------------------------------------------- rendering


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _usd(row: DabRow) -> str:
    return f"${row.cost_usd:.4f}" if row.cost_usd is not None else f"≥ ${row.cost_usd_known:.4f}"


def summary_table(report: DabReport) -> tuple[list[str], list[list[str]]]:
    ks = range(1, report.max_k + 1)
    header = [
        "Agent",
        "Trials",
        *(f"pass@{k}" for k in ks),
        "Cost (USD)",
        "Mean latency (s)",
        "SQL calls",
        "Python calls",
        "Exploratory share",
    ]
    rows = [
        [
            r.label,
            str(r.trials),
            *(_pct(r.pass_at_k.get(k)) for k in ks),
            _usd(r),
            "-" if r.mean_latency_s is None else f"{r.mean_latency_s:.1f}",
            str(r.tools.sql),
            str(r.tools.python),
            _pct(r.tools.exploratory_share),
        ]
        for r in report.rows
    ]
    return header, rows


def failure_table(report: DabReport) -> tuple[list[str], list[list[str]]]:
    header = ["Agent", *FAILURE_MODES, INFRA, "failed"]
    rows = [
        [
            r.label,
            *(str(r.failures.get(m, 0)) for m in (*FAILURE_MODES, INFRA)),
            str(sum(r.failures.values())),
        ]
        for r in report.rows
    ]
    return header, rows


def query_table(report: DabReport) -> tuple[list[str], list[list[str]]]:
    header = ["Query", "Dataset", "Agent", "passed / n", "pass@1", f"pass@{report.max_k}"]
    rows = [
        [
            q.task_id,
            q.dataset,
            r.label,
            f"{q.c} / {q.n}",
            _pct(q.pass_at_k[1]),
            _pct(q.pass_at_k.get(report.max_k)),
        ]
        for r in report.rows
        for q in r.queries
    ]
    return header, rows


def to_markdown(report: DabReport) -> str:
    parts = [
        f"## DAB questions: {report.run_id}",
        "pass@k is unbiased per query, averaged within each dataset, then over datasets.",
        markdown_table(*summary_table(report)),
        "### Failure modes of failed trials",
        "before_planning and runtime by code; plan, data_selection and implementation by the "
        "judge; infra_error: the judge could not label the trial (no mode counted).",
        markdown_table(*failure_table(report)),
        "### Per query",
        markdown_table(*query_table(report)),
    ]
    return "\n\n".join(parts) + "\n"


def failure_plot(report: DabReport) -> Markup | None:
    """Stacked bars: each (agent, model)'s failed trials by failure mode."""
    rows = [r for r in report.rows if r.failures]
    if not rows:
        return None
    fig = figure(7.0, 0.6 + 0.4 * len(rows))
    ax = fig.add_subplot()
    with plain_text():
        left = np.zeros(len(rows))
        for mode in (*FAILURE_MODES, INFRA):
            counts = np.array([r.failures.get(mode, 0) for r in rows], dtype=float)
            if counts.any():
                ax.barh(
                    [r.label[:36] for r in rows],
                    counts,
                    left=left,
                    label=mode,
                    color=MODE_COLORS.get(mode, "#bdbdbd"),
                )
                left += counts
        ax.set_xlabel("failed trials")
        ax.invert_yaxis()
        ax.legend(loc="lower right", fontsize="small")
    return svg_markup(fig, "failed trials by failure mode")


PAGE = Page(
    template="dab_report.html.j2", folders=(Path(__file__).parent / "templates",), kind="dab"
)


def to_html(report: DabReport) -> str:
    return PAGE.render(
        f"DAB questions: {report.run_id}",
        report=report,
        summary=summary_table(report),
        failure_modes=failure_table(report),
        queries=query_table(report),
        plot=failure_plot(report),
    )


async def dab_run_report(
    run_id: str,
    trials: Sequence[Trial],
    *,
    questions: Mapping[str, str],
    dataset_of: Mapping[str, str],
    judge: Judge | None,
) -> DabReport:
    """The whole report: failed trials labelled (code, then the judge), then the figures."""
    labels = await classify_failures(trials, questions=questions, judge=judge)
    return build_dab_report(run_id, trials, dataset_of=dataset_of, failures=labels)


def run_section(context: RunReportContext) -> RunReportSection:
    """The run's DAB report as its section: the trials' results, their tasks' questions and
    datasets, and the judge for failure modes, opened only when a failed trial needs it."""
    trials: list[Trial] = context.trials()
    specs = {s.key.task_id: context.load_spec(s.key.suite, s.key.task_id) for s, _ in trials}
    questions = {t: spec.question for t, spec in specs.items() if isinstance(spec, DabQueryTask)}
    dataset_of = {t: spec.dataset.location or spec.dataset.domain for t, spec in specs.items()}

    def build(judge: Judge | None) -> DabReport:
        return Judge.run(
            dab_run_report(
                context.run_id, trials, questions=questions, dataset_of=dataset_of, judge=judge
            )
        )

    if failed(trials):
        with context.open_judge() as judge:
            report = build(judge)
    else:
        report = build(None)
    return RunReportSection.of_report("dab-report", report, to_markdown(report), to_html(report))
