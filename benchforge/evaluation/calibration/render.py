"""A calibration report as markdown (the CLI and the Prefect artifact) and as one static HTML
page (``templates/calibration.html.j2``: comparison table, every figure with its interval,
judge-vs-human scatter plots embedded as base64 PNG so the page travels as one file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchforge.core.pages import Page, figure, plain_text, png_data_uri
from benchforge.evaluation.calibration.models import CalibrationReport, JudgeCalibration
from benchforge.evaluation.calibration.stats import Figure, KindStats

TEMPLATES = Path(__file__).parent / "templates"
KIND_TITLES = {"rubric_item": "rubric items", "gsb_pair": "GSB pairs", "milestone": "milestones"}
AGREEMENT_TITLES = {
    "pearson_r": "Pearson r",
    "kappa": "quadratic kappa",
    "cohen_kappa": "Cohen's kappa",
}
LENGTH_BIAS_TITLES = {
    "rubric_item": "length bias: share of points per doubling of the output's length, beyond "
    "the humans' labels",
    "gsb_pair": "length bias: verdict steps toward the longer report, beyond the humans' labels",
}


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}s"


def _opt(figure: Figure | None) -> str:
    return "n/a" if figure is None else figure.text()


def position_text(stats: KindStats) -> str:
    """The first-position win rate with its direction, as the report reads it."""
    figure = stats.position_bias
    if figure is None or figure.value is None:
        return "n/a"
    direction = {
        "first": "favours the report shown first",
        "second": "favours the report shown second",
        "none": "no position preference (interval holds 0.5)",
    }[stats.position_direction or "none"]
    return f"{figure.text()}: {direction}"


def length_text(stats: KindStats) -> str:
    return "n/a" if stats.length_bias is None else stats.length_bias.text()


def agreement_text(stats: KindStats, side: str) -> str:
    """The agreement of ``side`` (judge / humans), with the accuracy beside it on binary
    kinds (milestones)."""
    text = getattr(stats.agreement, side).text()
    if stats.accuracy is not None:
        text += f"; accuracy {getattr(stats.accuracy, side).text()}"
    return text


def figure_rows(stats: KindStats) -> list[tuple[str, str, str]]:
    """(figure, judge, humans) rows of one kind: every figure with its interval."""
    name = AGREEMENT_TITLES.get(stats.agreement_name, stats.agreement_name)
    rows = [
        (
            f"case-level {name}, leave one out (one judge run / one rater, each vs the mean "
            "of the other raters)",
            stats.agreement.judge.text(),
            stats.agreement.humans.text(),
        ),
    ]
    if stats.accuracy is not None:
        rows.append(
            (
                "case-level accuracy (share of verdicts equal to the reference), leave one out",
                stats.accuracy.judge.text(),
                stats.accuracy.humans.text(),
            )
        )
    rows += [
        (
            "Krippendorff alpha (judge added / humans only)",
            stats.alpha.judge.text(),
            stats.alpha.humans.text(),
        ),
    ]
    levels = [
        ("agent", stats.model_pearson, stats.model_spearman, stats.model_kendall),
        ("trial", stats.trial_pearson, stats.trial_spearman, stats.trial_kendall),
    ]
    for level, *figures in levels:
        for label, pair in zip(("Pearson", "Spearman", "Kendall"), figures, strict=True):
            if pair is not None:
                rows.append(
                    (
                        f"{level}-level {label} (per-{level} means)",
                        pair.judge.text(),
                        pair.humans.text(),
                    )
                )
    if stats.inconsistency is not None:
        rows.append(("position-swap inconsistency", stats.inconsistency.text(), ""))
    if stats.position_bias is not None:
        rows.append(
            ("first-position win rate (decisive single-order verdicts)", position_text(stats), "")
        )
    if stats.length_corr is not None:
        rows.append(
            (
                f"Pearson r with length ({stats.length_measure})",
                stats.length_corr.judge.text(),
                stats.length_corr.humans.text(),
            )
        )
    if stats.length_bias is not None:
        rows.append(
            (
                LENGTH_BIAS_TITLES.get(stats.kind, "length bias"),
                length_text(stats),
                "",
            )
        )
    rows += [
        ("self-consistency over repeats (identical share)", _opt(stats.self_consistency), ""),
        ("mean per-case std over repeats", _opt(stats.repeat_std), ""),
        ("per-agent score std over repeats (mean)", _opt(stats.stability_std), ""),
    ]
    return rows


def group_rows(stats: KindStats, min_cases: int) -> list[tuple[str, str, str, str, str]]:
    """(by, name, cases, judge, one rater) per item type and per task; a group with fewer
    than ``min_cases`` cases is marked."""
    return [
        (
            "item type" if g.by == "item_type" else "task",
            g.name,
            f"{g.cases}" + (f" (< {min_cases}: indicative)" if g.cases < min_cases else ""),
            g.agreement.judge.text(),
            g.agreement.humans.text(),
        )
        for g in stats.groups
    ]


MOCK_HEADLINE = "MOCK JUDGE: these judgements come from the Benchforge mock server"
MOCK_TEXT = (
    "A mock judge (scripted or noisy-by-design answers, not a real model) produced the "
    "judgements below: the figures test the calibration machinery, not any model's ability "
    "to judge."
)


def _mock_models(report: CalibrationReport) -> str:
    return ", ".join(j.model for j in report.judges if j.mock)


def to_markdown(report: CalibrationReport) -> str:
    lines = []
    if report.mock_judged:
        lines += [f"> **⚠️ {MOCK_HEADLINE}** ({_mock_models(report)}). {MOCK_TEXT}", ""]
    lines += [
        f"# Judge calibration ({report.cases} cases, {report.labels} labels by "
        f"{len(report.raters)} raters, {report.repeats} repeats)",
        "",
        "| judge | kind | agreement | one rater | alpha +judge | alpha humans | model r | "
        "inconsistency | first-position wins | length bias | cost / 1k | p50 | p95 | gate |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for judge in report.judges:
        verdict = "accepted" if judge.gate.accepted else "REJECTED"
        for stats in judge.kinds:
            lines.append(
                f"| {judge.model} | {KIND_TITLES.get(stats.kind, stats.kind)} "
                f"({stats.agreement_name}) | {agreement_text(stats, 'judge')} | "
                f"{agreement_text(stats, 'humans')} | {stats.alpha.judge.text()} | "
                f"{stats.alpha.humans.text()} | {stats.model_pearson.judge.text()} | "
                f"{_opt(stats.inconsistency)} | {position_text(stats)} | {length_text(stats)} | "
                f"{_money(judge.cost_per_1000)} | {_seconds(judge.latency_p50_s)} | "
                f"{_seconds(judge.latency_p95_s)} | {verdict} |"
            )
    lines.append("")
    for judge in report.judges:
        if judge.gate.accepted:
            lines.append(f"- **{judge.model}**: accepted ({'; '.join(judge.gate.checks)})")
        else:
            lines.append(f"- **{judge.model}**: rejected: {'; '.join(judge.gate.reasons)}")
    for judge in report.judges:
        rows = [
            (KIND_TITLES.get(stats.kind, stats.kind), *row)
            for stats in judge.kinds
            for row in group_rows(stats, report.gate_settings.min_cases)
        ]
        if rows:
            lines += [
                "",
                f"Agreement of {judge.model} by item type and task:",
                "",
                "| kind | by | group | cases | judge | one rater |",
                "|---|---|---|---|---|---|",
            ]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def scatter_png(judge: JudgeCalibration) -> str | None:
    """Judge vs human mean per case, one panel per kind (GSB values jittered), as a PNG data
    URI."""
    kinds = [k for k in judge.kinds if k.points]
    if not kinds:
        return None
    with plain_text():
        fig = figure(4.2 * len(kinds), 4)
        axes = fig.subplots(1, len(kinds), squeeze=False)
        rng = np.random.default_rng(0)
        for ax, stats in zip(axes[0], kinds, strict=True):
            points = np.array(stats.points)
            x, y = points[:, 0], points[:, 1]
            if stats.kind != "rubric_item":  # discrete verdicts
                x = x + rng.uniform(-0.15, 0.15, len(x))
                y = y + rng.uniform(-0.15, 0.15, len(y))
            ax.scatter(x, y, s=12, alpha=0.6)
            low, high = {"gsb_pair": (-1.2, 1.2), "milestone": (-0.2, 1.2)}.get(
                stats.kind, (min(-0.05, x.min()), 1.05)
            )
            ax.plot([low, high], [low, high], color="grey", linewidth=0.8)
            ax.set_xlim(low, high)
            ax.set_ylim(low, high)
            ax.set_xlabel("humans (mean)")
            ax.set_ylabel("judge")
            ax.set_title(
                f"{KIND_TITLES.get(stats.kind, stats.kind)}: "
                f"{stats.agreement_name} {stats.agreement.judge.text(2)}",
                fontsize=9,
            )
        fig.suptitle(judge.model, fontsize=10)
        fig.tight_layout()
    return png_data_uri(fig, dpi=90)


CALIBRATION_PAGE = Page(
    "calibration.html.j2",
    (TEMPLATES,),
    "calibration",
    {
        "mock_headline": MOCK_HEADLINE,
        "mock_text": MOCK_TEXT,
        "kind_titles": KIND_TITLES,
        "figure_rows": figure_rows,
        "group_rows": group_rows,
        "money": _money,
        "seconds": _seconds,
        "percent": lambda value: f"{value:.0%}",
        "scatter": scatter_png,
    },
)


def to_html(report: CalibrationReport) -> str:
    """The report as one page (``templates/calibration.html.j2``), scatter plots inline."""
    mock_models = _mock_models(report)
    return CALIBRATION_PAGE.render("Judge calibration", report=report, mock_models=mock_models)
