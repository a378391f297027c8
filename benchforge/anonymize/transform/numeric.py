"""Numeric perturbation, deterministic under the secret.

Every draw is keyed by the row's noise key (the canonical values of the rule's ``key`` columns,
else of the primary key, else a hash of the whole row; see
:func:`benchforge.anonymize.transform.sql.row_key_sql`) and a salt per draw stream (the rule's
``stream``, else the table and column), so exact duplicate rows stay identical, a figure copied
into another table with the same stream and key gets the same draw, and a rerun gives the same
release. NULLs stay NULL.

- ``lsd``: the value's first ``digits`` significant digits are kept and the lower digits are
  redrawn uniformly, at the value's own resolution: integers stay integers, a DECIMAL keeps its
  scale, a DOUBLE keeps the number of decimals it has (``12.5`` stays one decimal; a value with
  more than 9 decimals is redrawn in floating point). So ``|x' - x| < 10^(e - digits + 1)``,
  sign, magnitude and digit count are kept and outliers stay outliers. Numbers stored as text
  (``'1,234,567.00'``, ``'523.40 USD'``, ``'12 345'``): the first number in the string (digits
  with ``,`` ``.`` space or ``'`` between them; ``.`` is the decimal point; a ``-`` before it is
  the sign) is parsed, perturbed exactly as a DOUBLE column with the same draw would be (so
  ``'349,224.00'`` and ``349224.0`` in one stream stay equal), and written back in the text's
  format: prefix, suffix, decimals shown and digit grouping kept. Text without a parsable number
  is left as it is. With ``min_relative_change`` m, a non-zero value lsd moved by less than
  ``m * |x|`` (short values, which plain lsd releases exactly) is moved by ``m * |x|`` rounded
  up to the value's resolution instead, on the side lsd moved it (a keyed side when lsd left it
  unchanged; away from zero when the step would reach zero), so no non-zero value is released
  within ``m`` of itself; such a value may leave its lsd block.
- ``noise``: ``x + N(0, (scale * sd)^2)`` with sd the column's (or the ``group_by`` group's)
  sample standard deviation, rounded back to the value's resolution as above. Clamped to
  ``min`` / ``max``; without ``min``, a column with no negative value is clamped at 0 (an
  amount or a count never turns negative).
- ``rank_swap``: within each group, ranks r of n values; the middle values move to the rank
  order of ``r + U(-w/2, w/2)`` with w = ``window_pct`` % of n (so no value moves more than w
  ranks), the bottom and top ``extremes_pct`` % are shuffled among themselves only.
- ``quantile``: within each group, normal scores of the ranks plus ``N(0, scale^2)``, re-sorted:
  the values are handed out again in the new order (rank correlation with the original stays
  high).

Both rank methods work on *distinct* (noise key, value) pairs, so duplicated rows receive one
value; the released multiset of values equals the source's exactly when no row is duplicated
(with duplicates, it is exact over the distinct pairs). ``min`` / ``max`` do not apply to them:
they only hand out source values.
"""

from __future__ import annotations

import duckdb

from benchforge.anonymize.policy.models import Perturb
from benchforge.anonymize.transform.sql import (
    KEY,
    SRC,
    ColumnSQL,
    TransformError,
    bind,
    col,
    decimal_scale,
    integer_max,
    is_integer,
    is_numeric,
    is_text,
    normal_sql,
    qi,
    row_key_sql,
    uniform_sql,
)

# '-1,234.50 USD' -> pre '-', num '1,234.50', post ' USD'
_TEXT_NUMBER = r"^([^0-9]*)([0-9](?:[0-9., ']*[0-9])?)(.*)$"
_TEXT_NUMBER_SQL = _TEXT_NUMBER.replace("'", "''")

