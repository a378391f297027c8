"""The HTML leaderboard's plots, drawn with matplotlib through the shared plotting helper
(:mod:`benchforge.core.pages.plots`) and embedded as inline SVG: no script, no external asset,
so the page stays one self-contained file that opens anywhere. Labels are task ids and agent
names, drawn as plain text (never TeX math) and escaped by matplotlib's SVG writer; long ones
are truncated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from markupsafe import Markup

from benchforge.core.pages import figure, plain_text, svg_markup
from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.evaluation.leaderboard.models import Leaderboard

if TYPE_CHECKING:
    from matplotlib.patches import Rectangle

LABEL_CHARS = 36  # longer labels are truncated
ROW_INCHES = 0.32  # height of one bar row
STATUS_COLORS = {
    "scored": "#2e7d32",
    "unscored": "#9e9e9e",
    "infra_error": "#c62828",
    "scoring_error": "#ef6c00",
}
NO_SCORE_FILL = "#e0e0e0"
HEAT_MAP = "viridis"  # perceptually uniform, readable by colour-blind viewers
JUDGED_DIMENSIONS = (
    "completeness",
    "accuracy",
    "insightfulness",
    "readability",
    "depth",
    "gsb",
    "business_alignment",
    "technical_feasibility",
    "design_quality",
)
_DIMENSION_COLORS = ("#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#c62828")


def _short(label: str) -> str:
    return fmt.truncate(label, LABEL_CHARS)


def _domain_top(lb: Leaderboard) -> float:
    """Scores are 0-100; widen the axis only if some scorer went beyond."""
    values = [r.primary_ci[1] for r in lb.rows if r.primary_ci is not None]
    values += [r.primary_mean for r in lb.rows if r.primary_mean is not None]
    return max([100.0, *values])


def score_bars(lb: Leaderboard) -> Markup:
    """Horizontal bars: mean primary score per (agent, model), with CI whiskers."""
    metric = fmt.primary_name(lb)
    rows = lb.rows
    top = _domain_top(lb)
    with plain_text():
        fig = figure(7.5, ROW_INCHES * len(rows) + 1.1)
        ax = fig.subplots()
        for i, r in enumerate(rows):
            if r.primary_mean is None:
                ax.text(1, i, "no scored trials", va="center", color="#888", fontsize=9)
                continue
            ax.barh(i, r.primary_mean, height=0.55, color="#4c72b0")
            end = r.primary_mean
            if r.primary_ci is not None:
                lo, hi = r.primary_ci
                ax.errorbar(
                    r.primary_mean,
                    i,
                    xerr=[[r.primary_mean - lo], [hi - r.primary_mean]],
                    fmt="none",
                    ecolor="#111",
                    capsize=4,
                    linewidth=1.5,
                )
                end = max(end, hi)
            ax.text(end + top * 0.015, i, fmt.score(r.primary_mean), va="center", fontsize=9)
        ax.set_yticks(range(len(rows)), [_short(r.label) for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, top * 1.15)
        ax.set_xlabel(f"mean {metric} score over tasks")
        ax.grid(axis="x", color="#ddd")
        ax.set_axisbelow(True)
    return svg_markup(fig, f"Mean {metric} score per agent and model, with 95% CI")


def task_heatmap(lb: Leaderboard) -> Markup:
    """Tasks (rows) x agent/model (columns), coloured by the mean primary score; a cell with
    no scored epoch reads n/a, one never attempted stays blank."""
    columns = lb.rows
    tasks = lb.tasks
    values = np.full((len(tasks), len(columns)), np.nan)
    with plain_text():
        fig = figure(max(4.0, 0.75 * len(columns) + 3.0), 0.3 * len(tasks) + 2.0)
        ax = fig.subplots()
        for i, task in enumerate(tasks):
            for j, r in enumerate(columns):
                cell = task.cell(r.agent, r.model)
                if cell is None:
                    continue
                if cell.primary_mean is None:
                    ax.add_patch(_na_patch(j, i))
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="#555")
                    continue
                values[i, j] = cell.primary_mean
                ink = "#fff" if cell.primary_mean < 60 else "#111"
                shown = f"{cell.primary_mean:.0f}"
                ax.text(j, i, shown, ha="center", va="center", fontsize=8, color=ink)
        image = ax.imshow(
            np.ma.masked_invalid(values), cmap=HEAT_MAP, vmin=0, vmax=100, aspect="auto"
        )
        ax.set_xticks(range(len(columns)), [_short(r.label) for r in columns])
        ax.tick_params(axis="x", labelrotation=40)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        ax.set_yticks(range(len(tasks)), [_short(t.task_id) for t in tasks])
        bar = fig.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label("0-100; grey: n/a, no scored epoch")
    metric = fmt.primary_name(lb)
    return svg_markup(fig, f"Mean {metric} score per task and agent/model")


def _na_patch(column: int, row: int) -> Rectangle:
    from matplotlib.patches import Rectangle  # with the figure, not at import (core.pages.plots)

    return Rectangle((column - 0.5, row - 0.5), 1, 1, color=NO_SCORE_FILL)


def status_bars(lb: Leaderboard) -> Markup:
    """Stacked horizontal bars: each (agent, model)'s trials by status."""
    rows = lb.rows
    most = max((r.trials for r in rows), default=1) or 1
    with plain_text():
        fig = figure(7.5, ROW_INCHES * len(rows) + 1.1)
        ax = fig.subplots()
        for i, r in enumerate(rows):
            counts = {
                "scored": r.trials_scored,
                "unscored": r.unscored,
                "infra_error": r.infra_errors,
                "scoring_error": r.scoring_errors,
            }
            left = 0
            for status, n in counts.items():
                if not n:
                    continue
                ax.barh(i, n, left=left, height=0.6, color=STATUS_COLORS[status])
                if n / most >= 0.06:
                    ax.text(left + n / 2, i, str(n), ha="center", va="center", color="#fff")
                left += n
            trials = f"{r.trials} trial" + ("" if r.trials == 1 else "s")
            ax.text(left + most * 0.015, i, trials, va="center", fontsize=9, color="#555")
        for status, color in STATUS_COLORS.items():
            ax.barh(0, 0, color=color, label=status.replace("_", " "))
        ax.legend(ncols=len(STATUS_COLORS), loc="lower left", bbox_to_anchor=(0, 1), frameon=False)
        ax.set_yticks(range(len(rows)), [_short(r.label) for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, most * 1.2)
        ax.set_xlabel("trials")
    return svg_markup(fig, "Trials per agent and model, by status")


def dimension_bars(lb: Leaderboard) -> Markup | None:
    """Grouped horizontal bars: each judged dimension's mean (0-100) per (agent, model);
    None when no judged dimension was scored."""
    dims = [d for d in JUDGED_DIMENSIONS if d in lb.metric_names]
    rows = [r for r in lb.rows if any(d in r.metrics for d in dims)]
    if not dims or not rows:
        return None
    bar = 0.8 / len(dims)
    with plain_text():
        fig = figure(7.5, 0.22 * len(dims) * len(rows) + 1.2)
        ax = fig.subplots()
        for j, dim in enumerate(dims):
            color = _DIMENSION_COLORS[j % len(_DIMENSION_COLORS)]
            for i, row in enumerate(rows):
                value = row.metrics.get(dim)
                if value is None:
                    continue
                y = i - 0.4 + bar * (j + 0.5)
                ax.barh(y, max(0.0, min(value, 100.0)), height=bar * 0.9, color=color)
                ax.text(101, y, f"{dim} {value:.1f}", va="center", fontsize=7, color=color)
        ax.set_yticks(range(len(rows)), [_short(r.label) for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, 135)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_xlabel("judged dimensions (mean over tasks, 0-100)")
        ax.grid(axis="x", color="#ddd")
        ax.set_axisbelow(True)
    return svg_markup(fig, "judged dimension scores per agent")
