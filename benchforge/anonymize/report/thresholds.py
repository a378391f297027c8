"""The verdict: every field of the policy's ``Thresholds`` checked against a report.

One result per threshold, named after its field (``min_ks_complement`` ...), so a refused
release says in the policy's own words what to loosen or fix; the detail names each failing
column, foreign key, linkage entry or attack. A check with nothing to measure (no perturbed
column, no correlated pair) passes and says so rather than failing a release for a metric that
does not apply. The release passes when every result passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from benchforge.anonymize.policy.models import Thresholds
from benchforge.anonymize.report.models import ColumnFidelity, ReleaseReport, ThresholdResult

# Float slack for metrics that are exactly at their limit (1.0 integrity, ratio 1.0).
SLACK = 1e-9
MAX_NAMED = 8


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    more = len(items) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _at_least(
    name: str,
    items: Sequence[tuple[str, float]],
    limit: float,
    empty: str,
    what: str,
    unmeasured: Sequence[str] = (),
) -> ThresholdResult:
    """Every item's value must be >= limit; the result names the failing ones. ``unmeasured``
    items (a column the source has values for but the release does not) fail too."""
    if not items and not unmeasured:
        return ThresholdResult(
            name=name, value=None, limit=limit, op=">=", passed=True, detail=empty
        )
    failing = [f"{label} ({value:.4f})" for label, value in items if value < limit - SLACK]
    failing += list(unmeasured)
    total = len(items) + len(unmeasured)
    detail = (
        f"{len(failing)} of {total} {what} below {limit}: {_names(failing)}"
        if failing
        else f"all {total} {what} >= {limit}"
    )
    return ThresholdResult(
        name=name,
        value=min((value for _, value in items), default=None),
        limit=limit,
        op=">=",
        passed=not failing,
        detail=detail,
    )


def _unmeasured(columns: Sequence[ColumnFidelity], rule: str, kind: str) -> list[str]:
    """Columns of this rule that could not be scored although the source has values for them
    (missing from the release, or all NULL there): a release must not pass by omission."""
    return [
        f"{c.table}.{c.column} (not measured: {c.reason})"
        for c in columns
        if c.rule == rule
        and c.kind == kind
        and c.status == "not_measured"
        and c.null_share_src != 1.0
    ]


def _single(
    name: str,
    value: float | None,
    limit: float,
    op: str,
    empty: str,
    label: str,
) -> ThresholdResult:
    if value is None:
        return ThresholdResult(name=name, value=None, limit=limit, op=op, passed=True, detail=empty)
    ok: Callable[[float], bool] = (
        (lambda v: v <= limit + SLACK) if op == "<=" else (lambda v: v >= limit - SLACK)
    )
    return ThresholdResult(
        name=name,
        value=value,
        limit=limit,
        op=op,
        passed=ok(value),
        detail=f"{label} {value:.4g} (limit {op} {limit})",
    )


def _leaks(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    p = report.privacy
    where = sorted(p.leaks, key=lambda f: -f.count)
    located = [f"{f.table}.{f.column} ({f.count}, from {f.identifier})" for f in where]
    passed = p.leaked_identifiers <= t.max_leaked_identifiers
    detail = f"{p.leaked_identifiers} original identifier values found in the release"
    detail += f" ({p.identifiers_checked} checked)"
    if located:
        detail += ": " + _names(located)
    return ThresholdResult(
        name="max_leaked_identifiers",
        value=float(p.leaked_identifiers),
        limit=float(t.max_leaked_identifiers),
        op="<=",
        passed=passed,
        detail=detail,
    )


def _collisions(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    n = report.relational.pseudonym_collisions
    return ThresholdResult(
        name="max_pseudonym_collisions",
        value=float(n),
        limit=float(t.max_pseudonym_collisions),
        op="<=",
        passed=n <= t.max_pseudonym_collisions,
        detail=f"{n} distinct originals share a pseudonym",
    )


def _integrity(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    """Each foreign key: the release reaches the limit and is not worse than the source."""
    fks = report.relational.foreign_keys
    name, limit = "min_referential_integrity", t.min_referential_integrity
    if not fks:
        return ThresholdResult(
            name=name,
            value=None,
            limit=limit,
            op=">=",
            passed=True,
            detail="no foreign keys declared",
        )
    failing: list[str] = []
    values: list[float] = []
    for fk in fks:
        label = f"{fk.child} -> {fk.parent}"
        if fk.error is not None or fk.integrity_rel is None:
            failing.append(f"{label}: {fk.error or 'not measured'}")
            continue
        values.append(fk.integrity_rel)
        src = fk.integrity_src if fk.integrity_src is not None else 1.0
        if fk.integrity_rel < limit - SLACK:
            failing.append(f"{label}: {fk.integrity_rel:.4f}")
        elif fk.integrity_rel < src - SLACK:
            failing.append(f"{label}: {fk.integrity_rel:.4f} < source {src:.4f}")
    detail = (
        f"{len(failing)} of {len(fks)} foreign keys fail: {_names(failing)}"
        if failing
        else f"all {len(fks)} foreign keys >= {limit} and not below the source"
    )
    return ThresholdResult(
        name=name,
        value=min(values) if values else None,
        limit=limit,
        op=">=",
        passed=not failing,
        detail=detail,
    )


def _join_ratio(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    """|ratio - 1| <= 1 - min: a release may neither lose nor gain joined rows beyond that."""
    fks = [fk for fk in report.relational.foreign_keys if fk.error is None]
    name, limit = "min_join_count_ratio", t.min_join_count_ratio
    if not fks:
        return ThresholdResult(
            name=name,
            value=None,
            limit=limit,
            op="|r-1| <= 1-limit",
            passed=True,
            detail="no foreign keys measured",
        )
    tolerance = 1.0 - limit + SLACK
    failing: list[str] = []
    for fk in fks:
        r = fk.join_count_ratio
        if r is None or abs(r - 1.0) > tolerance:
            shown = "undefined" if r is None else f"{r:.6f}"
            failing.append(
                f"{fk.child} -> {fk.parent}: {shown} ({fk.join_rows_rel} vs {fk.join_rows_src})"
            )
    worst = report.relational.worst_join_count_ratio
    detail = (
        f"{len(failing)} joins change row count: {_names(failing)}"
        if failing
        else f"all {len(fks)} join-row ratios within {1.0 - limit:g} of 1"
    )
    return ThresholdResult(
        name=name,
        value=worst,
        limit=limit,
        op="|r-1| <= 1-limit",
        passed=not failing,
        detail=detail,
    )


def _ks(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    cols = report.fidelity.columns
    items = [
        (f"{c.table}.{c.column}", c.ks_complement)
        for c in cols
        if c.rule == "perturb" and c.kind == "numeric" and c.ks_complement is not None
    ]
    result = _at_least(
        "min_ks_complement",
        items,
        t.min_ks_complement,
        "no perturbed numeric columns",
        "perturbed numeric columns",
        _unmeasured(cols, "perturb", "numeric"),
    )
    text = [c for c in cols if c.rule == "perturb" and c.kind == "text"]
    if text:
        result.detail += f"; {len(text)} perturbed numbers-as-text columns not measured"
    return result


def _tv(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    items = [
        (f"{c.table}.{c.column}", c.tv_complement)
        for c in report.fidelity.columns
        if c.rule == "generalize" and c.tv_complement is not None
    ]
    return _at_least(
        "min_tv_complement",
        items,
        t.min_tv_complement,
        "no generalized categorical columns",
        "generalized categorical columns",
        _unmeasured(report.fidelity.columns, "generalize", "categorical"),
    )


def _k(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    name = "require_k"
    if not t.require_k:
        return ThresholdResult(
            name=name, value=None, limit=None, op="==", passed=True, detail="not required"
        )
    results = report.privacy.k_anonymity
    if not results:
        return ThresholdResult(
            name=name,
            value=0.0,
            limit=0.0,
            op="==",
            passed=True,
            detail="no quasi-identifiers declared",
        )
    failing = [
        f"{r.table} (min k {r.min_k} < {r.k_target}"
        + (
            f", min l {r.min_l} < {r.l_target}"
            if r.sensitive and (r.min_l or 0) < r.l_target
            else ""
        )
        + ")"
        for r in results
        if not r.satisfied
    ]
    detail = (
        f"{len(failing)} of {len(results)} tables not k-anonymous: {_names(failing)}"
        if failing
        else f"all {len(results)} quasi-identifier tables reach their k (and l)"
    )
    return ThresholdResult(
        name=name,
        value=float(len(failing)),
        limit=0.0,
        op="==",
        passed=not failing,
        detail=detail,
    )


def _linkage(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    name, limit = "max_linkage_rate", t.max_linkage_rate
    entries = report.privacy.linkage
    if not entries:
        return ThresholdResult(
            name=name,
            value=None,
            limit=limit,
            op="<=",
            passed=True,
            detail="no linkage entries declared",
        )
    failing = [
        f"{e.table} knowing {'+'.join(e.known)}: {e.rate:.4f} (baseline {e.baseline:.2g})"
        for e in entries
        if e.rate > limit + SLACK
    ]
    detail = (
        f"{len(failing)} of {len(entries)} linkage attacks above {limit}: {_names(failing)}"
        if failing
        else f"all {len(entries)} linkage rates <= {limit}"
    )
    return ThresholdResult(
        name=name,
        value=max(e.rate for e in entries),
        limit=limit,
        op="<=",
        passed=not failing,
        detail=detail,
    )


def _attacks(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    name, limit = "max_attack_risk", t.max_attack_risk
    attacks = report.privacy.attacks
    if not attacks:
        return ThresholdResult(
            name=name, value=None, limit=limit, op="<=", passed=True, detail="no attacks run"
        )
    failing = [
        f"{a.kind} on {a.table}: {a.risk:.3f} [{a.ci_low:.3f}, {a.ci_high:.3f}]"
        for a in attacks
        if a.risk > limit + SLACK
    ]
    worst = max(attacks, key=lambda a: a.risk)
    detail = (
        f"{len(failing)} attacks above {limit}: {_names(failing)}"
        if failing
        else f"highest risk {worst.risk:.3f} ({worst.kind} on {worst.table})"
    )
    return ThresholdResult(
        name=name, value=worst.risk, limit=limit, op="<=", passed=not failing, detail=detail
    )


def _reidentification(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    """The worst kept-column combination of each searched table; a table the policy marks
    report-only is named with its reason but does not refuse the release."""
    name, limit = "max_reidentification_rate", t.max_reidentification_rate
    found = [(r, r.worst) for r in report.privacy.reidentification if r.worst is not None]
    if not found:
        return ThresholdResult(
            name=name,
            value=None,
            limit=limit,
            op="<=",
            passed=True,
            detail="no kept columns to search",
        )
    gated = [(r, w) for r, w in found if r.report_only is None]
    over = sorted(((r, w) for r, w in gated if w.rate > limit + SLACK), key=lambda rw: -rw[1].rate)
    failing = [
        f"{r.table}: {' + '.join(w.columns)} ({w.rate:.4f}) -> {w.suggestion}" for r, w in over
    ]
    if failing:
        detail = (
            f"{len(failing)} of {len(gated)} tables re-identified above {limit} by kept "
            f"columns: {_names(failing)}"
        )
    elif gated:
        r, w = max(gated, key=lambda rw: rw[1].rate)
        detail = f"worst {r.table}: {' + '.join(w.columns)} ({w.rate:.4f})"
    else:
        detail = "every searched table is report only"
    reported = [
        f"{r.table} ({r.report_only}): {' + '.join(w.columns)} {w.rate:.4f}"
        for r, w in found
        if r.report_only is not None
    ]
    if reported:
        detail += f"; report only: {_names(reported)}"
    return ThresholdResult(
        name=name,
        value=max((w.rate for _, w in gated), default=None),
        limit=limit,
        op="<=",
        passed=not failing,
        detail=detail,
    )


def _benchmark(report: ReleaseReport, t: Thresholds) -> ThresholdResult:
    name = "require_benchmark"
    if not t.require_benchmark:
        return ThresholdResult(
            name=name, value=None, limit=None, op="==", passed=True, detail="not required"
        )
    b = report.benchmark
    if b is None:
        return ThresholdResult(
            name=name, value=None, limit=1.0, op="==", passed=False, detail="not run"
        )
    bad = [f"{task.task} ({task.detail})" for task in b.tasks if not task.passed]
    parts = [f"gold build {'succeeded' if b.gold_build_success else 'failed'}"]
    parts.append(f"{len(b.tasks) - len(bad)} of {len(b.tasks)} tasks pass")
    if b.error:
        parts.append(b.error.splitlines()[0][:200])
    if bad:
        parts.append("failing: " + _names(bad))
    return ThresholdResult(
        name=name,
        value=1.0 if b.passed else 0.0,
        limit=1.0,
        op="==",
        passed=b.passed,
        detail="; ".join(parts),
    )


def evaluate_thresholds(report: ReleaseReport, thresholds: Thresholds) -> list[ThresholdResult]:
    """Every threshold of the policy, in the order of the ``Thresholds`` model."""
    f, u = report.fidelity, report.utility
    t = thresholds
    return [
        _leaks(report, t),
        _collisions(report, t),
        _integrity(report, t),
        _join_ratio(report, t),
        _ks(report, t),
        _tv(report, t),
        _single(
            "min_correlation_similarity",
            f.correlation_mean,
            t.min_correlation_similarity,
            ">=",
            "no correlated column pairs measured",
            "mean CorrelationSimilarity",
        ),
        _single(
            "max_median_relative_error",
            u.median_relative_error,
            t.max_median_relative_error,
            "<=",
            "no workload cells measured",
            "median relative error",
        ),
        _single(
            "max_p95_relative_error",
            u.p95_relative_error,
            t.max_p95_relative_error,
            "<=",
            "no workload cells measured",
            "p95 relative error",
        ),
        _single(
            "min_group_coverage",
            u.group_coverage,
            t.min_group_coverage,
            ">=",
            "no grouped queries measured",
            "group coverage",
        ),
        _linkage(report, t),
        _attacks(report, t),
        _reidentification(report, t),
        _k(report, t),
        _benchmark(report, t),
    ]
