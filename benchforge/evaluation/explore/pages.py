"""The exploration report as files: ``explore-report.{md,html,json}`` beside a run's
leaderboard, from its ``explore_milestone`` trial scores (``build_report``'s numbers, then
three plots: the first missed milestone, termination modes, Acc against GPR).

A trial's record is read from its stored score: the metrics (0-100) and the family's breakdown,
read by field name because the family module imports this package, not the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup
from pydantic import BaseModel, ConfigDict

from benchforge.core.pages import Page, figure, markdown_table, plain_text, svg_markup
from benchforge.core.records import TrialScore
from benchforge.evaluation.explore.report import (
    DIFFICULTIES,
    ExploreReport,
    ExploreTrial,
    MetricSummary,
    accuracy_drop,
    build_report,
)
from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection

FAMILY = "explore_milestone"
TERMINATIONS = ("answered", "timeout", "silent_stop", "give_up", "wrong_answer_stop", "other")
TERMINATION_COLORS = {
    "answered": "#1a9850",
    "timeout": "#d73027",
    "silent_stop": "#fc8d59",
    "give_up": "#fee08b",
    "wrong_answer_stop": "#91bfdb",
    "other": "#bdbdbd",
}


class ExploreRunReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    report: ExploreReport
    trials: int


def _label(score: TrialScore, models: dict[str, set[str]]) -> str:
    agent = score.key.agent
    return f"{agent} ({score.key.model})" if len(models[agent]) > 1 else agent


def explore_trials(scores: Sequence[TrialScore]) -> list[ExploreTrial]:
    """The report's record of each ``explore_milestone`` trial (others are left out)."""
    ours = [s for s in scores if s.family == FAMILY]
    models: dict[str, set[str]] = {}
    for s in ours:
        models.setdefault(s.key.agent, set()).add(s.key.model)
    trials = []
    for s in ours:
        detail: Any = s.breakdown
        metrics = s.metrics
        scored = s.status == "scored" and "accuracy" in metrics and detail is not None
        first_missed = getattr(getattr(detail, "milestones", None), "first_missed", None)
        keys: list[str] = list(getattr(detail, "milestone_keys", []) or [])
        trials.append(
            ExploreTrial(
                agent=_label(s, models),
                task_id=s.key.task_id,
                epoch=s.key.epoch,
                difficulty=getattr(detail, "difficulty", "medium"),
                scored=scored,
                accuracy=metrics["accuracy"] / 100 if scored else None,
                correct=bool(s.success) if scored else None,
                gpr=metrics["gpr"] / 100 if "gpr" in metrics else None,
                tpe=metrics["tpe"] / 100 if "tpe" in metrics else None,
                ee=metrics["ee"] / 100 if "ee" in metrics else None,
                first_missed_index=keys.index(first_missed) + 1 if first_missed in keys else None,
                termination=getattr(detail, "termination", None),
            )
        )
    return trials


def explore_run_report(run_id: str, scores: Sequence[TrialScore]) -> ExploreRunReport | None:
    trials = explore_trials(scores)
    if not trials:
        return None
    return ExploreRunReport(run_id=run_id, report=build_report(trials), trials=len(trials))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _metric(summary: MetricSummary) -> str:
    if summary.mean is None:
        return "—"
    text = _pct(summary.mean)
    if summary.std is not None:
        text += f" ± {100 * summary.std:.1f}"
    if summary.interval is not None:
        low, high = summary.interval
        text += f" [{100 * low:.1f}, {100 * high:.1f}]"
    return text


def summary_table(run: ExploreRunReport) -> tuple[list[str], list[list[str]]]:
    header = ["agent", "Acc", "GPR", "GPR (failed)", "TPE", "EE", "rank gap", "unscored"]
    rows = [
        [
            row.agent,
            _metric(row.accuracy),
            _metric(row.gpr),
            _metric(row.gpr_failed),
            _metric(row.tpe),
            _metric(row.ee),
            "—" if row.rank_gap is None else f"{row.rank_gap:+d}",
            str(row.unscored),
        ]
        for row in run.report.rows
    ]
    return header, rows


def difficulty_table(run: ExploreRunReport) -> tuple[list[str], list[list[str]]]:
    header = ["agent", *DIFFICULTIES, "drop easy→medium", "drop medium→hard"]
    rows = []
    for row in run.report.rows:
        drop = accuracy_drop(row)
        rows.append(
            [
                row.agent,
                *(_pct(row.accuracy_by_difficulty.get(level)) for level in DIFFICULTIES),
                _pct(drop["easy_to_medium"]),
                _pct(drop["medium_to_hard"]),
            ]
        )
    return header, rows


def termination_table(run: ExploreRunReport) -> tuple[list[str], list[list[str]]]:
    header = ["agent", *TERMINATIONS]
    rows = [
        [row.agent, *(str(row.terminations.get(mode, 0)) for mode in TERMINATIONS)]
        for row in run.report.rows
    ]
    return header, rows