_MACROS = [
    # 10^k (0 <= k <= 38: every power a HUGEINT holds) looked up, not cast from a string (~5x)
    "anon_pow10(k) AS ("
    + "["
    + ", ".join(f"{10**k}::HUGEINT" for k in range(39))
    + "]"
    + ")[(k)::BIGINT + 1]",
    # keep the first `digits` digits of the non-negative integer n, redraw the rest from u
    """anon_lsd_n(n, digits, u) AS CASE WHEN length((n)::VARCHAR) <= digits THEN n
        ELSE n - n % anon_pow10(length((n)::VARCHAR) - digits)
             + least(floor(u * anon_pow10(length((n)::VARCHAR) - digits)::DOUBLE)::HUGEINT,
                     anon_pow10(length((n)::VARCHAR) - digits) - 1) END""",
    # the same on a BIGINT n (< 10^17 here): 64-bit arithmetic, ~2x faster than HUGEINT; every
    # power of ten it takes is an exact DOUBLE, so the draw is the one anon_lsd_n makes
    """anon_lsd_b(n, digits, u) AS CASE WHEN length((n)::VARCHAR) <= digits THEN n
        ELSE n - n % (10 ** (length((n)::VARCHAR) - digits))::BIGINT
             + least(floor(u * 10 ** (length((n)::VARCHAR) - digits))::BIGINT,
                     (10 ** (length((n)::VARCHAR) - digits))::BIGINT - 1) END""",
    # decimals a DOUBLE value has (0..9), NULL when it has more
    "anon_decimals(x) AS CASE "
    + " ".join(f"WHEN x = round(x, {d}) THEN {d}" for d in range(10))
    + " ELSE NULL END",
    # numbers stored as text: decimals shown, digit-grouping character, formatting
    "anon_num_decimals(body) AS CASE WHEN strpos(body, '.') > 0 "
    "THEN strpos(reverse(body), '.') - 1 ELSE 0 END",
    """anon_group_char(body) AS CASE WHEN strpos(body, ',') > 0 THEN ','
        WHEN strpos(body, ' ') > 0 THEN ' '
        WHEN strpos(body, chr(39)) > 0 THEN chr(39) ELSE '' END""",
    "anon_format(a, d) AS CASE least(d, 9) "
    + " ".join(f"WHEN {d} THEN format('{{:,.{d}f}}', a)" for d in range(10))
    + " END",
    # inverse standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9)
    """anon_ppf_tail(q) AS (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q
        - 2.400758277161838e+00) * q - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q
        + 2.938163982698783e+00) / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q
        + 2.445134137142996e+00) * q + 3.754408661907416e+00) * q + 1)""",
    """anon_ppf_mid(q, r) AS (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r
        - 2.759285104469687e+02) * r + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r
        + 2.506628277459239e+00) * q / (((((-5.447609879822406e+01 * r + 1.615858368580409e+02)
        * r - 1.556989798598866e+02) * r + 6.680131188771972e+01) * r - 1.328068155288572e+01)
        * r + 1)""",
    """anon_ppf(p) AS CASE WHEN p < 0.02425 THEN anon_ppf_tail(sqrt(-2 * ln(p)))
        WHEN p > 1 - 0.02425 THEN -anon_ppf_tail(sqrt(-2 * ln(1 - p)))
        ELSE anon_ppf_mid(p - 0.5, (p - 0.5) * (p - 0.5)) END""",
]


def install_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create the temporary SQL macros the perturbation expressions use (once per connection)."""
    for macro in _MACROS:
        con.execute(f"CREATE OR REPLACE TEMP MACRO {macro}")


def _resolution_round(expr: str, x: str, type_: str) -> str:
    """Round a perturbed value to the resolution of the original ``x`` and its column type."""
    if is_integer(type_):
        top = integer_max(type_)
        bottom = 0 if type_.startswith("U") else -top - 1
        return f"least(greatest(round({expr}), {bottom}), {top})"
    scale = decimal_scale(type_)
    if scale is not None:
        return f"round({expr}, {scale})"
    dec = f"anon_decimals({x})"
    return f"CASE WHEN {dec} IS NULL THEN {expr} ELSE round({expr}, {dec}) END"


def _clamp(expr: str, low: float | None, high: float | None) -> str:
    if low is not None:
        expr = f"greatest({expr}, {low!r})"
    if high is not None:
        expr = f"least({expr}, {high!r})"
    return expr


def _resolution_of(x: str, type_: str) -> str:
    """Decimals of the value's resolution (NULL: a double with more than 9 decimals)."""
    if is_integer(type_):
        return "0"
    scale = decimal_scale(type_)
    return str(scale) if scale is not None else f"anon_decimals(({x})::DOUBLE)"


