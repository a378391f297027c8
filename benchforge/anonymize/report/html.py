"""The release report as one self-contained HTML page (inline CSS, figures as data URIs) and
as JSON, written side by side.

The page leads with the verdict and the failing thresholds, because that is what decides
whether the release ships; the sections below explain the numbers. Every string that reaches
the page is escaped, and everything shown comes from the report models, which hold no
original identifier value (only counts, metric values, names and the workload's SQL).
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from benchforge.anonymize.report import plots
from benchforge.anonymize.report.models import (
    ColumnFidelity,
    PairMetric,
    ReleaseReport,
    ThresholdResult,
)
from benchforge.anonymize.report.privacy import PrivacySection

JSON_NAME = "release-report.json"
HTML_NAME = "release-report.html"

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0;
       color: #1c2833; background: #fbfcfc; }
main { max-width: 1100px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.5rem; margin: 0.2rem 0; }
h2 { margin-top: 2rem; border-bottom: 2px solid #d5d8dc; }
.banner { padding: 1rem 1.5rem; border-radius: 6px; color: white; margin: 1rem 0; }
.banner.pass { background: #2e7d32; } .banner.fail { background: #b03a2e; }
.banner h1 { font-size: 1.8rem; } .banner ul { margin: 0.4rem 0 0 0; }
table { border-collapse: collapse; width: 100%; margin: 0.6rem 0; font-size: 0.86rem; }
th, td { border: 1px solid #d5d8dc; padding: 0.25rem 0.45rem; text-align: left;
         vertical-align: top; }
th { background: #eaecee; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { background: #fdedec; } tr.ok td.status { color: #1e8449; }
tr.bad td.status { color: #b03a2e; font-weight: bold; }
code { font-size: 0.78rem; white-space: pre-wrap; word-break: break-word; }
details { margin: 0.3rem 0; } summary { cursor: pointer; }
.meta { color: #566573; font-size: 0.9rem; } img { max-width: 100%; }
.grid { display: flex; flex-wrap: wrap; gap: 1rem; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _f(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "&mdash;"
    return f"{value:.{digits}f}"


def _g(value: float | None) -> str:
    return "&mdash;" if value is None else f"{value:.4g}"


def _table(headers: Sequence[str], rows: Iterable[tuple[Sequence[str], bool]]) -> str:
    """Cells are already HTML (escaped by the caller); a row flagged bad is highlighted."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for cells, bad in rows:
        tds = "".join(
            f'<td class="num">{c}</td>' if _numeric(c) else f"<td>{c}</td>" for c in cells
        )
        body.append(f'<tr class="{"bad" if bad else "ok"}">{tds}</tr>')
    if not body:
        return '<p class="meta">Nothing to show.</p>'
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _numeric(cell: str) -> bool:
    return cell.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).isdigit()


def _img(uri: str | None, alt: str) -> str:
    return f'<img src="{uri}" alt="{_e(alt)}">' if uri else ""


# ---------------------------------------------------------------- sections


def _banner(report: ReleaseReport) -> str:
    failing = report.failing
    if report.passed:
        return (
            '<div class="banner pass"><h1>RELEASE PASSED</h1>'
            f"<div>All {len(report.thresholds)} thresholds met.</div></div>"
        )
    items = "".join(f"<li><b>{_e(t.name)}</b>: {_e(t.detail)}</li>" for t in failing)
    return (
        '<div class="banner fail"><h1>RELEASE REFUSED</h1>'
        f"<div>{len(failing)} of {len(report.thresholds)} thresholds failed:</div>"
        f"<ul>{items}</ul></div>"
    )


def _thresholds(results: Sequence[ThresholdResult]) -> str:
    ordered = sorted(results, key=lambda r: r.passed)
    rows = [
        (
            [
                _e(r.name),
                '<span class="status">' + ("pass" if r.passed else "FAIL") + "</span>",
                _g(r.value),
                _e(r.op),
                _g(r.limit),
                _e(r.detail),
            ],
            not r.passed,
        )
        for r in ordered
    ]
    return "<h2>Thresholds</h2>" + _table(
        ["threshold", "status", "value", "op", "limit", "detail"], rows
    )


