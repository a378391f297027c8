"""Hand-written inline SVG plots for the HTML leaderboard (no plotting library, no scripts).

Each function returns one ``<svg>`` element as a string, well-formed XML, with every piece of
text escaped, so the page stays a single self-contained file that opens anywhere. Tooltips are
native SVG ``<title>`` children (shown on hover by every browser, no JavaScript). Text widths
are estimated from character counts: good enough for labels, and long labels are truncated
with the full text kept in the tooltip.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.evaluation.leaderboard.models import Leaderboard

SVG_NS = "http://www.w3.org/2000/svg"
FONT_PX = 12
CHAR_PX = 7.5  # rough width of one character at FONT_PX
LABEL_CHARS = 36  # longer labels are truncated (the full text is in the tooltip)

STATUS_COLORS = {
    "scored": "#2e7d32",
    "unscored": "#9e9e9e",
    "infra_error": "#c62828",
    "scoring_error": "#ef6c00",
}
# Viridis, sampled: perceptually uniform and readable by colour-blind viewers.
HEAT_STOPS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"]
NO_SCORE_FILL = "#e0e0e0"


def _attrs(attrs: dict[str, object]) -> str:
    return "".join(
        f' {name.rstrip("_").replace("_", "-")}="{escape(str(value), quote=True)}"'
        for name, value in attrs.items()
    )


def _el(tag: str, body: str = "", **attrs: object) -> str:
    return f"<{tag}{_attrs(attrs)}>{body}</{tag}>" if body else f"<{tag}{_attrs(attrs)}/>"


def _text(x: float, y: float, text: str, *, tip: str | None = None, **attrs: object) -> str:
    body = escape(text, quote=False) + (_el("title", escape(tip, quote=False)) if tip else "")
    return _el("text", body, x=_n(x), y=_n(y), font_size=FONT_PX, **attrs)


def _n(x: float) -> str:
    """Coordinates with at most two decimals: stable output, smaller files."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _svg(width: float, height: float, label: str, parts: Iterable[str]) -> str:
    return (
        f'<svg xmlns="{SVG_NS}" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
        f'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" '
        f'aria-label="{escape(label, quote=True)}">'
        + _el("title", escape(label, quote=False))
        + "".join(parts)
        + "</svg>"
    )


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _label_width(labels: Iterable[str]) -> float:
    longest = max((min(len(s), LABEL_CHARS) for s in labels), default=4)
    return longest * CHAR_PX + 16


def _short(label: str) -> str:
    return fmt.truncate(label, LABEL_CHARS)


def heat_color(value: float, top: float = 100.0) -> str:
    """Viridis colour for a score in [0, top], linearly interpolated between the stops."""
    t = min(max(value / top, 0.0), 1.0) * (len(HEAT_STOPS) - 1)
    i = min(int(t), len(HEAT_STOPS) - 2)
    frac = t - i
    lo, hi = HEAT_STOPS[i], HEAT_STOPS[i + 1]
    rgb = [
        round(int(lo[j : j + 2], 16) * (1 - frac) + int(hi[j : j + 2], 16) * frac)
        for j in (1, 3, 5)
    ]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _domain_top(lb: Leaderboard) -> float:
    """Scores are 0-100; widen the axis only if some scorer went beyond."""
    values = [r.primary_ci[1] for r in lb.rows if r.primary_ci is not None]
    values += [r.primary_mean for r in lb.rows if r.primary_mean is not None]
    return max([100.0, *values])