def lsd_sql(x: str, type_: str, digits: int, u: str, min_change: float = 0.0) -> str:
    """Least-significant-digit perturbation of a numeric value (see the module docstring)."""
    plain = _plain_lsd_sql(x, type_, digits, u)
    return min_change_sql(x, plain, type_, min_change, u) if min_change else plain


def lsd_lets(
    x: str, type_: str, digits: int, u: str, min_change: float, prefix: str
) -> tuple[list[tuple[str, str]], str]:
    """:func:`lsd_sql` of a numeric column as :attr:`~.sql.ColumnSQL.lets` (named
    ``__<prefix>_*``) and an expression over them: the same values, without the lambdas."""

    def name(stem: str) -> str:
        return f"__{prefix}_{stem}"

    def ref(stem: str) -> str:
        return f"{SRC}.{name(stem)}"

    if is_integer(type_) or decimal_scale(type_) is not None:
        lets = [(name("x"), x)]
        plain = _plain_lsd_body(ref("x"), "", type_, digits, u)
    else:
        lets = [(name("x"), f"({x})::DOUBLE"), (name("d"), f"anon_decimals({ref('x')})")]
        plain = _plain_lsd_body(ref("x"), ref("d"), type_, digits, u)
    if not min_change:
        return lets, plain
    lets += [
        (name("x0"), f"({x})::DOUBLE"),
        (name("y"), f"({plain})::DOUBLE"),
        (name("s"), _min_step(ref("x0"), type_, min_change)),
    ]
    moved = _moved(ref("x0"), ref("y"), u, ref("s"))
    return lets, _min_change_body(ref("x0"), ref("y"), min_change, moved)


def _min_step(x0: str, type_: str, share: float) -> str:
    """The smallest move of ``x0`` :func:`min_change_sql` allows, rounded up to its
    resolution."""
    d = _resolution_of(x0, type_)
    raw = f"{share!r} * abs({x0})"
    # 1e-9 absorbs the binary error of an exact product (0.02 * 100 = 2.0000000000000004)
    return f"CASE WHEN {d} IS NULL THEN {raw} ELSE ceil({raw} * 10 ** {d} - 1e-9) / 10 ** {d} END"


def _moved(x0: str, y: str, u: str, step: str) -> str:
    """``x0`` moved by ``step`` on the side lsd moved it to ``y`` (a keyed side when it did not
    move; away from zero when the step would reach it)."""
    side = f"CASE WHEN {y} > {x0} THEN 1 WHEN {y} < {x0} THEN -1 WHEN {u} < 0.5 THEN -1 ELSE 1 END"
    return (
        f"CASE WHEN {step} >= abs({x0}) THEN {x0} + sign({x0}) * {step} "
        f"ELSE {x0} + ({side}) * {step} END"
    )


def _min_change_body(x0: str, y: str, share: float, moved: str) -> str:
    return (
        f"CASE WHEN {y} IS NULL OR {x0} = 0 OR abs({y} - {x0}) >= {share!r} * abs({x0}) "
        f"THEN {y} ELSE {moved} END"
    )


def min_change_sql(x: str, y: str, type_: str, share: float, u: str) -> str:
    """``y`` (lsd of ``x``) moved to at least ``share * |x|`` away from ``x`` (see the module
    docstring); the step is rounded up to the resolution of ``x``."""
    moved = bind(_min_step("__x0", type_, share), "__s", _moved("__x0", "__y", "__u", "__s"))
    body = _min_change_body("__x0", "__y", share, moved)
    return bind(f"({x})::DOUBLE", "__x0", bind(f"({y})::DOUBLE", "__y", bind(u, "__u", body)))


def _plain_lsd_sql(x: str, type_: str, digits: int, u: str) -> str:
    if is_integer(type_) or decimal_scale(type_) is not None:
        return bind(x, "__x", _plain_lsd_body("__x", "", type_, digits, u))
    body = _plain_lsd_body("__x", "__d", type_, digits, u)
    return bind(f"({x})::DOUBLE", "__x", bind("anon_decimals(__x)", "__d", body))


