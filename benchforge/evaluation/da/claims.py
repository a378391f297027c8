"""Claims: the data-dependent words of a ``da_open`` report (comparisons, rankings, directions),
picked by code from values computed by SQL, so that a reference or baseline prepared on any seed
agrees with its own numbers.

A template cites a claim like an anchor, ``{{name}}``; ``task.yaml`` says what it states:

    claims:
      partner_vs_outbound:                        # "partner programmes return {{...}} outbound"
        compare: [partner_multiple, outbound_multiple]
        words: {greater: above, less: below, equal: level with}
      bookings_direction:
        compare: [bookings_2024, bookings_2023]
        words: {greater: rose, less: fell}
      strongest_quarter:                          # terms that are no anchor: columns of ``sql``
        sql: >-
          select sum(amount) filter (where quarter(close_date) = 1) as q1, ...
                 sum(amount) filter (where quarter(close_date) = 4) as q4
          from fct_opportunities where is_won and year(close_date) = 2024
        rank: {q1: the first quarter, q2: the second quarter, q3: the third, q4: the fourth}
        text: "{1}"                               # the labels by value, highest first

The structured statement (``compare`` or ``rank`` over named values) is what picks the words,
so the text cannot say something its statement does not; what stays to check on each dataset
(:func:`claim_problems`) is what the reader sees: that the anchors' values *as the report
prints them* do not contradict the words (two multiples both shown as 1.23x under "above"), and
which claims rest on a near tie. Fixed comparative words outside claims are found without data
(:func:`fixed_comparatives`, a load-time check of the templates).

Terms are anchor names, columns of the claim's own ``sql`` (one row; a value that is not worth
an anchor of its own), columns of another claim's SQL as ``claim.column`` (one query serving
several claims), or numbers (``compare: [win_rate_all, 50]``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Literal

import duckdb
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchforge.evaluation.judges.models import ANCHOR_PLACEHOLDER, AnchorValue

CompareOutcome = Literal["greater", "less", "equal"]
Term = str | float

# Words that compare, rank or give a direction: in a template they are data-dependent unless a
# claim renders them or the phrase around them is listed as data-independent (``fixed_phrases``).
COMPARATIVES: tuple[str, ...] = (
    "above",
    "below",
    "higher",
    "highest",
    "lower",
    "lowest",
    "more",
    "most",
    "less",
    "least",
    "fewer",
    "fewest",
    "larger",
    "largest",
    "smaller",
    "smallest",
    "bigger",
    "biggest",
    "greater",
    "greatest",
    "better",
    "best",
    "worse",
    "worst",
    "stronger",
    "strongest",
    "weaker",
    "weakest",
    "ahead",
    "behind",
    "exceed",
    "exceeds",
    "exceeded",
    "exceeding",
    "outperform",
    "outperforms",
    "outperformed",
    "underperform",
    "underperforms",
    "beat",
    "beats",
    "trail",
    "trails",
    "leading",
    "rose",
    "rise",
    "rises",
    "risen",
    "rising",
    "fell",
    "fall",
    "falls",
    "fallen",
    "falling",
    "grew",
    "grow",
    "grows",
    "grown",
    "growing",
    "growth",
    "decline",
    "declined",
    "declines",
    "declining",
    "increase",
    "increased",
    "increases",
    "increasing",
    "decrease",
    "decreased",
    "decreases",
    "decreasing",
    "drop",
    "dropped",
    "drops",
    "dominate",
    "dominates",
    "dominated",
    "dominant",
    "peak",
    "peaks",
    "peaked",
    "majority",
    "minority",
    "half",
    "twice",
    "double",
    "doubled",
    "only",
    "just",
    "mainly",
    "mostly",
    "similar",
    "similarly",
    "stable",
)
_COMPARATIVE = re.compile(r"\b(" + "|".join(COMPARATIVES) + r")\b", re.IGNORECASE)
# Idioms that hold a comparative word but compare nothing ("at least one contract").
_IDIOM = re.compile(r"\bat (?:least|most)\b", re.IGNORECASE)
_LABEL_SLOT = re.compile(r"\{(\d+)\}")


class ClaimSpec(BaseModel):
    """A word or phrase of a report that states something about the data, chosen by code:
    ``compare`` two terms (``words`` for greater / less / equal) or ``rank`` several (``text``
    with the labels in order, or ``of`` one term and ``words`` for each position)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    sql: str | None = Field(
        default=None,
        min_length=8,
        description="one row over the task's marts; its columns are terms of this claim",
    )
    compare: list[Term] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="two terms (anchor names, columns of sql, numbers): the first against the "
        "second",
    )
    rank: dict[str, str] | Literal["rows"] | None = Field(
        default=None,
        description="term -> the label the report shows for it, ranked by value; or 'rows': "
        "sql returns rows of (label, value), the labels as the data writes them",
    )
    order: Literal["descending", "ascending"] = Field(
        default="descending", description="rank: descending puts the highest value first"
    )
    of: str | None = Field(
        default=None, description="rank: the term whose position picks the words ('1' first)"
    )
    text: str | None = Field(
        default=None,
        description="rank: the labels in order as {1}, {2}, ... (e.g. '{1}, ahead of {2}')",
    )
    words: dict[str, str] = Field(
        default_factory=dict,
        description="the text for each outcome: compare: greater, less and optionally equal; "
        "rank with 'of': each position '1', '2', ...",
    )
    margin: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="compare: relative difference up to which the terms count as equal (needs "
        "an 'equal' word)",
    )

    @field_validator("words", mode="before")
    @classmethod
    def _keys_as_text(cls, value: object) -> object:
        if isinstance(value, dict):  # YAML reads position keys (1:, 2:) as integers
            return {str(k): v for k, v in value.items()}
        return value

    @field_validator("compare", mode="before")
    @classmethod
    def _no_booleans(cls, value: object) -> object:
        if isinstance(value, list) and any(isinstance(v, bool) for v in value):
            raise ValueError("a term is an anchor name, a column of sql or a number")
        return value

    @model_validator(mode="after")
    def _one_statement(self) -> ClaimSpec:
        if (self.compare is None) == (self.rank is None):
            raise ValueError("a claim states exactly one of 'compare' or 'rank'")
        if self.compare is not None:
            self._check_compare()
        else:
            self._check_rank()
        return self

    def _check_compare(self) -> None:
        if self.text is not None or self.of is not None or self.order != "descending":
            raise ValueError("'text', 'of' and 'order' belong to 'rank' claims")
        allowed = {"greater", "less", "equal"}
        unknown = sorted(set(self.words) - allowed)
        if unknown:
            raise ValueError(f"compare words are greater, less, equal; not {', '.join(unknown)}")
        missing = [k for k in ("greater", "less") if k not in self.words]
        if missing:
            raise ValueError(f"compare needs words for {' and '.join(missing)}")
        if self.margin > 0 and "equal" not in self.words:
            raise ValueError("a margin needs an 'equal' word")
        if self.compare is not None and all(not isinstance(t, str) for t in self.compare):
            raise ValueError("compare needs at least one term that is not a number")

    def _check_rank(self) -> None:
        assert self.rank is not None
        if self.margin:
            raise ValueError("'margin' belongs to 'compare' claims")
        if (self.text is None) == (self.of is None):
            raise ValueError("a rank claim has either 'text' (the labels in order) or 'of'")
        if self.rank == "rows":
            if self.sql is None or self.text is None:
                raise ValueError("rank: rows needs sql (rows of label, value) and a text")
            if not _LABEL_SLOT.findall(self.text):
                raise ValueError("text places labels as {1}, {2}, ...")
            if self.words:
                raise ValueError("'words' go with 'of'; 'text' shows the labels themselves")
            return
        n = len(self.rank)
        if n < 2:
            raise ValueError("rank needs at least two terms")
        if self.text is not None:
            if self.words:
                raise ValueError("'words' go with 'of'; 'text' shows the labels themselves")
            slots = {int(s) for s in _LABEL_SLOT.findall(self.text)}
            if not slots or not slots <= set(range(1, n + 1)):
                raise ValueError(f"text places labels as {{1}} to {{{n}}}")
        else:
            if self.of not in self.rank:
                raise ValueError(f"'of' names {self.of!r}, which is not a ranked term")
            want = {str(i) for i in range(1, n + 1)}
            if set(self.words) != want:
                raise ValueError(f"words give the text for each position {', '.join(sorted(want))}")

    def terms(self) -> list[str]:
        """The named terms (anchors or columns of ``sql``) this claim reads."""
        if self.compare is not None:
            return [t for t in self.compare if isinstance(t, str)]
        return [] if self.rank == "rows" else list(self.rank or {})

    def outcomes(self) -> list[str]:
        """Every outcome this claim can have (for a ``text`` rank: the single 'order')."""
        if self.compare is not None:
            return [k for k in ("greater", "less", "equal") if k in self.words]
        if self.text is not None:
            return ["order"]
        return sorted(self.words, key=int)


