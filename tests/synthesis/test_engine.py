"""The generator engine on the mini domain: determinism, keys, links, time, stressors."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from benchforge.synthesis.engine import generate_dataset, read_manifest
from benchforge.synthesis.spec import DomainSpec, load_spec
from tests.paths import FIXTURES

MINI = FIXTURES / "mini_domain.yaml"


@pytest.fixture(scope="module")
def spec() -> DomainSpec:
    return load_spec(MINI)


@pytest.fixture(scope="module")
def dataset(spec: DomainSpec, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mini") / "seed7"
    generate_dataset(spec, scale=1, seed=7, out=out)
    return out


@pytest.fixture(scope="module")
def db(dataset: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"ATTACH '{dataset / 'warehouse.duckdb'}' AS wh (READ_ONLY); USE wh")
    con.execute(f"CREATE TEMP VIEW anomalies AS SELECT * FROM '{dataset / 'anomalies.parquet'}'")
    return con


def one(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def manifest_count(
    con: duckdb.DuckDBPyConnection, table: str, column: str | None, kind: str
) -> int:
    col = "column_name IS NULL" if column is None else f"column_name = '{column}'"
    return one(
        con,
        f"SELECT count(*) FROM anomalies WHERE table_name = '{table}' AND {col} "
        f"AND kind = '{kind}'",
    )


def test_outputs_and_row_counts(dataset: Path, db: duckdb.DuckDBPyConnection) -> None:
    manifest = read_manifest(dataset)
    assert {p.name for p in (dataset / "parquet").iterdir()} == {
        f"{t}.parquet"
        for t in ["users", "accounts", "contacts", "opportunities", "account_history"]
    }
    assert {t: s.rows for t, s in manifest.tables.items() if t != "account_history"} == {
        "users": 50,
        "accounts": 2000,
        "contacts": 6000,
        "opportunities": 8000,
    }
    # SCD: versions per entity have mean 2.5, capped at 6.
    assert 2000 * 2.2 < manifest.tables["account_history"].rows < 2000 * 2.8
    assert one(db, "SELECT count(*) FROM raw.accounts") == 2000
    schemas = {
        r[0]
        for r in db.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'wh'"
        ).fetchall()
    }
    assert "_gen" not in schemas and "raw" in schemas
    assert not (dataset / "_work.duckdb").exists()
    assert manifest.anomaly_total == one(db, "SELECT count(*) FROM anomalies")


def test_same_seed_is_byte_identical_other_seed_differs(
    spec: DomainSpec, dataset: Path, tmp_path: Path
) -> None:
    again = generate_dataset(spec, scale=1, seed=7, out=tmp_path / "again", chunk_rows=1500)
    other = generate_dataset(spec, scale=1, seed=8, out=tmp_path / "other")
    first = read_manifest(dataset)
    # Chunk size differs too: rows do not depend on the order or grouping they are made in.
    assert {n: t.parquet_sha256 for n, t in again.tables.items()} == {
        n: t.parquet_sha256 for n, t in first.tables.items()
    }
    for name, table in other.tables.items():
        assert table.parquet_sha256 != first.tables[name].parquet_sha256, name


def test_clean_foreign_keys_have_no_orphans(db: duckdb.DuckDBPyConnection) -> None:
    fks = [
        ("accounts", "owner_id", "users", "user_id"),
        ("contacts", "account_id", "accounts", "account_id"),
        ("opportunities", "account_id", "accounts", "account_id"),
        ("account_history", "account_id", "accounts", "account_id"),
    ]
    for child, col, parent, key in fks:
        orphans = one(
            db,
            f"""SELECT count(*) FROM raw.{child} c WHERE c.{col} IS NOT NULL
                AND c.{col} NOT IN (SELECT {key} FROM raw.{parent})""",
        )
        assert orphans == manifest_count(db, child, col, "key_drift"), (child, col)
    # Every orphan is a manifest row; clean rows have none.
    clean_orphans = one(
        db,
        """SELECT count(*) FROM raw.contacts c
        WHERE c.account_id NOT IN (SELECT account_id FROM raw.accounts)
          AND CAST(c.contact_id AS VARCHAR) NOT IN (
              SELECT row_key FROM anomalies WHERE kind = 'key_drift')""",
    )
    assert clean_orphans == 0
    assert manifest_count(db, "contacts", "account_id", "key_drift") > 60


def test_manifest_counts_equal_anomalies_in_data(db: duckdb.DuckDBPyConnection) -> None:
    nulls = one(db, "SELECT count(*) FROM raw.contacts WHERE last_name IS NULL")
    assert nulls == manifest_count(db, "contacts", "last_name", "missing_values") > 100
    coerced = one(
        db,
        "SELECT count(*) FROM raw.accounts "
        "WHERE NOT regexp_full_match(annual_revenue, '-?[0-9.e+]+')",
    )
    assert coerced == manifest_count(db, "accounts", "annual_revenue", "type_coercion") > 50
    double_current = one(
        db,
        """SELECT count(*) FROM (SELECT account_id FROM raw.account_history WHERE is_current
           GROUP BY 1 HAVING count(*) > 1)""",
    )
    assert double_current == manifest_count(db, "account_history", None, "duplicate_current") > 20
    conflicts = one(
        db,
        """SELECT count(*) FROM raw.opportunities o JOIN raw.accounts a USING (account_id)
           WHERE o.currency <> a.currency""",
    )
    assert conflicts == manifest_count(db, "opportunities", "currency", "currency_conflict") > 80
    # Outliers and missing values share a column without overlapping.
    amount_nulls = one(db, "SELECT count(*) FROM raw.opportunities WHERE amount IS NULL")
    assert amount_nulls == manifest_count(db, "opportunities", "amount", "missing_values")
    overlap = one(
        db,
        """SELECT count(*) FROM (SELECT row_key FROM anomalies WHERE table_name = 'opportunities'
           AND column_name = 'amount' GROUP BY row_key HAVING count(*) > 1)""",
    )
    assert overlap == 0


def test_outlier_and_timezone_rows_are_exactly_the_manifest_rows(
    db: duckdb.DuckDBPyConnection,
) -> None:
    # Outliers are 1000x a lognormal(9.5, 1.1): above 5M only if touched (p < 1e-7 otherwise).
    big = db.execute(
        "SELECT opportunity_id FROM raw.opportunities WHERE amount > 5000000 ORDER BY 1"
    ).fetchall()
    listed = db.execute(
        """SELECT row_key FROM anomalies WHERE kind = 'outliers' AND row_key IN
           (SELECT opportunity_id FROM raw.opportunities WHERE amount > 5000000) ORDER BY 1"""
    ).fetchall()
    assert big == listed
    assert len(big) >= 0.7 * manifest_count(db, "opportunities", "amount", "outliers")
    # Shifted timestamps are the only ones that can fall before their account existed.
    early = one(
        db,
        """SELECT count(*) FROM raw.opportunities o JOIN raw.accounts a USING (account_id)
           WHERE o.created_at < a.created_at AND o.opportunity_id NOT IN
           (SELECT row_key FROM anomalies WHERE kind = 'timezone_mismatch')""",
    )
    assert early == 0
    assert manifest_count(db, "opportunities", "created_at", "timezone_mismatch") > 100


def test_conditional_links_and_parent_copies(db: duckdb.DuckDBPyConnection) -> None:
    bad = one(
        db,
        """SELECT count(*) FROM raw.accounts WHERE (country, currency) NOT IN
           (VALUES ('US', 'USD'), ('GB', 'GBP'), ('DE', 'EUR'), ('FR', 'EUR'),
                   ('JP', 'JPY'), ('BR', 'BRL'))""",
    )
    assert bad == 0
    owners = one(
        db,
        """SELECT count(*) FROM raw.opportunities o JOIN raw.accounts a USING (account_id)
           WHERE o.owner_id <> a.owner_id OR o.country <> a.country""",
    )
    assert owners == 0
    # Industry drives the revenue scale: finance (mu 17) above retail (default mu 15).
    by_industry = dict(
        db.execute(
            """SELECT industry, median(TRY_CAST(annual_revenue AS DOUBLE)) FROM raw.accounts
               GROUP BY 1"""
        ).fetchall()
    )
    assert by_industry["Finance"] > 4 * by_industry["Retail"]


def test_time_is_coherent_and_seasonal(db: duckdb.DuckDBPyConnection) -> None:
    assert (
        one(
            db,
            """SELECT count(*) FROM raw.contacts c JOIN raw.accounts a USING (account_id)
           WHERE c.created_at < a.created_at""",
        )
        == 0
    )
    lag = db.execute(
        """SELECT min(close_date - CAST(created_at AS DATE)),
                  max(close_date - CAST(created_at AS DATE)) FROM raw.opportunities
           WHERE opportunity_id NOT IN (SELECT row_key FROM anomalies
                                        WHERE kind = 'timezone_mismatch')"""
    ).fetchone()
    assert lag is not None and lag[0] >= 0 and lag[1] <= 181
    weekday, weekend = db.execute(
        """SELECT avg(n) FILTER (WHERE dow BETWEEN 1 AND 5), avg(n) FILTER (WHERE dow IN (0, 6))
           FROM (SELECT dayofweek(created_at) dow, count(*) n FROM raw.accounts GROUP BY 1)"""
    ).fetchone() or (0, 0)
    assert weekday > 3 * weekend  # weekly weights 1.0-1.1 vs 0.2-0.3
    per_year = dict(
        db.execute("SELECT year(created_at), count(*) FROM raw.accounts GROUP BY 1").fetchall()
    )
    assert per_year[2023] > per_year[2021] * 1.3  # 25% yearly growth


def test_scd_history_is_consistent(db: duckdb.DuckDBPyConnection) -> None:
    # valid_to of a version is the next version's valid_from (except injected duplicates).
    gaps = one(
        db,
        """SELECT count(*) FROM (
             SELECT valid_to, lead(valid_from) OVER (PARTITION BY account_id
                                                    ORDER BY valid_from) AS next_from,
                    account_history_id
             FROM raw.account_history)
           WHERE next_from IS NOT NULL AND valid_to IS DISTINCT FROM next_from
             AND CAST(account_history_id AS VARCHAR) NOT IN
                 (SELECT row_key FROM anomalies WHERE kind = 'duplicate_current')""",
    )
    assert gaps == 0
    no_current = one(
        db,
        """SELECT count(*) FROM raw.accounts a WHERE NOT EXISTS
           (SELECT 1 FROM raw.account_history h WHERE h.account_id = a.account_id
            AND h.is_current)""",
    )
    assert no_current == 0
    # parent copies from the entity reach every version.
    assert (
        one(
            db,
            """SELECT count(*) FROM raw.account_history h JOIN raw.accounts a USING (account_id)
           WHERE h.account_country <> a.country""",
        )
        == 0
    )
    # The current version agrees with the entity table.
    disagree = one(
        db,
        """SELECT count(*) FROM raw.account_history h JOIN raw.accounts a USING (account_id)
           WHERE h.valid_to IS NULL AND h.is_current AND h.industry <> a.industry
             AND CAST(h.account_history_id AS VARCHAR) NOT IN
                 (SELECT row_key FROM anomalies WHERE kind = 'duplicate_current')""",
    )
    assert disagree == 0


def test_distributions_follow_the_spec(db: duckdb.DuckDBPyConnection) -> None:
    shares = dict(
        db.execute("SELECT industry, count(*) / 2000.0 FROM raw.accounts GROUP BY 1").fetchall()
    )
    for industry, expected in {"Technology": 0.4, "Retail": 0.3, "Finance": 0.2}.items():
        assert abs(shares[industry] - expected) < 0.04, industry
    mean_age = one(db, "SELECT round(avg(age)) FROM raw.contacts")
    assert 40 <= mean_age <= 44
    website_null = one(db, "SELECT count(*) FROM raw.accounts WHERE website IS NULL")
    assert 300 < website_null < 500  # null_rate 0.2 of 2000
    # Zipf fan-out (s=1.0 over 50 users) is heavy-tailed; Poisson fan-out is not.
    top_owner_share = one(
        db,
        "SELECT max(n) * 1000 / 2000 FROM (SELECT count(*) n FROM raw.accounts GROUP BY owner_id)",
    )
    assert top_owner_share > 150  # > 15% of accounts on one user
    max_contacts = one(
        db, "SELECT max(n) FROM (SELECT count(*) n FROM raw.contacts GROUP BY account_id)"
    )
    assert max_contacts < 15  # Poisson(3) tail
