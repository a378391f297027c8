"""``import_dataset`` from folders of CSV and Parquet files: a dataset like a synthesized one,
validated with profile-derived expectations; bad inputs fail naming the file and publish
nothing; S3 publish (the command end to end: test_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import duckdb
import pytest

from benchforge.core.artifacts import S3ArtifactStore
from benchforge.synthesis.importer import DatasetImportError, import_dataset, table_name
from tests.importer.checks import assert_dataset

ORDERS = (
    "order_id,Customer Name,status,amount,ordered_on\n"
    '1,"Lee, Ann",open,10.50,2024-01-02\n'
    "2,Bob,closed,3.25,2024-02-03\n"
    "3,Cy,open,,2024-03-04\n"
    "4,Di,open,7,2024-03-05\n"
)
CUSTOMERS = "customer_id,name\n1,Ann\n2,Bob\n3,Cy\n"


def write_csvs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Orders.csv").write_text(ORDERS)
    (folder / "customers.csv").write_text(CUSTOMERS)
    return folder


def assert_nothing_published(out: Path) -> None:
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}*")), "staging left behind"


def test_a_csv_folder_becomes_a_validated_dataset(tmp_path: Path) -> None:
    out = tmp_path / "shop"
    record = import_dataset(str(write_csvs(tmp_path / "src")), name="shop", out=str(out))
    assert_dataset(out, "shop", {"orders": 4, "customers": 3})
    assert record.imported is not None and record.imported.kind == "files"
    assert record.imported.tables == {"orders": "Orders.csv", "customers": "customers.csv"}
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        assert con.execute('SELECT "Customer Name", amount FROM raw.orders').fetchall() == [
            ("Lee, Ann", 10.5),
            ("Bob", 3.25),
            ("Cy", None),
            ("Di", 7.0),
        ]
        types = dict(con.execute("DESCRIBE raw.orders").fetchall()[i][:2] for i in range(5))
    assert types == {
        "order_id": "BIGINT",
        "Customer Name": "VARCHAR",
        "status": "VARCHAR",
        "amount": "DOUBLE",
        "ordered_on": "DATE",
    }
    results = json.loads((out / "validation" / "results.json").read_text())
    assert results["success"] and record.validation_success
    assert record.validation_expectations == len(results["results"])
    checks = {(r["check"], r["table"], r["column"]) for r in results["results"]}
    assert ("unique", "orders", "order_id") in checks
    assert ("in_set", "orders", "status") in checks
    assert ("not_null", "orders", "amount") not in checks  # it has a NULL
    assert (out / "validation" / "index.html").is_file()
    assert (out / "validation" / "expectations.json").is_file()


def test_a_parquet_folder_imports_only_the_tables_asked_for(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    with duckdb.connect() as con:
        con.execute(
            "COPY (SELECT range AS id, CAST(1.25 * range AS DECIMAL(10, 2)) AS price, "
            "TIMESTAMP '2024-01-01' + INTERVAL (range) HOUR AS at FROM range(50)) "
            f"TO '{src / 'line-items.parquet'}' (FORMAT parquet)"
        )
        con.execute(f"COPY (SELECT 1 AS x) TO '{src / 'skipped.parquet'}' (FORMAT parquet)")
    out = tmp_path / "items"
    record = import_dataset(
        str(src), name="items", out=str(out), tables=["line_items"], validate=False
    )
    assert_dataset(out, "items", {"line_items": 50})
    assert record.validation_success is None and not (out / "validation").exists()
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        described = [r[:2] for r in con.execute("DESCRIBE raw.line_items").fetchall()]
    # canonical types: DECIMAL becomes DOUBLE, as from a CSV file (test_types.py)
    assert described == [("id", "BIGINT"), ("price", "DOUBLE"), ("at", "TIMESTAMP")]


def test_table_names_come_from_file_stems() -> None:
    assert table_name("Order Items") == "order_items"
    assert table_name("2024-sales") == "t_2024_sales"
    assert table_name("customers") == "customers"
    with pytest.raises(DatasetImportError, match="no table name"):
        table_name("---")


def _bad_sources(tmp_path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(source, the error's expected words, import arguments) of every bad input."""
    empty = tmp_path / "empty"
    empty.mkdir(parents=True)
    unsupported = write_csvs(tmp_path / "unsupported")
    (unsupported / "notes.txt").write_text("x")
    ragged = write_csvs(tmp_path / "ragged")  # customers and orders load, then zones fails
    (ragged / "zones.csv").write_text("id,name\n1,a\n2,b,extra\n3,c\n")
    latin = write_csvs(tmp_path / "latin")
    (latin / "places.csv").write_bytes(b"id,name\n1,M\xfcnchen\n")
    clash = write_csvs(tmp_path / "clash")
    (clash / "ORDERS.parquet").write_bytes(b"")
    header_only = write_csvs(tmp_path / "blank")
    (header_only / "blank.csv").write_text("")
    short = write_csvs(tmp_path / "short")  # DuckDB alone skips 2 lines and drops the header
    (short / "zones.csv").write_text("id,name\n1,a\n2,b,extra\n")
    headless = write_csvs(tmp_path / "headless")
    (headless / "points.csv").write_text("1,2\n3,4\n")
    return [
        (str(tmp_path / "missing"), "does not exist", {}),
        (str(empty), "is empty", {}),
        (str(unsupported), "notes.txt", {}),
        (str(ragged), "zones.csv line 3: 3 fields where the header has 2", {}),
        (str(latin), "places.csv line", {}),
        (str(clash), "ORDERS.parquet and Orders.csv would both become table 'orders'", {}),
        (str(header_only), "blank.csv is empty", {}),
        (str(short), "zones.csv line 3: 3 fields where the header has 2", {}),
        (str(headless), "points.csv has no header line", {}),
        (
            str(write_csvs(tmp_path / "typo")),
            "no table 'ordrs'.*did you mean 'orders'",
            {"tables": ["ordrs"]},
        ),
        (str(tmp_path / "typo" / "Orders.csv"), "single file: give the folder", {}),
        (str(write_csvs(tmp_path / "named")), "dataset name 'my shop'", {"name": "my shop"}),
    ]


