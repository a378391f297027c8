"""The anonymization policy: one YAML file per dataset saying, for every column of every table,
what happens to it, plus the keys the release must keep, the quasi-identifiers the privacy report
measures, and the thresholds below which nothing is published.

Tables and columns are mappings keyed by name, so a validation error reads
``tables.accounts.columns.email.rule`` rather than a list index. A column's rule is written as
a mapping with ``rule:`` (``{rule: perturb, method: noise, scale: 0.05}``) or, for rules without
parameters, as the bare name (``keep``, ``pseudonymize``, ``scrub``, ``suppress``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchforge.core.errors import BenchforgeError

DEFAULT_SECRET_ENV = "BENCHFORGE_ANON_SECRET"


class PolicyError(BenchforgeError):
    """A policy is malformed or does not fit its dataset; nothing was written. Each problem is a
    (field path, message) pair; the message names the policy file."""

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  {path}: {msg}" for path, msg in problems)
        super().__init__(f"{source}: invalid anonymization policy\n{lines}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- column rules


class Keep(_Strict):
    """Released unchanged. A column the PII detector flags cannot be kept (see ``allow_pii``)."""

    rule: Literal["keep"] = "keep"
    reason: str | None = Field(default=None, description="Why keeping it is safe (documentation).")
    allow_pii: bool = Field(
        default=False,
        description="Keep a column the PII detector flags (e.g. a public business phone). "
        "Refused for columns the policy itself tags as direct identifiers.",
    )


class Pseudonymize(_Strict):
    """Keyed pseudonym: HMAC-SHA256(secret, canonical value). The same secret and format give the
    same pseudonym in every table, so joins survive. ``preserve`` keeps the value's shape (a
    prefix, the length, digits stay digits, letters stay letters); ``hex`` writes
    ``prefix + length hex digits``. Collisions are resolved deterministically and counted."""

    rule: Literal["pseudonymize"] = "pseudonymize"
    format: Literal["preserve", "hex"] = "preserve"
    keep_prefix: int | Literal["auto"] = Field(
        default="auto",
        description="Characters kept verbatim at the start; 'auto' keeps a leading run of "
        "letters ending in '-' or '_' (ACC-, INV_).",
    )
    length: int = Field(default=24, ge=16, le=64, description="hex format: digits written.")
    case_insensitive: bool = Field(
        default=True,
        description="Pseudonym of upper(trim(value)); the original's case and surrounding "
        "whitespace are re-applied, so drifted keys stay drifted and still normalize to a match.",
    )


FakeProvider = Literal[
    "name",
    "first_name",
    "last_name",
    "company",
    "email",
    "phone_number",
    "street_address",
    "city",
    "postcode",
    "job",
    "user_name",
    "url",
    "ipv4",
    "iban",
    "catch_phrase",
    "sentence",
]


class Fake(_Strict):
    """Replacement from a seeded Faker pool, indexed by HMAC(value) mod pool size: the same
    original value gets the same replacement in every table and every run with the same secret."""

    rule: Literal["fake"] = "fake"
    provider: FakeProvider
    locale: str = "en_US"
    pool_size: int = Field(default=20_000, ge=10, le=1_000_000)
    unique: bool = Field(
        default=False,
        description="Distinct originals get distinct replacements (a short keyed suffix is "
        "added where the pool repeats).",
    )
    case_insensitive: bool = True


class Perturb(_Strict):
    """Numeric perturbation, deterministic under the secret (keyed by the row's primary key, or
    by a hash of the whole original row without one, so duplicated rows stay identical).

    - ``lsd``: least-significant-digit: keeps ``digits`` significant digits, redraws the rest
      (magnitude and ranking kept; works on numbers stored as text, keeping their format);
    - ``noise``: x + N(0, scale * sd) with sd the column's (or group's) standard deviation;
    - ``rank_swap``: values trade places with neighbours at most ``window_pct`` % of the ranks
      away; the top and bottom ``extremes_pct`` % only swap among themselves;
    - ``quantile``: Gaussian noise on the normal scores of the ranks, values reassigned in the
      new order: the marginal distribution is kept exactly.
    ``group_by`` applies the method within groups (sd, ranks) so sub-group distributions hold.
    Results are clamped to ``min``/``max`` when given and rounded to the column's type."""

    rule: Literal["perturb"] = "perturb"
    method: Literal["lsd", "noise", "rank_swap", "quantile"]
    digits: int = Field(default=3, ge=1, le=15, description="lsd: significant digits kept.")
    scale: float = Field(default=0.05, gt=0, le=3, description="noise / quantile: noise level.")
    window_pct: float = Field(default=2.0, gt=0, le=50, description="rank_swap: max rank move.")
    extremes_pct: float = Field(default=5.0, ge=0, lt=50, description="rank_swap: grouped tails.")
    group_by: list[str] = Field(default_factory=list)
    min: float | None = None
    max: float | None = None
    key: list[str] = Field(
        default_factory=list,
        description="Columns of the table whose canonical values (upper(trim())) key the "
        "random draw instead of the primary key (a hash of the whole original row without one).",
    )
    min_relative_change: float = Field(
        default=0.0,
        ge=0,
        le=0.5,
        description="lsd only: every non-zero value moves by at least this share of itself "
        "(rounded up to its resolution), in the direction lsd moved it (a keyed side when lsd "
        "left it unchanged: a value with no more than `digits` digits). Without it short values "
        "are released exactly; with it a value may leave its lsd block, so keep it 0 where a "
        "threshold on the leading digits matters.",
    )
    stream: str | None = Field(
        default=None,
        description="lsd only: name of the draw stream (default: the table and column). "
        "Columns sharing a stream and equal key values get the same draw, so a figure copied "
        "into several tables stays equal after perturbation (an opportunity's amount and the "
        "copy on its stage history; an account's revenue and its current history version). A "
        "number stored as text gets exactly the number a numeric column gets, re-rendered in "
        "its text format. Requires key; every column of a stream must have the same digits.",
    )

    @model_validator(mode="after")
    def _stream_needs_key(self) -> Perturb:
        if self.stream is not None and self.method != "lsd":
            raise ValueError(
                "stream works with method lsd only (other methods depend on the "
                "whole column, so a shared draw would not give equal values)"
            )
        if self.stream is not None and not self.key:
            raise ValueError("stream needs key: the columns that identify the shared figure")
        if self.min_relative_change and self.method != "lsd":
            raise ValueError("min_relative_change works with method lsd only")
        return self


