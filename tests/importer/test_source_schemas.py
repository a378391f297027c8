"""``dataset import --source-schema S``: schema S of the warehouse gives every raw table as a
view ``S.t`` over ``raw.t``, for a dbt project whose sources read S. The view reads its own
file's ``raw.t`` under any alias the scorer attaches it as; a gold build whose sources say
``schema: shop`` builds on such a dataset and fails with a hint naming the option on one
without; bad schemas are refused before anything is written; a release re-creates the views."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from benchforge.anonymize.policy.draft import draft_policy
from benchforge.anonymize.policy.loader import load_policy
from benchforge.anonymize.release import stage_release
from benchforge.cli.main import main
from benchforge.synthesis.importer import DatasetImportError, import_dataset
from tests.importer.checks import assert_dataset
from tests.importer.test_import_files import assert_nothing_published, write_csvs

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROWS = {"orders": 4, "customers": 3}


def _differ(con: duckdb.DuckDBPyConnection, a: str, b: str) -> int:
    found = con.execute(
        f"SELECT count(*) FROM ((FROM {a} EXCEPT ALL FROM {b}) UNION ALL "
        f"(FROM {b} EXCEPT ALL FROM {a}))"
    ).fetchone()
    assert found is not None
    return int(found[0])


@pytest.fixture(scope="module")
def shop_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CSV fixtures imported with ``source_schemas=["shop", "jaffle_shop"]``, validated."""
    folder = tmp_path_factory.mktemp("views")
    out = folder / "datasets" / "shop"
    import_dataset(
        str(write_csvs(folder / "src")),
        name="shop",
        out=str(out),
        source_schemas=["shop", "jaffle_shop"],
    )
    return out


def test_a_source_schema_gives_every_table_as_a_view_over_raw(shop_dataset: Path) -> None:
    assert_dataset(shop_dataset, "shop", ROWS, source_schemas=["shop", "jaffle_shop"])
    with duckdb.connect(str(shop_dataset / "warehouse.duckdb"), read_only=True) as con:
        for schema in ("shop", "jaffle_shop"):
            for table in ROWS:
                assert _differ(con, f"{schema}.{table}", f"raw.{table}") == 0, (schema, table)
        # the view's query names no catalog: the file may be attached under any alias
        sql = con.execute(
            "SELECT sql FROM duckdb_views() WHERE schema_name = 'shop' AND view_name = 'customers'"
        ).fetchone()
        assert sql == ("CREATE VIEW shop.customers AS SELECT * FROM raw.customers;",)
    # views are not tables: one Parquet file and one profile per raw table, no more
    suite = json.loads((shop_dataset / "validation" / "expectations.json").read_text())
    assert sorted(p["name"] for p in suite["profile"]) == sorted(ROWS)


@pytest.mark.parametrize("alias", ["gold", "src", "shop", "warehouse"])
def test_the_view_reads_its_own_file_under_any_alias(
    shop_dataset: Path, tmp_path: Path, alias: str
) -> None:
    """The scorer attaches copies of the warehouse as other catalogs (``gold``, ``src``);
    the attaching connection's own ``raw.customers`` (other rows) is never read instead."""
    copy = shutil.copyfile(shop_dataset / "warehouse.duckdb", tmp_path / "copy.duckdb")
    with duckdb.connect() as con:
        con.execute("CREATE SCHEMA raw")
        con.execute("CREATE TABLE raw.customers AS SELECT 99 AS customer_id, 'Zed' AS name")
        con.execute(f"ATTACH '{copy}' AS {alias} (READ_ONLY)")
        assert _differ(con, f"{alias}.shop.customers", f"{alias}.raw.customers") == 0
        rows = con.execute(f"SELECT count(*) FROM {alias}.shop.customers").fetchone()
        assert rows == (3,)
        con.execute(f"USE {alias}")  # the file's catalog as the default one
        assert _differ(con, f"{alias}.shop.customers", "raw.customers") == 0


def test_the_one_alias_the_view_cannot_take_is_raw(shop_dataset: Path) -> None:
    """Pinned (DuckDB 1.5): attached as ``raw``, the view's ``raw.customers`` is ambiguous
    (catalog or schema), as is any query reading the tables as ``raw.t``. No scorer
    attaches a warehouse under that name to read through it."""
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{shop_dataset / 'warehouse.duckdb'}' AS raw (READ_ONLY)")
        with pytest.raises(duckdb.BinderException, match="Ambiguous reference"):
            con.execute("SELECT * FROM raw.shop.customers").fetchall()


@pytest.mark.parametrize(
    ("schemas", "expected"),
    [
        (["raw"], "source schema 'raw' cannot hold the views: the dataset's tables are"),
        (["RAW"], "source schema 'RAW' cannot hold the views"),
        (["main"], "source schema 'main' cannot hold the views: a schema DuckDB uses"),
        (["information_schema"], "'information_schema' cannot hold the views"),
        (["shop", "Shop"], "source schema 'Shop' is given twice (as 'shop')"),
        (["my-shop"], "source schema 'my-shop' is not an identifier"),
        (["1shop"], "source schema '1shop' is not an identifier"),
        ([""], "source schema '' is not an identifier"),
        (['sh"op'], "is not an identifier"),
    ],
    ids=["raw", "raw-upper", "main", "system", "twice", "dash", "digit", "empty", "quote"],
)
def test_bad_source_schemas_are_refused_before_anything_is_written(
    tmp_path: Path, schemas: list[str], expected: str
) -> None:
    out = tmp_path / "datasets" / "shop"
    with pytest.raises(DatasetImportError) as err:
        import_dataset(
            str(write_csvs(tmp_path / "src")), name="shop", out=str(out), source_schemas=schemas
        )
    assert str(err.value).startswith("--source-schema: ") and expected in str(err.value)
    assert_nothing_published(out)


