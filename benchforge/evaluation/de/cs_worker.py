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

The two *collect* modes carry what candidate code produced across the trust boundary. They run
trusted code (this file) in a sandbox that sees the candidate's tree read-only and may write
only a fresh folder the scorer made, and they write plain data files there (JSON copies and
Parquet), so the scorer never opens a file in a tree candidate code could write:

- ``"mode": "collect_build"``: copies dbt's ``manifest.json`` / ``run_results.json`` and every
  model relation the manifest names from the candidate's database into ``t<i>.parquet`` (a
  candidate *view* is bound here, where no gold exists, never in the scorer's process);
- ``"mode": "collect_components"``: copies each CS node's status and ``main.result`` into
  ``c<i>.parquet``.

Files are opened component by component with ``O_NOFOLLOW`` (a symlink anywhere on the path
is refused, even where no sandbox hides the host) and must be regular files; DuckDB files
are attached through ``/proc/self/fd/N`` of the checked descriptor, so neither a swapped path
nor a planted ``.wal`` beside the file is read.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
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


# --- collecting: the candidate's outputs as plain data files for the scorer --------------------

MAX_JSON_BYTES = 512 * 1024 * 1024


def open_beneath(root: str, relative: str) -> int:
    """A read-only descriptor of the regular file ``root/relative``, no component of
    ``relative`` (nor ``root`` itself) being a symlink; raises OSError otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, flags | os.O_DIRECTORY)
    try:
        parts = [p for p in relative.split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            raise OSError(f"not a path beneath the folder: {relative!r}")
        for part in parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        leaf = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    info = os.fstat(leaf)
    if not stat.S_ISREG(info.st_mode):
        os.close(leaf)
        raise OSError(f"{relative} is not a regular file")
    return leaf


def _read_beneath(root: str, relative: str, limit: int = MAX_JSON_BYTES) -> bytes:
    fd = open_beneath(root, relative)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{relative} is larger than {limit} bytes")
    return data


def _problem(err: BaseException) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0][:300]


def _collect_connection(plan: dict[str, Any]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute(f"SET threads = {int(plan['threads'])}")
    con.execute(f"SET memory_limit = '{int(plan['memory_mb'])}MB'")
    con.execute(f"SET temp_directory = '{os.path.join(plan['dir'], 'spill')}'")
    return con


def _lock_to(con: duckdb.DuckDBPyConnection, folder: str) -> None:
    """External access off but for writing into ``folder`` (the collect folder)."""
    con.execute(f"SET allowed_directories = ['{folder.rstrip('/')}/']")
    for setting in _LOCKDOWN:
        con.execute(setting)


def _copy_out(
    con: duckdb.DuckDBPyConnection, source: str, out: str, timeout_s: float
) -> str | None:
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.start()
    try:
        con.execute(f"COPY (SELECT * FROM {source}) TO '{out}' (FORMAT parquet)")
        return None
    except duckdb.Error as err:
        with contextlib.suppress(OSError):
            os.remove(out)
        return _problem(err)
    finally:
        timer.cancel()


def _columns(con: duckdb.DuckDBPyConnection, source: str) -> list[list[str]] | None:
    """The relation's column names and types as the candidate's database has them (the
    Parquet copy may map a type to another)."""
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    except duckdb.Error:
        return None
    return [[str(r[0]), str(r[1])] for r in rows]


def model_relations(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """(schema, alias) of every model a dbt manifest lists."""
    found = set()
    for node in (manifest.get("nodes") or {}).values():
        if isinstance(node, dict) and node.get("resource_type") == "model":
            schema, alias = node.get("schema"), node.get("alias") or node.get("name")
            if isinstance(schema, str) and isinstance(alias, str):
                found.add((schema, alias))
    return sorted(found)


def collect_build(plan: dict[str, Any]) -> dict[str, Any]:
    """dbt's artifacts and the candidate's model relations, out of ``plan["root"]``."""
    root, out = plan["root"], plan["dir"]
    status: dict[str, Any] = {"files": {}, "relations": [], "failure": None}
    for name, relative in plan["files"].items():
        try:
            data = _read_beneath(root, relative)
            json.loads(data)
        except (OSError, ValueError) as err:
            status["files"][name] = _problem(err)
            continue
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
        status["files"][name] = None
    if status["files"].get(plan["manifest"]) is not None or plan["manifest"] not in status["files"]:
        return status
    with open(os.path.join(out, plan["manifest"]), encoding="utf-8") as fh:
        relations = model_relations(json.load(fh))
    try:
        db_fd = open_beneath(root, plan["database"])
    except OSError as err:
        status["failure"] = f"the candidate's database: {_problem(err)}"
        return status
    con = _collect_connection(plan)
    try:
        name = _quote(plan["database_name"])
        con.execute(f"ATTACH '/proc/self/fd/{db_fd}' AS {name} (READ_ONLY)")
        _lock_to(con, out)
        for index, (schema, alias) in enumerate(relations):
            file = f"t{index:04d}.parquet"
            source = f"{name}.{_quote(schema)}.{_quote(alias)}"
            error = _copy_out(con, source, os.path.join(out, file), float(plan["timeout_s"]))
            status["relations"].append(
                {
                    "schema": schema,
                    "name": alias,
                    "file": None if error else file,
                    "error": error,
                    "columns": None if error else _columns(con, source),
                }
            )
        status["raw"] = {
            f"{schema}.{table}".lower(): fingerprint(
                con, f"{name}.{_quote(schema)}.{_quote(table)}"
            )
            for schema, table in plan.get("raw_tables") or []
        }
    except duckdb.Error as err:
        status["failure"] = f"reading the candidate's database: {_problem(err)}"
    finally:
        con.close()
        os.close(db_fd)
    return status


def fingerprint(con: duckdb.DuckDBPyConnection, source: str) -> str | None:
    """A table's rows as a count and an order-free sum of row hashes (None: unreadable):
    the raw tables after the candidate's build, compared with the dataset's."""
    try:
        row = con.execute(
            f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM {source} AS t"
        ).fetchone()
    except duckdb.Error:
        return None
    return f"{row[0]}:{row[1]}" if row else None


def collect_components(plan: dict[str, Any]) -> dict[str, Any]:
    """Each CS node's verdict and ``main.result``, out of ``plan["root"]``."""
    root, out = plan["root"], plan["dir"]
    nodes: dict[str, Any] = {}
    for index, node in enumerate(plan["nodes"]):
        folder = node["folder"]
        try:
            verdict = json.loads(_read_beneath(root, f"{folder}/status.json", 1 << 20))
        except (OSError, ValueError) as err:
            nodes[node["name"]] = {"ok": False, "error": None, "missing": _problem(err)}
            continue
        if not isinstance(verdict, dict) or not verdict.get("ok"):
            error = verdict.get("error") if isinstance(verdict, dict) else None
            nodes[node["name"]] = {"ok": False, "error": str(error or "failed")[:300]}
            continue
        nodes[node["name"]] = _collect_result(plan, root, out, folder, f"c{index:04d}.parquet")
    return {"nodes": nodes}


