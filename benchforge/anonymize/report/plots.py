"""The report's figures as inline PNG data URIs (through the shared plotting helper,
:mod:`benchforge.core.pages.plots`), so the HTML page is one self-contained file.

Figures are built with matplotlib's object API (``Figure`` + its Agg canvas), never pyplot:
no global figure state, no GUI backend, safe in worker threads. Labels are table and column
names and metric values only.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from benchforge.anonymize.report.models import ColumnFidelity, HistogramBin, PairMetric
from benchforge.anonymize.report.privacy import AttackRisk, LinkageResult
from benchforge.core.pages import png_data_uri

LOWEST = 20
_BAD = "#c0392b"
_GOOD = "#2e7d32"
_NEUTRAL = "#5d6d7e"


def lowest_columns(
    columns: Sequence[ColumnFidelity], ks_limit: float, tv_limit: float
) -> str | None:
    """Horizontal bars of the 20 lowest column scores (KS or TV), red below their limit."""
    scored = [(c, c.score) for c in columns if c.score is not None]
    if not scored:
        return None
    worst = sorted(scored, key=lambda cs: (cs[1], cs[0].table, cs[0].column))[:LOWEST]
    worst.reverse()
    fig = Figure(figsize=(7.5, 0.3 * len(worst) + 1.2))
    ax = fig.subplots()
    labels, values, colors = [], [], []
    for c, s in worst:
        metric = "KS" if c.ks_complement is not None else "TV"
        limit = ks_limit if metric == "KS" else tv_limit
        labels.append(f"{c.table}.{c.column} ({metric}, {c.rule})")
        values.append(s)
        colors.append(_BAD if s is not None and s < limit else _GOOD)
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)), labels, fontsize=8)
    ax.set_xlim(min(0.5, min(v for v in values if v is not None)), 1.0)
    ax.axvline(ks_limit, color=_NEUTRAL, linestyle="--", linewidth=1)
    ax.set_xlabel("score (1 = identical distribution)")
    ax.set_title(f"Lowest {len(values)} column scores")
    return png_data_uri(fig)


def error_histogram(bins: Sequence[HistogramBin]) -> str | None:
    if not bins or not any(b.count for b in bins):
        return None
    fig = Figure(figsize=(7.5, 3.0))
    ax = fig.subplots()
    labels = [f"<{b.high:g}" if b.high is not None else f">={b.low:g}" for b in bins]
    ax.bar(range(len(bins)), [b.count for b in bins], color=_NEUTRAL)
    ax.set_xticks(range(len(bins)), labels, fontsize=8, rotation=30)
    ax.set_ylabel("cells")
    ax.set_xlabel("relative error |rel - src| / |src|")
    ax.set_title("Workload cells by relative error")
    return png_data_uri(fig)


def correlation_scatter(pairs: Sequence[PairMetric]) -> str | None:
    """rho on the source against rho on the release: points on the diagonal are preserved."""
    points = [p for p in pairs if p.metric in ("pearson", "spearman") and p.score is not None]
    if not points:
        return None
    fig = Figure(figsize=(4.5, 4.5))
    ax = fig.subplots()
    for metric, marker in (("pearson", "o"), ("spearman", "x")):
        chosen = [p for p in points if p.metric == metric and p.src is not None]
        xs = [p.src or 0.0 for p in chosen]
        ys = [p.rel if p.rel is not None else 0.0 for p in chosen]
        if xs:
            ax.scatter(xs, ys, marker=marker, s=18, label=metric)
    ax.plot([-1, 1], [-1, 1], color=_NEUTRAL, linewidth=1, linestyle="--")
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("rho (source)")
    ax.set_ylabel("rho (release)")
    ax.legend(fontsize=8)
    ax.set_title("Column-pair correlations")
    return png_data_uri(fig)


def linkage_rates(entries: Sequence[LinkageResult], limit: float) -> str | None:
    if not entries:
        return None
    fig = Figure(figsize=(7.0, 0.5 * len(entries) + 1.4))
    ax = fig.subplots()
    labels = [f"{e.table}: {'+'.join(e.known)}" for e in entries]
    ys = list(range(len(entries)))
    ax.barh(
        [y + 0.2 for y in ys],
        [e.rate for e in entries],
        height=0.4,
        label="linkage rate",
        color=[_BAD if e.rate > limit else _GOOD for e in entries],
    )
    ax.barh(
        [y - 0.2 for y in ys],
        [e.baseline for e in entries],
        height=0.4,
        label="random baseline",
        color=_NEUTRAL,
    )
    ax.axvline(limit, color=_BAD, linestyle="--", linewidth=1)
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_xlabel("share of sampled records whose nearest release record is their own")
    ax.legend(fontsize=8)
    return png_data_uri(fig)


def attack_risks(attacks: Sequence[AttackRisk], limit: float) -> str | None:
    if not attacks:
        return None
    fig = Figure(figsize=(7.0, 0.4 * len(attacks) + 1.4))
    ax = fig.subplots()
    ys = list(range(len(attacks)))
    for y, a in zip(ys, attacks, strict=True):
        color = _BAD if a.risk > limit else _GOOD
        ax.errorbar(
            a.risk,
            y,
            xerr=[[max(0.0, a.risk - a.ci_low)], [max(0.0, a.ci_high - a.risk)]],
            fmt="o",
            color=color,
            capsize=3,
        )
    ax.axvline(limit, color=_BAD, linestyle="--", linewidth=1)
    ax.set_ylim(-0.6, len(attacks) - 0.4)
    ax.set_yticks(ys, [f"{a.kind} / {a.table}" for a in attacks], fontsize=8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("risk with 95% interval")
    return png_data_uri(fig)