def test_the_command_refuses_a_bad_source_schema_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = write_csvs(tmp_path / "src"), tmp_path / "datasets" / "shop"
    argv = ["dataset", "import", str(src), "--name", "shop", "--out", str(out)]
    assert main([*argv, "--source-schema", "shop", "--source-schema", "raw", "--no-prefect"]) == 2
    assert "--source-schema: source schema 'raw' cannot hold the views" in capsys.readouterr().err
    assert_nothing_published(out)


DBT_PROJECT = {
    "dbt_project.yml": (
        'name: jaffle\nversion: "1.0.0"\nconfig-version: 2\nprofile: jaffle\n'
        "models:\n  jaffle:\n    +materialized: table\n"
    ),
    "models/_sources.yml": (
        "version: 2\nsources:\n  - name: jaffle_shop\n    schema: shop\n    tables:\n"
        "      - name: customers\n      - name: orders\n"
    ),
    "models/customer_orders.sql": (
        "select c.customer_id, count(o.order_id) as orders\n"
        "from {{ source('jaffle_shop', 'customers') }} as c\n"
        "left join {{ source('jaffle_shop', 'orders') }} as o\n"
        '    on o."Customer Name" = c.name\ngroup by c.customer_id\n'
    ),
}


def test_a_dbt_project_reading_schema_shop_builds_only_with_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The import runs as the Prefect flow (the command's default), the gold build without."""
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    repo = tmp_path / "jaffle"
    for rel, text in DBT_PROJECT.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    src = write_csvs(tmp_path / "src")
    plain, mapped = tmp_path / "datasets" / "plain", tmp_path / "datasets" / "mapped"
    common = ["dataset", "import", str(src), "--name", "jaffle", "--no-validate", "--out"]
    assert main([*common, str(plain), "--no-prefect"]) == 0
    assert main([*common, str(mapped), "--source-schema", "shop"]) == 0
    assert "views over raw in schema shop" in capsys.readouterr().out
    assert_dataset(mapped, "jaffle", ROWS, source_schemas=["shop"])

    build = ["gold", "build", "jaffle", "--repo", str(repo), "--no-prefect", "--dataset"]
    assert main([*build, str(plain)]) == 2
    err = capsys.readouterr().err
    assert "sources of models/_sources.yml read schema shop (customers, orders)" in err, err
    assert "import it with --source-schema shop (views shop.* over raw.*)" in err, err

    assert main([*build, str(mapped)]) == 0, capsys.readouterr().err
    assert "gold jaffle: 1 models" in capsys.readouterr().out
    (gold,) = (tmp_path / "artifacts" / "gold" / "jaffle").glob("*/*/gold.duckdb")
    with duckdb.connect(str(gold), read_only=True) as con:
        built = con.execute("SELECT * FROM main.customer_orders ORDER BY 1").fetchall()
    assert built == [(1, 0), (2, 1), (3, 1)]  # "Lee, Ann" is not "Ann"


def test_a_release_recreates_the_views_and_lists_them(
    shop_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release warehouse is written anew from raw: the source's ``source_schemas``
    (manifest) are re-created over the released tables; a dataset without them gets a
    manifest with no such field (as before the option existed)."""
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{shop_dataset / 'warehouse.duckdb'}' AS src (READ_ONLY)")
        text = draft_policy(con, "src", "shop")
    policy = tmp_path / "shop.yaml"
    policy.write_text(text)
    loaded = load_policy(policy)
    monkeypatch.setenv(loaded.policy.secret_env, "k" * 32)

    staged = stage_release(shop_dataset, loaded, tmp_path / "release")
    assert staged.manifest.source_schemas == ["shop", "jaffle_shop"]
    manifest = json.loads((tmp_path / "release" / "manifest.json").read_text())
    assert manifest["source_schemas"] == ["shop", "jaffle_shop"]
    assert sorted(manifest["tables"]) == sorted(ROWS)  # views: no Parquet of their own
    with duckdb.connect(str(tmp_path / "release" / "warehouse.duckdb"), read_only=True) as con:
        for schema in ("shop", "jaffle_shop"):
            for table in ROWS:
                assert _differ(con, f"{schema}.{table}", f"raw.{table}") == 0, (schema, table)

    plain = tmp_path / "plain"
    shutil.copytree(shop_dataset, plain)
    data = json.loads((plain / "manifest.json").read_text())
    (plain / "manifest.json").write_text(json.dumps({**data, "source_schemas": []}))
    staged = stage_release(plain, loaded, tmp_path / "release-plain")
    assert "source_schemas" not in json.loads(
        (tmp_path / "release-plain" / "manifest.json").read_text()
    )
    assert staged.manifest.source_schemas == []
    with duckdb.connect(str(tmp_path / "release-plain" / "warehouse.duckdb")) as con:
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone() == (
            0,
        )