def _lsd_int(n: str, digits: int, u: str) -> str:
    """anon_lsd_n of the non-negative integral DOUBLE ``n`` as a DOUBLE, in 64-bit arithmetic
    below 10^17."""
    return (
        f"CASE WHEN {n} < 1e17 THEN anon_lsd_b(({n})::BIGINT, {digits}, {u})::DOUBLE "
        f"ELSE anon_lsd_n(({n})::HUGEINT, {digits}, {u})::DOUBLE END"
    )


_SMALL_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "UTINYINT", "USMALLINT", "UINTEGER")


def _plain_lsd_body(x: str, d: str, type_: str, digits: int, u: str) -> str:
    """Plain lsd over ``x`` (the value; a DOUBLE one for float columns) and ``d`` (its
    decimals, float columns only)."""
    sign = f"(CASE WHEN {x} < 0 THEN -1 ELSE 1 END)"
    if is_integer(type_):
        if type_ in _SMALL_INTEGERS:
            lsd = f"anon_lsd_b(abs({x})::BIGINT, {digits}, {u})::HUGEINT"
        else:
            lsd = f"anon_lsd_n(abs({x})::HUGEINT, {digits}, {u})"
        return f"CASE WHEN {x} IS NULL THEN NULL ELSE {sign} * {lsd} END"
    scale = decimal_scale(type_)
    if scale is not None:
        # widened first: DECIMAL(18, 4) times 10^4 overflows 18 digits
        n = f"(abs({x})::DECIMAL(38, {scale}) * {10**scale})::HUGEINT"
        body = f"{sign} * anon_lsd_n({n}, {digits}, {u})::DOUBLE / {10**scale}"
        return f"CASE WHEN {x} IS NULL THEN NULL ELSE {body} END"
    # DOUBLE / FLOAT: integer path at the value's decimals, floating path for the rest
    n = f"round(abs({x}) * 10 ** {d})"
    exact = f"({_lsd_int(n, digits, u)}) / 10 ** {d}"
    q = f"10 ** (floor(log10(abs({x}))) - {digits - 1})"
    floating = f"(trunc(abs({x}) / {q}) + {u}) * {q}"
    return (
        f"CASE WHEN {x} IS NULL OR {x} = 0 OR isnan({x}) OR isinf({x}) THEN {x} "
        f"WHEN {d} IS NULL OR abs({x}) * 10 ** {d} >= 1e30 THEN {sign} * {floating} "
        f"ELSE {sign} * {exact} END"
    )


def _text_parts(v: str) -> str:
    """'-1,234.50 USD' -> {pre: '-', num: '1,234.50', post: ' USD'} (empty parts: no number)."""
    return f"regexp_extract({v}, '{_TEXT_NUMBER_SQL}', ['pre', 'num', 'post'])"


def _parse_parts(p: str) -> str:
    return (
        f"TRY_CAST(regexp_replace({p}.num, '[^0-9.]', '', 'g') AS DOUBLE) "
        f"* CASE WHEN strpos({p}.pre, '-') > 0 THEN -1 ELSE 1 END"
    )


def _render_parts(p: str, y: str) -> str:
    return (
        f"replace({p}.pre, '-', '') || CASE WHEN {y} < 0 THEN '-' ELSE '' END || "
        f"replace(anon_format(abs({y}), anon_num_decimals({p}.num)), ',', "
        f"anon_group_char({p}.num)) || {p}.post"
    )


def parse_text_sql(v: str) -> str:
    """The number stored in the text ``v`` (first number; ``.`` decimal point; a ``-`` before it
    is the sign), NULL when there is none."""
    return bind(_text_parts(v), "__q", _parse_parts("__q"))


def render_like_sql(v: str, y: str) -> str:
    """The number ``y`` written in the format of the text ``v``: prefix and suffix kept, the
    sign before the number, the same decimals shown and the same digit grouping; ``v`` itself
    when it holds no number or ``y`` is NULL."""
    body = (
        f"CASE WHEN __y IS NULL OR ({_parse_parts('__r')}) IS NULL THEN {v} "
        f"ELSE {_render_parts('__r', '__y')} END"
    )
    return bind(_text_parts(v), "__r", bind(y, "__y", body))