TimeUnit = Literal["minute", "hour", "day", "week", "month"]


class ShiftDates(_Strict):
    """Every date of one entity moves by the same keyed offset in [-max_days, max_days]
    (intervals inside an entity unchanged); ``whole_weeks`` keeps weekdays. ``coarsen``
    truncates the shifted value to the unit (order kept, ties allowed); ``max_days: 0`` with
    ``coarsen`` only truncates."""

    rule: Literal["shift_dates"] = "shift_dates"
    entity: str = Field(description="Column of the same table naming the entity (a key).")
    max_days: int = Field(default=28, ge=0, le=3650)
    whole_weeks: bool = True
    coarsen: TimeUnit | None = Field(
        default=None, description="Truncate the shifted value to this unit (date_trunc)."
    )
    direction: Literal["both", "later", "earlier"] = Field(
        default="both",
        description="later: offsets in [1, max_days] only, so no date moves before a fixed "
        "date it followed (a lead never predates its campaign's start); earlier: offsets in "
        "[-max_days, -1] only, so no date moves past a cut-off it preceded (an activity before "
        "a snapshot stays before it).",
    )
    boundary: datetime | None = Field(
        default=None,
        description="An instant rows stay on their side of (a snapshot's end): a row whose "
        "boundary_column would cross it moves by the opposite offset instead, every shifted "
        "column of the row alike, so its intervals are kept.",
    )
    boundary_column: str | None = Field(
        default=None, description="The column of the row compared with boundary."
    )

    @model_validator(mode="after")
    def _shift_or_coarsen(self) -> ShiftDates:
        if self.max_days == 0 and self.coarsen is None:
            raise ValueError("max_days 0 shifts nothing: give coarsen, or a max_days above 0")
        if (self.boundary is None) != (self.boundary_column is None):
            raise ValueError("boundary and boundary_column go together")
        if self.boundary is not None and self.max_days == 0:
            raise ValueError("boundary needs a shift (max_days above 0)")
        return self


