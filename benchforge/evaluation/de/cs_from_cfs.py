"""A node's component score taken from its end-to-end build, where running it alone could not
give another result.

CS runs a candidate node's compiled SQL alone, on the gold output of its gold parents and the
raw tables it reads (:mod:`benchforge.evaluation.de.component`). In the end-to-end build
(CFS) the same SQL already ran on the candidate's own parents. When those parents *are* the
gold's (exactly: the same rows, column names and types) and the node's own output is exactly
the gold's, the isolated run would read the same inputs and return the same rows: its verdict
is the CFS verdict, and running it costs a sandbox round trip, a collect step and a
comparison for nothing. A correct submission is mostly such nodes; a broken one keeps the
isolated run for every node at or below the break.

A node's CS is taken from its CFS only when every condition holds, else it runs alone as
before:

- its end-to-end output matched exactly (no tolerance) with the gold's column names and
  types, in order, as the candidate's database has them (not as the Parquet copy shows them);
- its compiled SQL parses (parsing only, nothing is bound or run) as exactly one ``SELECT``
  whose every relation is a CTE of the statement or a fully qualified relation the isolated
  run would provide, and it calls no table function but the row generators ``range`` and
  ``generate_series`` (no ``read_csv``, ``query_table``, ...) and names no file;
- every gold parent it is owed is a node whose end-to-end output is exactly the gold's;
- it reads no seed (the candidate's seed files are not compared) and no helper model (the
  isolated run reads a helper through its Parquet copy);
- every raw table it reads is, after the build, the dataset's (a count and an order-free hash
  of its rows, taken by the collect step): logic moved into hooks that clean the raw data
  first does not earn CS for the model that reads it.

What this gives up: a candidate whose hooks or later models change a gold parent after this
node read it, and put it back, is credited in CS with what its whole build did; that build
already matches the gold exactly at this node and at every parent.
"""

from __future__ import annotations

import json

import duckdb

from benchforge.evaluation.dbt.manifest import DbtManifest
from benchforge.evaluation.de.compare import NodeComparison
from benchforge.evaluation.de.component import node_inputs

Name = tuple[str, str, str]  # (database, schema, name), lower case


def exactly_gold(
    con: duckdb.DuckDBPyConnection,
    gold: DbtManifest,
    cand: DbtManifest,
    cfs: dict[str, NodeComparison],
    columns: dict[str, list[tuple[str, str]]],
    gold_relation: dict[str, str],
) -> set[str]:
    """Nodes whose end-to-end output is the gold's: an exact match, and the candidate's
    columns (``columns``, from the collect step) the gold's names and types in order.
    ``gold_relation``: node -> its qualified gold relation on ``con``."""
    found = set()
    for name, comparison in cfs.items():
        c = cand.models.get(name)
        if not comparison.exact or c is None:
            continue
        theirs = columns.get(f"{c.schema_}.{c.alias}".lower())
        rows = con.execute(f"DESCRIBE SELECT * FROM {gold_relation[name]}").fetchall()
        if theirs is not None and theirs == [(str(r[0]), str(r[1])) for r in rows]:
            found.add(name)
    return found


def derivable(
    gold: DbtManifest,
    cand: DbtManifest,
    identical: set[str],
    raw: set[tuple[str, str]],
    untouched: set[str],
) -> frozenset[str]:
    """The nodes whose CS is their CFS verdict (see the module's docstring). ``untouched``:
    the raw tables ("schema.table", lower case) the candidate's build left as the dataset
    has them."""
    found = set()
    for name in identical:
        node = cand.models.get(name)
        if node is None or not node.compiled_code or node.seeds:
            continue
        if any(_is_helper(uid, gold, cand) for uid in node.depends_on):
            continue
        if any(p not in identical for p in gold.parents(name)):
            continue
        inputs = node_inputs(name, gold, cand, raw)
        owed = {
            (i.target.database.lower(), i.target.schema_.lower(), i.target.name.lower())
            for i in inputs
            if i.source.startswith("gold:")
        }
        raw_read = {
            i.source.removeprefix("gold:").lower()
            for i in inputs
            if tuple(i.source.removeprefix("gold:").lower().split(".", 1)) in raw
        }
        reads = relations_read(node.compiled_code)
        if reads is not None and reads <= owed and raw_read <= untouched:
            found.add(name)
    return frozenset(found)


def _is_helper(uid: str, gold: DbtManifest, cand: DbtManifest) -> bool:
    """A model only the candidate has."""
    model = cand.by_id.get(uid)
    return model is not None and model.name not in gold.models


def relations_read(sql: str) -> set[Name] | None:
    """The fully qualified relations one ``SELECT`` reads; None when ``sql`` is not exactly
    one ``SELECT``, calls a table function, or reads a relation that is not a CTE and not
    fully qualified (a file name, or a name the isolated run might resolve elsewhere)."""
    con = duckdb.connect()
    try:
        for setting in ("SET enable_external_access = false", "SET lock_configuration = true"):
            con.execute(setting)
        row = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()
    except duckdb.Error:
        return None
    finally:
        con.close()
    tree = json.loads(row[0]) if row else {}
    statements = tree.get("statements") if isinstance(tree, dict) else None
    if tree.get("error") or not isinstance(statements, list) or len(statements) != 1:
        return None
    ctes: set[str] = set()
    tables: list[dict[str, object]] = []
    if not _walk(statements[0], ctes, tables):
        return None
    found: set[Name] = set()
    for ref in tables:
        catalog, schema = str(ref.get("catalog_name") or ""), str(ref.get("schema_name") or "")
        table = str(ref.get("table_name") or "")
        if not catalog and not schema and table.lower() in ctes:
            continue
        if not catalog or not schema or not table:
            return None
        found.add((catalog.lower(), schema.lower(), table.lower()))
    return found


GENERATORS = frozenset({"range", "generate_series"})  # read nothing: rows from their arguments


def _generator(function: object) -> bool:
    """A built-in row generator (``range``, ``generate_series``), unqualified."""
    if not isinstance(function, dict):
        return False
    name = str(function.get("function_name") or "").lower()
    qualified = function.get("schema") or function.get("catalog")
    return name in GENERATORS and not qualified


def _walk(node: object, ctes: set[str], tables: list[dict[str, object]]) -> bool:
    """Collects CTE names and base-table references; False at a table function."""
    if isinstance(node, list):
        return all(_walk(item, ctes, tables) for item in node)
    if not isinstance(node, dict):
        return True
    kind = node.get("type")
    if kind == "TABLE_FUNCTION" and not _generator(node.get("function")):
        return False
    if kind == "BASE_TABLE":
        tables.append(node)
    cte_map = node.get("cte_map")
    if isinstance(cte_map, dict):
        for entry in cte_map.get("map") or []:
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                ctes.add(entry["key"].lower())
    return all(_walk(value, ctes, tables) for value in node.values())