def _column_rows(columns: Sequence[ColumnFidelity], ks: float, tv: float) -> str:
    rows = []
    for c in columns:
        bad = (c.ks_complement is not None and c.ks_complement < ks and c.rule == "perturb") or (
            c.tv_complement is not None and c.tv_complement < tv and c.rule == "generalize"
        )
        stats = c.statistics
        rows.append(
            (
                [
                    _e(c.column),
                    _e(c.dtype),
                    _e(c.rule),
                    _e(c.status if c.reason is None else f"{c.status}: {c.reason}"),
                    _f(c.ks_complement),
                    _f(c.tv_complement),
                    _f(c.missing_similarity),
                    _f(stats.mean) if stats else "&mdash;",
                    _f(stats.sd) if stats else "&mdash;",
                    _f(stats.median) if stats else "&mdash;",
                ],
                bad,
            )
        )
    headers = ["column", "type", "rule", "status", "KS", "TV", "missing", "mean", "sd", "median"]
    return _table(headers, rows)


def _pair_summary(pairs: Sequence[PairMetric]) -> str:
    by_metric: dict[str, list[PairMetric]] = defaultdict(list)
    for p in pairs:
        by_metric[p.metric].append(p)
    rows = []
    for metric in ("pearson", "spearman", "contingency"):
        items = by_metric.get(metric, [])
        scores = [p.score for p in items if p.score is not None]
        rows.append(
            (
                [
                    _e(metric),
                    str(len(scores)),
                    str(sum(p.skipped is not None for p in items)),
                    _f(sum(scores) / len(scores)) if scores else "&mdash;",
                    _f(min(scores)) if scores else "&mdash;",
                ],
                False,
            )
        )
    worst = sorted((p for p in pairs if p.score is not None), key=lambda p: p.score or 0.0)[:10]
    worst_rows = [
        (
            [
                _e(p.table),
                _e(f"{p.column_a} / {p.column_b}"),
                _e(p.metric),
                _f(p.src),
                _f(p.rel),
                _f(p.score),
            ],
            False,
        )
        for p in worst
    ]
    return (
        _table(["metric", "pairs scored", "skipped", "mean", "min"], rows)
        + "<h3>Lowest pair scores</h3>"
        + _table(["table", "columns", "metric", "source", "release", "score"], worst_rows)
    )


def _fidelity(report: ReleaseReport) -> str:
    f = report.fidelity
    t = _policy_thresholds(report)
    parts = ["<h2>Fidelity</h2>"]
    parts.append(
        f'<p class="meta">mean KSComplement {_f(f.ks_mean)} &middot; mean TVComplement '
        f"{_f(f.tv_mean)} &middot; mean MissingValueSimilarity {_f(f.missing_mean)} &middot; "
        f"correlation {_f(f.correlation_mean)} &middot; contingency {_f(f.contingency_mean)}"
        f" &middot; pairs skipped {f.pairs_skipped}, left out by the cap {f.pairs_capped}</p>"
    )
    parts.append(_img(plots.lowest_columns(f.columns, t[0], t[1]), "lowest column scores"))
    by_table: dict[str, list[ColumnFidelity]] = defaultdict(list)
    for c in f.columns:
        by_table[c.table].append(c)
    for table, cols in by_table.items():
        scores = [c.score for c in cols if c.score is not None]
        low = _f(min(scores)) if scores else "&mdash;"
        parts.append(
            f"<details><summary><b>{_e(table)}</b> &mdash; {len(cols)} columns, "
            f"lowest score {low}</summary>{_column_rows(cols, t[0], t[1])}</details>"
        )
    parts.append("<h3>Column pairs</h3>")
    parts.append(_img(plots.correlation_scatter(f.pairs), "correlations"))
    parts.append(_pair_summary(f.pairs))
    if f.subgroups:
        rows = [
            (
                [
                    _e(f"{s.table}.{s.column}"),
                    _e(", ".join(s.group_by)),
                    str(s.groups),
                    _f(s.max_d),
                    _g(s.min_p),
                    _f(s.share_p_above_05),
                ],
                s.min_p is not None and s.min_p <= 0.05,
            )
            for s in f.subgroups
        ]
        parts.append("<h3>Per-group KS tests (perturbed within groups)</h3>")
        parts.append(
            _table(["column", "group by", "groups", "max D", "min p", "share p &gt; 0.05"], rows)
        )
    return "".join(parts)


def _policy_thresholds(report: ReleaseReport) -> tuple[float, float]:
    limits = {r.name: r.limit for r in report.thresholds}
    return (limits.get("min_ks_complement") or 0.95, limits.get("min_tv_complement") or 0.95)


