"""DAB's metrics over a run's trials (the reference note's "Metrics"), as pure functions.

- ``query_pass_at_k``: the unbiased pass@k of one query for k = 1..n, the leaderboard's own
  estimator (:func:`benchforge.evaluation.leaderboard.stats.pass_at_k`), not a second one.
- ``stratified_mean``: DAB averages per query, then within each dataset, then over datasets,
  so a dataset with many queries does not outweigh one with few.
- ``tool_mix``: a trajectory's tool calls by kind: SQL (``query_db``), Python
  (``execute_python``), the rest (``list_db``, ``read_doc``, ``return_answer``), and how many
  of them explore rather than compute (``list_db``, ``read_doc``, and SQL that reads the
  catalogue or a few raw rows: :func:`is_exploratory_sql`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from benchforge.core.records.trials import Step
from benchforge.evaluation.leaderboard.stats import mean, pass_at_k

SQL_TOOL = "query_db"
PYTHON_TOOL = "execute_python"
EXPLORING_TOOLS = frozenset({"list_db", "read_doc"})

_CATALOGUE = re.compile(
    r"\b(?:information_schema|sqlite_master|sqlite_schema|duckdb_tables|duckdb_columns)\b"
    r"|^\s*(?:pragma|describe|show|summarize)\b",
    re.I,
)
_PEEK = re.compile(r"^\s*select\s+\*\s+from\s+[\w.\"]+\s+limit\s+\d+\s*;?\s*$", re.I)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def query_pass_at_k(n: int, c: int) -> dict[int, float]:
    """pass@k for k = 1..n of a query with ``n`` graded trials, ``c`` of them passed."""
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n, got n={n}, c={c}")
    return {k: pass_at_k(n, c, k) for k in range(1, n + 1)}


class StratifiedMean(_Frozen):
    """A per-query value averaged within each dataset (``by_dataset``), then over the
    datasets (``overall``; None: no query)."""

    by_dataset: dict[str, float]
    overall: float | None


def stratified_mean(
    per_query: Mapping[str, float], dataset_of: Mapping[str, str]
) -> StratifiedMean:
    """``per_query``: query -> value; ``dataset_of``: query -> its dataset (KeyError: a query
    without one, rather than a silently wrong stratum)."""
    groups: dict[str, list[float]] = defaultdict(list)
    for query, value in per_query.items():
        groups[dataset_of[query]].append(value)
    by_dataset = {name: mean(values) or 0.0 for name, values in sorted(groups.items())}
    return StratifiedMean(by_dataset=by_dataset, overall=mean(list(by_dataset.values())))


def is_exploratory_sql(sql: str) -> bool:
    """SQL that looks at the data's shape rather than computing an answer: the catalogue
    (information_schema, sqlite_master, PRAGMA, DESCRIBE, ...) or ``SELECT * FROM t LIMIT n``."""
    return bool(_CATALOGUE.search(sql) or _PEEK.match(sql))


class ToolMix(_Frozen):
    """Tool calls of one or more trajectories, by kind."""

    sql: int = 0
    python: int = 0
    other: int = 0
    exploratory: int = 0  # of all the calls above
    failed: int = 0

    @property
    def calls(self) -> int:
        return self.sql + self.python + self.other

    @property
    def exploratory_share(self) -> float | None:
        return self.exploratory / self.calls if self.calls else None

    def plus(self, other: ToolMix) -> ToolMix:
        return ToolMix(
            sql=self.sql + other.sql,
            python=self.python + other.python,
            other=self.other + other.other,
            exploratory=self.exploratory + other.exploratory,
            failed=self.failed + other.failed,
        )


def _is_exploratory(step: Step) -> bool:
    if step.name in EXPLORING_TOOLS:
        return True
    sql = (step.arguments or {}).get("sql")
    return step.name == SQL_TOOL and isinstance(sql, str) and is_exploratory_sql(sql)


def tool_mix(trajectory: Sequence[Step]) -> ToolMix:
    """The tool calls of ``trajectory`` (model steps are not counted)."""
    tools = [s for s in trajectory if s.kind == "tool"]
    sql = sum(1 for s in tools if s.name == SQL_TOOL)
    python = sum(1 for s in tools if s.name == PYTHON_TOOL)
    return ToolMix(
        sql=sql,
        python=python,
        other=len(tools) - sql - python,
        exploratory=sum(1 for s in tools if _is_exploratory(s)),
        failed=sum(1 for s in tools if not s.ok),
    )