def score_bars(lb: Leaderboard) -> str:
    """Horizontal bars: mean primary score per (agent, model), with CI whiskers."""
    metric = fmt.primary_name(lb)
    rows = lb.rows
    label_w = _label_width(r.label for r in rows)
    plot_w, right, top, row_h, bar_h = 420.0, 110.0, 12.0, 26.0, 14.0
    axis_h = 34.0
    height = top + row_h * len(rows) + axis_h
    width = label_w + plot_w + right
    top_value = _domain_top(lb)

    def x(v: float) -> float:
        return label_w + plot_w * v / top_value

    parts: list[str] = []
    ticks = [top_value * i / 4 for i in range(5)]
    for t in ticks:
        parts.append(
            _el(
                "line",
                x1=_n(x(t)),
                x2=_n(x(t)),
                y1=_n(top - 4),
                y2=_n(top + row_h * len(rows)),
                stroke="#ddd",
            )
        )
        parts.append(
            _text(x(t), top + row_h * len(rows) + 14, f"{t:g}", text_anchor="middle", fill="#555")
        )
    parts.append(
        _text(
            label_w + plot_w / 2,
            height - 4,
            f"mean {metric} score over tasks",
            text_anchor="middle",
            fill="#333",
        )
    )
    for i, r in enumerate(rows):
        y_mid = top + row_h * i + row_h / 2
        parts.append(_text(label_w - 8, y_mid + 4, _short(r.label), tip=r.label, text_anchor="end"))
        if r.primary_mean is None:
            parts.append(_text(x(0) + 4, y_mid + 4, "no scored trials", fill="#888"))
            continue
        tip = (
            f"{r.label}: {fmt.score(r.primary_mean)} "
            f"(CI {fmt.ci(r.primary_ci)}, {r.tasks_scored}/{r.tasks_attempted} tasks scored)"
        )
        parts.append(
            _el(
                "rect",
                _el("title", escape(tip, quote=False)),
                x=_n(x(0)),
                y=_n(y_mid - bar_h / 2),
                width=_n(max(x(r.primary_mean) - x(0), 0.5)),
                height=_n(bar_h),
                fill="#4c72b0",
            )
        )
        end = x(r.primary_mean)
        if r.primary_ci is not None:
            lo, hi = (x(v) for v in r.primary_ci)
            parts.append(
                _el(
                    "line",
                    x1=_n(lo),
                    x2=_n(hi),
                    y1=_n(y_mid),
                    y2=_n(y_mid),
                    stroke="#111",
                    stroke_width=1.5,
                )
            )
            for cap in (lo, hi):
                parts.append(
                    _el(
                        "line",
                        x1=_n(cap),
                        x2=_n(cap),
                        y1=_n(y_mid - 5),
                        y2=_n(y_mid + 5),
                        stroke="#111",
                        stroke_width=1.5,
                    )
                )
            end = max(end, hi)
        parts.append(_text(end + 6, y_mid + 4, fmt.score(r.primary_mean), fill="#111"))
    return _svg(width, height, f"Mean {metric} score per agent and model, with 95% CI", parts)


def task_heatmap(lb: Leaderboard) -> str:
    """Tasks (rows) x agent/model (columns), coloured by the mean primary score."""
    columns = lb.rows
    cell_w, cell_h = 56.0, 22.0
    label_w = _label_width(t.task_id for t in lb.tasks)
    col_chars = max((min(len(r.label), LABEL_CHARS) for r in columns), default=4)
    header_h = 20 + 0.65 * col_chars * CHAR_PX  # labels are rotated 40 degrees
    legend_h = 44.0
    right = 0.8 * col_chars * CHAR_PX
    width = label_w + cell_w * len(columns) + right
    height = header_h + cell_h * len(lb.tasks) + legend_h

    parts: list[str] = []
    for j, r in enumerate(columns):
        cx, cy = label_w + cell_w * j + cell_w / 2, header_h - 6
        parts.append(
            _text(cx, cy, _short(r.label), tip=r.label, transform=f"rotate(-40 {_n(cx)} {_n(cy)})")
        )
    for i, task in enumerate(lb.tasks):
        y = header_h + cell_h * i
        parts.append(
            _text(
                label_w - 8,
                y + cell_h / 2 + 4,
                _short(task.task_id),
                tip=task.task_id,
                text_anchor="end",
            )
        )
        for j, r in enumerate(columns):
            cell = task.cell(r.agent, r.model)
            x = label_w + cell_w * j
            if cell is None:
                continue  # not attempted: left blank
            if cell.primary_mean is None:
                fill, ink, shown = NO_SCORE_FILL, "#555", "n/a"
                tip = (
                    f"{task.task_id} / {r.label}: no scored epoch "
                    f"({cell.n_infra_error} infra errors, {cell.n_unscored} unscored, "
                    f"{cell.n_scoring_error} scoring errors)"
                )
            else:
                fill = heat_color(cell.primary_mean)
                ink = "#fff" if cell.primary_mean < 60 else "#111"
                shown = f"{cell.primary_mean:.0f}"
                tip = (
                    f"{task.task_id} / {r.label}: {fmt.score(cell.primary_mean)} "
                    f"({cell.n_scored}/{cell.n_epochs} epochs scored)"
                )
            parts.append(
                _el(
                    "rect",
                    _el("title", escape(tip, quote=False)),
                    x=_n(x + 1),
                    y=_n(y + 1),
                    width=_n(cell_w - 2),
                    height=_n(cell_h - 2),
                    fill=fill,
                )
            )
            parts.append(
                _text(x + cell_w / 2, y + cell_h / 2 + 4, shown, text_anchor="middle", fill=ink)
            )
    # Legend: ten swatches from 0 to 100, and the no-score swatch.
    ly = header_h + cell_h * len(lb.tasks) + 12
    for k in range(11):
        parts.append(
            _el(
                "rect",
                x=_n(label_w + 16 * k),
                y=_n(ly),
                width=16,
                height=10,
                fill=heat_color(10.0 * k),
            )
        )
    parts.append(_text(label_w, ly + 24, "0", fill="#555"))
    parts.append(_text(label_w + 16 * 11, ly + 24, "100", text_anchor="end", fill="#555"))
    nx = label_w + 16 * 11 + 16
    parts.append(_el("rect", x=_n(nx), y=_n(ly), width=16, height=10, fill=NO_SCORE_FILL))
    parts.append(_text(nx + 22, ly + 9, "n/a: no scored epoch", fill="#555"))
    width = max(width, nx + 22 + 22 * CHAR_PX)
    metric = fmt.primary_name(lb)
    return _svg(width, height, f"Mean {metric} score per task and agent/model", parts)