def lsd_text_sql(
    v: str, digits: int, u: str, low: float | None, high: float | None, min_change: float = 0.0
) -> str:
    """lsd of a number stored as text: parsed, perturbed exactly as a DOUBLE column with the same
    draw ``u`` would be, written back in the text's format."""
    perturbed = _clamp(lsd_sql("__n", "DOUBLE", digits, u, min_change), low, high)
    new = bind(perturbed, "__y", _render_parts("__p", "__y"))
    body = f"CASE WHEN __n IS NULL THEN {v} ELSE {new} END"
    return bind(_text_parts(v), "__p", bind(_parse_parts("__p"), "__n", body))


def _partition(group_by: list[str], alias: str = "") -> str:
    if not group_by:
        return ""
    prefix = f"{alias}." if alias else ""
    return "PARTITION BY " + ", ".join(prefix + qi(g) for g in group_by)


def _group_match(group_by: list[str], left: str, right: str) -> str:
    return "".join(f" AND {left}.{qi(g)} IS NOT DISTINCT FROM {right}.{qi(g)}" for g in group_by)


def perturb_column(
    con: duckdb.DuckDBPyConnection,
    *,
    table: str,
    column: str,
    type_: str,
    rule: Perturb,
    salt: str,
    key_columns: list[str],
    all_columns: list[str],
    source_table: str,
    work_table: str,
    alias: str,
    source_key_columns: list[str] | None = None,
) -> ColumnSQL:
    """The released expression of a perturbed column (over the source row alias ``s``).
    ``key_columns`` key the draws (the rule's ``key``, else the primary key; empty: the whole
    row); ``work_table`` names the helper table the column may need (group standard
    deviations, rank assignments). ``source_key_columns``: the key columns the source row's
    :data:`KEY` column was computed over, reused (not recomputed) when they are the same."""
    x = col(SRC, column)
    if source_key_columns is not None and list(source_key_columns) == list(key_columns):
        key = f"{SRC}.{KEY}"
    else:
        key = row_key_sql(SRC, key_columns, all_columns)
    keyed_source = (
        f"(SELECT *, {row_key_sql('t', key_columns, all_columns)} AS {KEY} FROM {source_table} t)"
    )
    if is_text(type_):
        if rule.method != "lsd":
            raise TransformError(
                f"{table}.{column}: numbers stored as text only take method lsd, not {rule.method}"
            )
        # the draw is bound once, outside the lambdas its expression is used in (a lambda
        # body referring to the row's columns copies them per call: ~5x slower)
        return ColumnSQL(
            expr=bind(
                uniform_sql(salt, key),
                "__nu",
                lsd_text_sql(x, rule.digits, "__nu", rule.min, rule.max, rule.min_relative_change),
            )
        )
    if not is_numeric(type_):
        raise TransformError(f"{table}.{column}: perturb needs a numeric column, not {type_}")
    if rule.method == "lsd":
        draw = f"__{alias}_nu"
        lets, lsd = lsd_lets(
            x, type_, rule.digits, f"{SRC}.{draw}", rule.min_relative_change, alias
        )
        expr = _clamp(lsd, rule.min, rule.max)
        if is_integer(type_):
            expr = _resolution_round(expr, x, type_)
        # NULL checked outermost: greatest() and least() skip NULL arguments
        return ColumnSQL(
            expr=f"CASE WHEN {x} IS NULL THEN NULL ELSE CAST({expr} AS {type_}) END",
            lets=[(draw, uniform_sql(salt, key)), *lets],
        )
    if rule.method == "noise":
        return _noise(con, x, key, type_, rule, salt, source_table, work_table, alias, column)
    return _rank_method(con, x, key, rule, salt, keyed_source, work_table, alias, column)


