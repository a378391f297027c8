"""The release report as one self-contained HTML page (inline CSS, figures as data URIs) and
as JSON, written side by side.

The page (``templates/release_report.html.j2`` on the shared base template) leads with the
verdict and the failing thresholds, because that is what decides whether the release ships;
the sections below explain the numbers. This module builds the tables' rows as plain values;
the template escapes every one of them. Everything shown comes from the report models, which
hold no original identifier value (only counts, metric values, names and the workload's SQL).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from markupsafe import Markup

from benchforge.anonymize.report import plots
from benchforge.anonymize.report.models import (
    ColumnFidelity,
    PairMetric,
    ReleaseReport,
    ThresholdResult,
)
from benchforge.anonymize.report.privacy import PrivacySection
from benchforge.core.pages import Page

TEMPLATES = Path(__file__).parent / "templates"
NONE = "—"  # a value that was not measured
Row = tuple[Sequence[str], bool]  # a table row's cells and whether it breaks a limit

JSON_NAME = "release-report.json"
HTML_NAME = "release-report.html"


def _f(value: float | None, digits: int = 4) -> str:
    return NONE if value is None else f"{value:.{digits}f}"


def _g(value: float | None) -> str:
    return NONE if value is None else f"{value:.4g}"


def _numeric(cell: str) -> bool:
    return cell.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).isdigit()


# ---------------------------------------------------------------- sections


def _status(passed: bool) -> Markup:
    # Markup: a fixed word in a span the stylesheet colours; no value of the report in it.
    return Markup('<span class="status">{}</span>').format("pass" if passed else "FAIL")


def _thresholds(results: Sequence[ThresholdResult]) -> list[Row]:
    return [
        ([r.name, _status(r.passed), _g(r.value), r.op, _g(r.limit), r.detail], not r.passed)
        for r in sorted(results, key=lambda r: r.passed)
    ]


def _column_rows(columns: Sequence[ColumnFidelity], ks: float, tv: float) -> list[Row]:
    rows: list[Row] = []
    for c in columns:
        bad = (c.ks_complement is not None and c.ks_complement < ks and c.rule == "perturb") or (
            c.tv_complement is not None and c.tv_complement < tv and c.rule == "generalize"
        )
        stats = c.statistics
        cells = [
            c.column,
            c.dtype,
            c.rule,
            c.status if c.reason is None else f"{c.status}: {c.reason}",
            _f(c.ks_complement),
            _f(c.tv_complement),
            _f(c.missing_similarity),
            _f(stats.mean) if stats else NONE,
            _f(stats.sd) if stats else NONE,
            _f(stats.median) if stats else NONE,
        ]
        rows.append((cells, bad))
    return rows


def _column_tables(report: ReleaseReport) -> list[tuple[str, str, int, list[Row]]]:
    """(table, its lowest column score, columns, rows) per table of the fidelity section."""
    ks, tv = _policy_thresholds(report)
    by_table: dict[str, list[ColumnFidelity]] = defaultdict(list)
    for c in report.fidelity.columns:
        by_table[c.table].append(c)
    out = []
    for table, cols in by_table.items():
        scores = [c.score for c in cols if c.score is not None]
        low = _f(min(scores)) if scores else NONE
        out.append((table, low, len(cols), _column_rows(cols, ks, tv)))
    return out


def _pair_metrics(pairs: Sequence[PairMetric]) -> list[Row]:
    by_metric: dict[str, list[PairMetric]] = defaultdict(list)
    for p in pairs:
        by_metric[p.metric].append(p)
    rows: list[Row] = []
    for metric in ("pearson", "spearman", "contingency"):
        items = by_metric.get(metric, [])
        scores = [p.score for p in items if p.score is not None]
        cells = [
            metric,
            str(len(scores)),
            str(sum(p.skipped is not None for p in items)),
            _f(sum(scores) / len(scores)) if scores else NONE,
            _f(min(scores)) if scores else NONE,
        ]
        rows.append((cells, False))
    return rows


def _worst_pairs(pairs: Sequence[PairMetric]) -> list[Row]:
    worst = sorted((p for p in pairs if p.score is not None), key=lambda p: p.score or 0.0)[:10]
    return [
        (
            [p.table, f"{p.column_a} / {p.column_b}", p.metric, _f(p.src), _f(p.rel), _f(p.score)],
            False,
        )
        for p in worst
    ]


def _subgroups(report: ReleaseReport) -> list[Row]:
    return [
        (
            [
                f"{s.table}.{s.column}",
                ", ".join(s.group_by),
                str(s.groups),
                _f(s.max_d),
                _g(s.min_p),
                _f(s.share_p_above_05),
            ],
            s.min_p is not None and s.min_p <= 0.05,
        )
        for s in report.fidelity.subgroups
    ]


def _policy_thresholds(report: ReleaseReport) -> tuple[float, float]:
    limits = {r.name: r.limit for r in report.thresholds}
    return (limits.get("min_ks_complement") or 0.95, limits.get("min_tv_complement") or 0.95)


def _foreign_keys(report: ReleaseReport) -> list[Row]:
    return [
        (
            [
                fk.child,
                fk.parent,
                str(fk.child_rows_rel),
                _f(fk.integrity_src),
                _f(fk.integrity_rel),
                f"{fk.join_rows_src} / {fk.join_rows_rel}",
                _f(fk.join_count_ratio, 6),
                _f(fk.cardinality_shape),
                fk.error or "",
            ],
            fk.error is not None
            or (fk.integrity_rel or 0.0) < (fk.integrity_src or 0.0)
            or fk.join_count_ratio != 1.0,
        )
        for fk in report.relational.foreign_keys
    ]


def _sql(sql: str, error: str | None) -> Markup:
    # Markup: the query and its error, each escaped by Markup.format, set as code and bold.
    cell = Markup("<code>{}</code>").format(sql)
    return cell + Markup("<br><b>{}</b>").format(error) if error else cell


def _worst_queries(report: ReleaseReport) -> list[Row]:
    u = report.utility
    by_id = {q.id: q for q in u.queries}
    return [
        (
            [
                q.id,
                q.kind,
                str(q.cells),
                _g(q.median_error),
                _g(q.p95_error),
                _f(q.coverage),
                _f(q.rank_correlation),
                _sql(q.sql, q.error),
            ],
            q.error is not None,
        )
        for q in (by_id[i] for i in u.worst if i in by_id)
    ]


def _leaks(p: PrivacySection) -> list[Row]:
    return [
        ([f.table, f.column, f.identifier, str(f.count), str(f.in_free_text)], True)
        for f in p.leaks
    ]


def _k_anonymity(p: PrivacySection) -> list[Row]:
    rows: list[Row] = []
    for k in p.k_anonymity:
        classes = [str(k.k_target), str(k.min_k), _f(k.share_below_k), str(k.classes)]
        risks = [_f(k.prosecutor_ra), _f(k.prosecutor_rb), _f(k.prosecutor_rc)]
        diversity = NONE if k.min_l is None else f"{k.min_l} / {k.l_target}"
        verdict = "yes" if k.satisfied else "NO"
        cells = [k.table, ", ".join(k.columns), *classes, *risks, diversity, verdict]
        rows.append((cells, not k.satisfied))
    return rows


def _linkage(p: PrivacySection, limit: float) -> list[Row]:
    rows: list[Row] = []
    for e in p.linkage:
        found = [str(e.sampled), str(e.candidates), _f(e.rate), _g(e.baseline), _g(e.ratio)]
        rows.append(([e.table, ", ".join(e.known), *found], e.rate > limit))
    return rows


def _attacks(p: PrivacySection, limit: float) -> list[Row]:
    rows: list[Row] = []
    for a in p.attacks:
        rates = [_f(a.attack_rate), _f(a.control_rate), _f(a.baseline_rate), _f(a.risk)]
        interval = f"[{_f(a.ci_low)}, {_f(a.ci_high)}]"
        cells = [a.kind, a.table, str(a.attacks), *rates, interval, ", ".join(a.columns)]
        rows.append((cells, a.risk > limit))
    return rows


def _reidentification(p: PrivacySection, limit: float) -> list[Row]:
    """The worst kept-column combinations of each searched table (three per table)."""
    rows: list[Row] = []
    for r in p.reidentification:
        for c in r.combinations[:3]:
            gated = r.report_only is None
            kept = f"{len(r.kept)} ({r.measured} combinations" + (
                f", {r.capped} capped)" if r.capped else ")"
            )
            rule = c.suggestion if gated else f"report only: {r.report_only}"
            cells = [r.table, " + ".join(c.columns), _f(c.rate), str(r.sampled), kept, rule]
            rows.append((cells, gated and c.rate > limit))
    return rows


def _benchmark(report: ReleaseReport) -> list[Row]:
    b = report.benchmark
    if b is None:
        return []
    return [
        (
            [t.task, t.family, _f(t.gold), _f(t.empty), "yes" if t.passed else "NO", t.detail],
            not t.passed,
        )
        for t in b.tasks
    ]


RELEASE_PAGE = Page(
    "release_report.html.j2", (TEMPLATES,), "anonymization", {"f": _f, "g": _g, "numeric": _numeric}
)


def render_html(report: ReleaseReport) -> str:
    """The whole report as one HTML page."""
    limits = {r.name: r.limit for r in report.thresholds}
    linkage_limit = limits.get("max_linkage_rate") or 0.25
    risk_limit = limits.get("max_attack_risk") or 0.5
    reident_limit = limits.get("max_reidentification_rate") or 0.05
    ks, tv = _policy_thresholds(report)
    fidelity, privacy = report.fidelity, report.privacy
    sections = {
        "thresholds": _thresholds(report.thresholds),
        "lowest_columns": plots.lowest_columns(fidelity.columns, ks, tv),
        "column_tables": _column_tables(report),
        "correlations": plots.correlation_scatter(fidelity.pairs),
        "pair_metrics": _pair_metrics(fidelity.pairs),
        "worst_pairs": _worst_pairs(fidelity.pairs),
        "subgroups": _subgroups(report),
        "foreign_keys": _foreign_keys(report),
        "errors": plots.error_histogram(report.utility.error_histogram),
        "worst_queries": _worst_queries(report),
        "leaks": _leaks(privacy),
        "k_anonymity": _k_anonymity(privacy),
        "linkage_plot": plots.linkage_rates(privacy.linkage, linkage_limit),
        "linkage": _linkage(privacy, linkage_limit),
        "attack_plot": plots.attack_risks(privacy.attacks, risk_limit),
        "attacks": _attacks(privacy, risk_limit),
        "reident_limit": reident_limit,
        "reidentification": _reidentification(privacy, reident_limit),
        "benchmark": _benchmark(report),
        "timings": [([k, f"{v:.3f}"], False) for k, v in report.seconds.items()],
    }
    title = f"Release report {report.dataset}: {'PASSED' if report.passed else 'REFUSED'}"
    return RELEASE_PAGE.render(title, report=report, s=sections)


def write_report(report: ReleaseReport, folder: Path) -> tuple[Path, Path]:
    """Write release-report.json and release-report.html into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, html_path = folder / JSON_NAME, folder / HTML_NAME
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    html_path.write_text(render_html(report), encoding="utf-8")
    return json_path, html_path