def first_missed_table(run: ExploreRunReport) -> tuple[list[str], list[list[str]]]:
    positions = sorted({p for row in run.report.rows for p in row.first_missed})
    header = ["agent", *(f"milestone {p}" for p in positions)]
    rows = [
        [row.agent, *(str(row.first_missed.get(p, 0)) for p in positions)]
        for row in run.report.rows
    ]
    return header, rows


NOTE = (
    "Acc, GPR and TPE over every scored trial (mean over epochs ± std over epochs, "
    "[bootstrap interval over tasks]); GPR (failed) over incorrect trials (DataClawBench's GPR); "
    "EE over correct trials. Unscored trials (no judge verdict) are left out of every mean. "
    "Rank gap: rank by GPR minus rank by Acc."
)


def to_markdown(run: ExploreRunReport) -> str:
    parts = [
        f"## Exploration tasks: {run.run_id}",
        NOTE,
        markdown_table(*summary_table(run)),
        "### Accuracy by difficulty",
        markdown_table(*difficulty_table(run)),
        "### First missed milestone (failed trials)",
        markdown_table(*first_missed_table(run)),
        "### Termination modes",
        markdown_table(*termination_table(run)),
    ]
    return "\n\n".join(parts) + "\n"


def first_missed_plot(run: ExploreRunReport) -> Markup | None:
    """Grouped bars: failed trials per position of their first missed milestone, per agent."""
    rows = [r for r in run.report.rows if r.first_missed]
    if not rows:
        return None
    positions = sorted({p for r in rows for p in r.first_missed})
    fig = figure(7.0, 3.0)
    ax = fig.add_subplot()
    width = 0.8 / len(rows)
    with plain_text():
        for i, row in enumerate(rows):
            xs = [p + (i - (len(rows) - 1) / 2) * width for p in positions]
            ax.bar(xs, [row.first_missed.get(p, 0) for p in positions], width, label=row.agent[:36])
        ax.set_xticks(positions)
        ax.set_xlabel("first missed milestone (position)")
        ax.set_ylabel("failed trials")
        ax.legend(fontsize="small")
    return svg_markup(fig, "failed trials by first missed milestone")


def termination_plot(run: ExploreRunReport) -> Markup | None:
    """Stacked bars: each agent's scored trials by termination mode."""
    rows = [r for r in run.report.rows if r.terminations]
    if not rows:
        return None
    fig = figure(7.0, 0.6 + 0.4 * len(rows))
    ax = fig.add_subplot()
    with plain_text():
        left = [0.0] * len(rows)
        for mode in TERMINATIONS:
            counts = [float(r.terminations.get(mode, 0)) for r in rows]
            if any(counts):
                ax.barh(
                    [r.agent[:36] for r in rows],
                    counts,
                    left=left,
                    label=mode,
                    color=TERMINATION_COLORS[mode],
                )
                left = [a + b for a, b in zip(left, counts, strict=True)]
        ax.set_xlabel("trials")
        ax.invert_yaxis()
        ax.legend(loc="lower right", fontsize="small")
    return svg_markup(fig, "trials by termination mode")


def accuracy_gpr_plot(run: ExploreRunReport) -> Markup | None:
    """Each agent's mean Acc against its mean GPR (the diagonal: as far as it got)."""
    rows = [r for r in run.report.rows if r.accuracy.mean is not None and r.gpr.mean is not None]
    if not rows:
        return None
    fig = figure(4.5, 4.5)
    ax = fig.add_subplot()
    with plain_text():
        ax.plot([0, 100], [0, 100], color="#bdbdbd", linewidth=1)
        for row in rows:
            assert row.accuracy.mean is not None and row.gpr.mean is not None
            x, y = 100 * row.gpr.mean, 100 * row.accuracy.mean
            ax.scatter([x], [y])
            ax.annotate(row.agent[:36], (x, y), fontsize="small")
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.set_xlabel("GPR (%)")
        ax.set_ylabel("Acc (%)")
    return svg_markup(fig, "accuracy against goal progress rate")


PAGE = Page(
    template="explore_report.html.j2",
    folders=(Path(__file__).parent / "templates",),
    kind="explore",
)


def to_html(run: ExploreRunReport) -> str:
    return PAGE.render(
        f"Exploration tasks: {run.run_id}",
        note=NOTE,
        summary=summary_table(run),
        difficulty=difficulty_table(run),
        first_missed=first_missed_table(run),
        terminations=termination_table(run),
        first_missed_plot=first_missed_plot(run),
        termination_plot=termination_plot(run),
        accuracy_gpr_plot=accuracy_gpr_plot(run),
    )


def run_section(context: RunReportContext) -> RunReportSection | None:
    """The run's exploration report as its section (None: no trial of the family counts)."""
    report = explore_run_report(context.run_id, context.scores)
    if report is None:
        return None
    markdown, html = to_markdown(report), to_html(report)
    return RunReportSection.of_report("explore-report", report, markdown, html)
