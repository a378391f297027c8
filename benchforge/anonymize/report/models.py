"""The release report: what a reviewer reads before an anonymized warehouse is shared.

Every section holds aggregates only (metric values, counts, column names and the workload's
SQL): no original value of an identifier ever enters these models, so the JSON and HTML
renderings can be published beside the release. All scores are in [0, 1], higher is better,
with SDMetrics' definitions (see the section modules for the exact formulas).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from benchforge.anonymize.policy.models import Thresholds
from benchforge.anonymize.report.privacy import PrivacySection

ColumnKind = Literal["numeric", "datetime", "categorical", "text", "other"]
ColumnStatus = Literal["scored", "replaced", "not_measured"]
PairMetricName = Literal["pearson", "spearman", "contingency"]

# ---------------------------------------------------------------- fidelity


class StatisticSimilarity(BaseModel):
    """1 - |a - b| / max(|a|, |b|, tiny) per statistic, clipped to [0, 1]."""

    mean: float | None = None
    sd: float | None = None
    median: float | None = None


class ColumnFidelity(BaseModel):
    """One column's marginal fidelity. ``status`` says whether it was scored, replaced wholesale
    by its rule (pseudonymize / fake / scrub / suppress: a distribution comparison would measure
    nothing useful), or not measured (``reason`` says why)."""

    table: str
    column: str
    dtype: str
    rule: str
    kind: ColumnKind
    status: ColumnStatus
    reason: str | None = None
    ks_complement: float | None = None
    tv_complement: float | None = None
    missing_similarity: float | None = None
    null_share_src: float | None = None
    null_share_rel: float | None = None
    statistics: StatisticSimilarity | None = None

    @property
    def score(self) -> float | None:
        """The column's headline score: KSComplement for ordered columns, TVComplement else."""
        return self.ks_complement if self.ks_complement is not None else self.tv_complement


class PairMetric(BaseModel):
    """A column-pair trend: correlation (Pearson / Spearman, CorrelationSimilarity =
    1 - |rho_src - rho_rel| / 2) or ContingencySimilarity. ``skipped`` names why no score."""

    table: str
    column_a: str
    column_b: str
    metric: PairMetricName
    src: float | None = None
    rel: float | None = None
    score: float | None = None
    skipped: str | None = None


class SubgroupKS(BaseModel):
    """Per-group two-sample KS tests for a column perturbed within ``group_by`` groups (the
    DataClawBench check: no group's distribution changes significantly, p > 0.05)."""

    table: str
    column: str
    group_by: list[str]
    groups: int = Field(description="Groups tested (non-NULL values on both sides).")
    groups_skipped: int = 0
    max_d: float | None = None
    min_p: float | None = None
    share_p_above_05: float | None = None


class FidelitySection(BaseModel):
    columns: list[ColumnFidelity]
    pairs: list[PairMetric]
    subgroups: list[SubgroupKS]
    ks_mean: float | None = None
    tv_mean: float | None = None
    missing_mean: float | None = None
    pearson_mean: float | None = None
    spearman_mean: float | None = None
    correlation_mean: float | None = Field(
        default=None, description="Mean CorrelationSimilarity over scored Pearson and Spearman."
    )
    contingency_mean: float | None = None
    pairs_skipped: int = 0
    pairs_capped: int = Field(default=0, description="Candidate pairs left out by the cap.")


# ---------------------------------------------------------------- relational


class ForeignKeyCheck(BaseModel):
    """One declared foreign key, keys compared normalized (upper(trim(...))) as the gold dbt
    staging does. Integrity is the share of non-NULL child rows whose key has a parent."""

    child: str = Field(description="table.column")
    parent: str = Field(description="table.column")
    child_rows_src: int = 0
    child_rows_rel: int = 0
    integrity_src: float | None = None
    integrity_rel: float | None = None
    join_rows_src: int = 0
    join_rows_rel: int = 0
    join_count_ratio: float | None = None
    cardinality_shape: float | None = Field(
        default=None, description="KSComplement of children-per-parent counts."
    )
    error: str | None = None


class RelationalSection(BaseModel):
    foreign_keys: list[ForeignKeyCheck]
    pseudonym_collisions: int
    min_integrity_rel: float | None = None
    worst_join_count_ratio: float | None = Field(
        default=None, description="The ratio farthest from 1."
    )
    cardinality_shape_mean: float | None = None


# ---------------------------------------------------------------- utility

QueryKind = Literal["total", "group", "fk_group", "filter"]


class UtilityQuery(BaseModel):
    """One workload query run on the source and on the release; a cell is one (group, measure)
    value. ``sql`` is the query as run on one warehouse (``raw.<table>``)."""

    id: str
    table: str
    kind: QueryKind
    sql: str
    measures: int
    groups_src: int = 0
    groups_rel: int = 0
    groups_matched: int = 0
    coverage: float | None = None
    cells: int = 0
    median_error: float | None = None
    p95_error: float | None = None
    max_error: float | None = None
    rank_correlation: float | None = None
    error: str | None = None


class HistogramBin(BaseModel):
    """Cells with low <= relative error < high (``high`` None: unbounded)."""

    low: float
    high: float | None
    count: int


class UtilitySection(BaseModel):
    seed: int
    queries: list[UtilityQuery]
    cells: int = 0
    median_relative_error: float | None = None
    p95_relative_error: float | None = None
    group_coverage: float | None = Field(
        default=None, description="Source groups found in the release, pooled over queries."
    )
    rank_correlation: float | None = Field(
        default=None, description="Mean per-query Spearman of group values (>= 3 groups)."
    )
    failed_queries: int = 0
    worst: list[str] = Field(default_factory=list, description="Ids of the 10 worst queries.")
    error_histogram: list[HistogramBin] = Field(default_factory=list)


# ---------------------------------------------------------------- benchmark and verdict


class TaskCheck(BaseModel):
    """A benchmark task re-scored on the release: the gold answer must still score, the empty
    answer must not."""

    task: str
    family: str
    gold: float
    empty: float
    passed: bool
    detail: str


class BenchmarkSection(BaseModel):
    gold_build_success: bool
    models: int
    tests: int
    error: str | None = None
    tasks: list[TaskCheck] = Field(default_factory=list)
    passed: bool
    skipped: str | None = Field(
        default=None, description="Why the check did not run (the policy does not require it)."
    )


class ThresholdResult(BaseModel):
    """One policy threshold checked against the report. ``name`` is the Thresholds field."""

    name: str
    value: float | None
    limit: float | None
    op: str
    passed: bool
    detail: str


class ReleaseReport(BaseModel):
    dataset: str
    domain: str
    policy: str
    policy_sha256: str
    created_at: datetime
    rows: int
    tables: int
    fidelity: FidelitySection
    relational: RelationalSection
    utility: UtilitySection
    privacy: PrivacySection
    benchmark: BenchmarkSection | None = None
    thresholds: list[ThresholdResult]
    passed: bool
    seconds: dict[str, float] = Field(default_factory=dict)

    @property
    def failing(self) -> list[ThresholdResult]:
        return [t for t in self.thresholds if not t.passed]

    def with_benchmark(self, section: BenchmarkSection, thresholds: Thresholds) -> ReleaseReport:
        """A copy holding the benchmark check, thresholds re-evaluated (the flow runs the gold
        build and task scoring after the report, on the written release)."""
        from benchforge.anonymize.report.thresholds import evaluate_thresholds

        updated = self.model_copy(update={"benchmark": section})
        results = evaluate_thresholds(updated, thresholds)
        return updated.model_copy(
            update={"thresholds": results, "passed": all(r.passed for r in results)}
        )