def test_bad_inputs_name_the_file_and_publish_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out" / "shop"
    for source, words, kwargs in _bad_sources(tmp_path / "sources"):
        with pytest.raises(DatasetImportError, match=words):
            import_dataset(source, **{"name": "shop", "out": str(out), **kwargs})
        assert_nothing_published(out)


def test_an_s3_import_uploads_the_record_last(
    tmp_path: Path, s3_server: str, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHFORGE_S3_ENDPOINT_URL", s3_server)
    uploaded: list[str] = []
    put_file = S3ArtifactStore.put_file

    def recording(self: S3ArtifactStore, key: str, path: Path) -> Any:
        uploaded.append(key)
        return put_file(self, key, path)

    monkeypatch.setattr(S3ArtifactStore, "put_file", recording)
    uri = f"s3://{s3_bucket}/imports/shop"
    record = import_dataset(str(write_csvs(tmp_path / "src")), name="shop", out=uri)
    assert record.location == uri
    assert uploaded[-1] == "shop/dataset.json" and len(uploaded) > 5
    s3 = boto3.client("s3", endpoint_url=s3_server)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=s3_bucket)["Contents"]}
    for name in ("warehouse.duckdb", "manifest.json", "parquet/orders.parquet", "dataset.json"):
        assert f"imports/shop/{name}" in keys, name
    assert "imports/shop/validation/results.json" in keys
    body = s3.get_object(Bucket=s3_bucket, Key="imports/shop/dataset.json")["Body"].read()
    assert json.loads(body)["table_checksums"] == record.table_checksums


def test_the_default_location_is_under_the_artifact_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    record = import_dataset(str(write_csvs(tmp_path / "src")), name="shop", validate=False)
    out = tmp_path / "artifacts" / "datasets-imported" / "shop"
    assert record.location == str(out)
    assert_dataset(out, "shop", {"orders": 4, "customers": 3})