def _relational(report: ReleaseReport) -> str:
    r = report.relational
    rows = [
        (
            [
                _e(fk.child),
                _e(fk.parent),
                str(fk.child_rows_rel),
                _f(fk.integrity_src),
                _f(fk.integrity_rel),
                f"{fk.join_rows_src} / {fk.join_rows_rel}",
                _f(fk.join_count_ratio, 6),
                _f(fk.cardinality_shape),
                _e(fk.error or ""),
            ],
            fk.error is not None
            or (fk.integrity_rel or 0.0) < (fk.integrity_src or 0.0)
            or fk.join_count_ratio != 1.0,
        )
        for fk in r.foreign_keys
    ]
    headers = [
        "child",
        "parent",
        "child keys",
        "integrity (source)",
        "integrity (release)",
        "join rows src / rel",
        "join ratio",
        "children-per-parent shape",
        "error",
    ]
    return (
        "<h2>Relational integrity</h2>"
        f'<p class="meta">pseudonym collisions: {r.pseudonym_collisions} &middot; '
        f"lowest integrity {_f(r.min_integrity_rel)} &middot; worst join ratio "
        f"{_f(r.worst_join_count_ratio, 6)} &middot; mean cardinality shape "
        f"{_f(r.cardinality_shape_mean)}</p>" + _table(headers, rows)
    )


def _utility(report: ReleaseReport) -> str:
    u = report.utility
    by_id = {q.id: q for q in u.queries}
    worst = [by_id[i] for i in u.worst if i in by_id]
    rows = [
        (
            [
                _e(q.id),
                _e(q.kind),
                str(q.cells),
                _g(q.median_error),
                _g(q.p95_error),
                _f(q.coverage),
                _f(q.rank_correlation),
                f"<code>{_e(q.sql)}</code>" + (f"<br><b>{_e(q.error)}</b>" if q.error else ""),
            ],
            q.error is not None,
        )
        for q in worst
    ]
    return (
        "<h2>Utility</h2>"
        f'<p class="meta">{len(u.queries)} queries (seed {u.seed}), {u.cells} cells, '
        f"{u.failed_queries} failed &middot; median relative error "
        f"{_g(u.median_relative_error)} &middot; p95 {_g(u.p95_relative_error)} &middot; "
        f"group coverage {_f(u.group_coverage)} &middot; rank correlation "
        f"{_f(u.rank_correlation)}</p>"
        + _img(plots.error_histogram(u.error_histogram), "relative errors")
        + "<h3>Worst queries</h3>"
        + _table(
            ["query", "kind", "cells", "median err", "p95 err", "coverage", "rank corr", "SQL"],
            rows,
        )
    )


def _privacy(
    p: PrivacySection, linkage_limit: float, risk_limit: float, reident_limit: float
) -> str:
    parts = [
        "<h2>Privacy</h2>",
        f'<p class="meta">{p.leaked_identifiers} leaked identifier values '
        f"({p.identifiers_checked} original identifiers checked)</p>",
    ]
    leak_rows = [
        (
            [_e(f.table), _e(f.column), _e(f.identifier), str(f.count), _e(f.in_free_text)],
            True,
        )
        for f in p.leaks
    ]
    if leak_rows:
        parts.append(
            _table(["table", "column", "identifier source", "count", "in free text"], leak_rows)
        )
    k_rows = [
        (
            [
                _e(k.table),
                _e(", ".join(k.columns)),
                str(k.k_target),
                str(k.min_k),
                _f(k.share_below_k),
                str(k.classes),
                _f(k.prosecutor_ra),
                _f(k.prosecutor_rb),
                _f(k.prosecutor_rc),
                "&mdash;" if k.min_l is None else f"{k.min_l} / {k.l_target}",
                "yes" if k.satisfied else "NO",
            ],
            not k.satisfied,
        )
        for k in p.k_anonymity
    ]
    parts.append("<h3>k-anonymity over quasi-identifiers</h3>")
    parts.append(
        _table(
            [
                "table",
                "quasi-identifiers",
                "k",
                "min k",
                "share < k",
                "classes",
                "rA",
                "rB",
                "rC",
                "min l",
                "satisfied",
            ],
            k_rows,
        )
    )
    parts.append("<h3>Record linkage</h3>")
    parts.append(_img(plots.linkage_rates(p.linkage, linkage_limit), "linkage rates"))
    parts.append(
        _table(
            ["table", "attacker knows", "sampled", "candidates", "rate", "baseline", "ratio"],
            [
                (
                    [
                        _e(e.table),
                        _e(", ".join(e.known)),
                        str(e.sampled),
                        str(e.candidates),
                        _f(e.rate),
                        _g(e.baseline),
                        _g(e.ratio),
                    ],
                    e.rate > linkage_limit,
                )
                for e in p.linkage
            ],
        )
    )
    parts.append("<h3>Attacks (singling out, linkability, inference)</h3>")
    parts.append(_img(plots.attack_risks(p.attacks, risk_limit), "attack risks"))
    parts.append(
        _table(
            [
                "attack",
                "table",
                "attacks",
                "attack rate",
                "control rate",
                "baseline",
                "risk",
                "95% interval",
                "columns",
            ],
            [
                (
                    [
                        _e(a.kind),
                        _e(a.table),
                        str(a.attacks),
                        _f(a.attack_rate),
                        _f(a.control_rate),
                        _f(a.baseline_rate),
                        _f(a.risk),
                        f"[{_f(a.ci_low)}, {_f(a.ci_high)}]",
                        _e(", ".join(a.columns)),
                    ],
                    a.risk > risk_limit,
                )
                for a in p.attacks
            ],
        )
    )
    parts.append(_reidentification(p, reident_limit))
    if p.notes:
        parts.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in p.notes) + "</ul>")
    return "".join(parts)


