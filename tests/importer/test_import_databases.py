"""``import_dataset`` from a DuckDB file (schema raw, else main, else --schema) and from a real
PostgreSQL server (every table of a schema, types mapped, streamed in chunks from one snapshot);
bad schemas and URLs fail naming them and publish nothing."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from uuid import UUID

import duckdb
import psycopg
import pytest

from benchforge.synthesis.importer import DatasetImportError, import_dataset, postgres
from benchforge.synthesis.importer.postgres import CsvSpool, duck_type, redact, split_password
from tests.importer.checks import assert_dataset
from tests.support.postgres import PostgresServer, free_port


def test_a_duckdb_file_imports_its_raw_schema_or_the_one_named(tmp_path: Path) -> None:
    source = tmp_path / "warehouse.db"
    with duckdb.connect(str(source)) as con:
        con.execute(
            "CREATE SCHEMA raw; CREATE SCHEMA sales; "
            "CREATE TABLE raw.customers AS SELECT range AS id, 'c' || range AS name FROM range(30);"
            'CREATE TABLE raw."Events" (happened TIMESTAMPTZ, kind VARCHAR, tags VARCHAR[]);'
            "INSERT INTO raw.\"Events\" VALUES ('2024-01-01 10:00:00+00', 'x', ['a', 'b']);"
            "CREATE TABLE sales.orders AS SELECT range AS order_id FROM range(5);"
            "CREATE TABLE main.ignored (x INT); CREATE VIEW raw.not_a_table AS SELECT 1 AS x;"
        )
    out = tmp_path / "crm"
    record = import_dataset(str(source), name="crm", out=str(out))
    assert_dataset(out, "crm", {"customers": 30, "events": 1})
    assert record.imported is not None and record.imported.db_schema == "raw"
    assert record.imported.tables == {"customers": "raw.customers", "events": "raw.Events"}
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        assert con.execute("SELECT tags FROM raw.events").fetchall() == [(["a", "b"],)]
    sales = tmp_path / "sales"
    import_dataset(str(source), name="sales", out=str(sales), db_schema="sales", validate=False)
    assert_dataset(sales, "sales", {"orders": 5})
    for kwargs, words in [
        ({"db_schema": "sale"}, "no schema 'sale' .*did you mean 'sales'"),
        ({"tables": ["customer"]}, "no table 'customer' in schema raw.*did you mean 'customers'"),
    ]:
        with pytest.raises(DatasetImportError, match=words):
            import_dataset(str(source), name="x", out=str(tmp_path / "x"), **kwargs)
        assert not (tmp_path / "x").exists()
    not_duckdb = tmp_path / "notes.db"
    not_duckdb.write_text("hello")
    with pytest.raises(DatasetImportError, match=r"neither a folder .* nor a DuckDB database"):
        import_dataset(str(not_duckdb), name="x", out=str(tmp_path / "x"))


SHOP = r"""
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE DOMAIN positive AS integer CHECK (VALUE > 0);
CREATE TABLE "Customers" (
    id serial PRIMARY KEY, "Full Name" text, mood mood, score positive, balance numeric(12, 2),
    ratio double precision, born date, seen timestamptz, at timestamp, span interval,
    uid uuid, payload bytea, doc jsonb, tags text[], ok boolean);