class FrequencyFloor(_Strict):
    """A categorical value (a job title) shared by fewer than ``min_count`` rows, counted within
    each combination of the ``within`` columns, is released as its family, or as ``other`` when
    the family's rare rows are fewer than ``min_count`` too. The family is ``families[value]``
    when listed (a role hierarchy), else the head noun of the title (``head_noun``: the last word
    before a comma, parentheses dropped: 'Civil engineer, contracting' -> 'Engineer'), else
    none. So every released class but ``other`` holds at least ``min_count`` rows within its
    group. NULL stays NULL."""

    rule: Literal["frequency_floor"] = "frequency_floor"
    min_count: int = Field(ge=2, le=1_000_000)
    family: Literal["head_noun", "none"] = "head_noun"
    families: dict[str, str] = Field(
        default_factory=dict, description="value -> family (wins over the head noun)."
    )
    within: list[str] = Field(
        default_factory=list,
        description="Columns of the same table the attacker would combine with this one: the "
        "floor counts rows within each of their combinations.",
    )
    other: str = "Other"


class Swap(_Strict):
    """Data swapping: the column's values are exchanged among the rows of each stratum (rows
    with equal ``within`` values, taken from the source). The stratum's rows are ordered by a
    keyed hash and each takes the value of the next, so every stratum keeps its multiset of
    values exactly (the column's distribution and its joint distribution with ``within`` are
    unchanged) while which row holds which value follows the secret. Use it on a categorical or
    key column that singles out rows with other kept columns and that the benchmark needs by
    its distribution, not by the row it sits on."""

    rule: Literal["swap"] = "swap"
    within: list[str] = Field(
        default_factory=list,
        description="Columns of the same table whose joint distribution with this one is kept "
        "(the values move only among rows with equal values of these).",
    )
    group: str | None = Field(
        default=None,
        description="Columns whose swap names the same group take their values from the same "
        "other row (a country and its time zone stay together); they must share within.",
    )


class Generalize(_Strict):
    """A quasi-identifier coarsened level by level until the table reaches the policy's k;
    rows still in smaller classes are suppressed (their quasi-identifiers set to NULL).

    - ``numeric``: bins of ``base_width`` doubling per level (values become the bin's lower edge);
    - ``date``: month, quarter, year (values become the period's first day);
    - ``prefix``: strings truncated by one more character per level, padded with ``*``;
    - ``hierarchy``: ``levels`` maps each value to its ancestor, one mapping per level."""

    rule: Literal["generalize"] = "generalize"
    hierarchy: Literal["numeric", "date", "prefix", "hierarchy"]
    base_width: float | None = Field(default=None, gt=0)
    levels: list[dict[str, str]] = Field(default_factory=list)
    max_level: int = Field(default=4, ge=1, le=16)


PatternKind = Literal["email", "phone", "iban", "card", "ipv4", "url"]
ALL_PATTERNS: tuple[PatternKind, ...] = ("email", "phone", "iban", "card", "ipv4", "url")