class ClaimValue(BaseModel):
    """A claim on one dataset: the values of its terms, the outcome and the text it renders."""

    model_config = ConfigDict(frozen=True)

    name: str
    outcome: str = Field(description="greater / less / equal, a position, or 'order'")
    text: str
    values: dict[str, float] = Field(description="term -> value (numbers as themselves)")
    order: list[str] = Field(default_factory=list, description="rank: the terms in order")


class ClaimError(ValueError):
    """A claim that cannot be evaluated on this dataset: ``field`` under ``claims.<name>``."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


# --------------------------------------------------------------------------- evaluation


def decide(claim: ClaimSpec, name: str, values: Mapping[str, float]) -> ClaimValue:
    """The outcome and text of ``claim`` for the values of its terms (``values`` maps every term
    name; numbers in ``compare`` stand for themselves)."""
    if claim.compare is not None:
        a, b = (_term_value(t, values) for t in claim.compare)
        outcome = compare_outcome(a, b, claim.margin, "equal" in claim.words)
        used = {_term_key(t): _term_value(t, values) for t in claim.compare}
        return ClaimValue(name=name, outcome=outcome, text=claim.words[outcome], values=used)
    assert claim.rank is not None
    order = ranked(claim, values)
    used = dict(values) if claim.rank == "rows" else {t: values[t] for t in claim.rank}
    if claim.text is not None:
        labels = [t if claim.rank == "rows" else claim.rank[t] for t in order]
        text = _place(claim.text, labels)
        return ClaimValue(name=name, outcome="order", text=text, values=used, order=order)
    assert claim.of is not None
    position = str(order.index(claim.of) + 1)
    return ClaimValue(
        name=name, outcome=position, text=claim.words[position], values=used, order=order
    )


def compare_outcome(a: float, b: float, margin: float, has_equal: bool) -> CompareOutcome:
    """``greater`` / ``less`` / ``equal``: equal only when the claim has an equal word and the
    two differ by at most ``margin`` of the larger magnitude (or not at all)."""
    if has_equal and abs(a - b) <= margin * max(abs(a), abs(b)):
        return "equal"
    return "greater" if a > b else "less"


def ranked(claim: ClaimSpec, values: Mapping[str, float]) -> list[str]:
    """The ranked terms in the claim's order (ties keep the order they are listed in; for
    ``rows``, the order of the SQL's rows)."""
    assert claim.rank is not None
    sign = -1.0 if claim.order == "descending" else 1.0
    listed = list(values) if claim.rank == "rows" else list(claim.rank)
    return sorted(listed, key=lambda t: (sign * values[t], listed.index(t)))