def status_bars(lb: Leaderboard) -> str:
    """Stacked horizontal bars: each (agent, model)'s trials by status."""
    rows = lb.rows
    label_w = _label_width(r.label for r in rows)
    plot_w, right, top, row_h, bar_h = 420.0, 80.0, 30.0, 26.0, 16.0
    height = top + row_h * len(rows) + 8
    width = label_w + plot_w + right
    most = max((r.trials for r in rows), default=1) or 1

    parts: list[str] = []
    lx = label_w
    for status, color in STATUS_COLORS.items():
        parts.append(_el("rect", x=_n(lx), y=6, width=12, height=12, fill=color))
        name = status.replace("_", " ")
        parts.append(_text(lx + 16, 16, name, fill="#333"))
        lx += 16 + len(name) * CHAR_PX + 18
    for i, r in enumerate(rows):
        y_mid = top + row_h * i + row_h / 2
        parts.append(_text(label_w - 8, y_mid + 4, _short(r.label), tip=r.label, text_anchor="end"))
        x = label_w
        counts = {
            "scored": r.trials_scored,
            "unscored": r.unscored,
            "infra_error": r.infra_errors,
            "scoring_error": r.scoring_errors,
        }
        for status, n in counts.items():
            if not n:
                continue
            w = plot_w * n / most
            tip = f"{r.label}: {n} {status.replace('_', ' ')} of {r.trials} trials"
            parts.append(
                _el(
                    "rect",
                    _el("title", escape(tip, quote=False)),
                    x=_n(x),
                    y=_n(y_mid - bar_h / 2),
                    width=_n(w),
                    height=_n(bar_h),
                    fill=STATUS_COLORS[status],
                )
            )
            if w >= len(str(n)) * CHAR_PX + 6:
                parts.append(_text(x + w / 2, y_mid + 4, str(n), text_anchor="middle", fill="#fff"))
            x += w
        parts.append(_text(x + 6, y_mid + 4, _plural(r.trials, "trial"), fill="#555"))
    return _svg(width, height, "Trials per agent and model, by status", parts)


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


def dimension_bars(lb: Leaderboard) -> str:
    """Grouped horizontal bars: each judged dimension's mean (0-100) per (agent, model)."""
    dims = [d for d in JUDGED_DIMENSIONS if d in lb.metric_names]
    rows = [r for r in lb.rows if any(d in r.metrics for d in dims)]
    if not dims or not rows:
        return ""
    label_w = _label_width(r.label for r in rows)
    plot_w, right, top, bar_h = 360.0, 150.0, 12.0, 15.0
    group_h = bar_h * len(dims) + 12.0
    axis_h = 30.0
    height = top + group_h * len(rows) + axis_h
    width = label_w + plot_w + right
    parts: list[str] = []
    for t in (0, 25, 50, 75, 100):
        xt = label_w + plot_w * t / 100
        parts.append(
            _el("line", x1=_n(xt), x2=_n(xt), y1=_n(top), y2=_n(height - axis_h), stroke="#ddd")
        )
        parts.append(_text(xt, height - axis_h + 14, str(t), text_anchor="middle", fill="#555"))
    for i, row in enumerate(rows):
        y0 = top + i * group_h
        parts.append(_text(label_w - 6, y0 + group_h / 2, _short(row.label), text_anchor="end"))
        for j, dim in enumerate(dims):
            value = row.metrics.get(dim)
            if value is None:
                continue
            y = y0 + j * bar_h
            color = _DIMENSION_COLORS[j % len(_DIMENSION_COLORS)]
            parts.append(
                _el(
                    "rect",
                    x=_n(label_w),
                    y=_n(y),
                    width=_n(plot_w * max(0.0, min(value, 100.0)) / 100),
                    height=_n(bar_h - 1),
                    fill=color,
                )
            )
            parts.append(
                _text(
                    label_w + plot_w + 6,
                    y + bar_h - 1,
                    f"{dim} {value:.1f}",
                    fill=color,
                    tip=f"{row.label}: mean {dim} {value:.1f}",
                )
            )
    parts.append(
        _text(
            label_w + plot_w / 2,
            height - 4,
            "judged dimensions (mean over tasks, 0-100)",
            text_anchor="middle",
            fill="#555",
        )
    )
    return _svg(width, height, "judged dimension scores per agent", parts)