class Scrub(_Strict):
    """Free text: pattern recognizers (emails, phones, IBANs, card numbers passing Luhn, IPs,
    URLs) plus a deny-list of every identifier value the policy replaces elsewhere, so a name or
    code re-embedded in text is replaced by its pseudonym or fake without an NER model."""

    rule: Literal["scrub"] = "scrub"
    patterns: list[PatternKind] = Field(default_factory=lambda: list(ALL_PATTERNS))
    deny_list: bool = True


class Derive(_Strict):
    """Recomputed from the row's released columns (a DuckDB SQL expression), so an identity such
    as ``total_price = quantity * unit_price`` still holds after perturbation."""

    rule: Literal["derive"] = "derive"
    sql: str


class Suppress(_Strict):
    """Released as NULL."""

    rule: Literal["suppress"] = "suppress"


ColumnRule = Annotated[
    Keep
    | Pseudonymize
    | Fake
    | Perturb
    | ShiftDates
    | FrequencyFloor
    | Swap
    | Generalize
    | Scrub
    | Derive
    | Suppress,
    Field(discriminator="rule"),
]
RULE_NAMES = (
    "keep",
    "pseudonymize",
    "fake",
    "perturb",
    "shift_dates",
    "frequency_floor",
    "swap",
    "generalize",
    "scrub",
    "derive",
    "suppress",
)
# A column whose values are replaced by this rule is a source of deny-list identifiers.
IDENTIFIER_RULES = ("pseudonymize", "fake")