def _collect_result(
    plan: dict[str, Any], root: str, out: str, folder: str, file: str
) -> dict[str, Any]:
    try:
        db_fd = open_beneath(root, f"{folder}/out.duckdb")
    except OSError as err:
        return {"ok": False, "error": f"the component output: {_problem(err)}"}
    con = _collect_connection(plan)
    try:
        con.execute(f"ATTACH '/proc/self/fd/{db_fd}' AS node_out (READ_ONLY)")
        tables = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'node_out' "
            "AND schema_name = 'main' AND table_name = ?",
            [RESULT_TABLE],
        ).fetchone()
        if not tables or not tables[0]:
            return {"ok": False, "error": "the component output holds no result table"}
        _lock_to(con, out)
        source = f"node_out.main.{_quote(RESULT_TABLE)}"
        error = _copy_out(con, source, os.path.join(out, file), float(plan["timeout_s"]))
        return {"ok": error is None, "error": error, "file": None if error else file}
    except duckdb.Error as err:
        return {"ok": False, "error": f"the component output: {_problem(err)}"}
    finally:
        con.close()
        os.close(db_fd)


COLLECTORS = {"collect_build": collect_build, "collect_components": collect_components}


def main(plan_path: str) -> int:
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    collector = COLLECTORS.get(plan.get("mode", ""))
    if collector is not None:
        status = collector(plan)
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
