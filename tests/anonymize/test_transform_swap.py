"""Data swapping within strata: every stratum keeps its multiset of values (and a group's
columns stay together), a row keeps its value only when its stratum leaves no other choice, the
assignment follows the secret, and the re-identification search that refused the kept column
finds nothing left to single out (measured against the attacker's own count)."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.reident import search_table
from benchforge.anonymize.transform import TransformError, anonymize_warehouse

SECRET = b"swap-test-secret"
_RELEASES = itertools.count()
ZONES = {"DE": "Europe/Berlin", "FR": "Europe/Paris", "JP": "Asia/Tokyo", "US": "America/New_York"}


def _source(path: Path) -> None:
    """Cases: reason (3 values) x product (97) x country (4), so the product with the country or
    the reason singles out most cases; one reason ('Lonely') has a single case."""
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA raw")
    con.execute(
        """CREATE TABLE raw.cases AS SELECT
              'C' || lpad(i::VARCHAR, 4, '0') AS case_id,
              CASE WHEN i = 0 THEN 'Lonely' ELSE ['Access', 'Billing', 'Outage'][i % 3 + 1] END
                AS reason,
              'P' || lpad(((i * i * 31 + i * 7) % 97)::VARCHAR, 2, '0') AS product_id,
              ['DE', 'FR', 'JP', 'US'][(i // 3) % 4 + 1] AS country,
              i AS seq
            FROM range(400) r(i)"""
    )
    con.execute(
        "ALTER TABLE raw.cases ADD COLUMN timezone VARCHAR; UPDATE raw.cases SET timezone = "
        + "CASE country "
        + " ".join(f"WHEN '{c}' THEN '{z}'" for c, z in ZONES.items())
        + " END"
    )
    con.close()


def _policy(product: object, country: object = "keep", timezone: object = "keep") -> Policy:
    return Policy.model_validate(
        {
            "domain": "test",
            "tables": {
                "cases": {
                    "primary_key": "case_id",
                    "columns": {
                        "case_id": "pseudonymize",
                        "reason": "keep",
                        "product_id": product,
                        "country": country,
                        "timezone": timezone,
                        "seq": "suppress",
                    },
                }
            },
        }
    )


SWAPPED = _policy(
    {"rule": "swap", "within": ["reason"]},
    {"rule": "swap", "within": ["reason"], "group": "place"},
    {"rule": "swap", "within": ["reason"], "group": "place"},
)


def _release(tmp_path: Path, policy: Policy, secret: bytes = SECRET) -> duckdb.DuckDBPyConnection:
    src, rel = tmp_path / "src.duckdb", tmp_path / f"rel-{next(_RELEASES)}.duckdb"
    if not src.exists():
        _source(src)
    anonymize_warehouse(src, rel, policy, secret, memory_limit="500MB", threads=1)
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY); ATTACH '{rel}' AS rel (READ_ONLY)")
    return con


def _pairs(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute(
        "SELECT s.reason, s.product_id, r.product_id, s.country, r.country, r.timezone "
        "FROM src.raw.cases s POSITIONAL JOIN rel.raw.cases r"
    ).fetchall()


def test_strata_keep_their_values_and_groups_move_together(tmp_path: Path) -> None:
    rows = _pairs(_release(tmp_path, SWAPPED))
    for reason in {r[0] for r in rows}:
        mine = [r for r in rows if r[0] == reason]
        assert Counter(r[1] for r in mine) == Counter(r[2] for r in mine)
        assert Counter(r[3] for r in mine) == Counter(r[4] for r in mine)
    assert all(ZONES[r[4]] == r[5] for r in rows)  # a country keeps its own time zone
    lonely = [r for r in rows if r[0] == "Lonely"]
    assert lonely == [("Lonely", "P00", "P00", "DE", "DE", "Europe/Berlin")]
    # a row keeps its product only when its successor in the keyed order had the same one:
    # far fewer than the 399 rows of the three shared strata
    kept = sum(r[1] == r[2] for r in rows if r[0] != "Lonely")
    assert kept < 20


def test_the_assignment_follows_the_secret(tmp_path: Path) -> None:
    first = _pairs(_release(tmp_path, SWAPPED))
    again = _pairs(_release(tmp_path, SWAPPED))
    other = _pairs(_release(tmp_path, SWAPPED, b"another-secret"))
    assert first == again
    assert [r[2] for r in first] != [r[2] for r in other]


def _attacker(con: duckdb.DuckDBPyConnection, columns: list[str]) -> float:
    """The attacker's own count: rows whose known values match exactly one released row, and
    that row is their own."""
    match = " AND ".join(f"r.{c} = s.{c}" for c in columns)
    row = con.execute(
        f"""WITH s AS (SELECT rowid AS id, * FROM src.raw.cases),
                 r AS (SELECT rowid AS id, * FROM rel.raw.cases),
                 hits AS (SELECT s.id, count(*) AS n, bool_and(r.id = s.id) AS own
                          FROM s JOIN r ON {match} GROUP BY s.id)
            SELECT count(*) FILTER (WHERE n = 1 AND own) / 400 FROM hits"""
    ).fetchone()
    assert row is not None
    return float(row[0])


def test_the_search_that_refused_the_kept_product_finds_the_swap_safe(tmp_path: Path) -> None:
    kept = search_table(_release(tmp_path, _policy("keep")), "cases", _policy("keep"))
    assert kept.worst is not None and "product_id" in kept.worst.columns
    assert kept.worst.rate > 0.05  # refused: product with country
    con = _release(tmp_path, SWAPPED, b"swap-attack")
    swapped = search_table(con, "cases", SWAPPED, keep_all=True)
    # the swapped product matches its original on too few rows to be a kept column at all
    assert any(n.startswith("product_id (matches its original on") for n in swapped.not_kept)
    assert len(swapped.combinations) >= 3
    for combo in swapped.combinations:
        assert combo.rate == pytest.approx(_attacker(con, combo.columns)), combo.columns
    assert swapped.worst is not None and swapped.worst.rate <= 0.05


@pytest.mark.parametrize(
    ("product", "message"),
    [
        ({"rule": "swap", "within": ["nowhere"]}, "swap refers to missing column nowhere"),
        ({"rule": "swap", "within": ["product_id"]}, "swap moves product_id within itself"),
        (
            {"rule": "swap", "within": ["country"], "group": "place"},
            "swap group place needs one within for all its columns",
        ),
    ],
)
def test_swaps_the_pass_cannot_apply_are_refused(tmp_path: Path, product, message) -> None:
    policy = _policy(product, {"rule": "swap", "within": ["reason"], "group": "place"})
    with pytest.raises(TransformError, match=message):
        _release(tmp_path, policy)
