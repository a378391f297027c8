"""The gold build's relations exported one file each, views included: dbt-duckdb writes a view's
SQL with the catalog named after the database file, so the export must attach it by that name."""

from __future__ import annotations

from pathlib import Path

import duckdb

from benchforge.evaluation.de.component import export_relations


def test_views_of_the_gold_build_are_exported_with_their_rows(tmp_path: Path) -> None:
    gold = tmp_path / "gold.duckdb"
    with duckdb.connect(str(gold)) as con:
        con.execute("CREATE SCHEMA staging; CREATE SCHEMA marts")
        con.execute("CREATE TABLE staging.stg_orders AS SELECT range AS id FROM range(5)")
        # as dbt-duckdb materializes a view: the catalog spelled out
        con.execute(
            'CREATE VIEW marts.fct_even AS SELECT id FROM "gold"."staging"."stg_orders" '
            "WHERE id % 2 = 0"
        )
    files = export_relations(gold, tmp_path / "relations")
    assert set(files) == {"staging.stg_orders", "marts.fct_even"}
    with duckdb.connect(str(files["marts.fct_even"]), read_only=True) as con:
        assert con.execute("SELECT id FROM main.relation ORDER BY id").fetchall() == [
            (0,),
            (2,),
            (4,),
        ]
