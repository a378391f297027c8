"""What a dbt build left in its DuckDB file, checked against what its manifest says it built.

A build can "succeed" and leave nothing behind where it should: a profile that wrote to another
file, a model configured into another database, a hook that drops its table. A gold build
checks every relation its manifest promises before it is stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from benchforge.evaluation.dbt.manifest import BuiltNode, built_nodes


def relations_in(db: Path) -> set[tuple[str, str, str]]:
    """(database, schema, name) of every table and view of the DuckDB file ``db``, lower-cased
    (DuckDB names are case-insensitive)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT table_catalog, table_schema, table_name FROM information_schema.tables"
        ).fetchall()
    finally:
        con.close()
    return {(str(c).lower(), str(s).lower(), str(t).lower()) for c, s, t in rows}


def missing_relations(manifest_json: Path, db: Path) -> list[BuiltNode]:
    """The models, seeds and snapshots of ``manifest_json`` (ephemeral models aside) with no
    table or view at their (database, schema, alias) in ``db``."""
    present = relations_in(db)
    return [
        node
        for node in built_nodes(manifest_json)
        if (node.database.lower(), node.schema_.lower(), node.alias.lower()) not in present
    ]


def unreadable_sources(manifest_json: Path, db: Path, data_schema: str = "raw") -> list[str]:
    """What is wrong with the sources of ``manifest_json`` in ``db`` (a copy of a dataset's
    warehouse), one line per schema the project reads: which of its tables are missing, and,
    when the dataset has them in ``data_schema``, how to map that schema."""
    data = json.loads(manifest_json.read_text())
    present = relations_in(db)
    in_data = {t for _, s, t in present if s == data_schema}
    missing: dict[tuple[str, str], list[str]] = {}
    for source in data.get("sources", {}).values():
        schema = str(source.get("schema") or "").lower()
        table = str(source.get("identifier") or source.get("name") or "").lower()
        if not any(s == schema and t == table for _, s, t in present):
            path = str(source.get("original_file_path") or "its YAML")
            missing.setdefault((schema, path), []).append(table)
    problems = []
    for (schema, path), tables in sorted(missing.items()):
        said = f"sources of {path} read schema {schema} ({', '.join(sorted(tables))})"
        if set(tables) <= in_data:
            problems.append(
                f"{said}, and the dataset has these tables in schema {data_schema}: import it "
                f"with --source-schema {schema} (views {schema}.* over {data_schema}.*), or set "
                f"`schema: {data_schema}` on the source"
            )
        else:
            absent = sorted(set(tables) - in_data)
            problems.append(
                f"{said}; the dataset has no table {', '.join(absent)} (schema {data_schema} "
                f"holds: {', '.join(sorted(in_data)[:12]) or 'nothing'})"
            )
    return problems