def evaluate_claims(
    claims: Mapping[str, ClaimSpec],
    anchors: Mapping[str, AnchorValue],
    db_path: Path,
) -> dict[str, ClaimValue]:
    """Every claim decided on the analysis database at ``db_path`` (each claim's own ``sql``
    run read-only there, once) and the anchors' values. A failure is a :class:`ClaimError`
    naming the claim's field; the caller turns it into an error naming the task file."""
    if not claims:
        return {}
    tables: dict[str, dict[str, object]] = {}
    rows: dict[str, dict[str, float]] = {}
    if any(c.sql for c in claims.values()):
        con = duckdb.connect(str(db_path), read_only=True)
        try:
            for name, claim in claims.items():
                if claim.rank == "rows":
                    rows[name] = _run_rows(con, name, claim)
                elif claim.sql is not None:
                    tables[name] = _run(con, name, claim.sql)
        finally:
            con.close()
    out: dict[str, ClaimValue] = {}
    for name, claim in claims.items():
        values = rows[name] if name in rows else term_values(name, claim, anchors, tables)
        out[name] = decide(claim, name, values)
    return out


def term_values(
    name: str,
    claim: ClaimSpec,
    anchors: Mapping[str, AnchorValue],
    tables: Mapping[str, Mapping[str, object]],
) -> dict[str, float]:
    """Each named term's value: ``other.column`` a column of claim ``other``'s SQL; a bare
    name a column of the claim's own SQL, else an anchor's number."""
    own = tables.get(name, {})
    out: dict[str, float] = {}
    for term in claim.terms():
        if "." in term:
            other, column = term.split(".", 1)
            if column not in tables.get(other, {}):
                raise ClaimError(
                    f"claims.{name}", f"term {term!r}: claim {other!r} has no SQL column {column!r}"
                )
            out[term] = _number(f"claims.{other}.sql", column, tables[other][column])
            continue
        if term in own and term in anchors:
            raise ClaimError(
                f"claims.{name}.sql", f"column {term!r} has the name of an anchor: rename it"
            )
        if term in own:
            out[term] = _number(f"claims.{name}.sql", term, own[term])
            continue
        anchor = anchors.get(term)
        if anchor is None:
            where = f" (its columns: {', '.join(own)})" if claim.sql else ""
            raise ClaimError(
                f"claims.{name}",
                f"term {term!r} is neither an anchor nor a column of the claim's SQL{where}",
            )
        if isinstance(anchor.value, str):
            raise ClaimError(f"claims.{name}", f"anchor {term!r} is text, not a number")
        out[term] = float(anchor.value)
    return out