def _reidentification(p: PrivacySection, limit: float) -> str:
    """The worst kept-column combinations of each searched table (three per table)."""
    rows: list[tuple[Sequence[str], bool]] = []
    for r in p.reidentification:
        for c in r.combinations[:3]:
            gated = r.report_only is None
            rows.append(
                (
                    [
                        _e(r.table),
                        _e(" + ".join(c.columns)),
                        _f(c.rate),
                        str(r.sampled),
                        f"{len(r.kept)} ({r.measured} combinations"
                        + (f", {r.capped} capped" if r.capped else "")
                        + ")",
                        _e(c.suggestion) if gated else _e(f"report only: {r.report_only}"),
                    ],
                    gated and c.rate > limit,
                )
            )
    return (
        "<h3>Re-identification by kept columns</h3>"
        f'<p class="meta">combinations of columns the release keeps (numbers within the '
        f"tolerance), worst first; limit {limit:g}</p>"
        + _table(
            ["table", "attacker knows", "rate", "sampled", "kept columns", "suggested rule"],
            rows,
        )
    )


def _benchmark(report: ReleaseReport) -> str:
    b = report.benchmark
    if b is None:
        return '<h2>Benchmark</h2><p class="meta">Not run on this release.</p>'
    rows = [
        (
            [
                _e(t.task),
                _e(t.family),
                _f(t.gold),
                _f(t.empty),
                "yes" if t.passed else "NO",
                _e(t.detail),
            ],
            not t.passed,
        )
        for t in b.tasks
    ]
    head = (
        f'<p class="meta">gold dbt build: {"succeeded" if b.gold_build_success else "FAILED"}'
        f" ({b.models} models, {b.tests} tests) &middot; verdict: "
        f"{'passed' if b.passed else 'FAILED'}</p>"
    )
    if b.error:
        head += f"<p><b>{_e(b.error)}</b></p>"
    return (
        "<h2>Benchmark</h2>"
        + head
        + _table(["task", "family", "gold", "empty", "passed", "detail"], rows)
    )


def _timings(report: ReleaseReport) -> str:
    rows = [([_e(k), f"{v:.3f}"], False) for k, v in report.seconds.items()]
    return "<h2>Timings (seconds)</h2>" + _table(["section", "seconds"], rows)


def render_html(report: ReleaseReport) -> str:
    """The whole report as one HTML page."""
    limits = {r.name: r.limit for r in report.thresholds}
    linkage_limit = limits.get("max_linkage_rate") or 0.25
    risk_limit = limits.get("max_attack_risk") or 0.5
    reident_limit = limits.get("max_reidentification_rate") or 0.05
    body = "".join(
        [
            f"<h1>Release report: {_e(report.dataset)}</h1>",
            f'<p class="meta">domain {_e(report.domain)} &middot; policy {_e(report.policy)} '
            f"(sha256 {_e(report.policy_sha256[:16])}&hellip;) &middot; {report.tables} tables, "
            f"{report.rows} rows &middot; created {_e(report.created_at.isoformat())}</p>",
            _banner(report),
            _thresholds(report.thresholds),
            _fidelity(report),
            _relational(report),
            _utility(report),
            _privacy(report.privacy, linkage_limit, risk_limit, reident_limit),
            _benchmark(report),
            _timings(report),
        ]
    )
    title = f"Release report {report.dataset}: {'PASSED' if report.passed else 'REFUSED'}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def write_report(report: ReleaseReport, folder: Path) -> tuple[Path, Path]:
    """Write release-report.json and release-report.html into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, html_path = folder / JSON_NAME, folder / HTML_NAME
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    html_path.write_text(render_html(report), encoding="utf-8")
    return json_path, html_path
