"""Types agree across import routes: the same table from a CSV folder, a DuckDB file and
PostgreSQL has the same column types (the canonical mapping), ``keep_source_types`` keeps each
route's own, and a declaration file (``--column-types``) is honoured on every route, recorded in
the manifest and the profile, and refused naming the file and table.column when it is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import psycopg
import pytest

from benchforge.cli.main import main
from benchforge.synthesis.importer import DatasetImportError, import_dataset
from benchforge.synthesis.importer.types import canonical_type
from tests.support.postgres import PostgresServer

CSV = (
    "order_id,qty,amount,name,ordered_on,placed_at,paid\n"
    "1,2,10.50,Ann,2024-01-02,2024-01-02 10:00:00,true\n"
    "2,1,3.25,Bob,2024-02-03,2024-02-03 11:30:00,false\n"
    "3,5,,Cy,2024-03-04,2024-03-04 12:00:00,\n"
    "4,1,7.00,Di,2024-03-05,2024-03-05 09:15:00,true\n"
)
COLUMNS = (
    "order_id integer, qty smallint, amount numeric(10,2), name text, ordered_on date, "
    "placed_at timestamp, paid boolean"
)
ROWS = (
    "(1, 2, 10.50, 'Ann', '2024-01-02', '2024-01-02 10:00:00', true), "
    "(2, 1, 3.25, 'Bob', '2024-02-03', '2024-02-03 11:30:00', false), "
    "(3, 5, NULL, 'Cy', '2024-03-04', '2024-03-04 12:00:00', NULL), "
    "(4, 1, 7.00, 'Di', '2024-03-05', '2024-03-05 09:15:00', true)"
)
CANONICAL = {
    "order_id": "BIGINT",
    "qty": "BIGINT",
    "amount": "DOUBLE",
    "name": "VARCHAR",
    "ordered_on": "DATE",
    "placed_at": "TIMESTAMP",
    "paid": "BOOLEAN",
}
DECLARED = "orders:\n  amount: decimal(10, 2)\n  qty: INT\n"


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer) -> dict[str, str]:
    """The same orders table three ways: a CSV folder, a DuckDB file, a PostgreSQL database."""
    root = tmp_path_factory.mktemp("type-sources")
    (root / "csv").mkdir()
    (root / "csv" / "orders.csv").write_text(CSV)
    with duckdb.connect(str(root / "shop.duckdb")) as con:
        con.execute(f"CREATE TABLE main.orders ({COLUMNS}); INSERT INTO main.orders VALUES {ROWS}")
    assert postgres.createdb("typed")
    with psycopg.connect(postgres.url("typed"), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE orders ({COLUMNS}); INSERT INTO orders VALUES {ROWS}")
    return {
        "csv": str(root / "csv"),
        "duckdb": str(root / "shop.duckdb"),
        "postgres": postgres.url("typed"),
    }


def described(out: Path) -> list[tuple[str, str]]:
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        return [(r[0], r[1]) for r in con.execute("DESCRIBE raw.orders").fetchall()]


def rows(out: Path) -> list[tuple[object, ...]]:
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("SELECT * FROM raw.orders ORDER BY order_id").fetchall()


def test_every_route_gives_the_same_types(tmp_path: Path, sources: dict[str, str]) -> None:
    found = {}
    for route, source in sources.items():
        out = tmp_path / route
        import_dataset(source, name="shop", out=str(out))
        found[route] = (described(out), rows(out))
    assert found["csv"][0] == list(CANONICAL.items())
    assert found["duckdb"] == found["csv"] and found["postgres"] == found["csv"]
    manifest = json.loads((tmp_path / "postgres" / "manifest.json").read_text())
    assert manifest["types"]["normalized"] is True and manifest["types"]["declared"] == {}
    changes = manifest["types"]["changes"]["orders"]
    assert changes["amount"] == {"source": "DECIMAL(10,2)", "type": "DOUBLE", "why": "canonical"}
    assert "name" not in changes  # unchanged columns are not listed


def test_keep_source_types_keeps_each_routes_own(tmp_path: Path, sources: dict[str, str]) -> None:
    out = tmp_path / "pg"
    import_dataset(sources["postgres"], name="shop", out=str(out), keep_source_types=True)
    types = dict(described(out))
    assert (types["order_id"], types["qty"], types["amount"]) == (
        "INTEGER",
        "SMALLINT",
        "DECIMAL(10,2)",
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["types"]["normalized"] is False and manifest["types"]["changes"] == {}


def test_a_declared_type_is_honoured_on_every_route(
    tmp_path: Path, sources: dict[str, str]
) -> None:
    declared = tmp_path / "types.yaml"
    declared.write_text(DECLARED)
    found = {}
    for route, source in sources.items():
        out = tmp_path / route
        import_dataset(source, name="shop", out=str(out), column_types=declared)
        found[route] = (described(out), rows(out))
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["types"]["declared"] == {
            "orders": {"amount": "DECIMAL(10,2)", "qty": "INTEGER"}
        }
        assert manifest["types"]["declared_from"] == str(declared)
        profile = json.loads((out / "validation" / "expectations.json").read_text())
        (orders,) = [t for t in profile["profile"] if t["name"] == "orders"]
        flags = {c["name"]: c["declared"] for c in orders["columns"]}
        assert flags["amount"] and flags["qty"] and not flags["name"]
    expected = {**CANONICAL, "amount": "DECIMAL(10,2)", "qty": "INTEGER"}
    assert found["csv"][0] == list(expected.items())
    assert found["duckdb"] == found["csv"] and found["postgres"] == found["csv"]
    assert [str(r[2]) for r in found["csv"][1]] == ["10.50", "3.25", "None", "7.00"]


def test_a_wrong_declaration_names_the_file_and_column(
    tmp_path: Path, sources: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    declared = tmp_path / "types.yaml"
    out = tmp_path / "out"
    for text, words in [
        ("ordrs:\n  amount: DOUBLE\n", r"types\.yaml: no table 'ordrs' .*did you mean 'orders'"),
        ("orders:\n  amont: DOUBLE\n", r"types\.yaml: orders\.amont: no such column .*'amount'"),
        ("orders:\n  name: INTEGER\n", r"types\.yaml: orders\.name: 'Ann' .* INTEGER"),
        ("orders:\n  amount: DECMAL(10,2)\n", r"types\.yaml: orders\.amount: .*'DECMAL\(10,2\)'"),
        ("orders:\n  amount: INT); DROP TABLE x; --\n", r"types\.yaml: orders\.amount: "),
        ("- orders\n", r"types\.yaml: .*table: \{column: TYPE\}"),
        ("orders: [1, 2\n", r"types\.yaml is not YAML"),
    ]:
        declared.write_text(text)
        for source in sources.values():
            with pytest.raises(DatasetImportError, match=words):
                import_dataset(source, name="shop", out=str(out), column_types=declared)
            assert not out.exists()
    with pytest.raises(DatasetImportError, match=r"missing\.yaml does not exist"):
        import_dataset(
            sources["csv"], name="s", out=str(out), column_types=tmp_path / "missing.yaml"
        )


def test_the_command_takes_both_options(tmp_path: Path, sources: dict[str, str]) -> None:
    declared = tmp_path / "types.yaml"
    declared.write_text(DECLARED)
    out = tmp_path / "cli"
    base = ["dataset", "import", sources["duckdb"], "--name", "shop"]
    # the flow (the default), then the library
    assert main([*base, "--out", str(out), "--column-types", str(declared)]) == 0
    assert dict(described(out))["amount"] == "DECIMAL(10,2)"
    kept = tmp_path / "kept"
    flags = ["--keep-source-types", "--no-validate", "--no-prefect"]
    assert main([*base, "--out", str(kept), *flags]) == 0
    assert dict(described(kept))["qty"] == "SMALLINT"


def test_the_canonical_mapping() -> None:
    for source, canonical in [
        ("TINYINT", "BIGINT"),
        ("UINTEGER", "BIGINT"),
        ("HUGEINT", "HUGEINT"),  # may not fit a BIGINT: kept
        ("FLOAT", "DOUBLE"),
        ("DECIMAL(38,10)", "DOUBLE"),
        ("UUID", "VARCHAR"),
        ("JSON", "VARCHAR"),
        ("ENUM('sad', 'happy')", "VARCHAR"),
        ("TIMESTAMP_NS", "TIMESTAMP"),
        ("TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE"),
        ("INTERVAL", "INTERVAL"),
        ("BLOB", "BLOB"),
        ("INTEGER[]", "INTEGER[]"),  # nested types are kept
        ("STRUCT(a INTEGER)", "STRUCT(a INTEGER)"),
    ]:
        assert canonical_type(source) == canonical, source
