"""The component-score worker: runs candidate SQL, one node at a time, inside the sandbox.

Run as ``python -I cs_worker.py PLAN`` (the scorer passes this file's source with ``-c``), it
imports nothing but the standard library and ``duckdb``, so it works where the repository is
not visible. For each node of the plan, in order, it:

1. opens a fresh in-memory DuckDB, attaches the node's own output file and, read-only, the
   input files the scorer copied for *this node only* (one relation each: its gold parents and
   the raw tables it reads), and shows each under the name the candidate's compiled SQL uses
   (a view in an in-memory database of that name);
2. disables external access and extension loading and locks the configuration;
3. parses the candidate's compiled SQL and accepts exactly one ``SELECT`` statement;
4. stores the result as ``main.result`` in the node's output file, writes ``status.json``,
   and deletes the node's inputs.

The plan lists nodes in reverse topological order of the gold DAG, so when a node's SQL runs,
no input file left on disk holds the gold output of that node or of any of its descendants.
The comparison with the gold happens afterwards, in the scorer.

A plan with ``"mode": "freeze"`` does the other sandboxed step: it copies the relations the
candidate's end-to-end build left in its database into plain tables of a new file, with
external access off, so that a candidate *view* is only ever bound here (where no gold
exists), never in the scorer's process.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

import duckdb

OUTPUT_ALIAS = "__benchforge_cs_out"
_RESERVED = {"memory", "system", "temp", "main"}
_LOCKDOWN = (
    "SET enable_external_access = false",
    "SET autoload_known_extensions = false",
    "SET autoinstall_known_extensions = false",
    "SET allow_community_extensions = false",
    "SET lock_configuration = true",
)
RESULT_TABLE = "result"


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _single_select(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """Why ``sql`` is not exactly one SELECT statement, or None when it is."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as err:
        return f"the compiled SQL does not parse: {str(err).splitlines()[0][:300]}"
    if len(statements) != 1:
        return f"exactly one SELECT statement is accepted; the compiled SQL has {len(statements)}"
    if statements[0].type != duckdb.StatementType.SELECT:
        kind = statements[0].type.name
        return f"exactly one SELECT statement is accepted; the compiled SQL is a {kind} statement"
    return None


def run_node(node: dict[str, Any]) -> dict[str, Any]:
    folder = node["dir"]
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"SET threads = {int(node['threads'])}")
        con.execute(f"SET memory_limit = '{int(node['memory_mb'])}MB'")
        con.execute(f"SET temp_directory = '{os.path.join(folder, 'spill')}'")
        out = os.path.join(folder, "out.duckdb")
        con.execute(f"ATTACH '{out}' AS {_quote(OUTPUT_ALIAS)}")
        databases: set[str] = set()
        for index, view in enumerate(node["inputs"]):
            source = f"__benchforge_in_{index}"
            path = os.path.join(folder, view["file"])
            con.execute(f"ATTACH '{path}' AS {_quote(source)} (READ_ONLY)")
            database = view["database"]
            if database.lower() in _RESERVED or database.startswith("__"):
                continue  # the candidate's SQL then fails to bind: a build error
            if database not in databases:
                con.execute(f"ATTACH ':memory:' AS {_quote(database)}")
                databases.add(database)
            schema = f"{_quote(database)}.{_quote(view['schema'])}"
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            con.execute(
                f"CREATE VIEW {schema}.{_quote(view['name'])} AS "
                f"SELECT * FROM {_quote(source)}.main.relation"
            )
        if node.get("default_database") in databases:
            con.execute(f"USE {_quote(node['default_database'])}")
        for setting in _LOCKDOWN:
            con.execute(setting)
        sql = node["sql"].strip().rstrip(";").strip()
        problem = _single_select(con, sql)
        if problem is not None:
            return {"ok": False, "error": problem}
        target = f"{_quote(OUTPUT_ALIAS)}.main.{_quote(RESULT_TABLE)}"
        timer = threading.Timer(float(node["timeout_s"]), con.interrupt)
        timer.start()
        try:
            con.execute(f"CREATE TABLE {target} AS SELECT * FROM (\n{sql}\n) AS _node")
        finally:
            timer.cancel()
        return {"ok": True, "error": None}
    except duckdb.Error as err:
        return {"ok": False, "error": f"failed on gold inputs: {str(err).splitlines()[0][:300]}"}
    finally:
        con.close()


def freeze(plan: dict[str, Any]) -> dict[str, Any]:
    """The candidate's relations as tables in ``plan["out"]``: relation -> error or None."""
    con = duckdb.connect(":memory:")
    errors: dict[str, Any] = {}
    try:
        con.execute(f"SET threads = {int(plan['threads'])}")
        con.execute(f"SET memory_limit = '{int(plan['memory_mb'])}MB'")
        con.execute(f"SET temp_directory = '{os.path.join(plan['dir'], 'spill')}'")
        con.execute(f"ATTACH '{plan['source']}' AS {_quote(plan['database'])} (READ_ONLY)")
        con.execute(f"ATTACH '{plan['out']}' AS {_quote(OUTPUT_ALIAS)}")
        for setting in _LOCKDOWN:
            con.execute(setting)
        for schema, name in plan["relations"]:
            key = f"{schema}.{name}"
            source = f"{_quote(plan['database'])}.{_quote(schema)}.{_quote(name)}"
            target = f"{_quote(OUTPUT_ALIAS)}.{_quote(schema)}.{_quote(name)}"
            timer = threading.Timer(float(plan["timeout_s"]), con.interrupt)
            timer.start()
            try:
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {_quote(OUTPUT_ALIAS)}.{_quote(schema)}")
                con.execute(f"CREATE TABLE {target} AS FROM {source}")
                errors[key] = None
            except duckdb.Error as err:
                errors[key] = str(err).splitlines()[0][:300]
            finally:
                timer.cancel()
    finally:
        con.close()
    return errors


def main(plan_path: str) -> int:
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    if plan.get("mode") == "freeze":
        status = freeze(plan)
        with open(os.path.join(plan["dir"], "status.json"), "w", encoding="utf-8") as fh:
            json.dump(status, fh)
        return 0
    for node in plan["nodes"]:
        started = time.perf_counter()
        status = run_node(node)
        status["seconds"] = round(time.perf_counter() - started, 4)
        for view in node["inputs"]:
            path = os.path.join(node["dir"], view["file"])
            for leftover in (path, path + ".wal"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        with open(os.path.join(node["dir"], "status.json"), "w", encoding="utf-8") as fh:
            json.dump(status, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