class Column(_Strict):
    """A column's rule and tags. ``pii: direct`` marks a direct identifier: it must be replaced
    (pseudonymize / fake / suppress / scrub) and its original values are searched for in the
    whole release (the verbatim leak count)."""

    rule: ColumnRule
    pii: Literal["direct", "quasi", "sensitive", "none"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # `email: pseudonymize`, `email: {rule: fake, provider: email, pii: direct}`
        if isinstance(data, str):
            return {"rule": {"rule": data}}
        if isinstance(data, dict) and "rule" in data and not isinstance(data["rule"], dict):
            data = dict(data)
            pii = data.pop("pii", None)
            out: dict[str, Any] = {"rule": data}
            if pii is not None:
                out["pii"] = pii
            return out
        return data


class AggregateOf(_Strict):
    """A table of aggregates over a detail table (DataClawBench's cross-domain consistency).
    ``sql`` is a query over the *source* schema's tables returning ``key`` columns and one column
    per entry of ``columns``; it is run on the original and on the release, and each aggregate
    column becomes ``mode``:

    - ``delta`` (default): original aggregate + (release detail sum - original detail sum), so
      any discrepancy the original had (disclosure lags, rounding) is kept exactly;
    - ``replace``: the value the query gives on the release."""

    sql: str
    key: list[str] = Field(min_length=1)
    columns: list[str] = Field(min_length=1)
    mode: Literal["delta", "replace"] = "delta"
    tolerance: float = Field(default=1e-6, ge=0, description="Relative; for the check.")


class CompositeIdentifier(_Strict):
    """Columns that together are a direct identifier (first + last name): their joined original
    values join the deny-list and the leak count, and text mentions are replaced by the joined
    replacements."""

    columns: list[str] = Field(min_length=2)
    separator: str = " "


class Table(_Strict):
    primary_key: list[str] = Field(default_factory=list)
    foreign_keys: dict[str, str] = Field(
        default_factory=dict, description="column -> 'table.column' it references."
    )
    columns: dict[str, Column]
    identifiers: list[CompositeIdentifier] = Field(default_factory=list)
    checks: list[str] = Field(
        default_factory=list,
        description="Row constraints (DuckDB boolean SQL over the table's columns) that hold on "
        "the source and must hold on the release (e.g. 'close_date >= created_at::date').",
    )
    aggregate_of: AggregateOf | None = None

    def swap_group(self, column: str) -> list[str]:
        """The columns swapped together with ``column`` (itself included), in table order."""
        rule = self.columns[column].rule
        if not isinstance(rule, Swap) or rule.group is None:
            return [column]
        return [
            c
            for c, col in self.columns.items()
            if isinstance(col.rule, Swap) and col.rule.group == rule.group
        ]

    @field_validator("primary_key", mode="before")
    @classmethod
    def _one_key(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class QuasiIdentifiers(_Strict):
    """Quasi-identifiers of one table for k-anonymity, and sensitive columns for l-diversity."""

    columns: list[str] = Field(min_length=1)
    sensitive: list[str] = Field(default_factory=list)
    k: int = Field(default=5, ge=2)
    l: int = Field(default=2, ge=1)  # noqa: E741 -- the l of l-diversity
    suppression_budget: float = Field(default=0.02, ge=0, le=0.5)


class Linkage(_Strict):
    """What an attacker is assumed to know about a record (the original values of these
    columns); the report measures how often the nearest released record is its own."""

    table: str
    known: list[str] = Field(min_length=1)
    secret: str | None = Field(default=None, description="Column an inference attack guesses.")


class Reidentification(_Strict):
    """How the report searches the kept columns (released unchanged or within ``tolerance``) for
    combinations that re-identify rows (anonymize/report/reident.py); the worst one is gated by
    ``thresholds.max_reidentification_rate``."""

    max_columns: int = Field(default=3, ge=1, le=5, description="Largest combination tried.")
    tolerance: float = Field(
        default=0.005,
        ge=0,
        le=0.5,
        description="Relative: a released number within this share of the original matches it "
        "(what an attacker allows for a near-unchanged amount).",
    )
    max_combinations: int = Field(
        default=300, ge=1, le=10_000, description="Combinations measured per table, at most."
    )
    report_only: dict[str, str] = Field(
        default_factory=dict,
        description="table -> why its combinations are reported but do not refuse the release "
        "(e.g. rows that describe no person). The reason is shown in the verdict.",
    )


class Thresholds(_Strict):
    """A release below any of these is refused (the flow fails and publishes nothing)."""

    max_leaked_identifiers: int = 0
    max_pseudonym_collisions: int = 0
    min_referential_integrity: float = 1.0
    min_join_count_ratio: float = 1.0
    min_ks_complement: float = 0.95
    min_tv_complement: float = 0.95
    min_correlation_similarity: float = 0.90
    max_median_relative_error: float = 0.05
    max_p95_relative_error: float = 0.25
    min_group_coverage: float = 0.95
    max_linkage_rate: float = 0.25
    max_attack_risk: float = 0.5
    max_reidentification_rate: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="Highest share of a table's sampled released rows that an attacker knowing "
        "the original values of some kept columns (found by the report's search over "
        "combinations of kept columns, not only the declared quasi-identifiers) links to "
        "exactly one source row, its own. See the policy's reidentification section.",
    )
    require_k: bool = True
    require_benchmark: bool = True


class Policy(_Strict):
    """An anonymization policy for one dataset (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="AnonymizationPolicy")

    domain: str = Field(description="The dataset's domain; checked against its dataset.json.")
    version: str = "1"
    description: str = ""
    secret_env: str = Field(
        default=DEFAULT_SECRET_ENV, description="Environment variable holding the HMAC secret."
    )
    faker_seed: int = Field(default=0, description="Seed of the replacement pools.")
    tables: dict[str, Table] = Field(min_length=1)
    quasi_identifiers: dict[str, QuasiIdentifiers] = Field(default_factory=dict)
    linkage: list[Linkage] = Field(default_factory=list)
    reidentification: Reidentification = Field(default_factory=Reidentification)
    thresholds: Thresholds = Field(default_factory=Thresholds)

    def columns_with(self, rule: str) -> list[tuple[str, str, Column]]:
        return [
            (t, c, col)
            for t, table in self.tables.items()
            for c, col in table.columns.items()
            if col.rule.rule == rule
        ]