def _run(con: duckdb.DuckDBPyConnection, name: str, sql: str) -> dict[str, object]:
    """column -> value of the one row ``sql`` returns."""
    field = f"claims.{name}.sql"
    try:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description or []]
        rows = cursor.fetchmany(2)
    except duckdb.Error as err:
        text = str(err).strip()
        raise ClaimError(field, f"SQL failed: {text.splitlines()[0] if text else err}") from None
    if len(rows) != 1:
        got = "no row" if not rows else "more than one row"
        raise ClaimError(field, f"SQL must return exactly one row, got {got}")
    return dict(zip(columns, rows[0], strict=True))


def _number(field: str, column: str, raw: object) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float | Decimal):
        raise ClaimError(field, f"column {column!r} is {raw!r}, not a number")
    value = float(raw)
    if not math.isfinite(value):
        raise ClaimError(field, f"column {column!r} is {value}")
    return value


def _run_rows(con: duckdb.DuckDBPyConnection, name: str, claim: ClaimSpec) -> dict[str, float]:
    """label -> value from the rows of a ``rank: rows`` claim's SQL (at least as many rows as
    its text places labels)."""
    assert claim.sql is not None and claim.text is not None
    field = f"claims.{name}.sql"
    try:
        cursor = con.execute(claim.sql)
        width = len(cursor.description or [])
        rows = cursor.fetchall()
    except duckdb.Error as err:
        text = str(err).strip()
        raise ClaimError(field, f"SQL failed: {text.splitlines()[0] if text else err}") from None
    if width != 2:
        raise ClaimError(field, f"rank: rows needs two columns (label, value), got {width}")
    out: dict[str, float] = {}
    for label, raw in rows:
        if label is None or str(label) in out:
            raise ClaimError(field, f"labels must be distinct and not null, got {label!r}")
        out[str(label)] = _number(field, str(label), raw)
    need = max(int(s) for s in _LABEL_SLOT.findall(claim.text))
    if len(out) < need:
        raise ClaimError(field, f"the text places {need} labels, the SQL returns {len(out)} rows")
    return out


def _term_value(term: Term, values: Mapping[str, float]) -> float:
    return values[term] if isinstance(term, str) else float(term)


def _term_key(term: Term) -> str:
    return term if isinstance(term, str) else f"{term:g}"


def variants(claim: ClaimSpec) -> dict[str, str]:
    """Every text ``claim`` can render, by outcome, without data: a compare's words and a
    rank's words per position in the order they are written (authors write the outcome the
    task's own dataset gives first), a rank text with its labels in listed and in reversed
    order (a ``rows`` rank: made-up labels). What a template must read well with, whatever the
    data; the data-free checks read a reference with the first text of each claim."""
    if claim.compare is not None or claim.of is not None:
        return dict(claim.words)  # as authored: the outcome the task's own data gives first
    assert claim.text is not None and claim.rank is not None
    if claim.rank == "rows":
        n = max(int(s) for s in _LABEL_SLOT.findall(claim.text))
        labels = [f"label {i}" for i in range(1, n + 1)]
    else:
        labels = list(claim.rank.values())
    return {"listed": _place(claim.text, labels), "reversed": _place(claim.text, labels[::-1])}


def _place(text: str, labels: list[str]) -> str:
    """``text`` with ``{i}`` replaced by the i-th label (1-based)."""
    return _LABEL_SLOT.sub(lambda m: labels[int(m.group(1)) - 1], text)


# --------------------------------------------------------------------------- checks