def _noise(
    con: duckdb.DuckDBPyConnection,
    x: str,
    key: str,
    type_: str,
    rule: Perturb,
    salt: str,
    source_table: str,
    work_table: str,
    alias: str,
    column: str,
) -> ColumnSQL:
    c = qi(column)
    stats = con.execute(f"SELECT stddev_samp({c}), min({c}) FROM {source_table}").fetchone()
    assert stats is not None
    low = rule.min
    if low is None and stats[1] is not None and stats[1] >= 0:
        low = 0.0
    joins: list[str] = []
    if rule.group_by:
        groups = ", ".join(qi(g) for g in rule.group_by)
        con.execute(
            f"CREATE OR REPLACE TABLE {work_table} AS SELECT {groups}, stddev_samp({c}) AS __sd "
            f"FROM {source_table} GROUP BY ALL"
        )
        match = _group_match(rule.group_by, alias, SRC)[len(" AND ") :]
        joins.append(f"LEFT JOIN {work_table} {alias} ON {match}")
        sd = f"coalesce({alias}.__sd, 0)"
    else:
        sd = repr(float(stats[0])) if stats[0] is not None else "0"
    noisy = f"{x} + {normal_sql(salt, key)} * {rule.scale!r} * {sd}"
    expr = _resolution_round(_clamp(noisy, low, rule.max), x, type_)
    return ColumnSQL(
        expr=f"CASE WHEN {x} IS NULL THEN NULL ELSE CAST({expr} AS {type_}) END", joins=joins
    )


def _rank_method(
    con: duckdb.DuckDBPyConnection,
    x: str,
    key: str,
    rule: Perturb,
    salt: str,
    keyed_source: str,
    work_table: str,
    alias: str,
    column: str,
) -> ColumnSQL:
    """rank_swap / quantile: a helper table (group, key, x) -> x_new over distinct pairs
    (helper columns are prefixed ``__`` so group columns cannot clash with them)."""
    c = qi(column)
    groups = "".join(f"{qi(g)}, " for g in rule.group_by)
    part = _partition(rule.group_by)
    ranked = (
        f"SELECT *, row_number() OVER ({part} ORDER BY __x, __k) AS __r, "
        f"count(*) OVER ({part}) AS __n "
        f"FROM (SELECT DISTINCT {groups}{KEY} AS __k, {c} AS __x FROM {keyed_source} "
        f"WHERE {c} IS NOT NULL)"
    )
    if rule.method == "rank_swap":
        half = rule.window_pct / 200.0
        tail = rule.extremes_pct / 100.0
        u = uniform_sql(salt, "__k")
        part_blk = _partition([*rule.group_by, "__blk"])
        ordered = f"""
            SELECT *, row_number() OVER ({part_blk} ORDER BY __score, __k) AS __j,
                   min(__r) OVER ({part_blk}) AS __r0
            FROM (SELECT *, CASE WHEN __blk = 1 THEN __r + (2 * __u - 1) * ({half!r} * __n)
                                 ELSE __u END AS __score
                  FROM (SELECT *, CASE WHEN __r <= __tail THEN 0
                                       WHEN __r > __n - __tail THEN 2 ELSE 1 END AS __blk
                        FROM (SELECT *, floor(__n * {tail!r}) AS __tail, {u} AS __u
                              FROM ranked)))"""
        target = "o.__r0 + o.__j - 1"
    else:
        z = normal_sql(salt, "__k")
        ordered = f"""
            SELECT *, row_number() OVER ({part} ORDER BY __z, __k) AS __j
            FROM (SELECT *, anon_ppf((__r - 0.5) / __n) + {rule.scale!r} * {z} AS __z
                  FROM ranked)"""
        target = "o.__j"
    con.execute(
        f"""CREATE OR REPLACE TABLE {work_table} AS
            WITH ranked AS ({ranked}), o AS ({ordered})
            SELECT {"".join(f"o.{qi(g)}, " for g in rule.group_by)}o.__k, o.__x,
                   v.__x AS __x_new
            FROM o JOIN ranked v ON v.__r = {target}{_group_match(rule.group_by, "v", "o")}"""
    )
    match = f"{alias}.__k = {key} AND {alias}.__x = {x}" + _group_match(rule.group_by, alias, SRC)
    return ColumnSQL(
        expr=f"CASE WHEN {x} IS NULL THEN NULL ELSE {alias}.__x_new END",
        joins=[f"LEFT JOIN {work_table} {alias} ON {match}"],
    )
