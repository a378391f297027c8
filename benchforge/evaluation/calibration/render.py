"""A calibration report as markdown (the CLI and the Prefect artifact) and as one static HTML
page (comparison table, every figure with its interval, judge-vs-human scatter plots embedded
as base64 PNG so the page travels as one file)."""

from __future__ import annotations

import base64
import html
import io

import numpy as np

from benchforge.evaluation.calibration.models import CalibrationReport, JudgeCalibration
from benchforge.evaluation.calibration.stats import Figure, KindStats

KIND_TITLES = {"rubric_item": "rubric items", "gsb_pair": "GSB pairs"}
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


def figure_rows(stats: KindStats) -> list[tuple[str, str, str]]:
    """(figure, judge, humans) rows of one kind: every figure with its interval."""
    name = "Pearson r" if stats.agreement_name == "pearson_r" else "quadratic kappa"
    rows = [
        (
            f"case-level {name}, leave one out (one judge run / one rater, each vs the mean "
            "of the other raters)",
            stats.agreement.judge.text(),
            stats.agreement.humans.text(),
        ),
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
                f"({stats.agreement_name}) | {stats.agreement.judge.text()} | "
                f"{stats.agreement.humans.text()} | {stats.alpha.judge.text()} | "
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
    """Judge vs human mean per case, one panel per kind (GSB values jittered), as base64 PNG."""
    kinds = [k for k in judge.kinds if k.points]
    if not kinds:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds), 4), squeeze=False)
    rng = np.random.default_rng(0)
    for ax, stats in zip(axes[0], kinds, strict=True):
        points = np.array(stats.points)
        x, y = points[:, 0], points[:, 1]
        if stats.kind == "gsb_pair":
            x = x + rng.uniform(-0.15, 0.15, len(x))
            y = y + rng.uniform(-0.15, 0.15, len(y))
        ax.scatter(x, y, s=12, alpha=0.6)
        low, high = (-1.2, 1.2) if stats.kind == "gsb_pair" else (min(-0.05, x.min()), 1.05)
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
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def _mock_banner(report: CalibrationReport) -> str:
    if not report.mock_judged:
        return ""
    return (
        f'<div class="mock" role="alert"><strong>⚠ {html.escape(MOCK_HEADLINE)}</strong> '
        f"({html.escape(_mock_models(report))}). {html.escape(MOCK_TEXT)}</div>"
    )


def to_html(report: CalibrationReport) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Judge calibration</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:4px 8px;font-size:13px}th{background:#f4f4f4}.ok{color:#176}"
        ".no{color:#a00;font-weight:bold}.mock{background:#fff3cd;border:2px solid #c77c02;"
        "padding:.8em 1em;margin:1em 0}</style></head><body>",
        _mock_banner(report),
        f"<h1>Judge calibration</h1><p>{report.cases} cases (version {e(report.cases_version)}),"
        f" {report.labels} labels by {len(report.raters)} raters ({e(', '.join(report.raters))}),"
        f" {report.repeats} repeats per judge; 95% bootstrap intervals over cases "
        f"({report.bootstrap.resamples} resamples, seed {report.bootstrap.seed}). Created "
        f"{e(report.created_at.isoformat())}.</p>",
        f"<p>Gate, per kind of case: at least {report.gate_settings.min_cases} labelled cases; "
        f"the <em>lower bound</em> of the judge's agreement at most "
        f"{report.gate_settings.max_agreement_gap:g} below one rater's (both leave one out: "
        f"a single judge run or a single rater, each against the mean of the other raters); "
        f"position inconsistency at most {report.gate_settings.max_inconsistency:.0%}; "
        f"unscored at most {report.gate_settings.max_unscored:.0%}.</p>",
        "<h2>Comparison</h2><table><tr><th>judge</th><th>gate</th><th>judgments</th>"
        "<th>unscored</th><th>requests</th><th>cost</th><th>cost / 1,000 judgments</th>"
        "<th>latency p50</th><th>latency p95</th></tr>",
    ]
    for judge in report.judges:
        gate = (
            "<span class='ok'>accepted</span>"
            if judge.gate.accepted
            else "<span class='no'>rejected</span>"
        )
        parts.append(
            f"<tr><td>{e(judge.model)}</td><td>{gate}</td><td>{judge.judgments}</td>"
            f"<td>{judge.unscored}</td><td>{judge.requests}</td><td>{_money(judge.cost_usd)}</td>"
            f"<td>{_money(judge.cost_per_1000)}</td><td>{_seconds(judge.latency_p50_s)}</td>"
            f"<td>{_seconds(judge.latency_p95_s)}</td></tr>"
        )
    parts.append("</table>")
    for judge in report.judges:
        parts.append(f"<h2>{e(judge.model)}</h2><p>fingerprint {e(judge.fingerprint)}</p>")
        status = "accepted" if judge.gate.accepted else "rejected"
        reasons = judge.gate.reasons or judge.gate.checks
        parts.append(
            f"<p>Gate: <b>{status}</b></p><ul>"
            + "".join(f"<li>{e(r)}</li>" for r in reasons)
            + "</ul>"
        )
        for stats in judge.kinds:
            parts.append(
                f"<h3>{e(KIND_TITLES.get(stats.kind, stats.kind))}: {stats.cases} labelled, "
                f"{stats.judged} judged</h3><table><tr><th>figure</th><th>judge</th>"
                "<th>humans</th></tr>"
            )
            for name, mine, theirs in figure_rows(stats):
                parts.append(f"<tr><td>{e(name)}</td><td>{e(mine)}</td><td>{e(theirs)}</td></tr>")
            groups = group_rows(stats, report.gate_settings.min_cases)
            if groups:
                parts.append(
                    "</table><table><tr><th>by</th><th>group</th><th>cases</th>"
                    "<th>judge</th><th>one rater</th></tr>"
                )
                parts += [
                    "<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>"
                    for row in groups
                ]
            parts.append(
                "</table><table><tr><th>agent</th><th>judge mean ± std over repeats"
                "</th><th>humans</th></tr>"
            )
            for agent, (mean, std) in stats.agents.items():
                human = stats.human_agents.get(agent)
                human_text = "n/a" if human is None else f"{human:.3f}"
                parts.append(
                    f"<tr><td>{e(agent)}</td><td>{mean:.3f} ± {std:.3f}</td>"
                    f"<td>{human_text}</td></tr>"
                )
            parts.append("</table>")
        png = scatter_png(judge)
        if png is not None:
            parts.append(
                f"<img alt='judge vs humans, {e(judge.model)}' src='data:image/png;base64,{png}'>"
            )
    parts.append("</body></html>")
    return "\n".join(parts)