def claim_problems(
    claims: Mapping[str, ClaimSpec],
    decided: Mapping[str, ClaimValue],
    anchors: Mapping[str, AnchorValue],
    shown: Mapping[str, float] | None = None,
) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the decided claims on one dataset.

    Problems: a claim whose outcome is not the one its values give (recomputed here), a strict
    comparison of two anchors that the report prints as the same number, or an order the
    printed numbers contradict. Warnings: a strict comparison whose terms lie within their
    anchors' tolerance of each other (a report stating both values correctly could show them
    either way). ``shown`` maps an anchor to the number its text prints (default: parsed from
    the anchor's text)."""
    from benchforge.evaluation.judges.evidence import extract_numbers

    printed: dict[str, float] = {}
    for name, anchor in anchors.items():
        if shown is not None and name in shown:
            printed[name] = shown[name]
            continue
        numbers = extract_numbers(anchor.text) if not isinstance(anchor.value, str) else []
        if len(numbers) == 1:
            printed[name] = numbers[0]
    problems: list[str] = []
    warnings: list[str] = []
    for name, claim in claims.items():
        value = decided.get(name)
        if value is None:
            problems.append(f"claims.{name}: not rendered")
            continue
        again = decide(claim, name, value.values)
        if (again.outcome, again.text) != (value.outcome, value.text):
            problems.append(
                f"claims.{name}: renders {value.text!r} ({value.outcome}) but its values "
                f"{_values(value.values)} give {again.text!r} ({again.outcome})"
            )
        pairs = _stated_pairs(claim, value)  # (higher, lower) as the text states them
        for hi, lo in pairs:
            tol = max(_tolerance(anchors, hi), _tolerance(anchors, lo))
            a, b = value.values[hi], value.values[lo]
            if a == b:
                problems.append(
                    f"claims.{name}: says {value.text!r}, ranking {hi} above {lo}, but both are "
                    f"{a:g}"
                )
            elif hi in printed and lo in printed and printed[hi] <= printed[lo]:
                problems.append(
                    f"claims.{name}: says {value.text!r}, ranking {hi} above {lo}, but the "
                    f"report prints them as {anchors[hi].text} and {anchors[lo].text}"
                )
            elif tol > 0 and abs(a - b) <= tol * max(abs(a), abs(b)):
                warnings.append(
                    f"claims.{name}: {hi} = {a:g} and {lo} = {b:g} are within tolerance "
                    f"{tol:g} of each other; {value.text!r} rests on a near tie"
                )
    return problems, warnings


def _stated_pairs(claim: ClaimSpec, value: ClaimValue) -> list[tuple[str, str]]:
    """(higher, lower) for every ordering the rendered text states: a compare its outcome
    (none when equal); a rank text each label it shows above every term ranked after it; a
    rank ``of`` its term against every other."""
    if claim.compare is not None:
        a, b = (_term_key(t) for t in claim.compare)
        if value.outcome == "equal":
            return []
        return [(a, b)] if value.outcome == "greater" else [(b, a)]
    order = value.order
    if claim.text is not None:
        named = sorted({int(s) - 1 for s in _LABEL_SLOT.findall(claim.text)})
        before = [(order[p], order[q]) for p in named for q in range(p + 1, len(order))]
    else:
        assert claim.of is not None
        i = order.index(claim.of)
        before = [(order[j], claim.of) for j in range(i)]
        before += [(claim.of, order[j]) for j in range(i + 1, len(order))]
    if claim.order == "ascending":
        return [(second, first) for first, second in before]
    return before


def _tolerance(anchors: Mapping[str, AnchorValue], term: str) -> float:
    anchor = anchors.get(term)
    return anchor.tolerance if anchor is not None else 0.0


def _values(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in values.items())


# --------------------------------------------------------------------------- fixed wording


def fixed_comparatives(template: str, allowed: list[str]) -> list[tuple[int, str, str]]:
    """(line number, word, line) of every comparative word in the fixed text of ``template``:
    outside ``{{placeholders}}``, the idioms "at least" and "at most", and the phrases listed as
    data-independent."""
    found: list[tuple[int, str, str]] = []
    for number, line in enumerate(template.splitlines(), start=1):
        masked = ANCHOR_PLACEHOLDER.sub(lambda m: " " * len(m.group(0)), line)
        masked = _IDIOM.sub(lambda m: " " * len(m.group(0)), masked)
        for phrase in allowed:
            masked = _mask_phrase(masked, phrase)
        for match in _COMPARATIVE.finditer(masked):
            found.append((number, match.group(1), line.strip()))
    return found


def _mask_phrase(line: str, phrase: str) -> str:
    pattern = re.compile(re.escape(phrase), re.IGNORECASE)
    return pattern.sub(lambda m: " " * len(m.group(0)), line)


def comparative_words(text: str) -> list[str]:
    """The comparative words of ``text`` (lowercase), in order."""
    return [m.group(1).lower() for m in _COMPARATIVE.finditer(text)]
