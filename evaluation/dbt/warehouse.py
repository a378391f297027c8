"""What a dbt build left in its DuckDB file, checked against what its manifest says it built.

A build can "succeed" and leave nothing behind where it should: a profile that wrote to another
file, a model configured into another database, a hook that drops its table. A gold build
checks every relation its manifest promises before it is stored.
"""

from __future__ import annotations

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