INSERT INTO "Customers" ("Full Name", mood, score, balance, ratio, born, seen, at, span, uid,
                         payload, doc, tags, ok) VALUES
    ('Lee, "Ann"', 'happy', 3, 12.50, 0.1, '2000-01-02', '2024-01-01 10:00:00+02',
     '2024-01-01 10:00:00.123456', '1 year 2 mons 3 days 04:05:06.5',
     'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x0102ff', '{"a": [1, 2]}', '{a,"b c"}', true),
    (E'two\nlines', 'sad', 1, -3.10, 'NaN', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     false),
    ('', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE orders (order_id bigint PRIMARY KEY, customer_id int, note text, amount real);
INSERT INTO orders SELECT g, g % 3 + 1, 'note "' || g || E'"\nmore', g * 1.5
    FROM generate_series(1, 3000) g;
CREATE SCHEMA archive;
CREATE TABLE archive.old_orders (order_id bigint);
"""


@pytest.fixture(scope="module")
def shop_url(postgres: PostgresServer) -> str:
    assert postgres.createdb("shop")
    url = postgres.url("shop")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SHOP)
    return url


def test_a_postgres_schema_streams_in_with_its_types(
    tmp_path: Path, shop_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "CHUNK_BYTES", 16 * 1024)  # orders spans a dozen chunks
    chunks: list[int] = []
    finish = CsvSpool.finish

    def counting(self: CsvSpool) -> None:
        finish(self)
        chunks.append(self.chunks)

    monkeypatch.setattr(CsvSpool, "finish", counting)
    out = tmp_path / "shop"
    # the route's own types (the canonical ones every route agrees on: test_types.py)
    record = import_dataset(shop_url, name="shop", out=str(out), keep_source_types=True)
    assert_dataset(out, "shop", {"customers": 3, "orders": 3000})
    assert record.validation_success and chunks[1] > 3  # customers, then orders
    assert record.imported is not None and record.imported.kind == "postgres"
    assert record.imported.db_schema == "public" and "@127.0.0.1" in record.imported.location
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        types = {r[0]: r[1] for r in con.execute("DESCRIBE raw.customers").fetchall()}
        rows = con.execute("SELECT * EXCLUDE (seen) FROM raw.customers ORDER BY id").fetchall()
        seen = con.execute("SELECT CAST(seen AS VARCHAR) FROM raw.customers WHERE id = 1")
        assert seen.fetchone() == ("2024-01-01 08:00:00+00",)
        orders = con.execute(
            "SELECT count(*), sum(order_id), sum(amount), count(DISTINCT note), "
            "min(note) FROM raw.orders"
        ).fetchone()
    assert types == {
        "id": "INTEGER",
        "Full Name": "VARCHAR",
        "mood": "VARCHAR",
        "score": "INTEGER",
        "balance": "DECIMAL(12,2)",
        "ratio": "DOUBLE",
        "born": "DATE",
        "seen": "TIMESTAMP WITH TIME ZONE",
        "at": "TIMESTAMP",
        "span": "INTERVAL",
        "uid": "UUID",
        "payload": "BLOB",
        "doc": "JSON",
        "tags": "VARCHAR",
        "ok": "BOOLEAN",
    }
    first, second, third = rows
    assert first == (
        1,
        'Lee, "Ann"',
        "happy",
        3,
        Decimal("12.50"),
        0.1,
        date(2000, 1, 2),
        datetime(2024, 1, 1, 10, 0, 0, 123456),
        timedelta(days=14 * 30 + 3, seconds=4 * 3600 + 5 * 60 + 6, microseconds=500000),
        UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        b"\x01\x02\xff",
        '{"a": [1, 2]}',
        '{a,"b c"}',
        True,
    )
    assert second[1] == "two\nlines" and second[5] != second[5]  # NaN
    assert third[1] == "" and third[2:] == (None,) * 12  # '' stays '', NULL stays NULL
    assert orders == (3000, 3000 * 3001 // 2, 1.5 * 3000 * 3001 / 2, 3000, 'note "1"\nmore')


def test_postgres_errors_name_the_schema_table_or_server(
    tmp_path: Path, shop_url: str, postgres: PostgresServer
) -> None:
    out = tmp_path / "x"
    closed = f"postgresql://postgres:secret@127.0.0.1:{free_port()}/shop"
    for source, kwargs, words in [
        (shop_url, {"db_schema": "archiv"}, "no schema 'archiv' .*did you mean 'archive'"),
        (shop_url, {"tables": ["order"]}, "no table 'order' .*did you mean 'orders'"),
        (closed, {}, r"cannot connect to postgresql://postgres@127\.0\.0\.1:\d+/shop: "),
        (postgres.url("nope"), {}, 'database "nope" does not exist'),
    ]:
        with pytest.raises(DatasetImportError, match=words) as caught:
            import_dataset(source, name="x", out=str(out), **kwargs)
        assert "secret" not in str(caught.value)
        assert not out.exists() and not list(tmp_path.iterdir())


def test_urls_lose_their_passwords() -> None:
    url = "postgresql+psycopg://ann:p%40ss@db:5432/shop?sslmode=require&password=other"
    assert redact(url) == "postgresql+psycopg://ann@db:5432/shop?sslmode=require"
    assert split_password("postgresql://ann:p%40ss@db/shop") == ("postgresql://ann@db/shop", "p@ss")
    assert split_password("postgresql://ann@db/shop") == ("postgresql://ann@db/shop", None)


def test_type_mapping() -> None:
    assert duck_type("numeric(10,2)", "N") == "DECIMAL(10,2)"
    assert duck_type("numeric(60,2)", "N") == "DOUBLE"  # beyond DuckDB's 38 digits
    assert duck_type("timestamp(3) without time zone", "D") == "TIMESTAMP"
    assert duck_type("integer[]", "A") == "VARCHAR"
    assert duck_type("inet", "I") == "VARCHAR"


def test_the_spool_cuts_only_between_rows(tmp_path: Path) -> None:
    rows = [f'{i},"a ""quoted"", value\nwith a newline {i}",x\n'.encode() for i in range(200)]
    data = b"".join(rows)
    loaded: list[bytes] = []
    spool = CsvSpool(tmp_path / "chunk.csv", 500, lambda p: loaded.append(p.read_bytes()))
    for start in range(0, len(data), 37):  # blocks that end anywhere, mid-quote included
        spool.write(data[start : start + 37])
    spool.finish()
    spool.discard()
    assert b"".join(loaded) == data and len(loaded) > 10
    for chunk in loaded:  # whole rows only: each parses into rows of three fields
        parsed = list(csv.reader(io.StringIO(chunk.decode(), newline="")))
        assert parsed and all(len(row) == 3 and row[2] == "x" for row in parsed)
    assert not (tmp_path / "chunk.csv").exists()
